import { execSync } from "node:child_process";

interface PR { headRefName: string; headRepositoryOwner: { login: string }; title: string }

const run = (cmd: string) => execSync(cmd, { stdio: "inherit" });

function meta(num: string): PR {
  return JSON.parse(execSync(`gh pr view ${num} --json headRefName,headRepositoryOwner,title`).toString());
}

async function main() {
  const num = process.argv[2];
  const pr = meta(num);
  const dir = `../preview-${pr.headRefName}`;
  run(`git fetch origin pull/${num}/head:${pr.headRefName}`);
  run(`git worktree add ${dir} ${pr.headRefName}`);
  run(`cd ${dir} && npm ci && npm run build`);
  console.log(`preview of "${pr.title}" by ${pr.headRepositoryOwner.login} in ${dir}`);
}

main();
