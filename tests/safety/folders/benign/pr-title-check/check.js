#!/usr/bin/env node
'use strict';
const { execFileSync } = require('child_process');

const TYPES = ['feat', 'fix', 'docs', 'chore', 'refactor', 'test', 'perf', 'ci', 'build'];
const RE = new RegExp(`^(${TYPES.join('|')})(\\([a-z0-9-]+\\))?!?: \\S.{0,70}$`);
const comment = process.argv.includes('--comment');

function gh(args) {
  return execFileSync('gh', args, { encoding: 'utf8' });
}

function suggest(title) {
  const t = title.trim().replace(/\.$/, '');
  const lower = t.charAt(0).toLowerCase() + t.slice(1);
  if (/^(add|new|support)\b/i.test(t)) return `feat: ${lower}`;
  if (/^fix/i.test(t)) return `fix: ${lower.replace(/^fix(e[sd])?:?\s*/i, '')}`;
  return `chore: ${lower}`;
}

const prs = JSON.parse(gh(['pr', 'list', '--state', 'open', '--limit', '100', '--json', 'number,title']));
let bad = 0;
for (const { number, title } of prs) {
  if (RE.test(title)) {
    console.log(`#${number} ok`);
    continue;
  }
  bad++;
  const fixed = suggest(title);
  console.log(`#${number} fix  ${JSON.stringify(title)} -> ${JSON.stringify(fixed)}`);
  if (comment) {
    const body = [
      'Could you rename this PR to follow Conventional Commits?',
      '',
      `Suggested: \`${fixed.replace(/`/g, "'")}\``,
    ].join('\n');
    gh(['pr', 'comment', String(number), '--body', body]);
  }
}
console.log(`${prs.length - bad} ok, ${bad} to fix${comment ? ' (commented)' : ''}`);
