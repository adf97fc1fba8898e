// Health: the loop-lag probe, what runs against the limit, the replicas as
// the database has them, and the live event stream.
import { useEffect, useState } from "preact/hooks";
import { call, num, Scheduler, stream } from "../api";
import { clock, duration } from "../format";
import { ReplicaState, type Event } from "../gen/csched/v1/scheduler_pb";
import { ErrorBox, Page, State, useLoad } from "../ui";

const EVENTS_SHOWN = 100;
const us = (v: bigint) => (num(v) < 1000 ? `${num(v)} µs` : `${(num(v) / 1000).toFixed(1)} ms`);

export function HealthPage() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 2000);
    return () => clearInterval(t);
  }, []);
  const stats = useLoad(() => call(Scheduler.method.getStats, {}), [tick]);
  const replicas = useLoad(() => call(Scheduler.method.listReplicas, {}), [Math.floor(tick / 5)]);
  const [events, setEvents] = useState<Event[]>([]);
  const [streamError, setStreamError] = useState<unknown>(null);

  useEffect(() => {
    const s = stream(
      Scheduler.method.watch,
      {},
      {
        message: (batch) => setEvents((ev) => [...batch.events.slice().reverse(), ...ev].slice(0, EVENTS_SHOWN)),
        error: setStreamError,
      },
    );
    return () => s.close();
  }, []);

  const s = stats.value;
  const busy = s ? s.running + s.starting : 0;
  return (
    <Page title="Health">
      <ErrorBox error={stats.error} />
      {s && (
        <div class="cards">
          <section class="card" aria-labelledby="lag">
            <h2 id="lag">Loop lag</h2>
            <p class="muted small">How late the loop's 10 ms probe ticks ran.</p>
            <table>
              <thead>
                <tr>
                  <th scope="col"></th>
                  <th scope="col">p50</th>
                  <th scope="col">p99</th>
                  <th scope="col">max</th>
                </tr>
              </thead>
              <tbody>
                {[
                  ["last minute", s.lagLastMinute],
                  ["since start", s.lagSinceStart],
                ].map(([label, l]) => (
                  <tr>
                    <th scope="row">{label as string}</th>
                    <td>{l && typeof l === "object" ? us(l.p50Us) : ""}</td>
                    <td>{l && typeof l === "object" ? us(l.p99Us) : ""}</td>
                    <td>{l && typeof l === "object" ? us(l.maxUs) : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section class="card" aria-labelledby="limits">
            <h2 id="limits">Running</h2>
            <p>
              <meter id="busy" min={0} max={s.maxRunning || 1} value={busy} aria-label="Running against the limit" />{" "}
              <span class="big">{busy}</span> of {s.maxRunning || "no limit"} running, {s.queued} queued
            </p>
            <p class="muted small">
              {String(s.runsStarted)} runs started, {String(s.runsFinished)} finished since start ·
              up {duration(num(s.uptimeMs))} · last event #{String(s.lastSeq)} · tzdata {s.tzdataVersion}
            </p>
          </section>
          <section class="card" aria-labelledby="db">
            <h2 id="db">Database and replicas</h2>
            <ErrorBox error={replicas.error} />
            <p>
              {stats.error ? "cschedd does not answer" : "cschedd answers; the database holds these replicas:"}
            </p>
            <ul class="replicas">
              {replicas.value?.replicas.map((r) => (
                <li>
                  <strong>{r.id}</strong> {ReplicaState[r.state].toLowerCase()}
                  {r.self ? " (this one)" : ""} · lease renewed {duration(num(r.leaseAgeMs))} ago
                  {r.leaseExpired ? " · lease expired" : ""} · {r.runsHeld} runs
                </li>
              ))}
            </ul>
          </section>
        </div>
      )}
      <section aria-labelledby="events">
        <h2 id="events">Live events</h2>
        <ErrorBox error={streamError} />
        <div class="scroll">
          <table class="events">
            <thead>
              <tr>
                <th scope="col">Seq</th>
                <th scope="col">At</th>
                <th scope="col">Run</th>
                <th scope="col">Job</th>
                <th scope="col">Attempt</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody aria-live="polite">
              {events.map((e) => (
                <tr key={String(e.seq)}>
                  <td>{String(e.seq)}</td>
                  <td>{clock(num(e.atUnixMs))}</td>
                  <td>
                    <a href={`/runs/${e.runId}`}>#{String(e.runId)}</a>
                  </td>
                  <td>{e.jobName}</td>
                  <td>{e.attempt || ""}</td>
                  <td>
                    <State state={e.state} /> {e.message}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {events.length === 0 && <p class="muted">Waiting for the next event…</p>}
      </section>
    </Page>
  );
}
