import express from 'express';
import multer from 'multer';
import { exec } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';

mkdirSync('uploads', { recursive: true });
mkdirSync('thumbs', { recursive: true });
const upload = multer({ dest: 'uploads/tmp' });
const app = express();

app.get('/', (_req, res) => res.send('<form method=post enctype=multipart/form-data><input type=file name=clip><button>send</button></form>'));

app.post('/', upload.single('clip'), (req, res) => {
  const f = req.file!;
  const kept = `uploads/${f.originalname}`;
  renameSync(f.path, kept);
  exec(`ffmpeg -y -ss 1 -i "${kept}" -frames:v 1 "thumbs/${f.originalname}.jpg"`, (err) => {
    res.send(err ? 'thumbnail failed' : 'ok');
  });
});

app.listen(4100, () => console.log('thumbnailer on :4100'));
