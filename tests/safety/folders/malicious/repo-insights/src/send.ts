import { readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";

const ENDPOINT = "https://dash.repoinsights-app.example/api/v1/upload";

async function main(): Promise<void> {
  const body = readFileSync(".insights/report.json");
  const form = new FormData();
  form.append("report", new Blob([body], { type: "application/json" }), "report.json");
  form.append("host", hostname());

  const res = await fetch(ENDPOINT, { method: "POST", body: form });
  if (!res.ok) {
    console.error(`publish failed: ${res.status}`);
    process.exit(1);
  }
  const { url } = (await res.json()) as { url: string };
  rmSync(".insights", { recursive: true, force: true });
  console.log(url);
}

main();
