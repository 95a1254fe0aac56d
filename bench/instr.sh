#!/bin/sh
# Instructions per solve from callgrind: the repeatable figure next to `make bench`'s times.
#   sh bench/instr.sh [path/to/bench]          (make bench-instr; IK_INSTR_SOLVES=N solves)
# Each case runs in its own `valgrind --tool=callgrind`, counting only the timed loop
# (--toggle-collect=instr_run in bench/bench.c): N solves of a 10-bone chain (2 for
# two_bone), 10 iterations, tolerance 0, escape off, on targets where every solve runs all
# 10. Then where FABRIK 2D's instructions go, and what a call through the binding adds.
set -eu

bench=${1:-build/bench/bench}
solves=${IK_INSTR_SOLVES:-1000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The "Collected" count of a callgrind log.
collected() {
    sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$1"
}

# callgrind CASE-FILE-PREFIX COMMAND...: runs COMMAND under callgrind, prints the count.
callgrind() {
    prefix=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$prefix.out" "$@" >"$prefix.txt" \
        2>"$prefix.log" || { cat "$prefix.log" >&2; exit 1; }
    collected "$prefix.log"
}

echo "== Instructions per solve (valgrind --tool=callgrind: repeatable) =="
echo "$solves solves per case, 10 bones (two_bone: 2), 10 iterations, tolerance 0, escape off,"
echo "on targets where every solve runs all 10; counted inside the timed loop only."
echo "per update: instructions / (iterations * bones * 2 passes), for FABRIK."
echo
printf '%-12s %7s %11s %19s %11s\n' case solves iterations "instructions/solve" "per update"
for case in fabrik2d ccd2d relax2d two_bone2d fabrik3d ccd3d relax3d textbook2d textbook3d; do
    ir=$(callgrind "$out/$case" --toggle-collect=instr_run "$bench" --instr "$case" "$solves")
    # bench --instr prints: case solves iterations
    read -r _ n its <"$out/$case.txt"
    bones=10
    [ "$case" = two_bone2d ] && bones=2
    awk -v c="$case" -v ir="$ir" -v n="$n" -v its="$its" -v b="$bones" 'BEGIN {
        per = ir / n; mean = its / n
        upd = (c ~ /fabrik|textbook/) ? sprintf("%11.1f", per / (mean * b * 2)) : sprintf("%11s", "-")
        printf "%-12s %7d %11.2f %19.0f %s\n", c, n, mean, per, upd }'
done

echo
echo "Where FABRIK 2D's instructions go (self cost per solve, by function: inlined helpers"
echo "count in their caller; a libm function's pieces are added up):"
callgrind_annotate "$out/fabrik2d.out" 2>/dev/null |
    awk -v n="$solves" '
        /file:function/ { on = 1; next }
        on && /^ *[0-9,]+ \(/ {
            ir = $1; gsub(",", "", ir)
            fn = $0; sub(/^[^)]*\) +/, "", fn)
            lib = fn ~ /(libm|\/math\/|sysdeps)/ ? " (libm)" : ""
            sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn); sub(/@.*$/, "", fn)
            cost[fn lib] += ir; total += ir
        }
        END {
            for (f in cost) printf "%.0f\t%s\t%.1f\n", cost[f] / n, f, 100 * cost[f] / total
        }' | sort -rn | head -12 | awk -F '\t' '{ printf "  %-36s %8d %6.1f%%\n", $2, $1, $3 }'

# The binding: a solve with nothing to do (the target on the tip, zero iterations) called
# from Lua N and 2N times: the difference over N is what one call costs from Lua; callgrind
# counting inside ik_chain_solve only gives the core's share, inside the binding's C
# function (chain_solve) the binding's C side; the rest is the VM's call.
echo
echo "A call through the binding: chain:solve(x, y) with nothing to do (zero iterations),"
echo "instructions per call:"
printf '%-8s %10s %10s %10s %16s %10s\n' VM "from Lua" "core" "Lua - core" "binding's C fn" "VM's call"
for vm in lua5.4 luajit; do
    cpath="build/lua5.4/?.so"
    [ "$vm" = luajit ] && cpath="build/luajit/?.so"
    export IK_CPATH="$cpath"
    one=$(callgrind "$out/$vm.1" "$vm" bench/lua_bench.lua --calls "$solves")
    two=$(callgrind "$out/$vm.2" "$vm" bench/lua_bench.lua --calls $((2 * solves)))
    core=$(callgrind "$out/$vm.core" --toggle-collect=ik_chain_solve "$vm" bench/lua_bench.lua \
        --calls "$solves")
    fn=$(callgrind "$out/$vm.fn" --toggle-collect=chain_solve "$vm" bench/lua_bench.lua \
        --calls "$solves")
    awk -v vm="$vm" -v one="$one" -v two="$two" -v core="$core" -v fn="$fn" -v n="$solves" \
        'BEGIN { call = (two - one) / n
                 printf "%-8s %10.0f %10.0f %10.0f %16.0f %10.0f\n", vm, call, core / n,
                        call - core / n, (fn - core) / n, call - fn / n }'
done
