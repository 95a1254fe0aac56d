#!/bin/sh
# Runs each libFuzzer harness (build/fuzz/fuzz_NAME, made by `make fuzz`) for SECONDS:
#   sh tools/fuzz.sh SECONDS NAME...
# Each starts from the committed corpus spec/fuzz/corpus/NAME (read only) and keeps what it finds
# in build/fuzz/corpus/NAME; a crash is saved as build/fuzz/crash-NAME-<sha1>: commit it to
# spec/fuzz/corpus/NAME/ once fixed, so that `make test` replays it. Prints one line per harness:
#   fuzz NAME: passed, N executions in S s (E/s), corpus C
# or FAIL with the end of the log (build/fuzz/NAME.log). Exit status 0 only when all passed.
# FUZZ_SEED (default 0: libFuzzer picks one) and FUZZ_RUNS (default -1: no limit) make a run
# repeatable: CI sets both, so a submission's CI fuzzes exactly what its author's run did.
set -eu
cd "$(dirname "$0")/.."
seconds=$1
shift
status=0
for name in "$@"; do
    bin=build/fuzz/fuzz_$name
    work=build/fuzz/corpus/$name
    log=build/fuzz/$name.log
    mkdir -p "$work"
    # -rss_limit_mb: the default (2 GB) with ASan's shadow memory is close to small CI machines
    if "$bin" -max_total_time="$seconds" -seed="${FUZZ_SEED:-0}" -runs="${FUZZ_RUNS:--1}" \
        -print_final_stats=1 -rss_limit_mb=1500 -timeout=20 \
        -artifact_prefix="build/fuzz/crash-$name-" "$work" "spec/fuzz/corpus/$name" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        corpus=$(ls "$work" | wc -l)
        echo "fuzz $name: passed, $runs executions (at most $seconds s, $rate/s), corpus $corpus (+ spec/fuzz/corpus/$name)"
    else
        echo "FAIL fuzz $name: see $log; the input is saved as build/fuzz/crash-$name-*:"
        grep -E -A2 'check failed|ERROR|runtime error|deadly signal' "$log" | head -n 12 | sed 's/^/    /'
        status=1
    fi
done
exit $status
