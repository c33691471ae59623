#!/usr/bin/env node
'use strict';
const { execSync } = require('child_process');

const TYPES = ['feat', 'fix', 'docs', 'chore', 'refactor', 'test', 'perf', 'ci'];
const RE = new RegExp(`^(${TYPES.join('|')})(\\([a-z0-9-]+\\))?: [a-z].{0,70}[^.]$`);

function suggest(title) {
  const t = title.trim().replace(/\.$/, '');
  if (/^(add|new)\b/i.test(t)) return `feat: ${t[0].toLowerCase()}${t.slice(1)}`;
  if (/^(fix|bug)/i.test(t)) return `fix: ${t.replace(/^(fix(ed|es)?|bug):?\s*/i, '')}`;
  return `chore: ${t[0].toLowerCase()}${t.slice(1)}`;
}

const prs = JSON.parse(execSync('gh pr list --state open --limit 100 --json number,title', { encoding: 'utf8' }));

for (const { number, title } of prs) {
  if (RE.test(title)) {
    console.log(`#${number} ok`);
    continue;
  }
  const fixed = suggest(title);
  console.log(`#${number} fix  "${title}" -> "${fixed}"`);
  const body = `Thanks! Could you rename this PR to match Conventional Commits?\n\nCurrent: "${title}"\nSuggested: "${fixed}"`;
  execSync(`gh pr comment ${number} --body "${body}"`, { stdio: 'inherit', shell: '/bin/bash' });
}
