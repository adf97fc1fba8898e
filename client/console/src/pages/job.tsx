// Job: its definition as apply -f takes it, its next fires with DST marks,
// what became of each slot (and why one did not run), its runs a keyset
// page at a time or one array's as a group (?array=ID), run now, run an
// array, and backfill.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, num, Scheduler, stream } from "../api";
import { scheduleWords } from "../cron";
import { clock, duration, skipReason } from "../format";
import { SlotOutcome } from "../gen/csched/v1/scheduler_pb";
import { jobToYaml } from "../jobyaml";
import { navigate, useParam } from "../router";
import { ErrorBox, Page, State, Status, useLoad, When } from "../ui";
import { ArrayForm, ArrayGroup, arrayPath } from "./array";

const PAGE = 50;
/* An array holds at most 1,000 runs: one page of ListRuns' largest. */
const ARRAY_PAGE = 1000;
const NEXT_FIRES = 20;

/* Keyset pages: the tokens of the pages seen, so Newer goes back; a new
 * listing (another key) starts again at the first. */
function usePages(key = "") {
  const [pages, setPages] = useState({ key, tokens: [""] });
  const tokens = pages.key === key ? pages.tokens : [""];
  return {
    token: tokens[tokens.length - 1],
    first: tokens.length === 1,
    older: (next: string) => setPages({ key, tokens: [...tokens, next] }),
    newer: () => setPages({ key, tokens: tokens.length > 1 ? tokens.slice(0, -1) : tokens }),
  };
}

function Pager({ pages, next, what }: { pages: ReturnType<typeof usePages>; next?: string; what: string }) {
  return (
    <div class="pager">
      <button type="button" disabled={pages.first} onClick={pages.newer}>
        Newer {what}
      </button>
      <button type="button" disabled={!next} onClick={() => next && pages.older(next)}>
        Older {what}
      </button>
    </div>
  );
}

/* datetime-local's value, read in the browser's zone. */
const fromLocal = (v: string) => (v ? new Date(v).getTime() : 0);

/* The array filter's id, or an error a person can act on. */
function arrayIdOf(text: string): bigint {
  if (!/^[1-9][0-9]{0,18}$/.test(text))
    throw new Error(`array ${text}: give an array's id, the id of its first run (a whole number from 1)`);
  return BigInt(text);
}

export function JobPage({ name }: { name: string }) {
  const job = useLoad(() => call(Scheduler.method.getJob, { name, nextFires: NEXT_FIRES }), [name]);
  const [array, setArray] = useParam("array");
  const runPages = usePages(array);
  const slotPages = usePages();
  /* The job's runs, or those of one array (which ListRuns takes alone). */
  const runs = useLoad(
    async () =>
      call(
        Scheduler.method.listRuns,
        array
          ? { arrayId: arrayIdOf(array), pageSize: ARRAY_PAGE, pageToken: runPages.token }
          : { jobName: name, pageSize: PAGE, pageToken: runPages.token },
      ),
    [name, array, runPages.token],
  );
  /* Another array chosen here (by the form or the filter): its runs come
   * into view. */
  const shownArray = useRef(array);
  useEffect(() => {
    if (array && array !== shownArray.current) document.getElementById("runs")?.scrollIntoView();
    shownArray.current = array;
  }, [array]);
  /* An answer for the listing before stays shown until the next one's. */
  const shown = (runs.value?.runs ?? []).filter((r) => !array || String(r.arrayId) === array);
  if (array) shown.sort((a, b) => a.arrayIndex - b.arrayIndex);
  const slots = useLoad(
    () =>
      call(Scheduler.method.listSlots, { jobName: name, pageSize: PAGE, pageToken: slotPages.token }),
    [name, slotPages.token],
  );
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  /* The job's runs change live: its runs and slots are read again, at most
   * once a second, while the newest pages are shown. */
  useEffect(() => {
    if (!runPages.first || !slotPages.first) return;
    let timer = 0;
    const s = stream(
      Scheduler.method.watch,
      { jobName: name },
      {
        message: () => {
          if (timer) return;
          timer = window.setTimeout(() => {
            timer = 0;
            runs.reload();
            slots.reload();
          }, 1000);
        },
      },
    );
    return () => {
      clearTimeout(timer);
      s.close();
    };
  }, [name, runPages.first, slotPages.first]);
  const j = job.value;
  const zone = j?.schedule?.timeZone || "UTC";

  const act = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(e);
    }
  };
  const runNow = () =>
    act(async () => {
      const run = await call(Scheduler.method.triggerJob, { jobName: name });
      navigate(`/runs/${run.id}`);
    });
  const pauseResume = () =>
    act(async () => {
      if (j?.paused) await call(Scheduler.method.resumeJob, { name });
      else await call(Scheduler.method.pauseJob, { name, reason: "paused from the console" });
      job.reload();
    });
  const backfill = (e: Event) => {
    e.preventDefault();
    act(async () => {
      const r = await call(Scheduler.method.backfillJob, {
        name,
        fromUnixMs: BigInt(fromLocal(from)),
        toUnixMs: BigInt(fromLocal(to)),
      });
      setStatus(
        `Backfill: ${r.runsCreated} runs made, ${r.alreadyStarted} slots had run already` +
          (r.more ? `; more slots from ${clock(num(r.resumeFromUnixMs))}: backfill again from there` : ""),
      );
      runs.reload();
      slots.reload();
    });
  };

  return (
    <Page
      title={<>Job {name}</>}
      actions={
        <>
          <button type="button" onClick={runNow}>
            Run now
          </button>
          {j && (
            <button type="button" onClick={pauseResume}>
              {j.paused ? "Resume" : "Pause"}
            </button>
          )}
        </>
      }
    >
      <ErrorBox error={job.error ?? error} />
      <Status text={status} />
      {j && (
        <div class="grid">
          <section aria-labelledby="def">
            <h2 id="def">Definition</h2>
            <p>
              {scheduleWords(j.schedule?.text ?? "", zone)}
              {j.paused && (
                <span class="badge paused">
                  {" "}
                  paused{j.pauseReason ? `: ${j.pauseReason}` : ""}
                </span>
              )}
            </p>
            <pre class="yaml" aria-label="The job as YAML for csched apply -f">
              {jobToYaml(j)}
            </pre>
            <p class="muted small">
              version {String(j.version)} · created by {j.createdBy} {clock(num(j.createdUnixMs))} · updated by{" "}
              {j.updatedBy} {clock(num(j.updatedUnixMs))}
            </p>
          </section>
          <section aria-labelledby="fires">
            <h2 id="fires">Next {NEXT_FIRES} fires</h2>
            {j.nextFires.length === 0 ? (
              <p class="muted">{j.schedule?.text ? "none" : "only when triggered"}</p>
            ) : (
              <ol class="fires">
                {j.nextFires.map((f) => (
                  <li>
                    <When ms={num(f.atUnixMs)} zone={zone} local={f.localTime} />
                    {f.dstShifted && (
                      <span class="badge dst" title="Daylight saving time moved or merged this fire">
                        DST
                      </span>
                    )}
                  </li>
                ))}
              </ol>
            )}
            <h2 id="backfill">Backfill</h2>
            <form class="backfill" onSubmit={backfill} aria-labelledby="backfill">
              <label>
                From
                <input type="datetime-local" step="1" required value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
              </label>
              <label>
                To
                <input type="datetime-local" step="1" required value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
              </label>
              <button type="submit">Backfill the range</button>
              <p class="muted small">Times in this browser's zone; every slot in the range without a started run gets one.</p>
            </form>
            <ArrayForm job={name} />
          </section>
        </div>
      )}
      <section aria-labelledby="slots">
        <h2 id="slots">Slots</h2>
        <ErrorBox error={slots.error} />
        <div class="scroll">
          <table class="slots">
            <thead>
              <tr>
                <th scope="col">Slot</th>
                <th scope="col">Outcome</th>
                <th scope="col">Why</th>
                <th scope="col">Run</th>
                <th scope="col">Late by</th>
              </tr>
            </thead>
            <tbody>
              {slots.value?.slots.map((s) => (
                <tr class={s.outcome === SlotOutcome.SKIPPED ? "skipped" : ""}>
                  <td>
                    <When ms={num(s.slotUnixMs)} zone={zone} />
                  </td>
                  <td>
                    {s.outcome === SlotOutcome.SKIPPED ? "skipped" : "started"}
                    {s.backfill ? " (backfill)" : ""}
                  </td>
                  <td class="reason">
                    {s.outcome === SlotOutcome.SKIPPED && <strong>{skipReason(s.skipReason)[0]}: </strong>}
                    {s.message || (s.outcome === SlotOutcome.SKIPPED ? skipReason(s.skipReason)[1] : "")}
                  </td>
                  <td>{s.runId ? <a href={`/runs/${s.runId}`}>#{String(s.runId)}</a> : ""}</td>
                  <td>{num(s.latenessMs) >= 0 && s.runId ? duration(num(s.latenessMs)) : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {slots.value && slots.value.slots.length === 0 && <p class="muted">No slot has come due yet.</p>}
        <Pager pages={slotPages} next={slots.value?.nextPageToken} what="slots" />
      </section>
      <section aria-labelledby="runs">
        <h2 id="runs">{array ? `Runs of array #${array}` : "Runs"}</h2>
        <form
          class="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setArray(String(new FormData(e.currentTarget).get("array") ?? "").trim());
          }}
        >
          <label>
            Array id
            <input key={array} name="array" type="number" min="1" step="1" placeholder="any" defaultValue={array} />
          </label>
          <button type="submit">Show the array</button>
          {array && (
            <a class="button" href={`/jobs/${encodeURIComponent(name)}`}>
              All runs of the job
            </a>
          )}
        </form>
        <ErrorBox error={runs.error} />
        {array && runs.value && !runs.error && (
          <ArrayGroup id={array} job={name} runs={shown} changed={runs.reload} />
        )}
        <div class="scroll">
          <table class="runs">
            <thead>
              <tr>
                <th scope="col">Run</th>
                {array && <th scope="col">Index</th>}
                <th scope="col">State</th>
                <th scope="col">Started</th>
                <th scope="col">Took</th>
                {!array && <th scope="col">Array</th>}
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((r) => (
                <tr>
                  <td>
                    <a href={`/runs/${r.id}`}>#{String(r.id)}</a>
                  </td>
                  {array && <td>{r.arrayIndex}</td>}
                  <td>
                    <State state={r.state} />
                  </td>
                  <td>
                    <When ms={num(r.startedUnixMs) || num(r.createdUnixMs)} zone={zone} />
                  </td>
                  <td>
                    {num(r.endedUnixMs) && num(r.startedUnixMs)
                      ? duration(num(r.endedUnixMs) - num(r.startedUnixMs))
                      : ""}
                  </td>
                  {!array && (
                    <td>
                      {num(r.arrayId) > 0 && (
                        <a href={arrayPath(r)} title={`The runs of array #${r.arrayId}`}>
                          #{String(r.arrayId)} [{r.arrayIndex}]
                        </a>
                      )}
                    </td>
                  )}
                  <td>{r.triggeredBy}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {!array && runs.value && runs.value.runs.length === 0 && <p class="muted">No runs yet.</p>}
        <Pager pages={runPages} next={runs.value?.nextPageToken} what="runs" />
      </section>
    </Page>
  );
}
