// The console's page budget, measured in chromium (console_budget.sh runs
// it): for each page, the time to first paint, the time until its data is
// on the page, and the largest API response it read. Three loads each, the
// median reported.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const base = process.env.CS_URL.replace(/\/$/, "");
const job = process.env.CS_JOB;
const browser = await chromium.launch({
  executablePath: process.env.CS_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
context.setDefaultTimeout(120000);
const page = await context.newPage();
await page.goto(`${base}/`);
await page.getByLabel("Token").fill(process.env.CS_TOKEN);
await page.getByRole("button", { name: "Log in" }).click();
await page.getByRole("heading", { name: "Jobs" }).waitFor();

const pages = [
  ["jobs", "/", () => page.locator("table.jobs tbody tr").first().waitFor()],
  ["job history", `/jobs/${job}`, () => page.locator("table.runs tbody tr").first().waitFor()],
  ["timeline", "/timeline", () => page.getByRole("status").filter({ hasText: /jobs, \d+ runs/ }).waitFor()],
];
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const [name, path, shown] of pages) {
  const paints = [];
  const datas = [];
  let largest = { bytes: 0, what: "" };
  let calls = 0;
  for (let i = 0; i < 3; i++) {
    /* Every API call the load makes, and its body's size once read. */
    const started = new Set();
    const sizes = [];
    const isCall = (r) => r.method() === "POST" && r.url().includes("/csched.v1.Scheduler/");
    const onRequest = (r) => isCall(r) && started.add(r);
    const onDone = async (r) => {
      if (!isCall(r)) return;
      const res = await r.response();
      const body = res ? await res.body().catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
      sizes.push({ bytes: body.length, what: r.url().split("/").pop() });
    };
    page.on("request", onRequest);
    page.on("requestfinished", onDone);
    page.on("requestfailed", onDone);
    const t0 = Date.now();
    await page.goto(`${base}${path}`);
    await shown();
    const data = Date.now() - t0;
    const paint = await page.evaluate(
      () => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? -1,
    );
    while (sizes.length < started.size) await new Promise((r) => setTimeout(r, 20));
    page.off("request", onRequest);
    page.off("requestfinished", onDone);
    page.off("requestfailed", onDone);
    paints.push(paint);
    datas.push(data);
    calls = sizes.length;
    for (const s of sizes) if (s.bytes > largest.bytes) largest = s;
    process.stderr.write(`console_budget: ${name}: ${data} ms, ${calls} calls\n`);
  }
  rows.push([name, median(paints), median(datas), largest, calls]);
}
await browser.close();
console.log("page          first paint  data shown  API calls  largest response");
for (const [name, paint, data, largest, calls] of rows)
  console.log(
    `${name.padEnd(13)} ${String(Math.round(paint)).padStart(8)} ms ${String(data).padStart(8)} ms ${String(calls).padStart(10)}  ${(largest.bytes / 1024).toFixed(1)} KiB (${largest.what})`,
  );
