// Pieces every page uses: a call's error, a time in two zones, a state.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api";
import { browserZone, clock, relative, stateClass, stateName } from "./format";
import type { RunState } from "./gen/csched/v1/scheduler_pb";

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="error" role="alert">
      <strong>{e ? e.code.replace(/_/g, " ") : "error"}:</strong> {String((error as Error).message ?? error)}
      {e && e.violations.length > 0 && (
        <ul>
          {e.violations.map((v) => (
            <li>{v}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/* A time in the job's zone (as the server wrote it, or computed) and in
 * the browser's. */
export function When({ ms, zone, local }: { ms: number; zone?: string; local?: string }) {
  if (!ms) return <span class="muted">—</span>;
  const jobZone = zone || "UTC";
  const inJob = local || `${clock(ms, jobZone)} ${jobZone}`;
  const here = clock(ms);
  return (
    <span class="when">
      <time dateTime={new Date(ms).toISOString()}>{inJob}</time>
      {jobZone !== browserZone && (
        <span class="muted small">
          {" "}
          · {here} here
        </span>
      )}
      <span class="muted small"> · {relative(ms)}</span>
    </span>
  );
}

export const State = ({ state }: { state: RunState }) => (
  <span class={stateClass(state)}>{stateName(state)}</span>
);

/* Calls load() at once and whenever deps change; returns its value, its
 * error, and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const current = useRef(0);
  useEffect(() => {
    const mine = ++current.current;
    load().then(
      (v) => {
        if (mine !== current.current) return;
        setValue(v);
        setError(null);
      },
      (e) => mine === current.current && setError(e),
    );
  }, [...deps, tick]);
  return { value, error, reload: () => setTick((t) => t + 1) };
}

export function Page({ title, children, actions }: { title: ComponentChildren; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <main id="main" tabIndex={-1}>
      <div class="title">
        <h1>{title}</h1>
        {actions && <div class="actions">{actions}</div>}
      </div>
      {children}
    </main>
  );
}

/* A status line read out by screen readers when it changes. */
export const Status = ({ text }: { text: string }) => (
  <p class="status" role="status" aria-live="polite">
    {text}
  </p>
);
