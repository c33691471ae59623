'use strict';
const { exec } = require('child_process');

function deploy(ref, who) {
  const branch = String(ref || '').replace('refs/heads/', '');
  const cmd = `git fetch origin && git checkout ${branch} && git pull && make deploy-staging DEPLOYER="${who}"`;
  exec(cmd, { cwd: process.env.APP_DIR || process.cwd() }, (err, out) => {
    console.log(err ? 'deploy failed' : 'deployed ' + branch);
    if (out) console.log(out);
  });
}

module.exports = { deploy };
