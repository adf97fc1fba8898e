// The console's own logic, without a browser: a schedule in words, and a
// job to the YAML of `csched apply -f` and back. Run by `npm test` (and
// ctest console_units).
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { scheduleWords } from "../src/cron";
import { JobSchema, Misfire, Overlap, RetryOn } from "../src/gen/csched/v1/scheduler_pb";
import { jobToYaml, yamlToJobs } from "../src/jobyaml";

test("schedules in words", () => {
  const cases: [string, string, string][] = [
    ["", "", "only when triggered"],
    ["30 3 * * *", "Europe/Berlin", "every day at 03:30 (Europe/Berlin)"],
    ["*/15 * * * *", "", "every 15 minutes (UTC)"],
    ["0 9 * * 1-5", "UTC", "at 09:00 on Monday to Friday (UTC)"],
    ["0 6,18 1 * *", "UTC", "at 06:00 and 18:00 on day 1 of the month (UTC)"],
    ["5 * * * *", "UTC", "every hour at minute 5 (UTC)"],
    ["* * * * * *", "UTC", "every second (UTC)"],
    ["*/5 * * * * *", "UTC", "every 5 seconds (UTC)"],
    ["@daily", "Asia/Tokyo", "every day at 00:00 (Asia/Tokyo)"],
    ["@every 90s", "", "every 90s"],
    ["@every 1h from 00:30", "", "every 1h from 00:30"],
    ["0 0 L * *", "UTC", 'cron "0 0 L * *" (UTC)'],
  ];
  for (const [text, zone, words] of cases) assert.equal(scheduleWords(text, zone), words, text);
});

test("a job goes to YAML and back unchanged", () => {
  const job = create(JobSchema, {
    name: "sync",
    command: ["rsync", "-a", "/src", "/dst"],
    env: { B: "2", A: "1" },
    triggerEnv: ["DRY_RUN"],
    labels: { team: "core" },
    secretEnv: {
      TOKEN: { source: { case: "file", value: "/etc/csched/token" } },
      KEY: { source: { case: "serverEnv", value: "SYNC_KEY" } },
    },
    timeoutSeconds: 600,
    maxAttempts: 3,
    killSignal: "INT",
    retry: { initialBackoffMs: 300, multiplier: 2, jitter: 0.1, retryOn: RetryOn.FAILURE_AND_TIMEOUT },
    schedule: {
      text: "*/5 * * * *",
      timeZone: "Europe/Berlin",
      misfire: Misfire.RUN_ONCE,
      overlap: Overlap.QUEUE_ONE,
      startingDeadlineSeconds: 30,
    },
  });
  const yaml = jobToYaml(job);
  assert.match(yaml, /^name: sync$/m);
  assert.match(yaml, /^misfire: run_once$/m);
  assert.match(yaml, /^ {2}TOKEN: file:\/etc\/csched\/token$/m);
  assert.match(yaml, /^ {2}retry_on: failure,timeout$/m);
  const [back] = yamlToJobs(yaml);
  assert.equal(jobToYaml(back), yaml);
  assert.deepEqual(back.schedule?.overlap, Overlap.QUEUE_ONE);
  assert.deepEqual(back.secretEnv.KEY.source, { case: "serverEnv", value: "SYNC_KEY" });
});

test("YAML in every form apply -f takes", () => {
  assert.deepEqual(
    yamlToJobs("name: a\nshell: 'true'\n---\n- name: b\n  shell: x\n---\njobs:\n  - name: c\n    shell: y\n").map(
      (j) => j.name,
    ),
    ["a", "b", "c"],
  );
  assert.throws(() => yamlToJobs("name: a\nshel: x\n"), /unknown key 'shel'/);
  assert.throws(() => yamlToJobs("name: a\nmisfire: sometimes\n"), /misfire: must be skip, run_once, run_all/);
  assert.throws(() => yamlToJobs(""), /holds no job/);
});
