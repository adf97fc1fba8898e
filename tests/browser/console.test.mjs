// The console in a real browser: Debian's chromium driven by playwright-core
// against a running cschedd that serves the console and its HTTP API.
// Every step waits for what the page shows, never for a fixed time; each
// page's screenshot goes to CS_SHOTS.
//
//   CS_URL=http://127.0.0.1:PORT/ CS_TOKEN=... CS_SHOTS=DIR \
//   CS_CHROMIUM=/usr/bin/chromium node console.test.mjs
//
// playwright-core comes from the console's own node_modules (NODE_PATH).
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const base = process.env.CS_URL.replace(/\/$/, "");
const token = process.env.CS_TOKEN;
const shots = process.env.CS_SHOTS;
const executablePath = process.env.CS_CHROMIUM || "/usr/bin/chromium";
mkdirSync(shots, { recursive: true });

let failures = 0;
let passed = 0;
async function step(name, f) {
  const t0 = Date.now();
  try {
    await f();
    passed++;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.message.split("\n").slice(0, 6).join("\n     ")}`);
  }
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
context.setDefaultTimeout(20000);
const page = await context.newPage();
const consoleErrors = [];
/* The errors a step made on purpose (a request refused): each forgives one. */
const expectedErrors = [];
page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
page.on("pageerror", (e) => consoleErrors.push(String(e)));
const shot = (name) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
const suffix = Date.now().toString(36);
const hello = `browser-hello-${suffix}`;
const sleeper = `browser-sleep-${suffix}`;
const skipper = `browser-skip-${suffix}`;

async function createJob(yaml) {
  await page.goto(`${base}/new`);
  await page.getByLabel(/The job as YAML/).fill(yaml);
  await page.getByRole("button", { name: "Create or replace" }).click();
}

await step("login: the page asks for a token, a wrong one is refused, the right one opens the jobs", async () => {
  await page.goto(`${base}/`);
  await page.getByLabel("Token").waitFor();
  await shot("login");
  await page.getByLabel("Token").fill("not-a-token");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("alert").filter({ hasText: /unauthenticated/i }).waitFor();
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Jobs" }).waitFor();
});

await step("create a job from YAML and see its next fires with its schedule in words", async () => {
  await createJob(
    `name: ${hello}\nshell: for i in 1 2 3 4 5 6 7 8; do echo "line $i"; sleep 0.4; done; echo oops >&2\n` +
      `schedule: "30 3 * * *"\ntime_zone: Europe/Berlin\nlabels: {suite: browser}\n`,
  );
  await page.getByRole("heading", { name: `Job ${hello}` }).waitFor();
  await page.getByText("every day at 03:30 (Europe/Berlin)").first().waitFor();
  const fires = page.locator("ol.fires li");
  await fires.first().waitFor();
  if ((await fires.count()) !== 20) throw new Error(`${await fires.count()} next fires shown, not 20`);
  await page.locator("pre.yaml").filter({ hasText: `name: ${hello}` }).waitFor();
  await shot("job");
});

await step("run it now and watch its log stream live", async () => {
  await page.getByRole("button", { name: "Run now" }).first().click();
  await page.getByRole("heading", { name: /^Run #\d+$/ }).waitFor();
  /* A line of output shows while the run still runs (cancel is offered only then). */
  await page.locator("pre.log").filter({ hasText: "line 2" }).waitFor();
  if (!(await page.getByRole("button", { name: /Cancel run/ }).isVisible()))
    throw new Error("the log came only after the run had ended");
  await page.locator("pre.log").filter({ hasText: "line 8" }).waitFor();
  await page.locator(".facts .st-succeeded").waitFor();
  await page.locator("pre.log .stderr").filter({ hasText: "oops" }).waitFor();
  await page.locator("table.attempts").filter({ hasText: "exit 0" }).waitFor();
  await shot("run");
});

await step("cancel a running run", async () => {
  await createJob(`name: ${sleeper}\nshell: echo started; exec sleep 300\nkill_grace_seconds: 1\n`);
  await page.getByRole("heading", { name: `Job ${sleeper}` }).waitFor();
  await page.getByRole("button", { name: "Run now" }).first().click();
  await page.locator("pre.log").filter({ hasText: "started" }).waitFor();
  await page.getByRole("button", { name: "Cancel run" }).click();
  await page.locator(".facts .st-cancelled").waitFor();
});

await step("an array from the job page: the server's field error, its runs as a group, cancelled whole", async () => {
  await page.goto(`${base}/jobs/${sleeper}`);
  const form = page.locator("form[aria-labelledby=array]");
  /* The page leaves the bound to the server, whose error names the field. */
  await form.getByLabel("Runs").fill("1001");
  expectedErrors.push(/status of 400/);
  await form.getByRole("button", { name: "Run the array" }).click();
  await page.getByRole("alert").filter({ hasText: /invalid argument.*array_size: /s }).waitFor();
  await form.getByLabel("Runs").fill("4");
  await form.getByLabel("First index").fill("10");
  await form.getByLabel("At most running").fill("2");
  const listed = page.waitForRequest(
    (r) => r.url().endsWith("/ListRuns") && Number(JSON.parse(r.postData() ?? "{}").arrayId) > 0,
  );
  await form.getByRole("button", { name: "Run the array" }).click();
  const id = (await listed).postDataJSON().arrayId;
  await page.getByRole("heading", { name: `Runs of array #${id}` }).waitFor();
  if (new URL(page.url()).searchParams.get("array") !== String(id))
    throw new Error(`the address does not keep the array: ${page.url()}`);
  const group = page.getByRole("group", { name: `Array #${id}` });
  await group.filter({ hasText: "4 runs, indices 10–13, at most 2 at once" }).waitFor();
  /* The cap holds: two run, two wait. */
  await group.locator(".counts").filter({ hasText: "2 queued, 2 running" }).waitFor();
  const indices = await page.locator("table.runs tbody tr td:nth-child(2)").allTextContents();
  if (indices.join(",") !== "10,11,12,13") throw new Error(`the array's rows have the indices ${indices}`);
  await page.locator("section[aria-labelledby=runs]").screenshot({ path: join(shots, "job-array.png") });
  /* A reload keeps the filter; a run shows where it stands in its array. */
  await page.reload();
  await page.getByRole("heading", { name: `Runs of array #${id}` }).waitFor();
  await page.locator("table.runs tbody tr").filter({ has: page.getByRole("cell", { name: "11", exact: true }) })
    .getByRole("link").click();
  await page.locator(".facts").filter({ hasText: `#${id}, index 11 of 10–13 (4 runs), at most 2 at once` }).waitFor();
  await page.locator(".facts").getByRole("link", { name: `#${id}` }).click();
  await page.getByRole("heading", { name: `Runs of array #${id}` }).waitFor();
  /* Cancel asks first: keeping them cancels nothing. */
  await group.getByRole("button", { name: "Cancel array" }).click();
  await group.getByRole("group", { name: "Confirm the cancel" }).filter({ hasText: "Cancel the 4 runs" }).waitFor();
  await group.getByRole("button", { name: "Keep them" }).click();
  await group.locator(".counts").filter({ hasText: "2 queued, 2 running" }).waitFor();
  await group.getByRole("button", { name: "Cancel array" }).click();
  const cancelled = page.waitForRequest(
    (r) => r.url().endsWith("/CancelRun") && String(JSON.parse(r.postData() ?? "{}").arrayId) === String(id),
  );
  await group.getByRole("button", { name: "Cancel them" }).click();
  await cancelled;
  await group.locator(".counts").filter({ hasText: /^4 cancelled$/ }).waitFor();
  await group.getByRole("button", { name: "Cancel array" }).waitFor({ state: "detached" });
  /* The job's own runs name each one's array. */
  await page.getByRole("link", { name: "All runs of the job" }).click();
  await page.getByRole("heading", { name: "Runs", exact: true }).waitFor();
  await page.getByRole("link", { name: `#${id} [13]` }).waitFor();
});

await step("a skipped slot says why it did not run", async () => {
  /* Every second, each run 3 s, overlap forbidden: the slots in between
   * are skipped for the overlap. */
  await createJob(
    `name: ${skipper}\nshell: sleep 3\nschedule: "* * * * * *"\noverlap: forbid\nlabels: {suite: browser}\n`,
  );
  await page.getByRole("heading", { name: `Job ${skipper}` }).waitFor();
  await page.locator("table.slots tr.skipped").filter({ hasText: /overlap: .*still active/ }).first().waitFor();
  await shot("job-slots");
});

await step("pause and resume two jobs at once from the jobs page", async () => {
  await page.goto(`${base}/?label=suite%3Dbrowser`);
  const rows = [hello, skipper].map((n) => page.locator(`tr[data-job="${n}"]`));
  for (const r of rows) await r.waitFor();
  for (const n of [hello, skipper]) await page.getByLabel(`Select ${n}`).check();
  await page.getByRole("button", { name: "Pause selected" }).click();
  await page.getByRole("status").filter({ hasText: "2 of 2 jobs paused" }).waitFor();
  for (const r of rows) await r.locator(".badge.paused").waitFor();
  await shot("jobs");
  await page.getByRole("button", { name: "Resume selected" }).click();
  await page.getByRole("status").filter({ hasText: "2 of 2 jobs resumed" }).waitFor();
  for (const r of rows) await r.locator(".badge.paused").waitFor({ state: "detached" });
});

await step("the label filter is the server's selector", async () => {
  await page.goto(`${base}/?label=${encodeURIComponent("suite in (browser),!nope")}`);
  await page.locator(`tr[data-job="${hello}"]`).waitFor();
});

await step("the state filter is the server's: ListJobs asks for the paused jobs only", async () => {
  await page.goto(`${base}/?label=suite%3Dbrowser`);
  await page.locator(`tr[data-job="${skipper}"]`).waitFor();
  await page.getByLabel(`Select ${hello}`).check();
  await page.getByRole("button", { name: "Pause selected" }).click();
  await page.getByRole("status").filter({ hasText: "1 of 1 jobs paused" }).waitFor();
  const asked = page.waitForRequest(
    (r) => r.url().endsWith("/ListJobs") && JSON.parse(r.postData() ?? "{}").state === "JOB_STATE_FILTER_PAUSED",
  );
  await page.getByLabel("State").selectOption("paused");
  await asked;
  await page.locator(`tr[data-job="${hello}"]`).waitFor();
  await page.locator(`tr[data-job="${skipper}"]`).waitFor({ state: "detached" });
  if (!new URL(page.url()).searchParams.get("state")) throw new Error(`the address lost the state: ${page.url()}`);
  await page.getByLabel(`Select ${hello}`).check();
  await page.getByRole("button", { name: "Resume selected" }).click();
  await page.getByRole("status").filter({ hasText: "1 of 1 jobs resumed" }).waitFor();
});

await step("the jobs page at phone width", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}/`);
  await page.locator(`tr[data-job="${hello}"]`).waitFor();
  await shot("jobs-phone");
  await page.setViewportSize({ width: 1280, height: 900 });
});

await step("the timeline renders every job's runs", async () => {
  await page.goto(`${base}/timeline`);
  await page.getByRole("status").filter({ hasText: /\d+ jobs, \d+ runs in the last 24 hours/ }).waitFor();
  const rows = Number(await page.locator("canvas").getAttribute("data-rows"));
  if (rows < 3) throw new Error(`the timeline has ${rows} rows`);
  /* Every fire of the next 24 hours, not each job's next one: the skipper
   * fires every second (its first 1440 are drawn), hello once. */
  const fires = Number(await page.locator("canvas").getAttribute("data-fires"));
  if (!(fires >= 1441)) throw new Error(`the timeline has ${fires} fires, not every one of the next 24 hours`);
  /* Something was drawn: the canvas is not blank. */
  const inked = await page.locator("canvas").evaluate((c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
    return n;
  });
  if (inked < 1000) throw new Error(`the canvas is nearly blank (${inked} pixels)`);
  await shot("timeline");
});

await step("health shows the loop lag, the limits and live events", async () => {
  await page.goto(`${base}/health`);
  await page.getByRole("heading", { name: "Loop lag" }).waitFor();
  await page.locator("meter#busy").waitFor();
  /* The skipper job runs every few seconds: its events arrive live. */
  await page.locator("table.events tbody tr").filter({ hasText: skipper }).first().waitFor();
  await shot("health");
});

await step("log out ends the session", async () => {
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByLabel("Token").waitFor();
  await page.goto(`${base}/health`);
  await page.getByLabel("Token").waitFor();
});

await step("the pages ran without a script error or a CSP refusal", async () => {
  const bad = consoleErrors.filter((e) => !/401|Unauthorized|EventSource/.test(e));
  for (const expected of expectedErrors) {
    const i = bad.findIndex((e) => expected.test(e));
    if (i >= 0) bad.splice(i, 1);
  }
  if (bad.length) throw new Error(bad.join("\n"));
});

await browser.close();
console.log(`${passed} passed, ${failures} failed; screenshots in ${shots}`);
process.exit(failures ? 1 : 0);
