#!/bin/sh
# Fails when an object file that runs on the loop thread calls something that
# blocks or starts processes: those calls belong in *_work.c or *_thread.c
# files. Usage: check_loop_symbols.sh OBJECT...
set -u
forbidden="PQexec PQexecParams PQexecPrepared PQprepare PQdescribePrepared PQconnectdb
PQconnectdbParams PQsetdbLogin PQreset PQping PQpingParams PQcancel fsync fdatasync sync
sleep usleep nanosleep clock_nanosleep fork vfork posix_spawn posix_spawnp system popen
getaddrinfo gethostbyname"
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
    for sym in $forbidden; do
        if printf '%s\n' "$syms" | awk '{print $NF}' | sed 's/@.*//' | grep -qx "$sym"; then
            echo "$obj: calls $sym on the loop thread" >&2
            status=1
        fi
    done
done
if [ "$checked" -eq 0 ]; then
    echo "check_loop_symbols: no object files given" >&2
    exit 2
fi
if [ "$status" -eq 0 ]; then
    echo "check_loop_symbols: $checked objects free of blocking calls"
    echo "1 passed, 0 failed"
else
    echo "0 passed, 1 failed"
fi
exit $status
