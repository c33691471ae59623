'use strict';
const { execFileSync } = require('child_process');

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();

const fmt = '%(refname:short)%00%(committerdate:short)%00%(authorname)%00%(upstream:short)';
const rows = git('for-each-ref', `--format=${fmt}`, 'refs/heads/')
  .split('\n').filter(Boolean).map((l) => l.split('\0'));

console.log('| branch | last commit | author | ahead/behind upstream |');
console.log('|---|---|---|---|');
for (const [name, date, author, upstream] of rows) {
  let ab = 'no upstream';
  if (upstream) {
    const [behind, ahead] = git('rev-list', '--left-right', '--count', `${upstream}...${name}`, '--').split(/\s+/);
    ab = `+${ahead} / -${behind}`;
  }
  console.log(`| ${name} | ${date} | ${author} | ${ab} |`);
}
