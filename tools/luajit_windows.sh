#!/bin/sh
# Builds LuaJIT 2.1 for 64-bit Windows -- lua51.dll (what LÖVE 11 ships and C modules link
# against), luajit.exe (to run the specs under wine) and the headers -- from Debian's luajit
# source package, cross-compiled with mingw-w64, into DIR (`make windows`: build/windows/luajit).
#   sh tools/luajit_windows.sh DIR
# Once built it does nothing (delete DIR to rebuild). As root it installs what it lacks
# (the mingw-w64 compiler, dpkg-dev for `apt-get source`) and, when apt knows no source
# repository, enables Debian's (deb-src) in the existing entries; otherwise it says what to
# do. Its output goes to DIR.log; only a failure shows it.
set -eu
dir=${1:?usage: sh tools/luajit_windows.sh DIR}
cross=x86_64-w64-mingw32-

if [ -f "$dir/src/lua51.dll" ] && [ -f "$dir/src/luajit.exe" ]; then
    exit 0
fi

sh tools/deps.sh gcc-mingw-w64-x86-64-win32 dpkg-dev

# True when apt can fetch the luajit source package.
have_source() {
    apt-cache showsrc luajit 2>/dev/null | grep -q '^Package: luajit'
}

# Adds deb-src to Debian's own entries, once: in the deb822 file of a Debian 12 install
# (`Types: deb` becomes `Types: deb deb-src`) and, in the one-line format, a deb-src copy of
# each `deb` line that points at a Debian archive. Hosts are copied, never named here.
enable_deb_src() {
    sources=/etc/apt/sources.list.d/debian.sources
    if [ -f "$sources" ] && grep -q '^Types: deb$' "$sources"; then
        sed -i 's/^Types: deb$/Types: deb deb-src/' "$sources"
    fi
    list=/etc/apt/sources.list
    if [ -f "$list" ] && ! grep -q '^deb-src ' "$list" && grep -q '^deb .*/debian' "$list"; then
        awk '{ print } /^deb .*\/debian/ { sub(/^deb /, "deb-src "); print }' "$list" >"$list.ik-tmp"
        mv "$list.ik-tmp" "$list"
    fi
}

if ! have_source; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "luajit_windows.sh: apt knows no source package for luajit: add deb-src to the" >&2
        echo "Debian entries of /etc/apt/sources.list.d/debian.sources (Types: deb deb-src)" >&2
        echo "or /etc/apt/sources.list, then run: sudo apt-get update" >&2
        exit 1
    fi
    echo "luajit_windows.sh: enabling Debian's source repositories (deb-src) for apt-get source"
    enable_deb_src
    apt-get update >/dev/null
    if ! have_source; then
        echo "luajit_windows.sh: still no source package for luajit after enabling deb-src" >&2
        exit 1
    fi
fi

log=$dir.log
fetch=$dir.fetch
rm -rf "$dir" "$fetch"
mkdir -p "$fetch"
echo "luajit_windows.sh: fetching Debian's luajit source and building it for Windows (log $log)"
# apt-get source unpacks with dpkg-source, applying Debian's patches, into luajit-VERSION/.
if ! (cd "$fetch" && apt-get source luajit) >"$log" 2>&1; then
    echo "luajit_windows.sh: apt-get source luajit failed; the end of $log:" >&2
    tail -n 15 "$log" >&2
    exit 1
fi
mv "$fetch"/luajit-*/ "$dir"
rm -rf "$fetch"

# 64-bit Windows from a 64-bit host: the host tools (minilua, buildvm) need no multilib.
# The build makes lua51.dll and luajit.exe linked to it, as LuaJIT's own Windows build does.
if ! make -C "$dir" -j"$(nproc)" HOST_CC=gcc CROSS="$cross" TARGET_SYS=Windows >>"$log" 2>&1; then
    echo "luajit_windows.sh: building LuaJIT for Windows failed; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
echo "luajit_windows.sh: built $dir/src/lua51.dll and $dir/src/luajit.exe ($(sed -n 's/^==== Successfully built \(.*\) ====$/\1/p' "$log"))"
