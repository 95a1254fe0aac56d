#!/bin/sh
# make determinism: runs the fixed workload tools/determinism.lua (every result and final pose
# as hex floats) with each build of the module in build/det/ (made by make) and compares the
# outputs byte for byte with the reference build's:
#   sh tools/determinism.sh REFERENCE VARIANT...
# A variant's name says its VM and build: lua54-* or luajit-*, then compiler and flags.
# Also compared: the reference run again with glibc filling fresh memory with garbage
# (MALLOC_PERTURB_: a result that read uninitialised memory would change). Reported but not
# compared: the reference with libm's FMA code paths off (GLIBC_TUNABLES), which round sin,
# cos, atan2 and acos differently (docs/determinism.md). Exit status 0 when all agree.
set -eu
cd "$(dirname "$0")/.."
dir=build/det
reference=$1
shift
status=0

# run NAME VARIANT [VAR=VALUE...]: the workload with build VARIANT, output in $dir/NAME.out.
run() {
    name=$1 variant=$2
    shift 2
    case $variant in luajit-*) vm=luajit ;; *) vm=lua5.4 ;; esac
    env "$@" IK_CPATH="$dir/$variant/?.so" "$vm" tools/determinism.lua >"$dir/$name.out"
}

# same NAME: whether $dir/NAME.out is the reference's, byte for byte; says where it differs.
same() {
    if cmp -s "$dir/$reference.out" "$dir/$1.out"; then
        return 0
    fi
    line=$(cmp "$dir/$reference.out" "$dir/$1.out" | sed -n 's/.* line \([0-9]*\).*/\1/p')
    count=$(diff "$dir/$reference.out" "$dir/$1.out" | grep -c '^<' || true)
    echo "    $count of $(wc -l <"$dir/$reference.out") lines differ; the first is line $line, after:"
    sed -n "$((line > 1 ? line - 1 : 1))p" "$dir/$reference.out" | cut -c1-120 | sed 's/^/      /'
    # the first value that differs, and its place in the line
    { sed -n "${line}p" "$dir/$reference.out"; sed -n "${line}p" "$dir/$1.out"; } | awk '
        NR == 1 { n = split($0, a, " ") }
        NR == 2 { split($0, b, " ");
                  for (i = 1; i <= n; i++) if (a[i] != b[i]) {
                      printf "      value %d: %s, here %s\n", i, a[i], b[i]; exit } }'
    return 1
}

run "$reference" "$reference"
echo "determinism: reference $reference: $(grep -c '^solve ' "$dir/$reference.out") chain solves," \
    "$(grep -c '^solve_many ' "$dir/$reference.out") solve_many, $(grep -c '^crowd ' "$dir/$reference.out") crowds of 40," \
    "$(grep -c '^oriented ' "$dir/$reference.out") oriented, $(grep -c '^aim ' "$dir/$reference.out") aiming," \
    "$(grep -c '^rig ' "$dir/$reference.out") rig solves, $(grep -c '^two_bone' "$dir/$reference.out") stateless solves; $(wc -c <"$dir/$reference.out") bytes, sha1 $(sha1sum "$dir/$reference.out" | cut -c1-12)"
for variant in "$@"; do
    run "$variant" "$variant"
    if same "$variant"; then
        echo "determinism: $variant: identical"
    else
        echo "FAIL determinism: $variant differs from $reference"
        status=1
    fi
done

run perturbed "$reference" MALLOC_PERTURB_=165
if same perturbed; then
    echo "determinism: $reference again, fresh memory filled with garbage (MALLOC_PERTURB_): identical"
else
    echo "FAIL determinism: $reference differs from itself when fresh memory holds garbage"
    status=1
fi

# glibc 2.33 and later: the hwcaps tunable turns off what libm's function selection sees.
run nofma "$reference" GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA
if cmp -s "$dir/$reference.out" "$dir/nofma.out"; then
    echo "determinism: note: libm without its FMA code paths: identical"
else
    echo "determinism: note: libm without its FMA code paths: $(diff "$dir/$reference.out" "$dir/nofma.out" |
        grep -c '^<' || true) lines differ (expected where the CPU has FMA: sin, cos, atan2, acos" \
        "round differently; see docs/determinism.md)"
fi
exit $status
