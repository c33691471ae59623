const { execFile, execFileSync } = require('node:child_process');

const argv = process.argv.slice(2);
const repo = argv[argv.indexOf('--repo') + 1];
const dry = argv.includes('--dry-run');

const issues = JSON.parse(execFileSync('gh', [
  'issue', 'list', '-R', repo, '--json', 'number,title,author,authorAssociation', '--limit', '100',
]));

for (const i of issues.filter((x) => x.authorAssociation === 'FIRST_TIME_CONTRIBUTOR')) {
  const body = `Welcome @${i.author.login}, and thanks for "${i.title}"! A maintainer will look soon.`;
  if (dry) { console.log(`#${i.number}: ${body}`); continue; }
  const child = execFile('gh', ['issue', 'comment', String(i.number), '-R', repo, '--body-file', '-'],
    (err) => console.log(err ? `#${i.number} failed` : `#${i.number} greeted`));
  child.stdin.end(body);
  execFile('gh', ['issue', 'edit', String(i.number), '-R', repo, '--add-label', 'first-timer'], () => {});
}
