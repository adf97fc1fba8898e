// New job: YAML as `csched apply -f` takes it; a job that exists already
// is replaced, as apply does.
import { useState } from "preact/hooks";
import { ApiError, call, Scheduler } from "../api";
import { yamlToJobs } from "../jobyaml";
import { navigate } from "../router";
import { ErrorBox, Page, Status } from "../ui";

const example = `name: hello
shell: echo hello; sleep 5; echo done >&2
schedule: "*/15 * * * *"
time_zone: Europe/Berlin
labels: {team: core}
timeout_seconds: 600
`;

export function NewJobPage() {
  const [text, setText] = useState(example);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState("");

  async function apply(e: Event) {
    e.preventDefault();
    setError(null);
    const done: string[] = [];
    try {
      for (const job of yamlToJobs(text)) {
        try {
          await call(Scheduler.method.createJob, { job });
          done.push(`${job.name} created`);
        } catch (err) {
          if (!(err instanceof ApiError) || err.code !== "already_exists") throw err;
          await call(Scheduler.method.updateJob, { job });
          done.push(`${job.name} updated`);
        }
      }
      const first = done[0].split(" ")[0];
      navigate(done.length === 1 ? `/jobs/${encodeURIComponent(first)}` : "/");
    } catch (err) {
      setStatus(done.join(", "));
      setError(err);
    }
  }

  return (
    <Page title="New job">
      <form class="newjob" onSubmit={apply}>
        <label for="yaml">
          The job as YAML, as <code>csched apply -f</code> takes it (one job, a list, or{" "}
          <code>jobs: [...]</code>); a job that exists is replaced.
        </label>
        <textarea
          id="yaml"
          rows={16}
          spellcheck={false}
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit">Create or replace</button>
      </form>
      <Status text={status} />
      <ErrorBox error={error} />
    </Page>
  );
}
