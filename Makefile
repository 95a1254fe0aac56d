# ik: inverse kinematics, a C core with a Lua binding. Builds print one line a target;
# V=1 (make V=1 ...) prints every command in full.
#   make          build/lua5.4/ik/core.so (Lua 5.4), build/libik.a, the C example
#   make lib      build/libik.a alone: the core for C, no Lua headers needed
#   make amalgamation  dist/ik.h, dist/ik.c and dist/ik_lua.c: ik in single files
#   make luajit   build/luajit/ik/core.so (LuaJIT 2.1, what LOVE 11 embeds)
#   make lua5.1, make lua5.2, make lua5.3   build/lua5.X/ik/core.so (make lua5.4: the same)
#   make lua5.5   build/lua5.5/ik/core.so, from the headers in LUA55_INC (/usr/include/lua5.5;
#                 `make lua5.5 LUA55_INC=dir` for a Lua 5.5 built from source)
#   make windows  build/windows/ik/core.dll: LuaJIT 2.1 on 64-bit Windows (LÖVE 11), with
#                 mingw-w64; LuaJIT for Windows built once from Debian's source package
#   make love-folder  build/love/ik/: the folder a LÖVE game copies next to its main.lua (the
#                 Lua files, core.so for Linux and core.dll for Windows) and its zip
#   make test-windows  the busted specs under wine, with that LuaJIT and the folder's core.dll
#   make test     the modules, the busted specs under Lua 5.4, LuaJIT, 5.1, 5.2 and 5.3 (and
#                 5.5 when a lua5.5 command and its headers are there; one line says it
#                 skipped 5.5 otherwise), the C example, the engine host (examples/host/) and
#                 the test inside LÖVE (spec/love/)
#   make readme-check  the README's marked code blocks run as written (tools/readme_check.sh;
#                 make test runs it too)
#   make demo     the headless demo: a table of solves and SVG pictures in demo/out/
#   make readme-picture   the same, and docs/demo.svg (the picture in the README)
#   make recipe-pictures  docs/recipe-*.svg, the README's recipes drawn from what they compute
#   make bench    figures: ns per solve and per rig solve in C (bench/bench.c); the module
#                 from Lua 5.4 and LuaJIT against plain Lua, rigs, and the performance
#                 goals (bench/lua_bench.lua, bench/plain.lua, bench/rigs.lua); the same for
#                 ik.pure from Lua 5.4, LuaJIT and Lua 5.1 (IK_BACKEND=lua); success rates
#                 and mean iterations of the solvers, orientation goals, aiming and rigs
#                 (bench/rates.lua); with joint limits, chains and rigs from straight, from
#                 random poses and tracking (bench/limits.lua), 2D tracking with limits on
#                 many chains (bench/track_limits.lua), and on workloads made apart from
#                 those (bench/limits_fresh.lua); motion over time: drag,
#                 simulate and the gait, their accuracy and cost beside hand-written Lua
#                 (bench/motion.lua); closed loops: a four-bar linkage against its analytic
#                 solution, two hands on a staff (bench/loops.lua); what large trees cost at
#                 two sizes (bench/trees.lua)
#   make bench-instr  instructions per solve under valgrind's callgrind (bench/instr.sh)
#   make bench-spine SPINE=dir  the module against Spine's Lua IK constraint (apply1, apply2)
#                 under Lua 5.4 and LuaJIT (bench/spine.lua); dir: the spine-lua directory of
#                 a spine-runtimes checkout, branch 4.0 (without it, says how to get one)
#   make bench-ozz OZZ=dir  3D two-bone and aim chain solves against ozz-animation's IK jobs
#                 in C++, one process (bench/ozz.cpp); dir: an ozz-animation 0.16 checkout
#   make fuzz-lua the randomized API test, long: CALLS (1,000,000) calls under Lua 5.4, LuaJIT
#                 and LuaJIT with jit.off() from SEED (by default the time, printed first:
#                 `make fuzz-lua SEED=n` replays)
#   make fuzz     the libFuzzer harnesses of the core (clang, ASan, UBSan), FUZZ_TIME (60) s each
#   make test-asan       the specs under Lua 5.4 with the module built with ASan and UBSan
#   make test-valgrind   the specs under Lua 5.4 run by valgrind's memcheck
#   make test-tsan       the C threads test (spec/c/threads_test.c) under ThreadSanitizer
#   make test-arm64      the batch test (spec/c/batch_test.c) for arm64, NEON lanes and none,
#                        under qemu
#   make determinism     a fixed workload's every result, bit for bit the same from Lua 5.4
#                        and LuaJIT, -O0 and -O2, gcc and clang, AVX2, SSE2 and no-lanes
#                        builds (build/det/)
#   make deps     installs the Debian packages the above need (as root), or says how
#   make love     the interactive LÖVE demo (demo/love/), with the LuaJIT module copied into it
#   make love-screenshot  docs/love-demo.png: the LÖVE demo rendered under xvfb-run
#                 (LOVE_SCREENSHOT=path.png writes it elsewhere)
#   make web      build/web/: the LÖVE demo for a browser (love.js; ik.pure, no C module),
#                 a folder to serve or to zip for itch.io (build/ik-web-demo.zip)
#   make test-web the test inside LÖVE (spec/love/) packaged the same way, run in headless
#                 chromium (tools/test_web.js); ends `N passed, N failed`

CC      ?= cc
CSTD    := -std=c99
WARN    := -Wall -Wextra -pedantic -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
           -Wcast-qual -Wpointer-arith -Wundef -Werror
# No fused multiply-adds, so every build gives the same bits (docs/determinism.md):
# -ffp-contract=off, and -fno-tree-slp-vectorize because GCC 12's vectorizer fuses the
# quaternion products into vfmaddsub all the same once FMA is enabled (-march=native).
FP_FLAGS := -ffp-contract=off -fno-tree-slp-vectorize
OPT     ?= -O2
CFLAGS  ?=
ALL_CFLAGS := $(CSTD) $(OPT) $(WARN) $(FP_FLAGS) -fPIC $(CFLAGS)

# Quiet builds: one short line per target (`  CC  target`); `make V=1 ...` prints every
# command in full.
ifeq ($(V),1)
Q :=
say =
else
Q := @
say = @printf '  %-4s %s\n' '$(1)' '$(2)'
endif

LUA54_INC  ?= /usr/include/lua5.4
LUAJIT_INC ?= /usr/include/luajit-2.1

CORE_SRC := src/chain.c src/limits.c src/joint_space.c src/sweep.c src/escape.c src/two_bone.c src/fabrik.c src/batch.c src/ccd.c src/relax.c src/aim.c src/goal.c src/solve.c src/rig.c src/rig_fabrik.c src/rig_relax.c src/rig_joint.c src/motion.c src/gait.c
CORE_HDR := src/ik.h src/ik_math.h src/chain.h src/rig_tree.h src/batch_lanes.h
BIND_SRC := src/ik_lua.c
BIND_HDR := src/ik_lua_compat.h

CORE_OBJ := $(CORE_SRC:src/%.c=build/core/%.o)

# What make copies into the LÖVE game folders spec/love/ and demo/love/ (see below): ik.pure
# (lua/ik/pure/) too, what require("ik") falls back to where ik.core cannot load.
PURE_LUA     := $(wildcard lua/ik/pure/*.lua)
LOVE_SPEC_IK := spec/love/ik/core.so spec/love/ik/init.lua spec/love/ik/love.lua \
                $(PURE_LUA:lua/ik/%=spec/love/ik/%)
LOVE_DEMO_IK := demo/love/ik/core.so demo/love/ik/init.lua demo/love/ik/love.lua \
                $(PURE_LUA:lua/ik/%=demo/love/ik/%)

# The libFuzzer harnesses (see `make fuzz` below).
FUZZERS     := chain two_bone rig
FUZZ_CC     ?= clang
FUZZ_CFLAGS := $(CSTD) -g -O1 $(WARN) $(FP_FLAGS) -fno-omit-frame-pointer \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_TIME   ?= 60
FUZZ_BIN    := $(FUZZERS:%=build/fuzz/fuzz_%)
REPLAY_BIN  := $(FUZZERS:%=build/replay/fuzz_%)

.PHONY: all lib amalgamation luajit love-folder web test-web test test-pure test-differential readme-check test-asan test-valgrind test-tsan test-arm64 determinism demo readme-picture recipe-pictures deps bench \
        bench-instr bench-spine bench-ozz fuzz-lua fuzz clang-deps clean rock-leftovers love love-screenshot

# Every build output is under build/: the Lua 5.4 module and the core as a static library.
LUA54_MOD := build/lua5.4/ik/core.so
LIB       := build/libik.a

all: $(LUA54_MOD) $(LIB) build/examples/solve

build/core/%.o: src/%.c $(CORE_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(CORE_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

luajit: build/luajit/ik/core.so

build/luajit/ik/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(LUAJIT_INC) -shared $(CORE_SRC) $(BIND_SRC) -o $@ -lm

# Lua 5.1 to 5.5: one module each from the same sources, each in its own directory,
# build/lua5.X/ik/core.so (`make lua5.1` to `make lua5.5`; `make` builds the Lua 5.4 one),
# and build/luajit/ the LuaJIT one.
# Every Lua-version difference is in $(BIND_HDR); a build loaded into the wrong Lua says
# which one it needs (src/ik_lua_compat.h, lua/ik/init.lua).
LUA_OTHER     := 5.1 5.2 5.3
LUA51_INC     ?= /usr/include/lua5.1
LUA52_INC     ?= /usr/include/lua5.2
LUA53_INC     ?= /usr/include/lua5.3
LUA_OTHER_MOD := $(LUA_OTHER:%=build/lua%/ik/core.so)

.PHONY: $(LUA_OTHER:%=lua%) lua5.4
$(LUA_OTHER:%=lua%): lua%: build/lua%/ik/core.so
lua5.4: $(LUA54_MOD)

# Lua 5.5, by the same rule. Debian 12 has no Lua 5.5, so `make deps` installs none and
# LUA55_INC may name the headers of one built from source. `make test` builds and tests it
# only when a lua5.5 command and those headers are there; LUA55_SKIP says why it does not.
LUA55_INC  ?= /usr/include/lua5.5
LUA55_MOD  := build/lua5.5/ik/core.so
LUA55_SKIP := $(if $(shell command -v lua5.5 2>/dev/null),$(if $(wildcard $(LUA55_INC)/lua.h),,no Lua 5.5 \
              headers in $(LUA55_INC) (make test LUA55_INC=dir)),no lua5.5 command on PATH)

.PHONY: lua5.5 lua55-headers
lua5.5: $(LUA55_MOD)
$(LUA55_MOD): | lua55-headers
lua55-headers:
	@grep -qs '^#define LUA_VERSION_MINOR_N[[:space:]]*5$$' $(LUA55_INC)/lua.h || { \
	    echo "make lua5.5: no Lua 5.5 headers (lua.h) in $(LUA55_INC): install them, or name" \
	         "their directory: make lua5.5 LUA55_INC=dir" >&2; \
	    exit 1; }

# The stem is the minor version: build/lua5.1/ik/core.so takes its headers from $(LUA51_INC).
build/lua5.%/ik/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(LUA5$*_INC) -shared $(CORE_SRC) $(BIND_SRC) -o $@ -lm

# Windows, 64-bit, for LÖVE 11: `make windows` cross-compiles build/windows/ik/core.dll with
# mingw-w64 against LuaJIT 2.1, linked to lua51.dll, the DLL through which LÖVE's C modules
# reach its LuaJIT. LuaJIT itself (its headers, lua51.dll, and luajit.exe for the tests) is
# built once from Debian's luajit source package into $(WIN_LUAJIT) by
# tools/luajit_windows.sh (it skips the build when that is there). `make test-windows` runs
# the specs under wine with that luajit.exe and tools/spec_runner.lua (busted itself needs
# C modules that a Windows LuaJIT cannot load); spec/run.sh windows says how.
WIN_CC     ?= x86_64-w64-mingw32-gcc
WIN_LUAJIT := build/windows/luajit
WIN_LUA51  := $(WIN_LUAJIT)/src/lua51.dll
# As ALL_CFLAGS, less -fPIC (a DLL needs none); libgcc linked in, so the DLL needs only
# lua51.dll and what every Windows has (KERNEL32.dll, msvcrt.dll).
WIN_CFLAGS := $(CSTD) $(OPT) $(WARN) $(FP_FLAGS) $(CFLAGS)

.PHONY: windows test-windows
windows: build/windows/ik/core.dll

$(WIN_LUA51):
	@sh tools/luajit_windows.sh $(WIN_LUAJIT)

build/windows/ik/core.dll: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR) $(WIN_LUA51)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(WIN_CC) $(WIN_CFLAGS) -I$(WIN_LUAJIT)/src -shared $(CORE_SRC) $(BIND_SRC) -o $@ \
	    $(WIN_LUA51) -static-libgcc

# One folder for LÖVE on every OS: build/love/ik/ holds the Lua files, the Linux x86-64
# LuaJIT build (core.so) and the Windows x64 one (core.dll) side by side; copied next to a
# game's main.lua, LÖVE loads the module for its OS (it looks for ik/core.so on Linux,
# ik/core.dll on Windows). build/love/ik-VERSION-love.zip is the folder, zipped, to hand
# out. The test inside LÖVE (spec/love/) runs with the folder's files, and make
# test-windows loads the DLL from it.
IK_VERSION  := $(shell sed -n 's/^version = "\(.*\)-[0-9]*"$$/\1/p' rockspec/ik-[0-9]*.rockspec | head -n 1)
LOVE_FOLDER := build/love/ik
LOVE_ZIP    := build/love/ik-$(IK_VERSION)-love.zip
# ik.pure (lua/ik/pure/), beside them: the backend that needs no C module.
LOVE_PURE   := $(PURE_LUA:lua/ik/%=$(LOVE_FOLDER)/%)
LOVE_FILES  := $(LOVE_FOLDER)/init.lua $(LOVE_FOLDER)/love.lua $(LOVE_FOLDER)/core.so $(LOVE_FOLDER)/core.dll \
               $(LOVE_PURE)

.PHONY: love-folder
love-folder: deps $(LOVE_ZIP)
	@echo "love-folder: $(LOVE_FOLDER)/ ($(notdir $(LOVE_FILES))) and $(LOVE_ZIP)"

$(LOVE_ZIP): $(LOVE_FILES)
	$(call say,ZIP,$@)
	$(Q)rm -f $@ && cd build/love && zip -qr $(notdir $@) ik

$(LOVE_FOLDER)/%.lua: lua/ik/%.lua
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

$(LOVE_FOLDER)/core.so: build/luajit/ik/core.so
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

$(LOVE_FOLDER)/core.dll: build/windows/ik/core.dll
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

# wine64 alone, without its recommendations: the specs need no graphics, sound or Mono.
# Every VM's specs against ik.pure (make test runs them under LuaJIT and Lua 5.1 only).
test-pure: deps all luajit $(LUA_OTHER_MOD) $(if $(LUA55_SKIP),,$(LUA55_MOD))
	@IK_LUA55_SKIP="$(LUA55_SKIP)" sh spec/run.sh pure

# The differential specs (ik.pure against the C module, call by call) at 7 times their
# length: over 1,000,000 random calls in each VM, with the share of the same bits.
test-differential: deps all luajit $(LUA_OTHER_MOD)
	@sh tools/differential.sh 7 luajit lua5.4 lua5.3 lua5.2 lua5.1

test-windows: deps windows $(LOVE_FILES)
	@sh tools/deps.sh --no-install-recommends wine64
	@sh spec/run.sh windows

# The C sources of the Lua module, for a build by hand on a platform this Makefile does not
# target (docs/install-notes.md: macOS).
.PHONY: print-sources
print-sources:
	@echo $(CORE_SRC) $(BIND_SRC)

# `luarocks make` compiles in the source tree: it leaves its own ik/core.so (where a Lua
# started here would find it first, whatever Lua it was built for) and src/*.o. Those
# objects give it away: remove both (make's own builds are under build/).
ifneq ($(wildcard src/*.o),)
$(LUA54_MOD): rock-leftovers
endif
rock-leftovers:
	rm -f src/*.o ik/core.so

# The core alone, for C: no Lua headers needed.
lib: $(LIB)

# dist/: the single-file form (ik.h, ik.c, ik_lua.c), committed; CI checks it is current.
amalgamation: $(CORE_SRC) $(CORE_HDR) $(BIND_SRC) $(BIND_HDR) tools/amalgamate.sh
	$(call say,GEN,dist/ik.h dist/ik.c dist/ik_lua.c)
	$(Q)sh tools/amalgamate.sh dist $(CORE_SRC)

build/examples/solve: examples/solve.c $(LIB) src/ik.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc examples/solve.c $(LIB) -o $@ -lm

# The engine host: Lua 5.4 embedded, the core and the binding compiled into the executable.
LUA54_LIB ?= -llua5.4
build/examples/host: examples/host/host.c $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc -I$(LUA54_INC) examples/host/host.c $(CORE_SRC) $(BIND_SRC) \
		-o $@ $(LUA54_LIB) -lm

build/tests/edge_scale: spec/c/edge_scale_test.c $(LIB) src/ik.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc spec/c/edge_scale_test.c $(LIB) -o $@ -lm

# Threads: ik.h's promise (chains of their own per thread; shared reads after
# ik_chain_update), plain in make test, under ThreadSanitizer in make test-tsan.
build/tests/threads: spec/c/threads_test.c $(LIB) src/ik.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc spec/c/threads_test.c $(LIB) -o $@ -lm -lpthread

# The batch: ik_solve_many bit for bit the single solves, with the lanes the processor
# chooses, with SSE2 lanes only, and with no vector path.
BATCH_TESTS := build/tests/batch build/tests/batch_sse2 build/tests/batch_scalar
build/tests/batch: spec/c/batch_test.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc $< $(CORE_SRC) -o $@ -lm
build/tests/batch_sse2: spec/c/batch_test.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DIK_NO_AVX2 -Isrc $< $(CORE_SRC) -o $@ -lm
build/tests/batch_scalar: spec/c/batch_test.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DIK_NO_LANES -Isrc $< $(CORE_SRC) -o $@ -lm

# The batch on arm64 (NEON lanes, and none), cross-compiled and run under qemu: the same
# bits as the single solves there, and the same iteration count as on x86-64.
ARM_CC ?= aarch64-linux-gnu-gcc
build/arm64/batch build/arm64/batch_scalar: spec/c/batch_test.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(ARM_CC) $(CSTD) $(OPT) $(WARN) $(FP_FLAGS) $(if $(findstring scalar,$@),-DIK_NO_LANES) -static -Isrc \
	    $< $(CORE_SRC) -o $@ -lm

test-arm64: build/tests/batch
	@sh tools/deps.sh gcc-aarch64-linux-gnu qemu-user
	@$(MAKE) --no-print-directory build/arm64/batch build/arm64/batch_scalar
	@its() { sed -n 's/.*, \([0-9]*\) iterations,.*/\1/p'; }; \
	x86=$$(build/tests/batch | its); \
	for b in build/arm64/batch build/arm64/batch_scalar; do \
	    out=$$(qemu-aarch64 $$b) || exit 1; \
	    echo "$$out"; \
	    arm=$$(echo "$$out" | its); \
	    [ -n "$$x86" ] && [ "$$arm" = "$$x86" ] || { echo "FAIL $$b: $$arm iterations, x86-64 $$x86"; exit 1; }; \
	done

build/tsan/threads: spec/c/threads_test.c $(CORE_SRC) $(CORE_HDR) | clang-deps
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(FUZZ_CC) $(CSTD) -g -O1 $(WARN) $(FP_FLAGS) -fsanitize=thread -Isrc $< $(CORE_SRC) -o $@ -lm -lpthread

test-tsan: deps build/tsan/threads
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 build/tsan/threads

deps:
	@sh tools/deps.sh

test: deps all luajit $(LUA_OTHER_MOD) $(if $(LUA55_SKIP),,$(LUA55_MOD)) build/examples/host $(LOVE_SPEC_IK) \
      build/tests/edge_scale build/tests/threads $(BATCH_TESTS) $(REPLAY_BIN)
	@IK_SOURCES="$(CORE_SRC) $(BIND_SRC)" IK_BATCH_TESTS="$(BATCH_TESTS)" IK_FUZZERS="$(FUZZERS)" \
	    IK_LUA55_SKIP="$(LUA55_SKIP)" sh spec/run.sh

# The README's examples: Lua under Lua 5.4 and LuaJIT, the LÖVE main.lua (inside LÖVE too
# when it is installed), the C snippets built with the commands they show.
readme-check: deps all luajit $(LOVE_FOLDER)/core.so $(LOVE_FOLDER)/init.lua $(LOVE_FOLDER)/love.lua
	@sh tools/readme_check.sh

demo: deps $(LUA54_MOD)
	lua5.4 demo/demo.lua

readme-picture: deps $(LUA54_MOD)
	lua5.4 demo/demo.lua --readme

# The README's recipe pictures, docs/recipe-*.svg, from the poses the recipes' code computes.
recipe-pictures: deps $(LUA54_MOD)
	lua5.4 tools/recipe_pictures.lua

# Figures, not tests: success rates and mean iterations under both VMs.
bench: deps $(LUA54_MOD) luajit build/bench/bench
	build/bench/bench
	lua5.4 bench/lua_bench.lua
	IK_CPATH="build/luajit/?.so" luajit bench/lua_bench.lua
	IK_BACKEND=lua lua5.4 bench/lua_bench.lua
	IK_BACKEND=lua luajit bench/lua_bench.lua
	IK_BACKEND=lua lua5.1 bench/lua_bench.lua
	lua5.4 bench/rates.lua
	IK_CPATH="build/luajit/?.so" luajit bench/rates.lua
	lua5.4 bench/limits.lua
	lua5.4 bench/track_limits.lua
	lua5.4 bench/limits_fresh.lua
	lua5.4 bench/motion.lua
	IK_CPATH="build/luajit/?.so" luajit bench/motion.lua
	lua5.4 bench/loops.lua
	IK_CPATH="build/luajit/?.so" luajit bench/loops.lua
	lua5.4 bench/trees.lua
	IK_CPATH="build/luajit/?.so" luajit bench/trees.lua

# Instructions per solve under callgrind (repeatable where times are not), FABRIK 2D's
# instructions by function, and what a call through the binding costs.
bench-instr: deps $(LUA54_MOD) luajit build/bench/bench
	@sh tools/deps.sh valgrind
	sh bench/instr.sh build/bench/bench

# Against a peer: Spine's pure-Lua IK constraint, loaded at run time from SPINE (nothing of
# Spine is in this repository). Without SPINE the script says where to get it and exits 0,
# once: the LuaJIT line is left out.
SPINE ?=
bench-spine: deps $(LUA54_MOD) luajit
	SPINE="$(SPINE)" lua5.4 bench/spine.lua
	$(if $(SPINE),SPINE="$(SPINE)" IK_CPATH="build/luajit/?.so" luajit bench/spine.lua)

# Against a peer in C++: ozz-animation's IKTwoBoneJob and IKAimJob side by side with the
# 3D two-bone and aim chain solves (bench/ozz.cpp), in one process, both built with the
# library's flags. OZZ names an ozz-animation checkout (guillaumeblanc/ozz-animation, tag
# 0.16.0; nothing of ozz is in this repository): its include/ and the three sources the
# two jobs need are compiled into build/bench/ozz. Without OZZ it says so and exits 0.
OZZ ?=
OZZ_SRC = $(addprefix $(OZZ)/src/,animation/runtime/ik_two_bone_job.cc animation/runtime/ik_aim_job.cc \
                                  base/maths/simd_math.cc)
bench-ozz: deps $(LIB)
	@if [ -z "$(OZZ)" ]; then \
	    echo "bench-ozz: needs ozz-animation 0.16 (guillaumeblanc/ozz-animation, tag 0.16.0):"; \
	    echo "  make bench-ozz OZZ=/path/to/ozz-animation"; exit 0; fi; \
	mkdir -p build/bench; \
	echo "  CXX  build/bench/ozz"; \
	$(CXX) -std=c++11 $(OPT) $(FP_FLAGS) -w -I$(OZZ)/include -Isrc bench/ozz.cpp $(OZZ_SRC) $(LIB) \
	    -o build/bench/ozz -lm 2> build/bench/ozz.log || { cat build/bench/ozz.log; exit 1; }; \
	build/bench/ozz

# The C bench links build/libik.a, built with the flags above.
build/bench/bench: bench/bench.c $(LIB) src/ik.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc bench/bench.c $(LIB) -o $@ -lm

# LÖVE games: LÖVE loads a C module from the game folder (never from inside a zipped .love),
# so the LÖVE runtime test and the demo each get a copy of the LuaJIT build and the Lua files
# in their own ik/, exactly where a game keeps them (git-ignored): the test's from the folder
# for LÖVE (build/love/ik/, above), the demo's from the builds.
spec/love/ik/core.so: $(LOVE_FOLDER)/core.so
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

demo/love/ik/core.so: build/luajit/ik/core.so
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

spec/love/ik/%.lua: $(LOVE_FOLDER)/%.lua
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

demo/love/ik/%.lua: lua/ik/%.lua
	@mkdir -p $(@D)
	$(call say,CP,$@)
	$(Q)cp $< $@

love: deps $(LOVE_DEMO_IK)
	@sh tools/deps.sh love
	love demo/love

# The README's picture: software OpenGL under a virtual X server, so no display is needed.
LOVE_SCREENSHOT ?= $(CURDIR)/docs/love-demo.png
love-screenshot: deps $(LOVE_DEMO_IK)
	@sh tools/deps.sh love xvfb xauth libgl1-mesa-dri
	LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x720x24" \
		love demo/love --screenshot "$(LOVE_SCREENSHOT)"

# The browser: love.js (the npm package, LÖVE 11.4 on PUC Lua 5.1 compiled to WebAssembly,
# in its compatibility mode, which needs no SharedArrayBuffer) packages a game folder into
# index.html, game.js, game.data, love.js, love.wasm and theme/. No C module loads there, so
# the folder gets ik's Lua files only and require("ik") falls back to ik.pure. love.js and
# puppeteer-core (which drives Debian's chromium for make test-web) are installed with npm
# into build/web-node/, at the versions tools/web/package-lock.json pins.
WEB_NODE    := build/web-node
WEB_MODULES := $(WEB_NODE)/node_modules/.installed
WEB_IK      := lua/ik/init.lua lua/ik/love.lua $(PURE_LUA)
WEB_TIMEOUT ?= 900
# web_game SOURCE-FOLDER STAGING-FOLDER TITLE OUTPUT-FOLDER: the game's main.lua and
# conf.lua and ik's Lua files (no core.so) staged, then packaged by love.js.
web_game = rm -rf $(2) $(4) && mkdir -p $(2)/ik/pure && cp $(1)/main.lua $(1)/conf.lua $(2)/ && \
	cp lua/ik/init.lua lua/ik/love.lua $(2)/ik/ && cp $(PURE_LUA) $(2)/ik/pure/ && \
	$(WEB_NODE)/node_modules/.bin/love.js -c -t "$(3)" $(2) $(4)

# npm and node: Debian's packages where there are none (a machine may have others).
$(WEB_MODULES): tools/web/package.json tools/web/package-lock.json
	@command -v npm >/dev/null 2>&1 || sh tools/deps.sh nodejs npm
	@mkdir -p $(WEB_NODE)
	$(call say,NPM,$(WEB_NODE))
	$(Q)cp tools/web/package.json tools/web/package-lock.json $(WEB_NODE)/
	$(Q)cd $(WEB_NODE) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

web: deps $(WEB_MODULES) demo/love/main.lua demo/love/conf.lua $(WEB_IK)
	$(call say,WEB,build/web)
	$(Q)$(call web_game,demo/love,build/web-src/demo,ik demo,build/web)
	$(Q)rm -f build/ik-web-demo.zip && cd build/web && zip -qr ../ik-web-demo.zip .
	@echo "web: build/web/ (serve it: python3 -m http.server -d build/web) and build/ik-web-demo.zip"

test-web: deps $(WEB_MODULES) spec/love/main.lua spec/love/conf.lua $(WEB_IK)
	@sh tools/deps.sh chromium
	$(call say,WEB,build/web-spec)
	$(Q)$(call web_game,spec/love,build/web-src/spec,ik spec,build/web-spec)
	@NODE_PATH=$(WEB_NODE)/node_modules node tools/test_web.js build/web-spec $(WEB_TIMEOUT)

# The libFuzzer harnesses spec/fuzz/NAME_fuzzer.c link the core only (no Lua). Built with clang's
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer for `make fuzz`; built with the
# plain compiler and spec/fuzz/replay.c for `make test`, which replays the committed corpus
# spec/fuzz/corpus/NAME/ (where every crash found is kept) through the same checks.
build/fuzz/fuzz_%: spec/fuzz/%_fuzzer.c spec/fuzz/fuzzer.h spec/fuzz/chain_checks.h $(CORE_SRC) $(CORE_HDR) | clang-deps
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Isrc $< $(CORE_SRC) -o $@ -lm

build/replay/fuzz_%: spec/fuzz/%_fuzzer.c spec/fuzz/fuzzer.h spec/fuzz/chain_checks.h spec/fuzz/replay.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CSTD) -g $(OPT) $(WARN) $(FP_FLAGS) -Isrc $< spec/fuzz/replay.c $(CORE_SRC) -o $@ -lm

fuzz: $(FUZZ_BIN)
	@sh tools/fuzz.sh $(FUZZ_TIME) $(FUZZERS)

clang-deps:
	@sh tools/deps.sh clang libclang-rt-14-dev

# The Lua 5.4 module with AddressSanitizer and UndefinedBehaviorSanitizer, for an
# uninstrumented lua5.4 (spec/run.sh preloads the sanitizers' runtime).
build/asan/ik/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR) | clang-deps
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(FUZZ_CC) $(CSTD) -g -O1 $(WARN) $(FP_FLAGS) -fPIC -fno-omit-frame-pointer \
	    -fsanitize=address,undefined -fno-sanitize-recover=all -I$(LUA54_INC) -shared \
	    $(CORE_SRC) $(BIND_SRC) -o $@ -lm

# Both need `all`: spec/edge_scale_spec.lua runs the plain build in a child process.
test-asan: deps all build/asan/ik/core.so
	@sh spec/run.sh asan

test-valgrind: deps all
	@sh tools/deps.sh valgrind
	@sh spec/run.sh valgrind

# Determinism: builds of the Lua module that must agree bit for bit, each in build/det/NAME/:
# the VM (lua54, luajit), the compiler (cc, clang), the optimisation (-O0, -O2, or -O3
# -march=native, where FMA instructions exist) and the batch's vector path (-sse2: SSE2 lanes
# only, -nolanes: none); the first is the reference, `make`'s own.
DET_VARIANTS := lua54-cc-O2 lua54-cc-O0 lua54-cc-O3-native lua54-clang-O2 lua54-cc-O2-sse2 lua54-cc-O2-nolanes \
                luajit-cc-O2 luajit-cc-O0
det_cc  = $(if $(findstring clang,$(1)),$(FUZZ_CC),$(CC))
det_opt = $(if $(findstring -O0,$(1)),-O0,$(if $(findstring native,$(1)),-O3 -march=native,-O2)) \
          $(if $(findstring -sse2,$(1)),-DIK_NO_AVX2) $(if $(findstring -nolanes,$(1)),-DIK_NO_LANES)
det_inc = $(if $(findstring luajit,$(1)),$(LUAJIT_INC),$(LUA54_INC))

build/det/%/ik/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR) | clang-deps
	@mkdir -p $(@D)
	$(call det_cc,$*) $(CSTD) $(call det_opt,$*) $(WARN) $(FP_FLAGS) -fPIC -I$(call det_inc,$*) \
	    -shared $(CORE_SRC) $(BIND_SRC) -o $@ -lm

determinism: deps $(DET_VARIANTS:%=build/det/%/ik/core.so)
	@sh tools/determinism.sh $(DET_VARIANTS)

# The seed is fixed once per make run, so both VMs make the same calls.
ifeq ($(origin SEED), undefined)
SEED := $(shell date +%s)
endif
CALLS ?= 1000000

fuzz-lua: deps $(LUA54_MOD) luajit
	lua5.4 tools/random_calls.lua $(SEED) $(CALLS)
	IK_CPATH="build/luajit/?.so" luajit tools/random_calls.lua $(SEED) $(CALLS)
	JIT=off IK_CPATH="build/luajit/?.so" luajit tools/random_calls.lua $(SEED) $(CALLS)

clean:
	rm -rf build ik libik.a demo/out spec/love/ik demo/love/ik
