-- From the repository root (add --local, or --tree DIR, to install without root):
--   luarocks --lua-version=5.4 make rockspec/ik-scm-1.rockspec
-- Debian's luarocks defaults to Lua 5.1, whose headers the binding does not support; for
-- LuaJIT 2.1 point it at LuaJIT's instead:
--   luarocks make rockspec/ik-scm-1.rockspec LUA_INCDIR=/usr/include/luajit-2.1
-- The builtin backend compiles in the source tree: it leaves ik/core.so and src/*.o there
-- (the next `make` notices and rebuilds its own ik/core.so).
rockspec_format = "3.0"
package = "ik"
version = "scm-1"
source = {
    -- luarocks make builds from the working tree and never fetches this.
    url = "git+https://example.invalid/ik.git",
}
description = {
    summary = "Inverse kinematics for bone chains: a small C core with a Lua binding",
    detailed = [[
A C99 core (no Lua in it) and a Lua module for 2D and 3D bone chains: the analytic two-bone
solve in angle and vector form, CCD, FABRIK and constraint relaxation, with per-joint
weights, warm starts and nothing allocated per solve; for Lua 5.4 and LuaJIT 2.1.
]],
    license = "MIT",
    labels = { "ik", "inverse-kinematics", "animation", "gamedev", "love2d" },
}
dependencies = {
    "lua >= 5.1",
}
build = {
    type = "builtin",
    modules = {
        ["ik"] = "lua/ik/init.lua",
        ["ik.love"] = "lua/ik/love.lua",
        ["ik.core"] = {
            sources = {
                "src/chain.c",
                "src/limits.c",
                "src/solve.c",
                "src/two_bone.c",
                "src/ccd.c",
                "src/fabrik.c",
                "src/relax.c",
                "src/ik_lua.c",
            },
            incdirs = { "src" },
            defines = {},
        },
    },
}
