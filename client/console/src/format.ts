// How the console writes times, durations, sizes and states.
import { RunState, SkipReason } from "./gen/csched/v1/scheduler_pb";

const formats = new Map<string, Intl.DateTimeFormat>();

/* "2026-03-29 03:00:00" in zone (the browser's when absent). */
export function clock(ms: number, zone?: string): string {
  if (!ms) return "—";
  const key = zone ?? "";
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("sv-SE", {
      timeZone: zone || undefined,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    formats.set(key, f);
  }
  return f.format(new Date(ms));
}

export const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/* "in 4 min", "2 h ago". */
export function relative(ms: number, now = Date.now()): string {
  if (!ms) return "";
  const d = ms - now;
  const a = Math.abs(d);
  const text = duration(a);
  return d >= 0 ? `in ${text}` : `${text} ago`;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = s / 60;
  if (m < 60) return `${Math.floor(m)} min ${Math.round(s % 60)} s`;
  const h = m / 60;
  if (h < 48) return `${Math.floor(h)} h ${Math.round(m % 60)} min`;
  return `${Math.floor(h / 24)} d ${Math.round(h % 24)} h`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GiB`;
}

/* "succeeded", "timed out": a state as a person says it. */
export function stateName(s: RunState): string {
  const name = RunState[s] ?? "UNSPECIFIED";
  return name.toLowerCase().replace(/_/g, " ");
}

/* The class that colours a state (style.css .st-*). */
export function stateClass(s: RunState): string {
  return `st st-${(RunState[s] ?? "UNSPECIFIED").toLowerCase()}`;
}

export const isActive = (s: RunState) =>
  s === RunState.QUEUED || s === RunState.STARTING || s === RunState.RUNNING;

/* Each skip reason's name and what it means (scheduler.proto's SkipReason). */
const reasons: Record<number, [string, string]> = {
  [SkipReason.MISSED]: [
    "missed",
    "it came due while cschedd was down or too busy, and the misfire policy did not run it",
  ],
  [SkipReason.OVERLAP_FORBIDDEN]: ["overlap", "a run of the job was still active and overlap is forbid"],
  [SkipReason.DEADLINE_PASSED]: ["deadline passed", "it could not start within starting_deadline_seconds"],
  [SkipReason.PAUSED]: ["paused", "the job was paused"],
  [SkipReason.SUPERSEDED]: ["superseded", "a newer slot ran in its place (misfire run_once or max_catchup)"],
  [SkipReason.QUEUE_FULL]: ["queue full", "overlap is queue_one and a run was already waiting"],
};

export const skipReason = (r: SkipReason): [string, string] => reasons[r] ?? ["unspecified", ""];

const signals: Record<number, string> = {
  1: "HUP",
  2: "INT",
  3: "QUIT",
  6: "ABRT",
  9: "KILL",
  11: "SEGV",
  13: "PIPE",
  14: "ALRM",
  15: "TERM",
};

export const signalName = (n: number) => (signals[n] ? `SIG${signals[n]} (${n})` : `signal ${n}`);
