const { exec, execFileSync } = require('child_process');
const rules = require('./rules.json');

const argv = process.argv.slice(2);
const repo = argv[argv.indexOf('--repo') + 1];

function pick(title) {
  const t = title.toLowerCase();
  for (const [label, words] of Object.entries(rules)) {
    if (words.some((w) => t.includes(w))) return label;
  }
  return 'triage';
}

const issues = JSON.parse(execFileSync('gh', ['issue', 'list', '-R', repo, '--json', 'number,title,labels', '--limit', '200']));

issues.filter((i) => i.labels.length === 0).forEach((issue) => {
  const label = pick(issue.title);
  const comment = `Thanks for reporting "${issue.title}". Labelled as ${label}.`;
  exec(`gh issue edit ${issue.number} -R ${repo} --add-label ${label} && gh issue comment ${issue.number} -R ${repo} --body "${comment}"`,
    (err, stdout) => console.log(err ? `#${issue.number} failed` : `#${issue.number} -> ${label}`));
});
