#!/bin/sh
#   sh spec/run.sh           (make test) every test: the busted specs under Lua 5.4
#                            (ik/core.so), under LuaJIT (build/luajit/ik/core.so) and under
#                            Lua 5.1, 5.2 and 5.3 (build/lua5.X/ik/core.so), and under Lua
#                            5.5 (build/lua5.5/ik/core.so) unless IK_LUA55_SKIP, from make
#                            test, says why not (or no lua5.5 is on PATH); the same specs
#                            again against ik.pure, the pure-Lua backend (IK_BACKEND=lua,
#                            spec/backend.lua: one suite, two backends), under LuaJIT
#                            (LÖVE's) and Lua 5.1 (love.js's), counted as luajit-pure and
#                            lua5.1-pure (sh spec/run.sh pure: in every VM), then
#                            the C example build/examples/solve, the C edge-scale test
#                            build/tests/edge_scale (spec/c/edge_scale_test.c), the threads
#                            test and the batch test's three builds (one test each), the
#                            rockspecs' file lists (tools/check_rockspec.sh), the libFuzzer
#                            harnesses' committed corpus replayed by build/replay/fuzz_NAME
#                            (one test each), the engine host build/examples/host (one
#                            test), the test inside LÖVE (spec/love/, its own counts) and
#                            the README's examples (tools/readme_check.sh, its own counts)
#   sh spec/run.sh asan      (make test-asan) the specs under Lua 5.4 with the module built
#                            with AddressSanitizer and UndefinedBehaviorSanitizer
#                            (build/asan/ik/core.so), the sanitizers' runtime preloaded
#   sh spec/run.sh valgrind  (make test-valgrind) the specs under Lua 5.4 run by valgrind's
#                            memcheck: no error and no definite leak, or one more failure
#   sh spec/run.sh windows   (make test-windows) the specs under wine: the Windows LuaJIT
#                            (build/windows/luajit/src/luajit.exe) with the folder for LÖVE
#                            (build/love/ik/: its core.dll and Lua files, make love-folder),
#                            run by tools/spec_runner.lua (busted's C modules do not load in
#                            a Windows LuaJIT), with Debian's luassert and say from
#                            /usr/share/lua/5.1 (Z:\usr\share\lua\5.1 in wine); then
#                            again against ik.pure (windows-pure)
# The make targets build what they need first. The full TAP output is kept in build/test/.
# The last line is always `N passed, N failed`; the exit status is 0 only when nothing
# failed and at least one test ran.
set -eu
mode=${1:-all}
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

# specs_run NAME MODULE COMMAND...: runs the specs with COMMAND (busted and its options, or
# whatever runs busted) and the C module MODULE into $logs/NAME.tap, and COMMAND's exit
# status into $logs/NAME.rc; nothing when MODULE is missing. Runs may go in parallel.
specs_run() {
    vm=$1 module=$2
    shift 2
    rm -f "$logs/$vm.tap" "$logs/$vm.rc"
    [ -f "$module" ] || return 0
    # Our TAP handler, not busted's -o TAP: that one crashes on a spec file that does not load.
    rc=0
    "$@" -o tools/busted_tap.lua >"$logs/$vm.tap" 2>&1 || rc=$?
    echo "$rc" >"$logs/$vm.rc"
}

# specs_count NAME MODULE: the counts of the run specs_run made; NAME labels them.
specs_count() {
    vm=$1 module=$2
    if [ ! -f "$module" ]; then
        fail "$vm" "$module is missing (run make first)"
        return
    fi
    log="$logs/$vm.tap"
    rc=$(cat "$logs/$vm.rc" 2>/dev/null || echo 127)
    touch "$log"

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

# specs NAME MODULE COMMAND...: specs_run, then specs_count.
specs() {
    specs_run "$@"
    specs_count "$1" "$2"
}

# pure_specs_run VM: the specs under VM (lua5.1 ... lua5.4, luajit) against ik.pure
# (IK_BACKEND=lua), counted as VM-pure. The differential specs (pure_*_spec.lua) are left
# out: they compare ik.pure with VM's ik.core whichever backend require("ik") gives, and ran
# in VM's own run.
pure_specs_run() {
    specs_run "$1-pure" "build/$1/ik/core.so" env IK_BACKEND=lua busted --lua="$1" \
        --cpath="build/$1/?.so" --exclude-pattern='^pure_'
}

# Lua 5.5, where make test found a lua5.5 and its headers (IK_LUA55_SKIP empty; otherwise it
# says why not, in one line). busted runs under it when its modules load there; Debian 12's
# do not (penlight 1.13 assigns to for-loop variables, which 5.5 makes read-only, and its
# luafilesystem is built for 5.4 and refuses 5.5), and then tools/spec_runner.lua runs the
# same specs with Debian's pure-Lua luassert and say, as for Windows.
lua55_skip() {
    if [ -n "${IK_LUA55_SKIP:-}" ]; then
        echo "lua5.5: skipped: ${IK_LUA55_SKIP}"
    elif ! command -v lua5.5 >/dev/null 2>&1; then
        echo "lua5.5: skipped: no lua5.5 command on PATH"
    else
        return 1
    fi
}

# lua55_specs_run NAME [BACKEND]: the specs under Lua 5.5, against the C core or (BACKEND
# lua) ik.pure.
lua55_specs_run() {
    if lua5.5 -e 'require("busted.runner")' >/dev/null 2>&1; then
        specs_run "$1" build/lua5.5/ik/core.so env IK_BACKEND="${2:-}" busted --lua=lua5.5 \
            --cpath='build/lua5.5/?.so'
    else
        specs_run "$1" build/lua5.5/ik/core.so env IK_BACKEND="${2:-}" lua5.5 tools/spec_runner.lua \
            --lpath='lua/?.lua;lua/?/init.lua;./?.lua;/usr/share/lua/5.4/?.lua;/usr/share/lua/5.4/?/init.lua' \
            --cpath='build/lua5.5/?.so' --helper=spec/backend.lua spec/*_spec.lua
    fi
}

# The C example counts as one test: it must exit 0 and print a row per solver.
c_example() {
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
}

# The C core at the edges of scale (spec/c/edge_scale_test.c): one test.
c_edge_scale() {
    test=build/tests/edge_scale
    if [ ! -x "$test" ]; then
        fail C "$test is missing (run make first)"
    elif "$test" >"$logs/edge_scale.out" 2>&1; then
        echo "C edge scale: 1 passed ($test: $(tail -n 1 "$logs/edge_scale.out"))"
        passed=$((passed + 1))
    else
        fail C "$test failed:"
        sed 's/^/    /' "$logs/edge_scale.out"
    fi
}

# What ik.h promises threads (spec/c/threads_test.c): one test.
c_threads() {
    test=build/tests/threads
    if [ ! -x "$test" ]; then
        fail C "$test is missing (run make test)"
    elif "$test" >"$logs/threads.out" 2>&1; then
        echo "C threads: 1 passed ($(tail -n 1 "$logs/threads.out"))"
        passed=$((passed + 1))
    else
        fail C "$test failed:"
        sed 's/^/    /' "$logs/threads.out"
    fi
}

# Each rockspec lists the C files the Makefile builds (IK_SOURCES, from make test): one test each.
rockspecs() {
    for rockspec in rockspec/*.rockspec; do
        if [ -z "${IK_SOURCES:-}" ]; then
            fail rockspec "IK_SOURCES is not set (run make test)"
        elif out=$(sh tools/check_rockspec.sh "$rockspec" $IK_SOURCES 2>&1); then
            echo "$out: 1 passed"
            passed=$((passed + 1))
        else
            fail rockspec "$out"
        fi
    done
}

# ik_solve_many bit for bit the single solves (spec/c/batch_test.c), built three ways
# (IK_BATCH_TESTS, from make test): the lanes the processor chooses, SSE2 lanes, no vector
# path. One test each.
c_batch() {
    [ -n "${IK_BATCH_TESTS:-}" ] || fail C "IK_BATCH_TESTS is not set (run make test)"
    for test in ${IK_BATCH_TESTS:-}; do
        out="$logs/$(basename "$test").out"
        if [ ! -x "$test" ]; then
            fail C "$test is missing (run make test)"
        elif "$test" >"$out" 2>&1; then
            echo "C $(basename "$test"): 1 passed ($(tail -n 1 "$out"))"
            passed=$((passed + 1))
        else
            fail C "$test failed:"
            tail -n 12 "$out" | sed 's/^/    /'
        fi
    done
}

# The corpus of each libFuzzer harness -- its seeds and every crash it found, which must
# now pass -- replayed through the harness's checks by a plain build (spec/fuzz/replay.c);
# the harnesses are the Makefile's FUZZERS (IK_FUZZERS, from make test).
fuzz_corpus() {
    [ -n "${IK_FUZZERS:-}" ] || fail C "IK_FUZZERS is not set (run make test)"
    for name in ${IK_FUZZERS:-}; do
        replay=build/replay/fuzz_$name
        out="$logs/replay_$name.out"
        if [ ! -x "$replay" ]; then
            fail C "$replay is missing (run make first)"
        elif "$replay" "spec/fuzz/corpus/$name" >"$out" 2>&1; then
            echo "fuzz corpus $name: 1 passed ($(tail -n 1 "$out") from spec/fuzz/corpus/$name)"
            passed=$((passed + 1))
        else
            fail C "$replay spec/fuzz/corpus/$name failed:"
            tail -n 8 "$out" | sed 's/^/    /'
        fi
    done
}

# sanitizer_reports LOG: a sanitizer's report in LOG is a failure, even if the run went on.
sanitizer_reports() {
    if grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; then
        fail "$mode" "a sanitizer reported an error; from $1:"
        grep -E -A6 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1" | head -n 20 | sed 's/^/    /'
    fi
}

# memcheck_summary LOG: memcheck's verdict in LOG, one more failure unless it is clean.
memcheck_summary() {
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$1" | tail -n 1)
    definite=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$1" | tail -n 1)
    echo "valgrind memcheck: ${errors:-?} errors, ${definite:-0} bytes definitely lost (log $1)"
    if [ "${errors:-x}" != 0 ] || [ "${definite:-0}" != 0 ]; then
        fail valgrind "memcheck is not clean; from $1:"
        grep -E -A8 'Invalid|uninitialised|definitely lost in' "$1" | head -n 30 | sed 's/^/    /'
    fi
}

# The engine host counts as one test: Lua 5.4 embedded with ik compiled in drives
# examples/host/rig.lua for 600 frames; it must exit 0 and say `host: ok`.
engine_host() {
    host=build/examples/host
    if [ ! -x "$host" ]; then
        fail host "$host is missing (run make test)"
    elif ! "$host" examples/host/rig.lua 600 >"$logs/host.out" 2>&1; then
        fail host "$host exited with an error:"
        sed 's/^/    /' "$logs/host.out"
    elif ! grep -q '^host: ok$' "$logs/host.out"; then
        fail host "$host printed something unexpected:"
        sed 's/^/    /' "$logs/host.out"
    else
        echo "engine host: 1 passed ($(grep '^rig: ' "$logs/host.out"))"
        passed=$((passed + 1))
    fi
}

# The test inside the real LÖVE runtime (spec/love/, a game folder with the LuaJIT build
# copied in by make): headless, it needs no display. It prints its own `N passed, N failed`,
# which is added to ours. Without LÖVE installed it is skipped with a note, except under CI
# (CI set), where a skip would hide that the product's main runtime was never tried.
love_runtime() {
    game=spec/love
    if ! command -v love >/dev/null 2>&1; then
        if [ -n "${CI:-}" ]; then
            fail love "love is not installed (apt-get install love)"
        else
            echo "love: skipped: LÖVE is not installed (sudo apt-get install love, then make test)"
        fi
    elif [ ! -f "$game/ik/core.so" ]; then
        fail love "$game/ik/core.so is missing (make test copies the LuaJIT build there)"
    else
        rc=0
        timeout 300 love "$game" >"$logs/love.out" 2>&1 || rc=$?
        counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/love.out" | tail -n 1)
        if [ -z "$counts" ]; then
            fail love "love $game stopped before its counts (exit status $rc); the end of $logs/love.out:"
            tail -n 15 "$logs/love.out" | sed 's/^/    /'
        else
            # shellcheck disable=SC2086 # "N passed, N failed": words 1 and 3
            set -- $counts
            p=$1 f=$3
            # Each failure, and the indented lines after it that say why.
            awk '/^FAIL - / { shown = 1; sub(/^FAIL - /, ""); print "FAIL [love] " $0; next }
                 /^    / && shown { print; next }
                 { shown = 0 }' "$logs/love.out"
            echo "love: $p passed, $f failed (love $game, exit status $rc, log $logs/love.out)"
            passed=$((passed + p))
            failed=$((failed + f))
            if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
                fail love "love exited with status $rc after its tests passed"
            elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
                fail love "no test ran"
            fi
        fi
    fi
}

# The README's marked code blocks, run as written by tools/readme_check.sh: its own
# `N passed, N failed`, added to ours, with each failure and the lines that say why.
readme_examples() {
    rc=0
    sh tools/readme_check.sh >"$logs/readme.out" 2>&1 || rc=$?
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$logs/readme.out" | tail -n 1)
    if [ -z "$counts" ]; then
        fail readme "tools/readme_check.sh stopped before its counts (exit status $rc); the end of $logs/readme.out:"
        tail -n 15 "$logs/readme.out" | sed 's/^/    /'
        return
    fi
    # shellcheck disable=SC2086 # "N passed, N failed": words 1 and 3
    set -- $counts
    awk '/^FAIL / { shown = 1; print; next } /^    / && shown { print; next } { shown = 0 }
         /: skipped: / { print }' "$logs/readme.out"
    echo "README examples: $1 passed, $3 failed (tools/readme_check.sh, log $logs/readme.out)"
    passed=$((passed + $1))
    failed=$((failed + $3))
    if [ "$rc" -ne 0 ] && [ "$3" -eq 0 ]; then
        fail readme "tools/readme_check.sh exited with status $rc after its tests passed"
    fi
}

case $mode in
all)
    # The five VMs' runs (six with Lua 5.5) take 30 to 45 s each here: two at a time (CI's
    # machine has two cores), counted afterwards in a fixed order. The C module path goes
    # before the one in .busted (build/lua5.4/?.so, the Lua 5.4 build), so each VM loads its
    # own build.
    # Then ik.pure under LuaJIT and Lua 5.1 (pure_specs): the VMs of LÖVE and love.js.
    {
        specs_run lua5.1 build/lua5.1/ik/core.so busted --lua=lua5.1 --cpath='build/lua5.1/?.so'
        specs_run lua5.4 build/lua5.4/ik/core.so busted --lua=lua5.4
        specs_run luajit build/luajit/ik/core.so busted --lua=luajit --cpath='build/luajit/?.so'
        pure_specs_run luajit
    } &
    {
        specs_run lua5.2 build/lua5.2/ik/core.so busted --lua=lua5.2 --cpath='build/lua5.2/?.so'
        specs_run lua5.3 build/lua5.3/ik/core.so busted --lua=lua5.3 --cpath='build/lua5.3/?.so'
        lua55_skip >/dev/null || lua55_specs_run lua5.5
        pure_specs_run lua5.1
    } &
    wait
    specs_count lua5.4 build/lua5.4/ik/core.so
    specs_count luajit build/luajit/ik/core.so
    for v in 5.1 5.2 5.3; do
        specs_count "lua$v" "build/lua$v/ik/core.so"
    done
    lua55_skip || specs_count lua5.5 build/lua5.5/ik/core.so
    specs_count luajit-pure build/luajit/ik/core.so
    specs_count lua5.1-pure build/lua5.1/ik/core.so
    c_example
    c_edge_scale
    c_threads
    c_batch
    rockspecs
    fuzz_corpus
    engine_host
    love_runtime
    readme_examples
    ;;
pure)
    # Every VM's specs against ik.pure (make test-pure): LuaJIT and 5.4, then 5.1 to 5.3,
    # two at a time, and 5.5 where it runs.
    { pure_specs_run luajit; pure_specs_run lua5.4; } &
    { for v in 5.1 5.2 5.3; do pure_specs_run "lua$v"; done; } &
    wait
    for vm in luajit lua5.4 lua5.1 lua5.2 lua5.3; do
        specs_count "$vm-pure" "build/$vm/ik/core.so"
    done
    if ! lua55_skip; then
        lua55_specs_run lua5.5-pure lua
        specs_count lua5.5-pure build/lua5.5/ik/core.so
    fi
    ;;
asan)
    # lua5.4 itself is not instrumented: the runtime (which has UBSan's handlers too) is
    # preloaded. Leaks are valgrind's part: lua5.4 does not free its state on os.exit.
    runtime=$(${FUZZ_CC:-clang} -print-file-name=libclang_rt.asan-x86_64.so)
    specs lua5.4-asan build/asan/ik/core.so env LD_PRELOAD="$runtime" \
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        busted --lua=lua5.4 --cpath='build/asan/?.so'
    sanitizer_reports "$logs/lua5.4-asan.tap"
    ;;
valgrind)
    # busted runs under lua5.4 itself, so memcheck watches the process that loads the module
    # (`busted --lua=lua5.4` would start another one). Children (spec/huge_chain.lua) are
    # not traced. IK_SPEC_QUICK=1: the longest specs do a tenth of their work (same paths).
    rm -f "$logs/valgrind.log"
    specs lua5.4-valgrind build/lua5.4/ik/core.so env IK_SPEC_QUICK=1 valgrind --tool=memcheck --error-exitcode=1 --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite --log-file="$logs/valgrind.log" \
        lua5.4 /usr/bin/busted
    memcheck_summary "$logs/valgrind.log"
    ;;
windows)
    # windows_run COMMAND...: COMMAND's output (both streams) with Windows' CRLF line ends
    # made LF, so the TAP lines match; its exit status is COMMAND's.
    windows_run() {
        { "$@" 2>&1; echo $? >"$logs/windows.status"; } | tr -d '\r'
        return "$(cat "$logs/windows.status")"
    }
    # wine64 from Debian's wine64 package (its /usr/bin/wine wrapper is in package wine). The
    # prefix lives in build/, and no Mono or Gecko is wanted (nor could it be downloaded).
    wine=${WINE:-/usr/lib/wine/wine64}
    WINEPREFIX="$PWD/build/windows/wineprefix"
    WINEDEBUG=-all
    WINEDLLOVERRIDES="mscoree,mshtml="
    export WINEPREFIX WINEDEBUG WINEDLLOVERRIDES
    luajit_exe=build/windows/luajit/src/luajit.exe
    # The first start of wine makes its prefix (some seconds, some noise): done here, logged,
    # and a check that wine runs the Windows LuaJIT at all.
    if ! "$wine" "$luajit_exe" -e 'print(jit.version .. " " .. jit.os .. " " .. jit.arch)' \
        >"$logs/wine-start.log" 2>&1 || ! grep -q ' Windows x64' "$logs/wine-start.log"; then
        fail windows "wine cannot run $luajit_exe; the end of $logs/wine-start.log:"
        tail -n 15 "$logs/wine-start.log" | sed 's/^/    /'
    else
        echo "windows: $(grep ' Windows x64' "$logs/wine-start.log" | tail -n 1) under $("$wine" --version 2>/dev/null || echo wine)"
        # The folder for LÖVE (make love-folder), as a game has it: package.path finds its
        # Lua files (the default Windows path has no ?\init.lua), then the specs' helpers,
        # luassert and say; package.cpath its core.dll.
        # Twice: against the C core (core.dll), then against ik.pure (IK_BACKEND=lua reaches
        # the Windows process through wine's environment).
        for backend in c lua; do
            name=windows
            [ "$backend" = c ] || name=windows-pure
            specs "$name" build/love/ik/core.dll windows_run env IK_BACKEND="$backend" "$wine" \
                "$luajit_exe" tools/spec_runner.lua \
                --lpath='build/love/?.lua;build/love/?/init.lua;./?.lua;Z:/usr/share/lua/5.1/?.lua;Z:/usr/share/lua/5.1/?/init.lua' \
                --cpath='build/love/?.dll' --helper=spec/backend.lua spec/*_spec.lua
        done
    fi
    # wineserver lingers a few seconds after the last program; wait, so nothing outlives us.
    "$(dirname "$wine")/wineserver" -w 2>/dev/null || true
    ;;
*)
    echo "spec/run.sh: unknown mode '$mode' (all, asan, valgrind or windows)" >&2
    exit 2
    ;;
esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
