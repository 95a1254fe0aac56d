-- From the repository root, for the Lua that will load it (add --local, or --tree DIR, to
-- install without root):
--   luarocks --lua-version=5.4 make rockspec/ik-0.2.0-1.rockspec   (or 5.1, 5.2, 5.3, 5.5)
-- Debian's luarocks defaults to Lua 5.1 and finds each version's headers in
-- /usr/include/lua5.X (packages liblua5.X-dev); elsewhere pass LUA_INCDIR=... .
-- LuaJIT 2.1 (LÖVE's Lua) uses luarocks' Lua 5.1 trees; build against LuaJIT's own headers:
--   luarocks --lua-version=5.1 make rockspec/ik-0.2.0-1.rockspec LUA_INCDIR=/usr/include/luajit-2.1
-- That rock loads in LuaJIT only. The plain Lua 5.1 rock (no LUA_INCDIR) loads in both Lua
-- 5.1 and LuaJIT, so it is the one for a tree that serves both (docs/install-notes.md).
-- The builtin backend compiles in the source tree: it leaves ik/core.so and src/*.o there
-- (the next `make` notices and rebuilds its own ik/core.so).
rockspec_format = "3.0"
package = "ik"
version = "0.2.0-1"
source = {
    -- luarocks make builds from the working tree and never fetches this. The project has
    -- no public repository yet: publishing the rock needs the real url and a v0.2.0 tag.
    url = "git+https://example.invalid/ik.git",
    tag = "v0.2.0",
}
description = {
    summary = "Inverse kinematics for bone chains: a small C core with a Lua binding",
    detailed = [[
A C99 core (no Lua in it) and a Lua module for 2D and 3D bone chains and rigs: the analytic
two-bone solve in angle and vector form, CCD, FABRIK and constraint relaxation, with joint
limits, orientation goals, aiming, attached chains solved together, warm starts and nothing
allocated per solve; for Lua 5.1 to 5.5 and LuaJIT 2.1.
]],
    license = "MIT",
    labels = { "ik", "inverse-kinematics", "animation", "gamedev", "love2d" },
}
dependencies = {
    "lua >= 5.1, < 5.6",
}
build = {
    type = "builtin",
    modules = {
        ["ik"] = "lua/ik/init.lua",
        ["ik.love"] = "lua/ik/love.lua",
        ["ik.pure"] = "lua/ik/pure/init.lua",
        ["ik.pure.math"] = "lua/ik/pure/math.lua",
        ["ik.pure.chain"] = "lua/ik/pure/chain.lua",
        ["ik.pure.limits"] = "lua/ik/pure/limits.lua",
        ["ik.pure.joint_space"] = "lua/ik/pure/joint_space.lua",
        ["ik.pure.sweep"] = "lua/ik/pure/sweep.lua",
        ["ik.pure.escape"] = "lua/ik/pure/escape.lua",
        ["ik.pure.two_bone"] = "lua/ik/pure/two_bone.lua",
        ["ik.pure.aim"] = "lua/ik/pure/aim.lua",
        ["ik.pure.goal"] = "lua/ik/pure/goal.lua",
        ["ik.pure.fabrik"] = "lua/ik/pure/fabrik.lua",
        ["ik.pure.ccd"] = "lua/ik/pure/ccd.lua",
        ["ik.pure.relax"] = "lua/ik/pure/relax.lua",
        ["ik.pure.solve"] = "lua/ik/pure/solve.lua",
        ["ik.pure.rig_tree"] = "lua/ik/pure/rig_tree.lua",
        ["ik.pure.rig_fabrik"] = "lua/ik/pure/rig_fabrik.lua",
        ["ik.pure.rig_relax"] = "lua/ik/pure/rig_relax.lua",
        ["ik.pure.rig_joint"] = "lua/ik/pure/rig_joint.lua",
        ["ik.pure.rig"] = "lua/ik/pure/rig.lua",
        ["ik.core"] = {
            sources = {
                -- the Makefile's CORE_SRC and BIND_SRC (make test checks they agree)
                "src/chain.c",
                "src/limits.c",
                "src/sweep.c",
                "src/joint_space.c",
                "src/escape.c",
                "src/two_bone.c",
                "src/fabrik.c",
                "src/batch.c",
                "src/ccd.c",
                "src/relax.c",
                "src/aim.c",
                "src/goal.c",
                "src/solve.c",
                "src/rig.c",
                "src/rig_fabrik.c",
                "src/rig_relax.c",
                "src/rig_joint.c",
                "src/motion.c",
                "src/gait.c",
                "src/ik_lua.c",
            },
            incdirs = { "src" },
            defines = {},
        },
    },
}
