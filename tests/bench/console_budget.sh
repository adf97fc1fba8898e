#!/bin/sh
# console_budget.sh BUILD_DIR: the web console's page budget (README.md,
# "The console's page budget"). Starts cschedd on its embedded PostgreSQL
# with the console on loopback, loads 10,000 jobs through the API (csched
# apply -f) and 100,000 finished runs by SQL (half of them one job's, the
# rest ten a job; cschedd is started again to hand out ids past them),
# then has chromium open the jobs page, that job's history
# and the timeline, and prints for each the time to first paint, to the
# page's data shown, and the largest API response. Figures only: nothing is
# judged. CS_BROWSER_PORT sets the port (default: one the kernel picks).
set -eu
build=$1
bin=$build/bin
dist=$build/client/console/dist
node_modules=$build/client/console/npm/node_modules
src=$(cd "$(dirname "$0")" && pwd)
jobs=${CS_BUDGET_JOBS:-10000}
runs=${CS_BUDGET_RUNS:-100000}
[ -f "$dist/index.html" ] || { echo "console_budget: no console in $dist (build the target console)"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../integration/cli/cschedd_test.sh
. "$src/../integration/cli/cschedd_test.sh"

"$bin/csched" token new budget admin | grep -v '^#' >"$tmp/made"
sed -n 1p "$tmp/made" >"$tmp/token"
sed -n 2p "$tmp/made" >"$tmp/tokens"
chmod 600 "$tmp/tokens"
port=${CS_BROWSER_PORT:-$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')}
start_server --http-listen "127.0.0.1:$port" --console-dir "$dist" --tokens-file "$tmp/tokens"
export CSCHED_SOCKET="$tmp/csched.sock"

t0=$(date +%s)
# Yearly, half a year away: no run of theirs starts while the runs below
# are written.
month=$((($(date +%-m) + 5) % 12 + 1))
awk -v n="$jobs" -v m="$month" 'BEGIN {
    for (i = 0; i < n; i++) {
        printf "- name: budget-%05d\n  shell: \"true\"\n  schedule: \"%d %d %d %d *\"\n", i, i % 60, i % 24, i % 28 + 1, m
        printf "  time_zone: Europe/Berlin\n  labels: {team: t%d}\n", i % 20
    }
}' >"$tmp/jobs.yaml"
"$bin/csched" apply -f "$tmp/jobs.yaml" >/dev/null
echo "console_budget: $jobs jobs made through the API in $(($(date +%s) - t0)) s" >&2

# Finished runs, by SQL, numbered on from the last id; the restart below
# makes cschedd hand out ids after them.
t0=$(date +%s)
PGPASSWORD=$(cat "$tmp/state/pg/password") psql -q -h "$tmp/state/pg" -U postgres -d postgres \
    -1 -v ON_ERROR_STOP=1 -v runs="$runs" -v jobs="$jobs" <<'SQL'
INSERT INTO runs (id, job_name, state, created_unix_ms, started_unix_ms, ended_unix_ms, exit_code,
                  triggered_by)
SELECT (SELECT coalesce(max(id), 0) FROM runs) + g,
       CASE WHEN g <= :runs / 2 THEN 'budget-00000'
            ELSE 'budget-' || lpad(((g * 7919) % :jobs)::text, 5, '0') END,
       CASE WHEN g % 10 = 0 THEN 5 ELSE 4 END,
       t, t + 100, t + 1100 + (g % 50) * 100, CASE WHEN g % 10 = 0 THEN 1 ELSE 0 END, 'schedule'
FROM generate_series(1, :runs) AS g,
     LATERAL (SELECT (extract(epoch FROM now()) * 1000)::bigint - (:runs - g) * 1700 AS t) AS ts;
INSERT INTO attempts (run_id, number, state, exit_code, started_unix_ms, ended_unix_ms)
SELECT id, 1, state, exit_code, started_unix_ms, ended_unix_ms FROM runs
WHERE NOT EXISTS (SELECT 1 FROM attempts WHERE run_id = runs.id);
ANALYZE;
SQL
echo "console_budget: $runs runs made by SQL in $(($(date +%s) - t0)) s" >&2
kill -TERM "$server_pid"
wait "$server_pid" || true
start_server --http-listen "127.0.0.1:$port" --console-dir "$dist" --tokens-file "$tmp/tokens"

CS_URL="http://127.0.0.1:$port/" CS_TOKEN=$(cat "$tmp/token") CS_JOB=budget-00000 \
    NODE_PATH=$node_modules node "$src/console_budget.mjs"
