#!/bin/sh
# The single-file form of ik, for engines that would rather add two files than a build:
#   sh tools/amalgamate.sh DIR CORE_SOURCES...
# writes DIR/ik.h (the public header, as it is), DIR/ik.c (the core: its private headers and
# every core file, in the order given, each once; the lanes template batch_lanes.h at each
# of its includes), and DIR/ik_lua.c (the Lua binding with its
# compatibility header). make amalgamation runs it into dist/, which is committed; CI checks
# that it is what the sources make, so it cannot go stale.
set -eu
dir=$1
shift
mkdir -p "$dir"
# Local includes are replaced by the file itself where it is first needed; the rest stay.
strip='^#include "\(ik\|ik_math\|chain\|rig_tree\|ik_lua_compat\)\.h"'
cp src/ik.h "$dir/ik.h"
{
    echo "/* ik.c - the core of ik in one file, made by tools/amalgamate.sh from src/ (do not"
    echo "   edit: edit src/ and run make amalgamation). Compile it with ik.h beside it. */"
    echo '#include "ik.h"'
    for f in src/ik_math.h src/chain.h src/rig_tree.h "$@"; do
        echo
        echo "/* ---- $f ---- */"
        # batch_lanes.h is a template, written out at each of its includes.
        grep -v "$strip" "$f" | awk '/^#include "batch_lanes\.h"/ { while ((getline line < "src/batch_lanes.h") > 0) print line; close("src/batch_lanes.h"); next } { print }'
    done
} >"$dir/ik.c"
{
    echo "/* ik_lua.c - the Lua binding of ik in one file, made by tools/amalgamate.sh from src/"
    echo "   (do not edit). Compile it with ik.h beside it and Lua's headers on the path. */"
    echo '#include "ik.h"'
    for f in src/ik_lua_compat.h src/ik_lua.c; do
        echo
        echo "/* ---- $f ---- */"
        grep -v "$strip" "$f"
    done
} >"$dir/ik_lua.c"
