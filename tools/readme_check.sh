#!/bin/sh
# make readme-check (and make test): the README's code runs as written. Each code block
# marked with `<!-- test: KIND -->` on the line before its fence is taken out of README.md
# into build/readme/ and run:
#   lua       under Lua 5.4 (build/lua5.4/ik/core.so) and under LuaJIT (build/luajit/ik/core.so), with
#             lua/ on package.path: one test each; it must exit 0
#   love      a LÖVE main.lua: 120 frames of its love.load/update/draw, by tools/readme_love.lua
#             under LuaJIT with a stand-in `love` table (one test), and inside LÖVE itself
#             when `love` is installed, headless, from a game folder laid out as the README
#             says: main.lua and a copy of the folder for LÖVE, build/love/ik/ (one test)
#   c-engine, c
#             a C file whose comment holds its build commands (lines starting with `cc `):
#             each command is run as written in a folder laid out as a user's project (the
#             file, and ik's dist/, src/, lua/ and libik.a from build/), then the program it builds
#             (`-o NAME`) is run there and must exit 0: one test per command
# Needs build/lua5.4/ik/core.so, build/luajit/ik/core.so, build/love/ik/ and build/libik.a
# (make test builds them). Prints a line per test, then `N passed, N failed`; exit status 0 only when nothing failed.
set -eu
cd "$(dirname "$0")/.."
out=build/readme
rm -rf "$out"
mkdir -p "$out"
root=$PWD
passed=0
failed=0

pass() {
    echo "readme: $1: passed${2:+ ($2)}"
    passed=$((passed + 1))
}

# fail NAME LOG: one failure, and the end of LOG.
fail() {
    echo "FAIL readme: $1; the end of $2:"
    tail -n 15 "$2" | sed 's/^/    /'
    failed=$((failed + 1))
}

# The marked blocks: $out/N.KIND, N counting from 1 in the README's order; a list in $out/blocks.
awk -v out="$out" '
    /^<!-- test: [a-z-]+ -->$/ { kind = $3; want = 1; next }
    want && /^```/ { n++; file = out "/" n "." kind; printf "" > file; print n, kind, NR + 1 > (out "/blocks"); inside = 1; want = 0; next }
    want { want = 0 }
    inside && /^```$/ { inside = 0; close(file); next }
    inside { print > file }
' README.md
touch "$out/blocks"
if [ ! -s "$out/blocks" ]; then
    echo "FAIL readme: no block of README.md is marked <!-- test: KIND -->"
    failed=$((failed + 1))
fi

lua_path="$root/lua/?.lua;$root/lua/?/init.lua;;"

# A user's project folder for the C blocks: ik's files, as the README names them.
project() {
    dir=$1
    mkdir -p "$dir"
    for f in dist src lua; do ln -s "$root/$f" "$dir/$f"; done
    ln -s "$root/build/libik.a" "$dir/libik.a"
}

while read -r n kind line; do
    block="$out/$n.$kind"
    name="block $n (README.md line $line, $kind)"
    case $kind in
    lua)
        for vm in lua5.4 luajit; do
            if [ "$vm" = luajit ]; then cpath="$root/build/luajit/?.so;;"; else cpath="$root/build/lua5.4/?.so;;"; fi
            if LUA_PATH="$lua_path" LUA_PATH_5_4="$lua_path" LUA_CPATH="$cpath" LUA_CPATH_5_4="$cpath" \
                "$vm" "$block" </dev/null >"$block.$vm.log" 2>&1; then
                pass "$name under $vm" "$(tail -n 1 "$block.$vm.log")"
            else
                fail "$name under $vm" "$block.$vm.log"
            fi
        done
        ;;
    love)
        cpath="$root/build/luajit/?.so;;"
        if LUA_PATH="$lua_path" LUA_CPATH="$cpath" luajit tools/readme_love.lua "$block" </dev/null >"$block.luajit.log" 2>&1; then
            pass "$name under LuaJIT" "$(tail -n 1 "$block.luajit.log")"
        else
            fail "$name under LuaJIT, a stand-in love table" "$block.luajit.log"
        fi
        if command -v love >/dev/null 2>&1; then
            game="$out/game$n"
            mkdir -p "$game/ik"
            cp -R build/love/ik/. "$game/ik/" # the folder for LÖVE (make love-folder), as a game gets it
            cp "$block" "$game/example.lua"
            cp tools/readme_love.lua "$game/main.lua"
            sed 's/"ik-spec-love"/"ik-readme-love"/' spec/love/conf.lua >"$game/conf.lua"
            if (cd "$game" && timeout 120 love .) </dev/null >"$block.love.log" 2>&1 && grep -q '^love example: ok' "$block.love.log"; then
                pass "$name inside LÖVE" "$(grep '^love example: ok' "$block.love.log")"
            else
                fail "$name inside LÖVE (love $game)" "$block.love.log"
            fi
        else
            echo "readme: $name inside LÖVE: skipped: LÖVE is not installed"
        fi
        ;;
    c | c-engine)
        file=$(sed -n '1s/^\/\* *\([A-Za-z0-9_]*\.c\) .*/\1/p' "$block")
        if [ -z "$file" ]; then
            echo "FAIL readme: $name: its first line names no file (/* NAME.c - ...)"
            failed=$((failed + 1))
            continue
        fi
        grep -E '^ *cc ' "$block" | sed 's/ *\*\/ *$//; s/^ *//' >"$block.commands"
        if [ ! -s "$block.commands" ]; then
            echo "FAIL readme: $name: no build command (a comment line starting with cc)"
            failed=$((failed + 1))
            continue
        fi
        k=0
        while read -r command; do
            k=$((k + 1))
            dir="$out/project$n-$k"
            project "$dir"
            cp "$block" "$dir/$file"
            program=$(echo "$command" | sed -n 's/.* -o \([^ ]*\).*/\1/p')
            if (cd "$dir" && echo "\$ $command" && sh -c "$command" && ./"$program") </dev/null >"$block.$k.log" 2>&1; then
                pass "$name: $command" "$(tail -n 1 "$block.$k.log")"
            else
                fail "$name: $command" "$block.$k.log"
            fi
        done <"$block.commands"
        ;;
    *)
        echo "FAIL readme: $name: unknown kind '$kind' (lua, love, c-engine, c)"
        failed=$((failed + 1))
        ;;
    esac
done <"$out/blocks"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
