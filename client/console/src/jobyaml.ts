// A job as the YAML that `csched apply -f` takes (docs/cli.md), both ways:
// the Job page shows a definition in it, and a job is created from it. The
// keys are the Job message's field names; the schedule's fields sit beside
// them (schedule:, time_zone:, misfire: ...), as in the CLI's job files.
import { create } from "@bufbuild/protobuf";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { parseAllDocuments, stringify } from "yaml";
import {
  JobSchema,
  Misfire,
  Overlap,
  RetryOn,
  type Job,
} from "./gen/csched/v1/scheduler_pb";

const misfires = ["skip", "run_once", "run_all"];
const overlaps = ["allow", "forbid", "replace", "queue_one"];
const retryOns = ["", "failure", "timeout", "failure,timeout"];
const numbers = [
  "max_running",
  "timeout_seconds",
  "max_attempts",
  "retry_backoff_ms",
  "run_deadline_seconds",
  "kill_grace_seconds",
] as const;
const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const sorted = (m: Record<string, string>) =>
  Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/* The job as a YAML document: only the fields set, as a file would. */
export function jobToYaml(job: Job): string {
  const y: Record<string, unknown> = { name: job.name };
  if (job.command.length) y.command = job.command;
  if (job.shell) y.shell = job.shell;
  if (job.workingDir) y.working_dir = job.workingDir;
  if (job.runAsUser) y.run_as_user = job.runAsUser;
  if (job.runAsGroup) y.run_as_group = job.runAsGroup;
  const s = job.schedule;
  if (s?.text) {
    y.schedule = s.text;
    if (s.timeZone) y.time_zone = s.timeZone;
    if (s.jitterSeconds) y.jitter_seconds = s.jitterSeconds;
    if (s.misfire) y.misfire = misfires[s.misfire];
    if (s.maxCatchup) y.max_catchup = s.maxCatchup;
    if (s.startingDeadlineSeconds) y.starting_deadline_seconds = s.startingDeadlineSeconds;
    if (s.overlap) y.overlap = overlaps[s.overlap];
  }
  if (Object.keys(job.env).length) y.env = sorted(job.env);
  if (job.triggerEnv.length) y.trigger_env = job.triggerEnv;
  const secrets = Object.entries(job.secretEnv);
  if (secrets.length) {
    y.secret_env = Object.fromEntries(
      secrets.map(([k, v]) => [
        k,
        v.source.case === "file" ? `file:${v.source.value}` : `env:${v.source.value ?? ""}`,
      ]),
    );
  }
  if (Object.keys(job.labels).length) y.labels = sorted(job.labels);
  for (const key of numbers) {
    const v = job[camel(key) as keyof Job] as number;
    if (v) y[key] = v;
  }
  if (job.retry) {
    const r = job.retry;
    const retry: Record<string, unknown> = {};
    if (r.initialBackoffMs) retry.initial_backoff_ms = r.initialBackoffMs;
    if (r.maxBackoffMs) retry.max_backoff_ms = r.maxBackoffMs;
    if (r.multiplier) retry.multiplier = r.multiplier;
    if (r.jitter) retry.jitter = r.jitter;
    if (r.retryOn) retry.retry_on = retryOns[r.retryOn];
    y.retry = retry;
  }
  if (job.killSignal) y.kill_signal = job.killSignal;
  return stringify(y, { lineWidth: 0 });
}

function choice(key: string, value: unknown, names: string[]): number {
  const i = names.indexOf(String(value).toLowerCase().replace(/-/g, "_"));
  if (i < 0) throw new Error(`${key}: must be ${names.filter(Boolean).join(", ")}, not '${value}'`);
  return i;
}

function one(doc: Record<string, unknown>): Job {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new Error("a job is a mapping (name: ..., shell: ...)");
  const job: MessageInitShape<typeof JobSchema> = {};
  const schedule: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    switch (key) {
      case "name":
      case "shell":
      case "working_dir":
      case "run_as_user":
      case "run_as_group":
      case "kill_signal":
        (job as Record<string, unknown>)[camel(key)] = String(value);
        break;
      case "command":
      case "trigger_env":
        if (!Array.isArray(value)) throw new Error(`${key}: must be a list`);
        (job as Record<string, unknown>)[camel(key)] = value.map(String);
        break;
      case "env":
      case "labels":
        (job as Record<string, unknown>)[key] = Object.fromEntries(
          Object.entries(value as object).map(([k, v]) => [k, String(v)]),
        );
        break;
      case "secret_env":
        job.secretEnv = Object.fromEntries(
          Object.entries(value as object).map(([k, v]) => {
            const m = /^(file|env):(.*)$/.exec(String(v));
            if (!m) throw new Error(`secret_env: ${k}: the reference is file:/PATH or env:VAR`);
            return [k, { source: { case: m[1] === "file" ? "file" : "serverEnv", value: m[2] } }];
          }),
        );
        break;
      case "retry": {
        const r = value as Record<string, unknown>;
        job.retry = {
          initialBackoffMs: Number(r.initial_backoff_ms ?? 0),
          maxBackoffMs: Number(r.max_backoff_ms ?? 0),
          multiplier: Number(r.multiplier ?? 0),
          jitter: Number(r.jitter ?? 0),
          retryOn: r.retry_on ? (choice("retry.retry_on", r.retry_on, retryOns) as RetryOn) : 0,
        };
        break;
      }
      case "schedule":
        schedule.text = String(value);
        break;
      case "time_zone":
        schedule.timeZone = String(value);
        break;
      case "jitter_seconds":
      case "max_catchup":
      case "starting_deadline_seconds":
        schedule[camel(key)] = Number(value);
        break;
      case "misfire":
        schedule.misfire = choice(key, value, misfires) as Misfire;
        break;
      case "overlap":
        schedule.overlap = choice(key, value, overlaps) as Overlap;
        break;
      default:
        if (!(numbers as readonly string[]).includes(key)) throw new Error(`unknown key '${key}'`);
        (job as Record<string, unknown>)[camel(key)] = Number(value);
    }
  }
  if (Object.keys(schedule).length) job.schedule = schedule;
  return create(JobSchema, job);
}

/* The jobs of a YAML text: documents of {jobs: [...]}, a list, or one job. */
export function yamlToJobs(text: string): Job[] {
  const jobs: Job[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(doc.errors[0].message);
    const v = doc.toJS() as unknown;
    if (v === null || v === undefined) continue;
    const list = Array.isArray(v) ? v : (v as Record<string, unknown>).jobs ?? [v];
    if (!Array.isArray(list)) throw new Error("jobs: must be a list of jobs");
    for (const j of list) jobs.push(one(j as Record<string, unknown>));
  }
  if (jobs.length === 0) throw new Error("the text holds no job");
  return jobs;
}
