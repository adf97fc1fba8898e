// The console's shell: the navigation, the login form when there is no
// session, and the page of the current route.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { logout, whenUnauthenticated } from "./api";
import { linkClick, navigate, usePath } from "./router";
import { LoginPage } from "./pages/login";
import { JobsPage } from "./pages/jobs";
import { JobPage } from "./pages/job";
import { NewJobPage } from "./pages/newjob";
import { RunPage } from "./pages/run";
import { TimelinePage } from "./pages/timeline";
import { HealthPage } from "./pages/health";

function route(path: string) {
  let m: RegExpExecArray | null;
  if (path === "/" || path === "/jobs") return <JobsPage />;
  if (path === "/new") return <NewJobPage />;
  if ((m = /^\/jobs\/([^/]+)$/.exec(path))) return <JobPage name={decodeURIComponent(m[1])} />;
  if ((m = /^\/runs\/(\d+)$/.exec(path))) return <RunPage id={m[1]} />;
  if (path === "/timeline") return <TimelinePage />;
  if (path === "/health") return <HealthPage />;
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        No page at {path}. <a href="/">See the jobs</a>.
      </p>
    </main>
  );
}

const pages: [string, string][] = [
  ["/", "Jobs"],
  ["/timeline", "Timeline"],
  ["/health", "Health"],
];

function App() {
  const path = usePath();
  const [loggedOut, setLoggedOut] = useState(false);
  useEffect(() => whenUnauthenticated(() => setLoggedOut(true)), []);
  useEffect(() => {
    document.title = `csched · ${path === "/" ? "jobs" : decodeURIComponent(path.slice(1))}`;
  }, [path]);
  const current = (p: string) =>
    p === "/" ? path === "/" || path.startsWith("/jobs") || path === "/new" : path.startsWith(p);

  return (
    <div onClick={linkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          csched
        </a>
        <nav aria-label="Pages">
          {pages.map(([p, label]) => (
            <a href={p} aria-current={current(p) ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        {!loggedOut && (
          <button
            class="link"
            type="button"
            onClick={async () => {
              await logout();
              setLoggedOut(true);
            }}
          >
            Log out
          </button>
        )}
      </header>
      {loggedOut ? (
        <LoginPage
          done={() => {
            setLoggedOut(false);
            navigate(location.pathname);
          }}
        />
      ) : (
        <div key={path}>{route(path)}</div>
      )}
    </div>
  );
}

render(<App />, document.getElementById("app")!);
