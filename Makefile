# ik: inverse kinematics, a C core with a Lua binding.
#   make          ik/core.so (Lua 5.4), libik.a, the C example
#   make luajit   build/luajit/ik/core.so (LuaJIT 2.1, what LOVE 11 embeds)
#   make test     both modules, the busted specs under Lua 5.4 and LuaJIT, the C example, the
#                 engine host (examples/host/) and the test inside LÖVE (spec/love/)
#   make demo     the headless demo: a table of solves and SVG pictures in demo/out/
#   make readme-picture   the same, and docs/demo.svg (the picture in the README)
#   make bench    figures: ns per solve in C (bench/bench.c), each solver's success rate
#                 and mean iterations (bench/rates.lua); the module from Lua 5.4 and LuaJIT
#                 against plain Lua (bench/lua_bench.lua, bench/plain.lua)
#   make bench-instr  instructions per solve under valgrind's callgrind (bench/instr.sh)
#   make fuzz-lua the randomized API test, long: CALLS (1,000,000) calls under each VM from
#                 SEED (by default the time, printed first: `make fuzz-lua SEED=n` replays)
#   make deps     installs the Debian packages the above need (as root), or says how
#   make love     the interactive LÖVE demo (demo/love/), with the LuaJIT module copied into it
#   make love-screenshot  docs/love-demo.png: the LÖVE demo rendered under xvfb-run
#                 (LOVE_SCREENSHOT=path.png writes it elsewhere)

CC      ?= cc
CSTD    := -std=c99
WARN    := -Wall -Wextra -pedantic -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
           -Wcast-qual -Wpointer-arith -Wundef -Werror
# -ffp-contract=off: no fused multiply-adds, so every build gives the same bits.
OPT     ?= -O2
CFLAGS  ?=
ALL_CFLAGS := $(CSTD) $(OPT) $(WARN) -ffp-contract=off -fPIC $(CFLAGS)

LUA54_INC  ?= /usr/include/lua5.4
LUAJIT_INC ?= /usr/include/luajit-2.1

CORE_SRC := src/chain.c src/limits.c src/solve.c src/two_bone.c src/ccd.c src/fabrik.c src/relax.c
CORE_HDR := src/ik.h src/ik_math.h src/chain.h
BIND_SRC := src/ik_lua.c
BIND_HDR := src/ik_lua_compat.h

CORE_OBJ := $(CORE_SRC:src/%.c=build/core/%.o)

# What make copies into the LÖVE game folders spec/love/ and demo/love/ (see below).
LOVE_SPEC_IK := spec/love/ik/core.so spec/love/ik/init.lua spec/love/ik/love.lua
LOVE_DEMO_IK := demo/love/ik/core.so demo/love/ik/init.lua demo/love/ik/love.lua

.PHONY: all luajit test demo readme-picture deps bench bench-instr clean rock-leftovers love \
        love-screenshot fuzz-lua

all: ik/core.so libik.a build/examples/solve

build/core/%.o: src/%.c $(CORE_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

libik.a: $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

ik/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -I$(LUA54_INC) -shared $(CORE_SRC) $(BIND_SRC) -o $@ -lm

luajit: build/luajit/ik/core.so

build/luajit/ik/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -I$(LUAJIT_INC) -shared $(CORE_SRC) $(BIND_SRC) -o $@ -lm

# `luarocks make` compiles in the source tree: it leaves its own ik/core.so (newer than the
# sources, so make would keep it, whatever Lua it was built for) and src/*.o. Those objects
# give it away: remove them and rebuild ik/core.so with the flags above.
ifneq ($(wildcard src/*.o),)
ik/core.so: rock-leftovers
endif
rock-leftovers:
	rm -f src/*.o

build/examples/solve: examples/solve.c libik.a src/ik.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc examples/solve.c libik.a -o $@ -lm

# The engine host: Lua 5.4 embedded, the core and the binding compiled into the executable.
LUA54_LIB ?= -llua5.4
build/examples/host: examples/host/host.c $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc -I$(LUA54_INC) examples/host/host.c $(CORE_SRC) $(BIND_SRC) \
		-o $@ $(LUA54_LIB) -lm

deps:
	@sh tools/deps.sh

test: deps all luajit build/examples/host $(LOVE_SPEC_IK)
	@sh spec/run.sh

demo: deps ik/core.so
	lua5.4 demo/demo.lua

readme-picture: deps ik/core.so
	lua5.4 demo/demo.lua --readme

# Figures, not tests: success rates and mean iterations under both VMs.
bench: deps ik/core.so luajit build/bench/bench
	build/bench/bench
	lua5.4 bench/lua_bench.lua
	IK_CPATH="build/luajit/?.so" luajit bench/lua_bench.lua
	lua5.4 bench/rates.lua
	IK_CPATH="build/luajit/?.so" luajit bench/rates.lua

# Instructions per solve under callgrind (repeatable where times are not), FABRIK 2D's
# instructions by function, and what a call through the binding costs.
bench-instr: deps ik/core.so luajit build/bench/bench
	@sh tools/deps.sh valgrind
	sh bench/instr.sh build/bench/bench

# The C bench links libik.a, built with the flags above.
build/bench/bench: bench/bench.c libik.a src/ik.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Isrc bench/bench.c libik.a -o $@ -lm

# LÖVE games: LÖVE loads a C module from the game folder (never from inside a zipped .love),
# so the LÖVE runtime test and the demo each get a copy of the LuaJIT build and the Lua files
# in their own ik/, exactly where a game keeps them (git-ignored).
spec/love/ik/core.so demo/love/ik/core.so: build/luajit/ik/core.so
	@mkdir -p $(@D)
	cp $< $@

spec/love/ik/%.lua: lua/ik/%.lua
	@mkdir -p $(@D)
	cp $< $@

demo/love/ik/%.lua: lua/ik/%.lua
	@mkdir -p $(@D)
	cp $< $@

love: deps $(LOVE_DEMO_IK)
	@sh tools/deps.sh love
	love demo/love

# The README's picture: software OpenGL under a virtual X server, so no display is needed.
LOVE_SCREENSHOT ?= $(CURDIR)/docs/love-demo.png
love-screenshot: deps $(LOVE_DEMO_IK)
	@sh tools/deps.sh love xvfb xauth libgl1-mesa-dri
	LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x720x24" \
		love demo/love --screenshot "$(LOVE_SCREENSHOT)"

# The seed is fixed once per make run, so both VMs make the same calls.
ifeq ($(origin SEED), undefined)
SEED := $(shell date +%s)
endif
CALLS ?= 1000000

fuzz-lua: deps ik/core.so luajit
	lua5.4 tools/fuzz_lua.lua $(SEED) $(CALLS)
	IK_CPATH="build/luajit/?.so" luajit tools/fuzz_lua.lua $(SEED) $(CALLS)

clean:
	rm -rf build ik libik.a demo/out spec/love/ik demo/love/ik
