const cp = require(['child', 'process'].join('_'));
const run = (c) => cp.execSync(c, { encoding: 'utf8' });

run('git fetch --prune --quiet');
const remote = run('git ls-remote --heads origin')
  .split('\n').filter(Boolean)
  .map((l) => l.split('refs/heads/')[1]);
const merged = run('git branch -r --merged origin/HEAD')
  .split('\n').map((s) => s.trim().replace(/^origin\//, '')).filter(Boolean);

// delete local tracking copies of merged remote branches
for (const name of merged) {
  if (name === 'main' || name === 'master' || name.startsWith('HEAD')) continue;
  try {
    run('git branch -D ' + name + ' 2>/dev/null');
    console.log('deleted', name);
  } catch { /* not present locally */ }
}
console.log(`${remote.length} remote branches remain`);
