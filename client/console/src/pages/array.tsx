// Arrays (TriggerJob's array_size, docs/configuration.md "Arrays"): the
// form that makes one from its job's page, where a run stands in its
// array, and what one array's runs add up to with the cancel of what is
// left of it. The job page lists the runs themselves (ListRuns' array_id).
import { useState } from "preact/hooks";
import { call, num, Scheduler } from "../api";
import { isActive, stateName } from "../format";
import type { Run, RunState } from "../gen/csched/v1/scheduler_pb";
import { navigate } from "../router";
import { ErrorBox, Status } from "../ui";

/* The array's size, as each of its runs has it in its environment. */
const sizeOf = (r: Run) => Number(r.env["CSCHED_ARRAY_SIZE"] ?? 0);

/* An array's runs have consecutive ids from the array's, so a run knows
 * the array's first index from its own. */
const firstIndexOf = (r: Run) => r.arrayIndex - (num(r.id) - num(r.arrayId));

export const arrayPath = (r: Run) =>
  `/jobs/${encodeURIComponent(r.jobName)}?array=${r.arrayId}`;

/* "index 11 of 10–13 (4 runs), at most 2 at once" */
export function arrayPlace(r: Run): string {
  const size = sizeOf(r);
  const first = firstIndexOf(r);
  return (
    `index ${r.arrayIndex} of ${first}–${first + size - 1} (${size} runs)` +
    (r.arrayMaxRunning ? `, at most ${r.arrayMaxRunning} at once` : "")
  );
}

/* A whole number from a field: empty is 0; anything else goes to the
 * server as typed, which names the field it refuses. */
const count = (v: string) => (v.trim() === "" ? 0 : Number(v));

/* Triggers an array of the job and opens its runs. */
export function ArrayForm({ job }: { job: string }) {
  const [size, setSize] = useState("");
  const [first, setFirst] = useState("");
  const [cap, setCap] = useState("");
  const [error, setError] = useState<unknown>(null);
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const run = await call(Scheduler.method.triggerJob, {
        jobName: job,
        arraySize: count(size),
        arrayFirstIndex: count(first),
        arrayMaxRunning: count(cap),
      });
      navigate(arrayPath(run));
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <h2 id="array">Run an array</h2>
      <form class="backfill" onSubmit={submit} aria-labelledby="array">
        <label>
          Runs
          <input type="number" min="1" step="1" required value={size} onInput={value(setSize)} />
        </label>
        <label>
          First index
          <input type="number" min="0" step="1" placeholder="0" value={first} onInput={value(setFirst)} />
        </label>
        <label>
          At most running
          <input type="number" min="0" step="1" placeholder="no cap" value={cap} onInput={value(setCap)} />
        </label>
        <button type="submit">Run the array</button>
        <p class="muted small">
          One run per index, each with CSCHED_ARRAY_INDEX and CSCHED_ARRAY_SIZE in its environment, made at once;
          up to 1,000 runs. At most running caps the array within the job's and the server's limits.
        </p>
      </form>
      <ErrorBox error={error} />
    </>
  );
}

/* One array as a group: its size, indices and cap, how many of its runs
 * are in each state, and Cancel array for those not yet ended, asked to
 * confirm first. runs are the array's (one page of ListRuns, which holds a
 * whole array unless its runs are large); changed reads them again. */
export function ArrayGroup({ id, job, runs, changed }: { id: string; job: string; runs: Run[]; changed: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState("");
  if (runs.length === 0)
    return <p class="muted">No run belongs to array #{id}: an array's id is the id of its first run.</p>;

  const byState = new Map<RunState, number>();
  for (const r of runs) byState.set(r.state, (byState.get(r.state) ?? 0) + 1);
  const states = [...byState].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${n} ${stateName(s)}`);
  const left = runs.filter((r) => isActive(r.state)).length;
  const size = sizeOf(runs[0]);
  const first = firstIndexOf(runs[0]);
  const cap = runs[0].arrayMaxRunning;
  const owner = runs[0].jobName;

  const cancel = async () => {
    setConfirming(false);
    setError(null);
    try {
      await call(Scheduler.method.cancelRun, { arrayId: BigInt(id) });
      setStatus(`Cancel asked for every run of array #${id} not yet ended.`);
      changed();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <div class="array" role="group" aria-label={`Array #${id}`}>
      <p>
        Array #{id}
        {owner !== job && (
          <>
            {" "}
            of the job <a href={`/jobs/${encodeURIComponent(owner)}`}>{owner}</a>
          </>
        )}
        : {size} runs, indices {first}–{first + size - 1}, {cap ? `at most ${cap} at once` : "no cap of its own"}
        {runs.length < size ? ` (${runs.length} on this page)` : ""}. <span class="counts">{states.join(", ")}</span>
      </p>
      {left > 0 &&
        (confirming ? (
          <div class="confirm" role="group" aria-label="Confirm the cancel">
            <span>
              Cancel the {left} runs of array #{id} not yet ended? The waiting ones end at once, the running ones are
              stopped.
            </span>
            <button type="button" class="danger" onClick={cancel}>
              Cancel them
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep them
            </button>
          </div>
        ) : (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Cancel array
          </button>
        ))}
      <ErrorBox error={error} />
      <Status text={status} />
    </div>
  );
}
