#!/bin/sh
# Runs every test: the busted specs under Lua 5.4 (ik/core.so) and under LuaJIT
# (build/luajit/ik/core.so), then the C example build/examples/solve (one test), then the
# libFuzzer harnesses' committed corpus replayed by build/replay/fuzz_NAME (one test each).
# `make test` builds them all first. The full TAP output of each VM is kept in build/test/.
# The last line is always `N passed, N failed`; the exit status is 0 only when nothing
# failed and at least one test ran.
set -eu
cd "$(dirname "$0")/.."

logs=build/test
mkdir -p "$logs"
passed=0
failed=0

# fail NAME MESSAGE: one failure that is not a busted test (a missing build, a crash).
fail() {
    echo "FAIL [$1] $2"
    failed=$((failed + 1))
}

# specs VM MODULE [BUSTED-ARGS...]: runs the specs under VM with the C module MODULE.
specs() {
    vm=$1 module=$2
    shift 2
    if [ ! -f "$module" ]; then
        fail "$vm" "$module is missing (run make first)"
        return
    fi
    log="$logs/$vm.tap"
    # Our TAP handler, not busted's -o TAP: that one crashes on a spec file that does not load.
    rc=0
    busted --lua="$vm" -o tools/busted_tap.lua "$@" >"$log" 2>&1 || rc=$?

    # `ok N - # SKIP name` is a pending test; every `not ok` (failure, error, a file or
    # describe block that broke) is a failure. The `# ...` lines after one say why.
    awk -v vm="$vm" '
        /^ok [0-9]+ - # SKIP/ { skip++; shown = 0; next }
        /^ok [0-9]+ - /       { pass++; shown = 0; next }
        /^not ok [0-9]+ - /   { fail++; shown = 1; sub(/^not ok [0-9]+ - /, "");
                                print "FAIL [" vm "] " $0; next }
        /^# / && shown        { print "    " substr($0, 3); next }
        /^1\.\.[0-9]+$/       { plan = 1 }
        { shown = 0 }
        END { printf "%d %d %d %d\n", pass, fail, skip, plan > "/dev/stderr" }
    ' "$log" 2>"$log.counts"
    read -r p f s plan <"$log.counts"
    echo "$vm: $p passed, $f failed, $s pending (busted exit status $rc, log $log)"
    passed=$((passed + p))
    failed=$((failed + f))

    # busted died before the end of the suite (no `1..N` plan line), or says it failed
    # while no test did: count that too, and show how it ended.
    if [ "$plan" -ne 1 ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
        fail "$vm" "busted did not finish cleanly (exit status $rc); the end of $log:"
        tail -n 15 "$log" | sed 's/^/    /'
    elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        fail "$vm" "no spec ran"
    fi
}

specs lua5.4 ik/core.so
# The C module path goes before the one in .busted, so LuaJIT does not load the Lua 5.4 build.
specs luajit build/luajit/ik/core.so --cpath='build/luajit/?.so'

# The C example counts as one test: it must exit 0 and print a row per solver.
example=build/examples/solve
if [ ! -x "$example" ]; then
    fail C "$example is missing (run make first)"
elif ! "$example" >"$logs/solve.out" 2>&1; then
    fail C "$example exited with an error:"
    sed 's/^/    /' "$logs/solve.out"
elif ! { grep -q '^fabrik ' "$logs/solve.out" && grep -q '^ccd ' "$logs/solve.out" &&
    grep -q '^relax ' "$logs/solve.out" && grep -q '^two_bone ' "$logs/solve.out" &&
    grep -q '^all results as expected$' "$logs/solve.out"; }; then
    fail C "$example printed something unexpected:"
    sed 's/^/    /' "$logs/solve.out"
else
    echo "C example: 1 passed ($example)"
    passed=$((passed + 1))
fi

# The corpus of each libFuzzer harness -- its seeds and every crash it found, which must
# now pass -- replayed through the harness's checks by a plain build (fuzz/replay.c).
for name in chain two_bone; do
    replay=build/replay/fuzz_$name
    out="$logs/replay_$name.out"
    if [ ! -x "$replay" ]; then
        fail C "$replay is missing (run make first)"
    elif "$replay" "fuzz/corpus/$name" >"$out" 2>&1; then
        echo "fuzz corpus $name: 1 passed ($(tail -n 1 "$out") from fuzz/corpus/$name)"
        passed=$((passed + 1))
    else
        fail C "$replay fuzz/corpus/$name failed:"
        tail -n 8 "$out" | sed 's/^/    /'
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
