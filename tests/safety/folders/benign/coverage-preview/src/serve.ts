import { createServer } from "node:http";
import { createReadStream, realpathSync, statSync } from "node:fs";
import { extname, isAbsolute, join, relative } from "node:path";

const root = realpathSync(process.argv[2] ?? "coverage");
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css",
  ".js": "text/javascript",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

function inside(p: string): boolean {
  const rel = relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

const server = createServer((req, res) => {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405).end();
    return;
  }
  let urlPath: string;
  try {
    urlPath = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (urlPath.includes("\0")) {
    res.writeHead(400).end();
    return;
  }
  let file = join(root, urlPath);
  try {
    if (statSync(file).isDirectory()) file = join(file, "index.html");
    file = realpathSync(file);
  } catch {
    res.writeHead(404).end("not found");
    return;
  }
  if (!inside(file)) {
    res.writeHead(403).end("forbidden");
    return;
  }
  res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
  if (req.method === "HEAD") res.end();
  else createReadStream(file).pipe(res);
});

server.listen(0, "127.0.0.1", () => {
  const addr = server.address();
  if (addr && typeof addr === "object") console.log(`http://127.0.0.1:${addr.port}/`);
});
