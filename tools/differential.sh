#!/bin/sh
# The differential specs (spec/pure_*_spec.lua: ik.pure against the C module, call by call)
# at IK_PURE_SCALE times their usual length, in each VM named, and the sums of what they
# printed: calls, numbers compared, the share of them with the same bits, the differing
# ones, and the specs' own verdict. Not part of `make test` (at scale 7 about 12 minutes for
# the five VMs on this machine); `make test-differential` runs it.
#   sh tools/differential.sh [SCALE [VM...]]     (SCALE 7, the default: over 1,000,000 calls a VM)
# Each VM needs its build: make luajit lua5.1 lua5.2 lua5.3 (lua5.4: make).
set -eu
scale=${1:-7}
[ $# -gt 0 ] && shift
vms=${*:-luajit lua5.4 lua5.3 lua5.2 lua5.1}
mkdir -p build/logs
status=0
for vm in $vms; do
    log=build/logs/differential-$vm.log
    if [ ! -f "build/$vm/ik/core.so" ]; then
        echo "$vm: no build/$vm/ik/core.so (make $vm)"
        status=1
        continue
    fi
    rc=0
    IK_PURE_SCALE=$scale busted --lua="$vm" --cpath="build/$vm/?.so" -o tools/busted_tap.lua \
        spec/pure_*_spec.lua >"$log" 2>&1 || rc=$?
    # The specs' lines: "ik.pure vs ik.core (...)...: N calls (R refused alike), M numbers
    # compared, S the same bits (P%), D differing (largest difference L)".
    awk -v vm="$vm" -v rc="$rc" -v logfile="$log" '
        /^ik\.pure vs ik\.core/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) == "calls") calls += $i
                if ($(i + 1) == "numbers") numbers += $i
                if ($(i + 1) == "the" && $(i + 2) == "same") same += $i
                if ($(i + 1) == "differing") differing += $i
            }
        }
        /^ok / { passed++ }
        /^not ok / { failed++ }
        END {
            printf "%s: %d random calls, %d numbers compared, %d of them the same bits (%.6f%%), %d differing beyond 1e-9; specs %d passed, %d failed (busted exit status %d, log %s)\n",
                vm, calls, numbers, same, (numbers > 0 ? 100 * same / numbers : 0), differing, passed, failed, rc, logfile
        }' "$log"
    grep -q '^not ok' "$log" && status=1
    [ "$rc" -eq 0 ] || status=1
done
exit $status
