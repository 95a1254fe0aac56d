#!/bin/sh
# The rock builds the C files its rockspec lists, the Makefile the ones in CORE_SRC and
# BIND_SRC: a file added to one and not the other gives a rock with undefined symbols.
#   sh tools/check_rockspec.sh ROCKSPEC FILE...   (make test: the Makefile's lists)
# Exit status 0, and a line saying so, when the rockspec lists exactly FILE...
set -eu
rockspec=$1
shift
# every "src/....c" string anywhere in it (however the entry is written)
listed=$(grep -o '"src/[^"]*\.c"' "$rockspec" | tr -d '"' | sort)
wanted=$(printf '%s\n' "$@" | sort)
if [ "$listed" = "$wanted" ]; then
    echo "rockspec: $(basename "$rockspec") lists the $# C files the Makefile builds"
else
    echo "FAIL rockspec: $(basename "$rockspec") lists other C files than the Makefile builds:"
    printf '%s\n' "$wanted" >"${TMPDIR:-/tmp}/ik_wanted.$$"
    printf '%s\n' "$listed" | diff "${TMPDIR:-/tmp}/ik_wanted.$$" - | sed -n 's/^[<>]/    &/p'
    rm -f "${TMPDIR:-/tmp}/ik_wanted.$$"
    exit 1
fi
