#!/bin/sh
# test_cli_e2e.sh BIN_DIR: drives the real csched CLI against a real cschedd
# (its embedded PostgreSQL, real minders) and checks outputs and exit codes,
# then serves the same state dir over TLS with bearer tokens.
set -u
bin=$1
# The contexts of whoever runs the test are not the test's.
unset CSCHED_CONFIG XDG_CONFIG_HOME
src=$(dirname "$0")
# shellcheck source-path=SCRIPTDIR source=cschedd_test.sh
. "$src/cschedd_test.sh"
passed=0
failed=0

# check NAME WANT_EXIT COMMAND...: runs csched, keeps stdout/stderr in
# $tmp/out and $tmp/err.
check() {
    name=$1
    want=$2
    shift 2
    "$bin/csched" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq "$want" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $name: exit $got, want $want: csched $*"
        sed 's/^/  out: /' "$tmp/out"
        sed 's/^/  err: /' "$tmp/err"
    fi
}

# expect NAME FILE PATTERN: the last output holds PATTERN (grep -E).
expect() {
    if grep -Eq -- "$3" "$tmp/$2"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $1: $2 lacks /$3/"
        sed 's/^/  /' "$tmp/$2"
    fi
}

# jv EXPR: EXPR over d, the last output parsed whole as one JSON document
# (python3's json module), printed; nothing when it does not parse.
jv() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
        "$tmp/out" "$1" 2>"$tmp/jv.err"
}

# jexpect NAME EXPR: EXPR over the last output (as jv) is true.
jexpect() {
    if [ "$(jv "$2")" = True ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $1: not $2"
        sed 's/^/  /' "$tmp/out" "$tmp/jv.err"
    fi
}

# A variable of the server's environment, for an env: secret reference.
CS_CLI_SECRET=from-the-server
export CS_CLI_SECRET
# The backfills below are of fixed hours of 2026-01-01: keep every slot.
start_server --max-running 8 --retention-days 0
# No --server and no CSCHED_SERVER: the CLI finds the socket from
# CSCHED_SOCKET, as it finds the default socket with nothing set.
unset CSCHED_SERVER
CSCHED_SOCKET="$tmp/csched.sock"
export CSCHED_SOCKET

check health 0 health
expect health out '^SERVING$'

cat >"$tmp/jobs.yaml" <<'YAML'
jobs:
  - name: ok
    command: ["true"]
  - name: three
    shell: "echo to-stdout; echo to-stderr >&2; exit 3"
  - name: killed
    shell: "kill -9 $$"
  - name: slow
    command: [sleep, "30"]
    timeout_seconds: 1
  - name: sleeper
    command: [sleep, "30"]
YAML
check apply 0 apply -f "$tmp/jobs.yaml"
expect apply out '^job sleeper created'
check apply_again 0 apply -f "$tmp/jobs.yaml"
expect apply_again out '^job ok unchanged \(version 1\)$'
# Several documents (one job, then a list), a label to prune by: a changed
# job is updated, and --dry-run shows the diff and changes nothing.
cat >"$tmp/multi.yaml" <<'YAML'
name: ok
command: ["true"]
labels: {app: demo}
---
- name: m1
  shell: "echo m1"
  labels: {app: demo}
- name: m2
  shell: "echo m2"
  labels: {app: demo}
YAML
check multi_dry 0 apply -f "$tmp/multi.yaml" --dry-run
expect multi_dry out '^job ok would be updated$'
expect multi_dry out '^    \+ labels\.app: "demo"$'
expect multi_dry out '^job m1 would be created$'
expect multi_dry out '^    \+ shell: "echo m1"$'
check multi_dry_get 0 job get ok
expect multi_dry_get out '^version: +1$'
check multi 0 -o json apply -f "$tmp/multi.yaml"
jexpect multi '[(r["name"], r["action"], r["line"]) for r in d["results"]] == [("ok", "updated", 1), ("m1", "created", 5), ("m2", "created", 8)]'
check multi_again 0 apply -f "$tmp/multi.yaml"
[ "$(grep -c '^job [a-z0-9]* unchanged (version [12])$' "$tmp/out")" -eq 3 ] &&
    passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL multi_again"; cat "$tmp/out"; }
# m2 gone from the file: --prune deletes it by its label, after a dry run
# that says so; jobs without the label stay.
sed '/- name: m2/,$d' "$tmp/multi.yaml" >"$tmp/pruned.yaml"
check prune_dry 0 apply -f "$tmp/pruned.yaml" --prune -l app=demo --dry-run
expect prune_dry out '^job m2 would be deleted$'
expect prune_dry out '^    - shell: "echo m2"$'
check prune_dry_kept 0 job get m2
check prune 0 apply -f "$tmp/pruned.yaml" --prune -l app=demo
expect prune out '^job m2 deleted$'
check prune_gone 85 job get m2
check prune_kept 0 job get three
check prune_alone 64 apply -f "$tmp/pruned.yaml" --prune
# Strict types; a server-side error names the file and line of its job.
printf 'name: q\nshell: "true"\ntimeout_seconds: "60"\n' >"$tmp/quoted.yaml"
check apply_quoted 65 apply -f "$tmp/quoted.yaml"
expect apply_quoted err 'quoted.yaml:3: timeout_seconds: must be a number, not the string "60"'
printf -- '- name: fine\n  shell: "true"\n- name: bad-signal\n  shell: "true"\n  kill_signal: NOPE\n' \
    >"$tmp/server_bad.yaml"
check apply_server_bad 83 apply -f "$tmp/server_bad.yaml"
expect apply_server_bad err '^csched: .*server_bad.yaml:3: apply job bad-signal: INVALID_ARGUMENT: '
expect apply_server_bad out '^job fine created'
printf 'jobs:\n  - name: x\n    shel: y\n' >"$tmp/bad.yaml"
check apply_bad 65 apply -f "$tmp/bad.yaml"
expect apply_bad err 'bad.yaml:3: unknown key .shel.'
check apply_missing 66 apply -f "$tmp/none.yaml"
# after: applied, shown by job get (table, JSON), applied again unchanged,
# a cycle refused; job graph as text and DOT; job causes after a trigger.
cat >"$tmp/after.yaml" <<'YAML'
- name: dep-root
  shell: "true"
- name: dep-mid
  shell: "true"
  after: [dep-root]
- name: dep-sink
  shell: "true"
  after:
    - {job: dep-mid, on: succeeded}
    - job: dep-root
      on: any
YAML
check after_apply 0 apply -f "$tmp/after.yaml"
check after_again 0 apply -f "$tmp/after.yaml"
expect after_again out '^job dep-sink unchanged \(version 1\)$'
check after_get 0 job get dep-sink
expect after_get out '^after: +dep-mid \(on succeeded\), dep-root \(on any\)$'
check after_json 0 -o json job get dep-sink
jexpect after_json '[(a["job"], a.get("on")) for a in d["after"]] == [("dep-mid", "DEPENDENCY_ON_SUCCEEDED"), ("dep-root", "DEPENDENCY_ON_ANY")]'
check after_graph 0 job graph dep-sink
expect after_graph out '^  dep-root -> dep-mid  \(on succeeded\)$'
expect after_graph out '^  dep-mid -> dep-sink  \(on succeeded\)$'
expect after_graph out '^  dep-root -> dep-sink  \(on any\)$'
check after_dot 0 job graph dep-sink --dot
expect after_dot out '^digraph "dep-sink" \{$'
expect after_dot out '^  "dep-mid" -> "dep-sink" \[label="succeeded"\];$'
printf -- '- name: dep-root\n  shell: "true"\n  after: [dep-sink]\n' >"$tmp/cycle.yaml"
check after_cycle 83 apply -f "$tmp/cycle.yaml"
expect after_cycle err 'dep-root -> dep-sink -> dep-mid -> dep-root'
check after_trigger 0 trigger dep-root --wait
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    "$bin/csched" job causes dep-sink >"$tmp/out" 2>&1
    grep -q 'ran: run' "$tmp/out" && break
    sleep 0.5
done
check after_causes 0 job causes dep-sink
expect after_causes out 'run:[0-9]+  ran: run [0-9]+$'
expect after_causes out '^    after dep-mid run [0-9]+$'
# Help per command; bash completion of commands, flags and job names.
check help_create 0 job create --help
expect help_create out '^usage: csched job create NAME'
expect help_create out '^  --max-running N '
check help_logs 0 logs --help
expect help_logs out '^  -f, --follow '
if grep -q '^commands:' "$tmp/out"; then
    failed=$((failed + 1))
    echo "FAIL help_logs: the global usage"
else passed=$((passed + 1)); fi
# The top-level help: a line per command, examples; csched help CMD is
# COMMAND --help; a near miss names what was meant.
check help_top 0 --help
expect help_top out '^  trigger +start a run of a job'
expect help_top out '^examples:$'
check help_cmd 0 help logs
expect help_cmd out '^  -f, --follow '
check help_unknown 64 help nope
check meant_cmd 64 tirgger ok
expect meant_cmd err "^csched: unknown command 'tirgger'; did you mean 'trigger'\?"
check meant_flag 64 trigger ok --wiat
expect meant_flag err "unknown flag '--wiat'; did you mean '--wait'\?"
check meant_sub 64 job lsit
expect meant_sub err "did you mean 'list'\?"
# Versions: csched's, and the answering replica's from ListReplicas.
check version 0 version
expect version out '^client: csched [0-9]+\.[0-9]+\.[0-9]+$'
expect version out '^server: cschedd [0-9]+\.[0-9]+\.[0-9]+ \(replica [^)]+\), schema [1-9][0-9]*$'
check version_json 0 -o json version
jexpect version_json 'd["client"] == d["server"] and d["replica"] != "" and d["schema"] == '"$(ls "$src/../../../storage/migrations" | sed -n 's/^0*\([0-9][0-9]*\)_.*\.sql$/\1/p' | sort -n | tail -n 1)"'
# Completion scripts: bash's is the installed one, zsh's the same behind
# bashcompinit, fish's names the commands.
check completion_bash 0 completion bash
cmp -s "$tmp/out" "$src/../../../client/cli/csched.bash" && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL completion_bash: not csched.bash"; }
check completion_zsh 0 completion zsh
expect completion_zsh out '^autoload -U \+X bashcompinit && bashcompinit$'
check completion_fish 0 completion fish
expect completion_fish out "^complete -c csched -n __fish_use_subcommand -a trigger -d '"
expect completion_fish out "^complete -c csched -n '__fish_seen_subcommand_from trigger' -l wait$"
check completion_bad 64 completion tcsh
# complete WORDS...: what csched's completion offers for the last word.
complete_words() {
    PATH="$bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _csched; printf "%s\n" "${COMPREPLY[@]}"' complete "$src/../../../client/cli/csched.bash" "$@" >"$tmp/out"
}
complete_words csched jo
expect complete_cmd out '^job$'
complete_words csched job create --max-r
expect complete_flag out '^--max-running$'
complete_words csched -o ""
expect complete_output out '^yaml$'
complete_words csched trigger th
expect complete_job out '^three$'
complete_words csched rep
expect complete_replicas out '^replicas$'

check create 0 job create env-echo --env GREETING=hello -- /bin/sh -c 'echo $GREETING'
check create_dup 86 job create env-echo -- true
expect create_dup err '^csched: create job env-echo: ALREADY_EXISTS: '
check create_bad_name 83 job create 'bad name!' -- true
expect create_bad_name err 'INVALID_ARGUMENT'
check create_usage 64 job create nocmd
check get_json 0 -o json job get env-echo
jexpect get_json 'd["env"] == {"GREETING": "hello"} and d["version"] == "1"'
check get_yaml 0 -o yaml job get env-echo
yaml_ok=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1]))
print(d["env"] == {"GREETING": "hello"} and d["version"] == "1" and d["command"][0] == "/bin/sh")' "$tmp/out")
[ "$yaml_ok" = True ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL get_yaml"; cat "$tmp/out"; }
check list_json 0 -o json job list
jexpect list_json 'd["nextPageToken"] == "" and "env-echo" in [j["name"] for j in d["jobs"]]'
check list_yaml 0 -o yaml job list
yaml_ok=$(python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1]))
print("env-echo" in [j["name"] for j in d["jobs"]] and d["nextPageToken"] == "")' "$tmp/out")
[ "$yaml_ok" = True ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL list_yaml"; cat "$tmp/out"; }
check get_missing 85 job get nope
expect get_missing err '^csched: get job nope: NOT_FOUND: '

check wait_ok 0 trigger ok --wait
expect wait_ok out '^run [0-9]+ succeeded: exit 0$'
# Quiet by default: the run's id at the start, one line at the end; -v says
# every state change between.
expect wait_ok err '^run [0-9]+ of ok: queued$'
[ "$(wc -l <"$tmp/err")" -eq 1 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
    passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL wait_quiet"; cat "$tmp/err"; }
check wait_verbose 0 trigger ok --wait -v
expect wait_verbose err '^run [0-9]+: attempt 1 running$'
expect wait_verbose err '^run [0-9]+: succeeded$'
check wait_three 3 trigger three --wait
check wait_killed 137 trigger killed --wait
check wait_timeout 124 trigger slow --wait
check wait_env 0 -o json trigger env-echo --env GREETING=bye --wait
expect wait_env out '"state":"RUN_STATE_SUCCEEDED"'
run_id=$(jv 'd["id"]')
check logs_env 0 logs "$run_id"
expect logs_env out '^bye$'
# By job: its latest run, or the one before; trigger --wait --logs streams
# the output (stdout holds it alone) and ends with the run's code.
check wait_env_again 0 trigger env-echo --env GREETING=again --wait
check logs_job 0 logs env-echo
expect logs_job out '^again$'
check logs_job_previous 0 logs env-echo --previous
expect logs_job_previous out '^bye$'
check run_job 0 run env-echo --previous
expect run_job out "^run: +$run_id\$"
check logs_job_none 85 logs no-such-job
expect logs_job_none err 'job no-such-job has no run'
check logs_id_previous 64 logs "$run_id" --previous
check wait_logs 0 trigger env-echo --env GREETING=streamed --wait --logs
[ "$(cat "$tmp/out")" = streamed ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL wait_logs: stdout is not the output alone"; cat "$tmp/out"; }
expect wait_logs err '^run [0-9]+ succeeded: exit 0$'
check logs_retry_create 0 job create echo-retry --max-attempts 2 --retry-initial-ms 100 \
    --retry-on failure --shell 'echo "try $CSCHED_ATTEMPT"; exit 4'
check wait_logs_retry 4 trigger echo-retry --wait --logs
[ "$(grep -c '^try' "$tmp/out")" -eq 2 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL wait_logs_retry: not both attempts output"; cat "$tmp/out" "$tmp/err"; }
check logs_no_wait 64 trigger env-echo --logs

# Who a job runs as: as root, the user named; otherwise only cschedd's own.
if [ "$(id -u)" -eq 0 ]; then
    check create_as 0 job create as-nobody --run-as-user nobody --shell 'id -un'
    check get_as 0 job get as-nobody
    expect get_as out '^run_as_user: +nobody$'
    check wait_as 0 -o json trigger as-nobody --wait
    run_id=$(jv 'd["id"]')
    check logs_as 0 logs "$run_id"
    expect logs_as out '^nobody$'
    check create_as_unknown 83 job create as-nobody-else --run-as-user no-such-user-csched -- true
    expect create_as_unknown err 'INVALID_ARGUMENT: job.run_as_user "no-such-user-csched": no such user'
    # A user with no role: the refusal alone, no empty table before it.
    if runuser -u nobody -- "$bin/csched" --help >/dev/null 2>&1; then
        for list in "job list" runs; do
            # shellcheck disable=SC2086 # the list command is two words
            runuser -u nobody -- "$bin/csched" $list >"$tmp/out" 2>"$tmp/err"
            got=$?
            if [ "$got" -eq 87 ] && [ ! -s "$tmp/out" ]; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
                echo "FAIL nobody $list: exit $got, want 87 and nothing on stdout:"
                sed 's/^/  /' "$tmp/out"
            fi
            expect "nobody_$list" err 'PERMISSION_DENIED: List(Jobs|Runs) needs role viewer'
        done
    fi
else
    check create_as_other 89 job create as-root --run-as-user root -- true
    expect create_as_other err 'FAILED_PRECONDITION: cschedd runs as uid'
fi

"$bin/csched" trigger sleeper --wait -v >"$tmp/cancel.out" 2>"$tmp/cancel.err" &
waiter=$!
i=0
while ! grep -q running "$tmp/cancel.err" && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
cancel_id=$(sed -n 's/^run \([0-9]*\) of sleeper.*/\1/p' "$tmp/cancel.err")
check cancel 0 cancel "$cancel_id"
wait "$waiter"
got=$?
if [ "$got" -eq 125 ]; then passed=$((passed + 1)); else
    failed=$((failed + 1))
    echo "FAIL wait_cancelled: exit $got, want 125"
fi

check runs 0 -o json runs --job three
jexpect runs 'd["runs"][0]["exitCode"] == 3 and d["runs"][0]["jobName"] == "three"'
check runs_state 0 runs --state timed_out
expect runs_state out 'slow +timed_out'
# Times show their zone; the columns line up (STATE starts where it does in
# the header).
expect runs_state out ' [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{2}:[0-9]{2} '
col=$(awk 'NR == 1 { h = index($0, "STATE") } NR == 2 { print (index($0, "timed_out") == h) }' \
    "$tmp/out")
[ "$col" = 1 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL runs_align"; cat "$tmp/out"; }
# --state and --since on the server.
check runs_since 0 runs --since 1h --state failed
expect runs_since out '^[0-9]+ +three +failed +exit 3 '
check runs_since_none 0 runs --since "@$(($(date +%s) + 60))"
[ "$(wc -l <"$tmp/out")" -eq 1 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL runs_since_none: rows after the header"; cat "$tmp/out"; }
check runs_since_bad 64 runs --since yesterday
# An array: one trigger, its id printed; its runs listed by it; cancelled
# as a whole (docs/cli.md, "trigger JOB").
check array_create 0 job create arr -- sleep 30
check array_trigger 0 trigger arr --array 0-5%2
expect array_trigger out '^array [0-9]+ \(runs from [0-9]+, index 0 on\) of arr: queued$'
array_id=$(sed -E 's/^array ([0-9]+) .*/\1/' "$tmp/out")
check array_runs 0 runs --array "$array_id"
[ "$(grep -c ' arr ' "$tmp/out")" -eq 6 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL array_runs: not 6 runs"; cat "$tmp/out"; }
check array_runs_job 83 runs --array "$array_id" --job arr
check array_cancel 0 cancel --array "$array_id"
expect array_cancel out "^array $array_id: cancelled"
check array_cancelled 0 runs --array "$array_id" --state cancelled
[ "$(grep -c ' arr ' "$tmp/out")" -ge 4 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL array_cancelled: the waiting ones not cancelled"; cat "$tmp/out"; }
check array_bad 64 trigger arr --array 5-2
check array_wait 64 trigger arr --array 3 --wait
check array_cap_alone 64 trigger arr --array-max-running 2
# runs -w: the listing, then each change of a run as a row under it. The
# watch is stopped once its rows have come (its deadline is for a loaded
# machine, as the ones below).
check watch_create 0 job create watched -- true
"$bin/csched" --timeout 30 runs -w --job watched >"$tmp/runs_w" 2>&1 &
runs_w=$!
i=0
while ! grep -q '^ID' "$tmp/runs_w" && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
check watch_trigger 0 trigger watched --wait
i=0
while ! grep -q ' succeeded ' "$tmp/runs_w" && [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill "$runs_w" 2>/dev/null
wait "$runs_w"
expect runs_watch runs_w '^[0-9]+ +watched +queued '
expect runs_watch runs_w '^[0-9]+ +watched +succeeded +exit 0 '
col=$(awk 'NR == 1 { h = index($0, "STATE") } / succeeded / { print (index($0, "succeeded") == h) }' \
    "$tmp/runs_w")
[ "$col" = 1 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL runs_watch_align"; cat "$tmp/runs_w"; }
# job list -w: a row for a job each time it changes with one of its runs, only of
# the jobs the selector matches. The watches are stopped once their rows
# have come (their deadline is for a slow build, e.g. under ASan).
check watch_labelled 0 job create watched-l --label env=watch -- true
"$bin/csched" --timeout 30 job list -w -l env=watch >"$tmp/jobs_w" 2>&1 &
jobs_w=$!
"$bin/csched" --timeout 30 runs -w -l env=watch >"$tmp/runs_wl" 2>&1 &
runs_wl=$!
i=0
while ! { grep -q '^NAME' "$tmp/jobs_w" && grep -q '^ID' "$tmp/runs_wl"; } && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
check watch_trigger_other 0 trigger watched --wait
check watch_trigger_labelled 0 trigger watched-l --wait
i=0
while ! grep -q 'SUCCEEDED' "$tmp/jobs_w" && [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
i=0
while ! grep -q ' succeeded ' "$tmp/runs_wl" && [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill "$jobs_w" "$runs_wl" 2>/dev/null
wait "$jobs_w" "$runs_wl"
expect runs_watch_selector runs_wl '^[0-9]+ +watched-l +succeeded +exit 0 '
[ "$(grep -c ' watched ' "$tmp/runs_wl")" -eq 0 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL runs_watch_selector: a run of a job the selector does not match"; cat "$tmp/runs_wl"; }
expect jobs_watch jobs_w '^watched-l +- +no +- +SUCCEEDED [0-9]+s ago +0 *$'
[ "$(grep -c '^watched ' "$tmp/jobs_w")" -eq 0 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL jobs_watch: a row of a job the selector does not match"; cat "$tmp/jobs_w"; }
# A change of its runs that leaves the row as it was (queued, starting,
# running) prints it once.
[ -z "$(grep '^watched-l ' "$tmp/jobs_w" | uniq -d)" ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL jobs_watch_changes: a row printed twice as it was"; cat "$tmp/jobs_w"; }
# slots -w: each new slot as the job's runs change.
check ticker_create 0 job create slot-ticker --schedule '@every 1s' -- true
# It ends at the deadline, however it says so.
"$bin/csched" --timeout 4 slots slot-ticker -w >"$tmp/slots_w" 2>&1
check ticker_pause 0 pause slot-ticker
[ "$(grep -c ' started ' "$tmp/slots_w")" -ge 3 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL slots_watch: fewer than 3 started slots"; cat "$tmp/slots_w"; }
check run_missing 85 run 999999
check runs_three 0 runs --job three -o json
three_id=$(jv 'd["runs"][0]["id"]')
check run_three 0 run "$three_id"
expect run_three out '^outcome: +exit 3$'
check logs_both 0 logs "$three_id"
expect logs_both out '^to-stdout$'
expect logs_both err '^to-stderr$'
check logs_three 0 logs "$three_id" --stderr
expect logs_three out '^to-stderr$'
# Output past a log's cap (16 MiB): run and logs say how much was kept.
check cut_create 0 job create chatty --shell 'head -c 20000000 /dev/zero'
check cut_wait 0 -o json trigger chatty --wait
cut_id=$(jv 'd["id"]')
check cut_run 0 run "$cut_id"
expect cut_run out '^  attempt 1: stdout cut: its log kept 16777216 of 20000000 bytes written$'
check cut_logs 0 logs "$cut_id" --stdout
expect cut_logs err '^csched: stdout was cut: its log kept 16777216 of 20000000 bytes written$'
# Followed from the moment it is triggered, a run's output arrives in full.
check follow_create 0 job create ticker --shell 'echo one; sleep 1; echo two'
check follow_trigger 0 -o json trigger ticker
ticker_id=$(jv 'd["id"]')
check follow 0 logs "$ticker_id" -f
expect follow out '^one$'
expect follow out '^two$'
# Through a pipe, each line comes when the command writes it, not when the
# attempt ends: the command writes "two" only once the reader has seen
# "one" (a file the reader makes), and "late" if it waited 20 s in vain.
pipe_dir=$(mktemp -d)
chmod 755 "$pipe_dir" # the job's user looks for the file
check pipe_create 0 job create piped --timeout 60 --shell "echo one; i=0; \
while [ ! -e $pipe_dir/seen ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done; \
if [ -e $pipe_dir/seen ]; then echo two; else echo late; fi"
check pipe_trigger 0 -o json trigger piped
pipe_id=$(jv 'd["id"]')
"$bin/csched" logs "$pipe_id" -f | while read -r line; do
    [ "$line" = one ] && : >"$pipe_dir/seen"
    echo "$line"
done >"$tmp/piped"
if [ "$(cat "$tmp/piped")" = "$(printf 'one\ntwo')" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1))
    echo "FAIL logs_pipe: the first line was not seen before the attempt ended"
    cat "$tmp/piped"
fi
rm -rf "$pipe_dir"
# watch -o json through a pipe: events show while the stream is open.
: >"$tmp/watch_pipe"
"$bin/csched" -o json watch --after-seq 0 --timeout 4 2>/dev/null | head -n 2 >"$tmp/watch_pipe" &
watch_pid=$!
i=0
while [ "$(wc -l <"$tmp/watch_pipe")" -lt 2 ] && [ $i -lt 30 ]; do
    sleep 0.1
    i=$((i + 1))
done
if [ "$(wc -l <"$tmp/watch_pipe")" -eq 2 ]; then passed=$((passed + 1)); else
    failed=$((failed + 1))
    echo "FAIL watch_pipe: nothing while the stream is open"
    cat "$tmp/watch_pipe"
fi
wait "$watch_pid"
check watch 84 -o json watch --after-seq 0 --timeout 1
expect watch out '^\{"seq":"1",'
# Retries with a backoff policy, and a run for a few seconds later.
check create_retry 0 job create flaky --max-attempts 3 --retry-initial-ms 100 \
    --retry-multiplier 2 --retry-on failure --run-deadline-seconds 60 --kill-signal INT \
    --kill-grace-seconds 2 --shell 'exit 1'
check get_retry 0 -o json job get flaky
jexpect get_retry 'd["retry"]["initialBackoffMs"] == 100 and d["killSignal"] == "INT"'
check get_retry_table 0 job get flaky
expect get_retry_table out '^retry: +initial 100 ms, max 0 ms, x2, jitter 0, on failure$'
check wait_flaky 1 trigger flaky --wait
check runs_flaky 0 -o json runs --job flaky
flaky_id=$(jv 'd["runs"][0]["id"]')
check run_flaky 0 run "$flaky_id"
expect run_flaky out '^  3 +failed .* 0\.200s '
check create_bad_retry 83 job create badretry --retry-multiplier 0.5 --shell true
expect create_bad_retry err 'retry.multiplier: 0.5 is less than 1'
check later_create 0 job create later -- true
check later 0 trigger later --in 1h
expect later out '^run [0-9]+ of later: queued \(starts at '
later_id=$(sed -n 's/^run \([0-9]*\) of later.*/\1/p' "$tmp/out")
check later_get 0 run "$later_id"
expect later_get out '^state: +queued'
expect later_get out '^not_before: '
check later_cancel 0 -o json cancel "$later_id"
expect later_cancel out '"state":"RUN_STATE_CANCELLED"'
check later_soon 0 trigger later --at "@$(($(date +%s) + 1))" --wait
check later_bad 64 trigger later --at tomorrow
check later_far 83 trigger later --in 800d
expect later_far err 'not_before_unix_ms'
check stats 0 -o json stats
jexpect stats 'd["maxRunning"] == 8'
# The replicas: a table with its header (a row per replica the database
# has, the server's own among them once it writes one), and the response
# whole in JSON; the server answers for none but itself.
check replicas 0 replicas
expect replicas out '^ID +STATE +EPOCH +ADDRESS +LEASE AGE +RUNS +VERSION$'
check replicas_json 0 -o json replicas
jexpect replicas_json 'isinstance(d["replicas"], list) and sum(r["self"] for r in d["replicas"]) <= 1'
check replicas_usage 64 replicas extra
# Schedules: flags, YAML keys, the next fire times in the job's zone.
check sched_create 0 job create nightly --schedule '30 2 * * *' --time-zone Europe/Berlin \
    --misfire run_once --overlap forbid -- true
check sched_get 0 job get nightly
expect sched_get out '^schedule: +30 2 \* \* \*$'
expect sched_get out '^misfire: +run_once$'
expect sched_get out '^overlap: +forbid$'
expect sched_get out ' 02:30:00 \+0[12]:00$'
check sched_next 0 job next nightly --count 2
expect sched_next out '^next fires:$'
[ "$(grep -c ' 02:30:00 ' "$tmp/out")" -eq 2 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL sched_next: not 2 fires"; cat "$tmp/out"; }
check sched_next_20 0 job next nightly --count 30
[ "$(grep -c ' 02:30:00 ' "$tmp/out")" -eq 20 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL sched_next_20: not 20 fires"; cat "$tmp/out"; }
check sched_json 0 -o json job get nightly
jexpect sched_json 'd["schedule"]["text"] == "30 2 * * *" and d["schedule"]["timeZone"] == "Europe/Berlin"'
jexpect sched_json 'd["nextFires"][0]["atUnixMs"].isdigit()'
check sched_bad 83 job create bad-sched --schedule '0 0 32 * *' -- true
expect sched_bad err 'job.schedule.text: cron field 3 \(day of month\): 32 is out of range 1-31'
check sched_bad_policy 64 job create bad-sched --overlap sometimes -- true
expect sched_bad_policy err 'overlap takes allow, forbid, replace or queue_one'
printf 'jobs:\n  - name: every\n    shell: "true"\n    schedule: "@every 1h"\n    overlap: queue_one\n' \
    >"$tmp/sched.yaml"
check sched_apply 0 apply -f "$tmp/sched.yaml"
check sched_apply_get 0 job get every
expect sched_apply_get out '^overlap: +queue_one$'
check sched_none 0 job next ok
expect sched_none out 'has no schedule'
check pause 0 pause every --reason 'disk swap'
expect pause out '^job every paused$'
check pause_get 0 job get every
expect pause_get out '^paused: +since .*: disk swap$'
check resume 0 resume every
expect resume out '^job every resumed$'
check backfill 0 backfill every --from 2026-01-01T00:00:00Z --to 2026-01-01T03:00:00Z
expect backfill out '^4 runs made, 0 slots already started$'
check backfill_again 0 backfill every --from 2026-01-01T00:00:00Z --to 1767236400
expect backfill_again out '^0 runs made, 4 slots already started$'
check slots 0 slots every --outcome started
expect slots out '^SLOT +OUTCOME +REASON +RUN'
expect slots out ' started +- +[0-9]+ .*made by BackfillJob$'
check slots_json 0 -o json slots every
jexpect slots_json 'd["slots"][0]["backfill"] is True'
check slots_missing 64 slots
# job list: what an operator scans for, times relative to now.
check job_list 0 job list
expect job_list out '^NAME +SCHEDULE +PAUSED +NEXT +LAST +RUNNING$'
expect job_list out '^nightly +30 2 \* \* \* +no +in [0-9]+[smhd] +- +0$'
expect job_list out '^three +- +no +- +FAILED [0-9]+[smhd] ago +0$'
expect job_list out '^every +@every 1h +no +in [0-9]+[smhd] +(SUCCEEDED [0-9]+[smhd] ago|-) +[0-9]+$'
check job_list_wide 0 -o wide job list
expect job_list_wide out '^NAME +SCHEDULE +PAUSED +NEXT +LAST +RUNNING +LIMITS +COMMAND$'
expect job_list_wide out '^flaky +.* +3x +sh -c exit 1$'
awk 'length($0) > 100 { bad = 1 } END { exit bad }' "$tmp/out" && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL job_list_wide: a line past 100 columns"; cat "$tmp/out"; }
check job_list_absolute 0 job list --absolute --sort-by next
expect job_list_absolute out '^every +@every 1h +no +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} '
check job_list_bad_sort 64 job list --sort-by age
# Label selectors, applied by the server: job list, runs and slots.
check label_prod 0 job create lab-prod --label env=prod --label tier=web -- true
check label_dev 0 job create lab-dev --label env=dev -- true
check job_list_selector 0 job list -l env=prod
expect job_list_selector out '^lab-prod '
[ "$(wc -l <"$tmp/out")" -eq 2 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL job_list_selector: not the header and one job"; cat "$tmp/out"; }
check job_list_selector_set 0 -o json job list --selector 'env in (prod, dev),!legacy'
jexpect job_list_selector_set '[j["name"] for j in d["jobs"]] == ["lab-dev", "lab-prod"]'
check job_list_selector_notin 0 -o json job list -l 'env notin (prod)'
jexpect job_list_selector_notin '"lab-dev" in [j["name"] for j in d["jobs"]] and "three" in [j["name"] for j in d["jobs"]] and "lab-prod" not in [j["name"] for j in d["jobs"]]'
check job_list_selector_bad 83 job list -l 'env=prod,tier in web'
expect job_list_selector_bad err "INVALID_ARGUMENT: label_selector: 'tier in web' is not a selector term"
check label_prod_run 0 trigger lab-prod --wait
check label_dev_run 0 trigger lab-dev --wait
check runs_selector 0 -o json runs -l tier
jexpect runs_selector '[r["jobName"] for r in d["runs"]] == ["lab-prod"]'
check runs_selector_ne 0 -o json runs -l 'env!=prod' --since 1h
jexpect runs_selector_ne '"lab-dev" in [r["jobName"] for r in d["runs"]] and "lab-prod" not in [r["jobName"] for r in d["runs"]]'
check runs_selector_bad 83 runs -l '!'
check slots_selector_none 0 slots every -l env
[ "$(wc -l <"$tmp/out")" -le 1 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL slots_selector_none: slots of a job without labels"; cat "$tmp/out"; }
check slots_selector 0 slots every -l '!env'
expect slots_selector out ' started +- +[0-9]+ .*made by BackfillJob$'
# job list --state, applied by the server with the selector; the restart
# below checks that the last run's end comes back with the jobs.
check job_list_failed 0 -o json job list --state failed
jexpect job_list_failed '"three" in [j["name"] for j in d["jobs"]] and "lab-prod" not in [j["name"] for j in d["jobs"]]'
check job_list_never 0 -o json job list --state never-run -l env
jexpect job_list_never '[j["name"] for j in d["jobs"]] == []'
check job_list_never_all 0 job list --state never-run
expect job_list_never_all out '^nightly '
if grep -Eq '^(three|lab-prod) ' "$tmp/out"; then
    failed=$((failed + 1)) && echo "FAIL job_list_never_all: a job that ran" && cat "$tmp/out"
else passed=$((passed + 1)); fi
check job_list_bad_state 64 job list --state sideways
expect job_list_bad_state err "--state takes running, paused, failed or never-run, not 'sideways'"
check delete 0 job delete ok
check delete_again 85 job delete ok
# Secrets: the command sees the values, job get only the references.
printf 'from-a-file\n' >"$tmp/secret"
check secret_create 0 job create secretive --secret-env FILE_S="file:$tmp/secret" \
    --secret-env ENV_S=env:CS_CLI_SECRET --shell 'echo "$FILE_S $ENV_S"'
check secret_run 0 -o json trigger secretive --wait
secret_id=$(jv 'd["id"]')
check secret_logs 0 logs "$secret_id"
expect secret_logs out '^from-a-file from-the-server$'
check secret_get 0 job get secretive
expect secret_get out "^  FILE_S=file:$tmp/secret\$"
expect secret_get out '^  ENV_S=env:CS_CLI_SECRET$'
expect secret_get out '^created_by: +unix:uid=[0-9]+\([^)]*\)$'
check secret_get_json 0 -o json job get secretive
jexpect secret_get_json 'd["secretEnv"]["ENV_S"] == {"serverEnv": "CS_CLI_SECRET"} and "file" in d["secretEnv"]["FILE_S"]'
check secret_bad_ref 64 job create badsecret --secret-env X=plain -- true
check secret_relative 83 job create badsecret --secret-env X=file:relative -- true
expect secret_relative err 'absolute path'
cat >"$tmp/secret.yaml" <<YAML
jobs:
  - name: yaml-secret
    shell: 'echo "\$S"'
    secret_env: {S: "file:$tmp/secret"}
YAML
check secret_apply 0 apply -f "$tmp/secret.yaml"
check secret_apply_run 0 trigger yaml-secret --wait
check run_by 0 run "$secret_id"
expect run_by out '^by: +unix:uid=[0-9]+\([^)]*\)$'
# The audit trail: the changes above, newest first, and a refusal.
check audit 0 audit --job ok
expect audit out '^[0-9]+ .* DeleteJob +unix:uid=[0-9]+\([^)]*\) +ok +OK$'
expect audit out ' UpdateJob +unix:uid=[0-9]+\([^)]*\) +ok +OK$'
check audit_refused 0 audit --job badsecret --method CreateJob
expect audit_refused out 'INVALID_ARGUMENT: .*absolute path'
check audit_json 0 -o json audit --method TriggerJob --job secretive --limit 1
jexpect audit_json "[(e['method'], e['jobName'], e['runId'], e['code']) for e in d['entries']] == [('TriggerJob', 'secretive', '$secret_id', 0)]"
check audit_since 0 audit --since 1h --until 2099-01-01T00:00:00Z --limit 2
check audit_bad_since 64 audit --since yesterday
# A command hook from a job file: run after the job, shown by csched hooks
# with its exit where a webhook has its HTTP status.
cat >"$tmp/cmdhook.yaml" <<'YAML'
name: cmdhooked
shell: "exit 2"
hooks:
  - name: note
    events: [failed]
    shell: 'echo "$CSCHED_JOB $CSCHED_OUTCOME $CSCHED_EXIT_CODE"'
YAML
check cmdhook_apply 0 apply -f "$tmp/cmdhook.yaml"
check cmdhook_run 2 trigger cmdhooked --wait
for _ in $(seq 100); do
    "$bin/csched" hooks cmdhooked | grep -q delivered && break
    sleep 0.1
done
check cmdhook_list 0 hooks cmdhooked
expect cmdhook_list out '^[0-9]+ .* note +failed +[0-9]+ +delivered +exit 0 +1 +- +-$'
check cmdhook_json 0 -o json hooks cmdhooked
jexpect cmdhook_json "d['deliveries'][0]['stdoutTail'] == 'cmdhooked FAILED 2\\n'"
check unreachable 94 --server 127.0.0.1:1 stats
expect unreachable err '^csched: stats: UNAVAILABLE: '

# Over TLS with a token: the same state dir, served again with TLS.
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=
# csched ui: the console's address, from the flag, the environment, or for
# the local socket the loopback one deploy/quickstart.sh serves.
check ui_local 0 ui
expect ui_local out '^http://127\.0\.0\.1:8080/$'
expect ui_local out 'csched token new NAME viewer'
check ui_url 0 ui --url https://sched.example:8443/
expect ui_url out '^https://sched\.example:8443/$'
CSCHED_CONSOLE_URL=https://env.example/
export CSCHED_CONSOLE_URL
check ui_env 0 ui
unset CSCHED_CONSOLE_URL
expect ui_env out '^https://env\.example/$'
check ui_tcp_unknown 64 --server sched.example:50051 ui
expect ui_tcp_unknown err 'give --url'
mkdir "$tmp/certs"
sh "$(dirname "$0")/../make_certs.sh" "$tmp/certs"
# The admin token from csched token new; the viewer's by the documented
# sha256sum one-liner of docs/security.md.
check token_new 0 token new cli-admin admin
grep -v '^#' "$tmp/out" | sed -n 1p >"$tmp/token"
grep -v '^#' "$tmp/out" | sed -n 2p >"$tmp/tokens"
expect token_new out '^cli-admin admin [0-9a-f]{64}$'
check token_bad_role 64 token new x root
printf 'cli-viewer viewer %s\n' "$(printf %s viewer-token | sha256sum | cut -d' ' -f1)" \
    >>"$tmp/tokens"
chmod 600 "$tmp/tokens"
start_server --listen 127.0.0.1:0 --tls-cert "$tmp/certs/server.pem" \
    --tls-key "$tmp/certs/server.key" --tokens-file "$tmp/tokens"
CSCHED_SERVER=$(cat "$tmp/ready")
export CSCHED_SERVER
check tls_health 0 --ca "$tmp/certs/ca.pem" --wait-for-ready health
check tls_token_file 0 --ca "$tmp/certs/ca.pem" --token-file "$tmp/token" job get three
check restart_failed 0 --ca "$tmp/certs/ca.pem" --token-file "$tmp/token" -o json job list \
    --state failed
jexpect restart_failed '"three" in [j["name"] for j in d["jobs"]] and "lab-prod" not in [j["name"] for j in d["jobs"]]'
check tls_no_token 96 --ca "$tmp/certs/ca.pem" stats
expect tls_no_token err 'UNAUTHENTICATED: .*Bearer'
check tls_viewer 87 --ca "$tmp/certs/ca.pem" --token viewer-token job delete three
expect tls_viewer err 'PERMISSION_DENIED: .*admin'
check tls_plaintext 94 stats
check tls_cert_no_key 64 --ca "$tmp/certs/ca.pem" --cert "$tmp/certs/ops.pem" stats
check tls_token_missing 66 --ca "$tmp/certs/ca.pem" --token-file "$tmp/nope" stats
CSCHED_CA="$tmp/certs/ca.pem"
CSCHED_TOKEN_FILE="$tmp/token"
export CSCHED_CA CSCHED_TOKEN_FILE
check tls_env 0 stats
unset CSCHED_CA CSCHED_TOKEN_FILE
# Contexts: the TLS server's address, CA and token file, named once in the
# config file at the XDG location (mode 0600, the token file's path, never
# the token), then used by name or as the current context.
XDG_CONFIG_HOME="$tmp/xdg"
export XDG_CONFIG_HOME
tls_server=$CSCHED_SERVER
unset CSCHED_SERVER
check ctx_set 0 config set-context tls --server "$tls_server" --ca "$tmp/certs/ca.pem" \
    --token-file "$tmp/token"
check ctx_set_local 0 config set-context local --server 127.0.0.1:1 -o json
[ "$(stat -c %a "$tmp/xdg/csched/config.yaml")" = 600 ] && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL ctx_mode: $(stat -c %a "$tmp/xdg/csched/config.yaml")"; }
if grep -q "$(cat "$tmp/token")" "$tmp/xdg/csched/config.yaml"; then
    failed=$((failed + 1))
    echo "FAIL ctx_no_token: the token is in the config file"
else passed=$((passed + 1)); fi
check ctx_token_refused 64 config set-context tls --token abc
check ctx_by_name 0 --context tls job get three
check ctx_after_command 0 job get three --context tls
check ctx_none 94 --server "$tls_server" stats
check ctx_use 0 config use-context tls
check ctx_current 0 stats
check ctx_get 0 config get-contexts
expect ctx_get out '^CURRENT +NAME +SERVER +TOKEN FILE +OUTPUT$'
expect ctx_get out '^\* +tls +'
# A flag wins over the context; the context's default output applies.
check ctx_flag_wins 94 --server 127.0.0.1:1 stats
check ctx_output 94 --context local stats
check ctx_unknown 64 --context nope stats
expect ctx_unknown err 'no such context'
# CSCHED_CONFIG names another file; a variable wins over the current
# context, not over a --context.
CSCHED_CONFIG="$tmp/other.yaml"
export CSCHED_CONFIG
check ctx_other_file 0 config set-context tls --server "$tls_server" --ca "$tmp/certs/ca.pem" \
    --token-file "$tmp/token"
check ctx_other_use 0 config use-context tls
CSCHED_SERVER=127.0.0.1:1
export CSCHED_SERVER
check ctx_env_wins 94 stats
check ctx_chosen_wins 0 --context tls stats
unset CSCHED_SERVER
unset CSCHED_CONFIG XDG_CONFIG_HOME

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
