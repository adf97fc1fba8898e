// Timeline: the last and the next 24 hours of every job, one row a job:
// runs as bars coloured by how they ended, every fire of the next 24 hours
// as a tick (ListFires, computed by the server a page of jobs at a time). Drawn
// on a canvas the size of the window, only the rows in view, so a thousand
// jobs scroll as easily as ten.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, num, Scheduler } from "../api";
import { clock } from "../format";
import { RunState, type Job, type Run } from "../gen/csched/v1/scheduler_pb";
import { ErrorBox, Page, Status } from "../ui";

const HOUR = 3600 * 1000;
const ROW = 22;
const NAME_W = 180;
const MAX_JOB_PAGES = 10;
const MAX_RUN_PAGES = 20;
/* ListFires pages end at 1000 jobs or after 20,000 fires, with 1440 fires a
 * job at most: 1000 jobs take 72 pages at the most. */
const MAX_FIRE_PAGES = 75;

interface Row {
  job: Job;
  runs: Run[];
  fires: bigint[];
}

/* The colours of style.css's .st-* classes, for the canvas. */
const colour: Record<number, string> = {
  [RunState.SUCCEEDED]: "#1b7f3b",
  [RunState.FAILED]: "#c0272d",
  [RunState.TIMED_OUT]: "#b35900",
  [RunState.CANCELLED]: "#6b6b6b",
  [RunState.LOST]: "#7a3db8",
  [RunState.RUNNING]: "#1f5fbf",
  [RunState.STARTING]: "#1f5fbf",
  [RunState.QUEUED]: "#8aa9d6",
};

async function load(now: number): Promise<{ rows: Row[]; runs: number; complete: boolean }> {
  const jobs: Job[] = [];
  let token = "";
  for (let i = 0; i < MAX_JOB_PAGES; i++) {
    const page = await call(Scheduler.method.listJobs, { pageSize: 1000, pageToken: token });
    jobs.push(...page.jobs);
    token = page.nextPageToken;
    if (!token) break;
  }
  /* Runs come newest first: stop at the first page that reaches past the
   * window's start. */
  const byJob = new Map<string, Run[]>();
  let runs = 0;
  let complete = !token;
  let runToken = "";
  for (let i = 0; i < MAX_RUN_PAGES; i++) {
    const page = await call(Scheduler.method.listRuns, { pageSize: 1000, pageToken: runToken });
    let past = false;
    for (const r of page.runs) {
      const end = num(r.endedUnixMs) || now;
      if (end < now - 24 * HOUR) {
        past = true;
        continue;
      }
      runs++;
      const list = byJob.get(r.jobName) ?? [];
      list.push(r);
      byJob.set(r.jobName, list);
    }
    runToken = page.nextPageToken;
    if (past || !runToken) break;
    if (i === MAX_RUN_PAGES - 1) complete = false;
  }
  /* Every fire of the next 24 hours, a page of jobs at a time. */
  const fires = new Map<string, bigint[]>();
  let fireToken = "";
  for (let i = 0; i < MAX_FIRE_PAGES; i++) {
    const page = await call(Scheduler.method.listFires, {
      fromUnixMs: BigInt(now),
      toUnixMs: BigInt(now + 24 * HOUR),
      pageSize: 1000,
      pageToken: fireToken,
    });
    for (const j of page.jobs) fires.set(j.jobName, j.atUnixMs);
    fireToken = page.nextPageToken;
    if (!fireToken) break;
    if (i === MAX_FIRE_PAGES - 1) complete = false;
  }
  return {
    rows: jobs.map((job) => ({ job, runs: byJob.get(job.name) ?? [], fires: fires.get(job.name) ?? [] })),
    runs,
    complete,
  };
}

/* Draws the rows in view of [now - span, now + span]. */
function draw(canvas: HTMLCanvasElement, rows: Row[], now: number, top: number, span: number) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const g = canvas.getContext("2d")!;
  g.scale(ratio, ratio);
  g.clearRect(0, 0, width, height);
  const names = Math.min(NAME_W, width * 0.35);
  const plot = width - names;
  const x = (t: number) => names + ((t - (now - span)) / (2 * span)) * plot;

  g.font = "12px system-ui, sans-serif";
  g.textBaseline = "middle";
  /* four lines each side of now, labelled in the browser's zone */
  for (let k = -4; k <= 4; k++) {
    const t = now + (k * span) / 4;
    g.fillStyle = "#e3e3e3";
    g.fillRect(Math.round(x(t)), 18, 1, height);
    g.fillStyle = "#333";
    g.fillText(k === 0 ? "now" : clock(t).slice(11, 16), x(t) + 3, 9);
  }
  g.fillStyle = "#1f4e79";
  g.fillRect(Math.round(x(now)), 0, 2, height);

  const first = Math.floor(top / ROW);
  for (let i = first; i < rows.length; i++) {
    const y = 20 + i * ROW - top;
    if (y > height) break;
    const { job, runs, fires } = rows[i];
    if (i % 2 === 0) {
      g.fillStyle = "#f6f7f9";
      g.fillRect(0, y, width, ROW);
    }
    g.fillStyle = "#111";
    g.fillText(job.name.length > 24 ? job.name.slice(0, 23) + "…" : job.name, 4, y + ROW / 2, names - 8);
    for (const r of runs) {
      const start = num(r.startedUnixMs) || num(r.createdUnixMs);
      const end = num(r.endedUnixMs) || now;
      if (end < now - span) continue;
      const x0 = Math.max(names, x(start));
      g.fillStyle = colour[r.state] ?? "#999";
      g.fillRect(x0, y + 4, Math.max(3, x(end) - x0), ROW - 8);
    }
    g.fillStyle = "#1f4e79";
    for (const f of fires) {
      const t = num(f);
      if (t > now + span) break;
      g.fillRect(Math.round(x(t)), y + 2, 1, ROW - 4);
    }
  }
}

export function TimelinePage() {
  const [data, setData] = useState<Awaited<ReturnType<typeof load>> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [now] = useState(Date.now());
  const [hours, setHours] = useState(24);
  const canvas = useRef<HTMLCanvasElement>(null);
  const scroller = useRef<HTMLDivElement>(null);

  useEffect(() => {
    load(now).then(setData, setError);
  }, []);

  useEffect(() => {
    if (!data || !canvas.current || !scroller.current) return;
    const c = canvas.current;
    const s = scroller.current;
    let frame = 0;
    const redraw = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => draw(c, data.rows, now, s.scrollTop, hours * HOUR));
    };
    redraw();
    s.addEventListener("scroll", redraw, { passive: true });
    window.addEventListener("resize", redraw);
    return () => {
      s.removeEventListener("scroll", redraw);
      window.removeEventListener("resize", redraw);
    };
  }, [data, hours]);

  const fires = data ? data.rows.reduce((n, r) => n + r.fires.length, 0) : 0;
  const summary = data
    ? `${data.rows.length} jobs, ${data.runs} runs in the last 24 hours, ${fires} fires in the next 24 hours${data.complete ? "" : " (the first pages only)"}`
    : "Loading…";

  return (
    <Page title="Timeline">
      <ErrorBox error={error} />
      <Status text={summary} />
      <label class="window">
        Window
        <select value={hours} onChange={(e) => setHours(Number((e.target as HTMLSelectElement).value))}>
          <option value={24}>24 hours each side of now</option>
          <option value={6}>6 hours each side</option>
          <option value={1}>1 hour each side</option>
          <option value={0.25}>15 minutes each side</option>
        </select>
      </label>
      <ul class="legend" aria-label="Colours">
        <li class="st-succeeded">succeeded</li>
        <li class="st-failed">failed</li>
        <li class="st-timed_out">timed out</li>
        <li class="st-cancelled">cancelled</li>
        <li class="st-lost">lost</li>
        <li class="st-running">running</li>
        <li class="tick">fire</li>
      </ul>
      <div class="timeline" ref={scroller} tabIndex={0} aria-label="Timeline: scroll with the arrow keys">
        <canvas ref={canvas} role="img" aria-label={`Timeline of the last and next 24 hours: ${summary}`} data-rows={data?.rows.length ?? 0} data-fires={fires} />
        <div class="spacer" style={{ height: `${(data?.rows.length ?? 0) * ROW + 20}px` }} />
      </div>
    </Page>
  );
}
