#!/bin/sh
# Installs the Debian packages that `make`, `make test` and `make demo` need, or says how.
#   sh tools/deps.sh [--no-install-recommends] [EXTRA-PACKAGE...]
# --no-install-recommends is passed on to apt-get (for big packages whose recommendations
# the tests do not need: wine64).
# Nothing missing: silent, exit 0. Missing and root: apt-get installs them. Missing and not
# root: prints the exact command to run and exits 1.
set -eu

apt_options=""
if [ "${1:-}" = --no-install-recommends ]; then
    apt_options=$1
    shift
fi

# Lua 5.4 and LuaJIT are the main hosts; 5.1, 5.2 and 5.3 are built and tested too. zip:
# the test inside LÖVE (spec/love/) makes a .love.
packages="make gcc lua5.4 liblua5.4-dev luajit libluajit-5.1-dev lua5.1 liblua5.1-0-dev lua5.2
    liblua5.2-dev lua5.3 liblua5.3-dev lua-busted zip $*"

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps.sh: not a Debian system; make sure the equivalents of these are installed:" >&2
    echo "  $packages" >&2
    exit 0
fi

missing=""
for p in $packages; do
    # db:Status-Status is "installed" only for a fully installed package (not removed or
    # half-configured); dpkg-query fails for a package it has never heard of.
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing="$missing $p"
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "deps.sh: installing:$missing"
    apt-get update
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y $apt_options $missing
else
    echo "deps.sh: missing Debian packages:$missing" >&2
    echo "install them with:" >&2
    echo "  sudo apt-get install -y${apt_options:+ $apt_options}$missing" >&2
    exit 1
fi
