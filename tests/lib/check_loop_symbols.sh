#!/bin/sh
# Fails when an object file that runs on the loop thread calls something that
# blocks or starts processes: those calls belong in *_work.c or *_thread.c
# files. Usage: check_loop_symbols.sh OBJECT...
set -u
forbidden="PQexec PQexecParams PQexecPrepared PQprepare PQdescribePrepared PQconnectdb
PQconnectdbParams PQsetdbLogin PQreset PQping PQpingParams PQcancel fsync fdatasync sync
sleep usleep nanosleep clock_nanosleep fork vfork clone clone3 posix_spawn posix_spawnp system popen
getaddrinfo gethostbyname"
list=$(printf '%s\n' $forbidden)
status=0
checked=0
for obj in "$@"; do
    case "$obj" in
    *_work.c.o | *_thread.c.o | *_work.o | *_thread.o) continue ;;
    esac
    if ! syms=$(nm -u "$obj"); then
        echo "check_loop_symbols: cannot read $obj" >&2
        exit 2
    fi
    checked=$((checked + 1))
    bad=$(printf '%s\n' "$syms" | awk '{ sub(/@.*/, "", $NF); print $NF }' |
        grep -Fx -e "$list" || true)
    if [ -n "$bad" ]; then
        echo "$obj: calls on the loop thread:" $bad >&2
        status=1
    fi
done
if [ "$checked" -eq 0 ]; then
    echo "check_loop_symbols: no object files given" >&2
    exit 2
fi
[ "$status" -eq 0 ] && echo "check_loop_symbols: $checked objects free of blocking calls"
exit $status
