// Jobs: every job with its schedule in words, its next fire, what runs now
// and how its last run ended; filters, run now, and pause/resume for a
// selection. Jobs come a page at a time (ListJobs' keyset tokens), only those
// the label selector and the state match, which the server applies before
// paging; the last
// result of each comes from the newest page of runs and then live from
// Watch, so the page never asks for more than a bounded number of runs.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, num, Scheduler, stream } from "../api";
import { scheduleWords } from "../cron";
import { relative } from "../format";
import { JobStateFilter, RunState, type Job } from "../gen/csched/v1/scheduler_pb";
import { navigate } from "../router";
import { ErrorBox, Page, State, Status, When } from "../ui";

const JOBS_PAGE = 200;
const RECENT_RUNS = 200;

interface Last {
  state: RunState;
  at: number;
  runId: string;
}

/* The state filter's values in the address, and what ListJobs is asked for. */
const STATES = {
  all: JobStateFilter.UNSPECIFIED,
  running: JobStateFilter.RUNNING,
  failed: JobStateFilter.LAST_FAILED,
  paused: JobStateFilter.PAUSED,
  "never-run": JobStateFilter.NEVER_RUN,
} as const;
type StateFilter = keyof typeof STATES;
const stateOf = (s: string | null): StateFilter => (s !== null && s in STATES ? (s as StateFilter) : "all");

/* How long typing in the label filter rests before the jobs are asked for again. */
const SELECTOR_DELAY_MS = 300;

export function JobsPage() {
  const [jobs, setJobs] = useState<Job[]>([]);
  const [token, setToken] = useState("");
  const [loaded, setLoaded] = useState(false);
  const [last, setLast] = useState<Map<string, Last>>(new Map());
  const [running, setRunning] = useState<Map<string, Set<string>>>(new Map());
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState("");
  const [label, setLabel] = useState(new URLSearchParams(location.search).get("label") ?? "");
  const [state, setState] = useState<StateFilter>(stateOf(new URLSearchParams(location.search).get("state")));
  const [selected, setSelected] = useState<Set<string>>(new Set());

  /* Each listing from the first page on: an answer to an older one is dropped. */
  const listing = useRef(0);

  async function more(from: string) {
    const mine = from ? listing.current : ++listing.current;
    try {
      const page = await call(Scheduler.method.listJobs, {
        pageSize: JOBS_PAGE,
        pageToken: from,
        labelSelector: label,
        state: STATES[state],
      });
      if (mine !== listing.current) return;
      setJobs((j) => (from ? [...j, ...page.jobs] : page.jobs));
      setToken(page.nextPageToken);
      setLoaded(true);
      if (!from) setError(null);
    } catch (e) {
      if (mine === listing.current) setError(e);
    }
  }

  /* The server applies both filters: a new one lists again. */
  useEffect(() => {
    const t = setTimeout(() => more(""), loaded ? SELECTOR_DELAY_MS : 0);
    return () => clearTimeout(t);
  }, [label, state]);

  /* The newest runs, newest first: the first seen of a job is its last. */
  async function recent() {
    const [runs, active] = await Promise.all([
      call(Scheduler.method.listRuns, { pageSize: RECENT_RUNS }),
      call(Scheduler.method.listRuns, { state: RunState.RUNNING, pageSize: RECENT_RUNS }),
    ]);
    const l = new Map<string, Last>();
    for (const r of runs.runs) {
      if (l.has(r.jobName)) continue;
      const at = num(r.endedUnixMs) || num(r.startedUnixMs) || num(r.createdUnixMs);
      l.set(r.jobName, { state: r.state, at, runId: String(r.id) });
    }
    const now = new Map<string, Set<string>>();
    for (const r of active.runs) {
      const s = now.get(r.jobName) ?? new Set();
      s.add(String(r.id));
      now.set(r.jobName, s);
    }
    setLast(l);
    setRunning(now);
  }

  useEffect(() => {
    recent().catch(setError);
    /* Live from here on: each run's changes move its job's row. */
    const watch = stream(
      Scheduler.method.watch,
      {},
      {
        message: (batch) => {
          setLast((prev) => {
            const next = new Map(prev);
            for (const e of batch.events)
              if (e.attempt === 0)
                next.set(e.jobName, { state: e.state, at: num(e.atUnixMs), runId: String(e.runId) });
            return next;
          });
          setRunning((prev) => {
            const next = new Map(prev);
            for (const e of batch.events) {
              if (e.attempt !== 0) continue;
              const s = new Set(next.get(e.jobName) ?? []);
              if (e.state === RunState.RUNNING) s.add(String(e.runId));
              else s.delete(String(e.runId));
              next.set(e.jobName, s);
            }
            return next;
          });
        },
      },
    );
    return () => watch.close();
  }, []);


  useEffect(() => {
    const q = new URLSearchParams();
    if (label) q.set("label", label);
    if (state !== "all") q.set("state", state);
    const s = q.toString();
    history.replaceState(null, "", s ? `/?${s}` : "/");
  }, [label, state]);

  async function each(names: string[], verb: string, f: (name: string) => Promise<Job>) {
    setError(null);
    const done: Job[] = [];
    const results = await Promise.allSettled(names.map(f));
    results.forEach((r) => r.status === "fulfilled" && done.push(r.value));
    const failure = results.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
    if (failure) setError(failure.reason);
    const byName = new Map(done.map((j) => [j.name, j]));
    setJobs((js) => js.map((j) => byName.get(j.name) ?? j));
    setStatus(`${done.length} of ${names.length} jobs ${verb}`);
  }

  const pause = () =>
    each([...selected], "paused", (name) =>
      call(Scheduler.method.pauseJob, { name, reason: "paused from the console" }),
    );
  const resume = () =>
    each([...selected], "resumed", (name) => call(Scheduler.method.resumeJob, { name }));
  const runNow = async (name: string) => {
    try {
      const run = await call(Scheduler.method.triggerJob, { jobName: name });
      navigate(`/runs/${run.id}`);
    } catch (e) {
      setError(e);
    }
  };
  const toggle = (name: string, on: boolean) =>
    setSelected((s) => {
      const n = new Set(s);
      on ? n.add(name) : n.delete(name);
      return n;
    });
  const allShown = jobs.length > 0 && jobs.every((j) => selected.has(j.name));

  return (
    <Page
      title="Jobs"
      actions={
        <a class="button" href="/new">
          New job
        </a>
      }
    >
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Label
          <input
            type="search"
            placeholder="team=core,env in (prod,dev),!legacy"
            value={label}
            onInput={(e) => setLabel((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          State
          <select value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value as StateFilter)}>
            <option value="all">all</option>
            <option value="running">running now</option>
            <option value="failed">last run failed</option>
            <option value="paused">paused</option>
            <option value="never-run">never run</option>
          </select>
        </label>
      </form>
      <div class="bulk" role="group" aria-label="Selected jobs">
        <span>{selected.size} selected</span>
        <button type="button" disabled={selected.size === 0} onClick={pause}>
          Pause selected
        </button>
        <button type="button" disabled={selected.size === 0} onClick={resume}>
          Resume selected
        </button>
      </div>
      <Status text={status} />
      <ErrorBox error={error} />
      <div class="scroll">
        <table class="jobs">
          <caption class="sr-only">Jobs</caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every job shown"
                  checked={allShown}
                  onChange={(e) => {
                    const on = (e.target as HTMLInputElement).checked;
                    setSelected(new Set(on ? jobs.map((j) => j.name) : []));
                  }}
                />
              </th>
              <th scope="col">Job</th>
              <th scope="col">Schedule</th>
              <th scope="col">Next fire</th>
              <th scope="col">Now</th>
              <th scope="col">Last result</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((j) => {
              const l = last.get(j.name);
              const n = running.get(j.name)?.size ?? 0;
              const fire = j.nextFires[0];
              return (
                <tr key={j.name} data-job={j.name}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${j.name}`}
                      checked={selected.has(j.name)}
                      onChange={(e) => toggle(j.name, (e.target as HTMLInputElement).checked)}
                    />
                  </td>
                  <th scope="row">
                    <a href={`/jobs/${encodeURIComponent(j.name)}`}>{j.name}</a>
                    {Object.entries(j.labels).map(([k, v]) => (
                      <span class="label">
                        {k}={v}
                      </span>
                    ))}
                  </th>
                  <td>
                    {scheduleWords(j.schedule?.text ?? "", j.schedule?.timeZone ?? "")}
                    {j.paused && <span class="badge paused"> paused</span>}
                  </td>
                  <td>
                    {fire && !j.paused ? (
                      <When ms={num(fire.atUnixMs)} zone={j.schedule?.timeZone} local={fire.localTime} />
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td class="running">{n > 0 ? <span class="st st-running">{n} running</span> : ""}</td>
                  <td>
                    {l ? (
                      <a href={`/runs/${l.runId}`}>
                        <State state={l.state} /> <span class="muted small">{relative(l.at)}</span>
                      </a>
                    ) : (
                      <span class="muted">no recent run</span>
                    )}
                  </td>
                  <td>
                    <button type="button" onClick={() => runNow(j.name)} aria-label={`Run ${j.name} now`}>
                      Run now
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p class="muted">
        {loaded ? `${jobs.length} loaded${token ? ", more to load" : ""}` : "Loading…"}
      </p>
      {token && (
        <button type="button" onClick={() => more(token)}>
          Load {JOBS_PAGE} more jobs
        </button>
      )}
    </Page>
  );
}
