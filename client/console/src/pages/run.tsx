// Run: its attempts (exit, signal, times, CPU, memory, what the logs kept,
// retry delays), its place in its array, the live log of an attempt with
// follow and download, and cancel.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, num, Scheduler, stream } from "../api";
import { bytes, clock, duration, isActive, signalName } from "../format";
import { LogStream, type Attempt, type Run } from "../gen/csched/v1/scheduler_pb";
import { ErrorBox, Page, State, Status, useLoad, When } from "../ui";
import { arrayPath, arrayPlace } from "./array";

interface Piece {
  stream: LogStream;
  text: string;
}

function outcome(a: Attempt | Run): string {
  if (a.outcome.case === "exitCode") return `exit ${a.outcome.value}`;
  if (a.outcome.case === "termSignal") return signalName(a.outcome.value);
  return "";
}

function kept(written: bigint, keptBytes: bigint): string {
  const w = num(written);
  const k = num(keptBytes);
  if (w === 0) return "nothing";
  return k < w ? `${bytes(k)} of ${bytes(w)} (cut)` : bytes(w);
}

function Attempts({ run }: { run: Run }) {
  return (
    <div class="scroll">
      <table class="attempts">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">State</th>
            <th scope="col">Ended by</th>
            <th scope="col">Started</th>
            <th scope="col">Took</th>
            <th scope="col">CPU user / system</th>
            <th scope="col">Max RSS</th>
            <th scope="col">stdout</th>
            <th scope="col">stderr</th>
            <th scope="col">Retry delay</th>
            <th scope="col">Note</th>
          </tr>
        </thead>
        <tbody>
          {run.attempts.map((a) => {
            const started = num(a.startedUnixMs);
            const ended = num(a.endedUnixMs);
            return (
              <tr>
                <td>{a.number}</td>
                <td>
                  <State state={a.state} />
                </td>
                <td>{outcome(a)}</td>
                <td>{started ? clock(started) : "—"}</td>
                <td>{started ? duration((ended || Date.now()) - started) : ""}</td>
                <td>
                  {duration(num(a.userCpuMs))} / {duration(num(a.systemCpuMs))}
                </td>
                <td>{num(a.maxRssKb) ? bytes(num(a.maxRssKb) * 1024) : ""}</td>
                <td>{ended ? kept(a.stdoutWrittenBytes, a.stdoutKeptBytes) : ""}</td>
                <td>{ended ? kept(a.stderrWrittenBytes, a.stderrKeptBytes) : ""}</td>
                <td>
                  {num(a.retryDelayMs) ? duration(num(a.retryDelayMs)) : ""}
                  {num(a.retryJitterMs) ? ` (−${duration(num(a.retryJitterMs))} jitter)` : ""}
                </td>
                <td>
                  {a.message}
                  {a.leftoverProcesses ? ` · ${a.leftoverProcesses} leftover processes stopped` : ""}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

const decoder = () => new TextDecoder("utf-8", { fatal: false });

function Log({ run }: { run: Run }) {
  const last = run.attempts.length ? run.attempts[run.attempts.length - 1].number : 0;
  const [attempt, setAttempt] = useState(0);
  const [which, setWhich] = useState<LogStream>(LogStream.UNSPECIFIED);
  const [follow, setFollow] = useState(true);
  const [pieces, setPieces] = useState<Piece[]>([]);
  const [ended, setEnded] = useState(false);
  const [notes, setNotes] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const box = useRef<HTMLPreElement>(null);
  const active = isActive(run.state);

  useEffect(() => {
    setPieces([]);
    setNotes([]);
    setEnded(false);
    setError(null);
    /* Where each stream's bytes end: a reconnect that sends a chunk again
     * (or part of one) does not show it twice. */
    const end = new Map<LogStream, number>();
    const decoders = new Map<LogStream, TextDecoder>();
    const s = stream(
      Scheduler.method.readLogs,
      { runId: run.id, attempt, stream: which, follow: active },
      {
        message: (c) => {
          if (c.truncated) {
            setNotes((n) => [...n, `${LogStream[c.stream].toLowerCase()}: the log kept ${bytes(num(c.offset))} of ${bytes(num(c.writtenBytes))} written`]);
            return;
          }
          if (c.replica)
            setNotes((n) => [...n, `${LogStream[c.stream].toLowerCase()}: the tail kept by the database (the attempt ran on ${c.replica})`]);
          const at = end.get(c.stream) ?? 0;
          const skip = Math.max(0, at - num(c.offset));
          if (skip >= c.data.length) return;
          end.set(c.stream, num(c.offset) + c.data.length);
          let d = decoders.get(c.stream);
          if (!d) decoders.set(c.stream, (d = decoder()));
          const text = d.decode(c.data.subarray(skip), { stream: true });
          setPieces((p) => {
            const lastPiece = p[p.length - 1];
            if (lastPiece && lastPiece.stream === c.stream)
              return [...p.slice(0, -1), { stream: c.stream, text: lastPiece.text + text }];
            return [...p, { stream: c.stream, text }];
          });
        },
        end: () => setEnded(true),
        error: setError,
      },
      false,
    );
    return () => s.close();
  }, [String(run.id), attempt, which, active]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [pieces, follow]);

  const all = pieces.map((p) => p.text).join("");
  const [href, setHref] = useState("");
  useEffect(() => {
    const url = URL.createObjectURL(new Blob([all], { type: "text/plain" }));
    setHref(url);
    return () => URL.revokeObjectURL(url);
  }, [all]);

  return (
    <section aria-labelledby="log">
      <h2 id="log">Log</h2>
      <div class="logbar">
        <label>
          Attempt
          <select value={attempt} onChange={(e) => setAttempt(Number((e.target as HTMLSelectElement).value))}>
            <option value={0}>latest ({last || "none yet"})</option>
            {run.attempts.map((a) => (
              <option value={a.number}>{a.number}</option>
            ))}
          </select>
        </label>
        <label>
          Stream
          <select value={which} onChange={(e) => setWhich(Number((e.target as HTMLSelectElement).value))}>
            <option value={LogStream.UNSPECIFIED}>stdout and stderr</option>
            <option value={LogStream.STDOUT}>stdout</option>
            <option value={LogStream.STDERR}>stderr</option>
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} />
          Follow
        </label>
        <a class="button" href={href} download={`run-${run.id}-attempt-${attempt || last}.log`}>
          Download
        </a>
      </div>
      <ErrorBox error={error} />
      <pre class="log" ref={box} tabIndex={0} aria-label="The attempt's output" aria-live="off">
        {pieces.map((p) => (
          <span class={p.stream === LogStream.STDERR ? "stderr" : "stdout"}>{p.text}</span>
        ))}
      </pre>
      {notes.map((n) => (
        <p class="muted small">{n}</p>
      ))}
      <Status text={ended ? "End of the log." : active ? "Following the log as it is written…" : ""} />
    </section>
  );
}

export function RunPage({ id }: { id: string }) {
  const run = useLoad(() => call(Scheduler.method.getRun, { runId: BigInt(id) }), [id]);
  const [error, setError] = useState<unknown>(null);
  const r = run.value;

  /* Follow the run's changes while it is active. */
  const jobName = r?.jobName;
  const active = r ? isActive(r.state) : false;
  useEffect(() => {
    if (!jobName || !active) return;
    const s = stream(
      Scheduler.method.watch,
      { jobName },
      {
        message: (batch) => {
          if (batch.events.some((e) => String(e.runId) === id)) run.reload();
        },
      },
    );
    return () => s.close();
  }, [jobName, active]);

  const cancel = async () => {
    setError(null);
    try {
      await call(Scheduler.method.cancelRun, { runId: BigInt(id) });
      run.reload();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <Page
      title={<>Run #{id}</>}
      actions={
        r &&
        isActive(r.state) && (
          <button type="button" class="danger" onClick={cancel} disabled={r.cancelRequested}>
            {r.cancelRequested ? "Cancelling…" : "Cancel run"}
          </button>
        )
      }
    >
      <ErrorBox error={run.error ?? error} />
      {r && (
        <>
          <dl class="facts">
            <dt>Job</dt>
            <dd>
              <a href={`/jobs/${encodeURIComponent(r.jobName)}`}>{r.jobName}</a>
            </dd>
            <dt>State</dt>
            <dd>
              <State state={r.state} /> {outcome(r)} {r.message && <span class="muted">{r.message}</span>}
            </dd>
            <dt>Made</dt>
            <dd>
              <When ms={num(r.createdUnixMs)} /> by {r.triggeredBy}
              {num(r.slotUnixMs) ? ` for the slot ${clock(num(r.slotUnixMs))}` : ""}
            </dd>
            {num(r.arrayId) > 0 && (
              <>
                <dt>Array</dt>
                <dd>
                  <a href={arrayPath(r)}>#{String(r.arrayId)}</a>, {arrayPlace(r)}
                </dd>
              </>
            )}
            {num(r.notBeforeUnixMs) > 0 && (
              <>
                <dt>Not before</dt>
                <dd>
                  <When ms={num(r.notBeforeUnixMs)} />
                </dd>
              </>
            )}
            <dt>Took</dt>
            <dd>
              {num(r.startedUnixMs)
                ? duration((num(r.endedUnixMs) || Date.now()) - num(r.startedUnixMs))
                : "not started"}
            </dd>
          </dl>
          <h2>Attempts</h2>
          {r.attempts.length ? <Attempts run={r} /> : <p class="muted">No attempt has started yet.</p>}
          <Status text={isActive(r.state) ? `This run is ${r.state === 1 ? "queued" : "running"}.` : ""} />
          <Log run={r} />
        </>
      )}
    </Page>
  );
}
