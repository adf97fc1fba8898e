# bash completion for csched: commands, their flags and values, and job
# names from the server (csched job list). Installed as
# share/bash-completion/completions/csched; source it by hand elsewhere.
# shellcheck disable=SC2207 # COMPREPLY=($(compgen ...)) is the completion idiom

_csched_jobs() {
    csched "${_csched_global[@]}" job list 2>/dev/null | awk 'NR > 1 { print $1 }'
}

_csched_contexts() {
    csched -o json config get-contexts 2>/dev/null | tr '{,' '\n' |
        sed -n 's/^"name":"\(.*\)"$/\1/p'
}

_csched() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion -n = || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    local global="--server -o --output --timeout --wait-for-ready --ca --cert --key
        --token-file --token --context --version --help"
    local commands="job apply trigger runs run cancel logs watch slots pause resume
        backfill stats health replicas hooks audit token config version completion help ui"
    local cmd="" sub="" i
    _csched_global=()
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --server | --timeout | --ca | --cert | --key | --token-file | --token | -o | --output | --context)
            _csched_global+=("${words[i]}" "${words[i + 1]}")
            ((i++))
            ;;
        -*) ;;
        *)
            if [[ -z $cmd ]]; then
                cmd=${words[i]}
            elif [[ -z $sub ]]; then
                sub=${words[i]}
            fi
            ;;
        esac
    done

    case $prev in
    -o | --output)
        COMPREPLY=($(compgen -W "table wide json yaml" -- "$cur"))
        return
        ;;
    -f | --file | --ca | --cert | --key | --token-file)
        COMPREPLY=($(compgen -f -- "$cur"))
        return
        ;;
    --context)
        COMPREPLY=($(compgen -W "$(_csched_contexts)" -- "$cur"))
        return
        ;;
    --sort-by)
        COMPREPLY=($(compgen -W "name next last running" -- "$cur"))
        return
        ;;
    --state)
        if [[ $cmd == job ]]; then
            COMPREPLY=($(compgen -W "running paused failed never-run" -- "$cur"))
            return
        fi
        COMPREPLY=($(compgen -W "queued starting running succeeded failed timed_out
            cancelled lost" -- "$cur"))
        return
        ;;
    --job)
        COMPREPLY=($(compgen -W "$(_csched_jobs)" -- "$cur"))
        return
        ;;
    --outcome)
        COMPREPLY=($(compgen -W "started skipped" -- "$cur"))
        return
        ;;
    --misfire)
        COMPREPLY=($(compgen -W "skip run_once run_all" -- "$cur"))
        return
        ;;
    --overlap)
        COMPREPLY=($(compgen -W "allow forbid replace queue_one" -- "$cur"))
        return
        ;;
    --retry-on)
        COMPREPLY=($(compgen -W "failure timeout failure,timeout" -- "$cur"))
        return
        ;;
    --kill-signal)
        COMPREPLY=($(compgen -W "TERM INT HUP QUIT USR1 USR2" -- "$cur"))
        return
        ;;
    --server | --timeout | --token | --env | --label | --secret-env | --shell | --workdir | \
        --count | --limit | --at | --in | --from | --to | --since | --until | --reason | \
        --idempotency-key | --attempt | --after-seq | -l | --selector)
        return
        ;;
    esac

    local job_flags="-- --shell --env --secret-env --label --workdir --run-as-user
        --run-as-group --max-running --timeout --timeout-seconds --max-attempts
        --retry-backoff-ms --retry-initial-ms --retry-max-ms --retry-multiplier
        --retry-jitter --retry-on --run-deadline-seconds --kill-signal --kill-grace-seconds
        --schedule --time-zone --misfire --overlap --jitter-seconds --max-catchup
        --starting-deadline-seconds"
    local words_now="" names=false
    case $cmd in
    "") words_now="$commands $global" ;;
    job)
        case $sub in
        "") words_now="create update get list delete next graph causes" ;;
        list) words_now="-l --selector --state --absolute --sort-by -w --watch" ;;
        create) words_now="$job_flags" ;;
        update) words_now="$job_flags" names=true ;;
        get | delete) names=true ;;
        next) words_now="--count" names=true ;;
        graph) words_now="--dot" names=true ;;
        causes) words_now="--limit" names=true ;;
        esac
        ;;
    apply) words_now="-f --file --dry-run --prune -l --selector" ;;
    trigger) words_now="--env --idempotency-key --at --in --wait -v --verbose --logs" names=true ;;
    runs) words_now="--job -l --selector --state --since --limit -w --watch" ;;
    logs) words_now="--previous --attempt --stdout --stderr -f --follow" names=true ;;
    run) words_now="--previous" names=true ;;
    watch) words_now="--job --after-seq" ;;
    slots) words_now="-l --selector --outcome --limit -w --watch" names=true ;;
    pause) words_now="--reason" names=true ;;
    resume) names=true ;;
    backfill) words_now="--from --to" names=true ;;
    audit) words_now="--identity --method --job --run --since --until --limit" ;;
    token) [[ -z $sub ]] && words_now="new" ;;
    completion) [[ -z $sub ]] && words_now="bash zsh fish" ;;
    config)
        case $sub in
        "") words_now="get-contexts current-context use-context set-context" ;;
        set-context) words_now="--server --ca --cert --key --token-file -o --output" ;;
        use-context)
            COMPREPLY=($(compgen -W "$(_csched_contexts)" -- "$cur"))
            return
            ;;
        esac
        ;;
    help) [[ -z $sub ]] && words_now="$commands" ;;
    esac
    if [[ $cur == -* || $names == false ]]; then
        COMPREPLY=($(compgen -W "$words_now --help" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_csched_jobs)" -- "$cur"))
    fi
}

complete -F _csched csched
