-- A build of ik.core loaded into a Lua it was not built for: require("ik") must not fail but
-- give the pure-Lua backend (ik.backend "lua"), with ik.fallback_reason a message that names
-- the host, the build it needs and the make target that makes it, and keeps what the loader
-- said. Each case runs in a child process of the host VM with package.cpath pointing at
-- make's build for another VM (make test builds all five, and the Lua 5.5 one where a
-- lua5.5 is there).
--
-- Which pairings load at all is the dynamic loader's call (src/ik_lua_compat.h): most fail
-- with "undefined symbol"; the 5.2 and 5.3 builds load in each other's VM, as do the 5.4
-- and 5.5 builds, and are stopped by luaopen_ik_core's version check; the plain Lua 5.1
-- build loads and works in LuaJIT, which keeps Lua 5.1's ABI for C modules.

local BUILDS = {
    ["lua5.1"] = "build/lua5.1/?.so",
    ["lua5.2"] = "build/lua5.2/?.so",
    ["lua5.3"] = "build/lua5.3/?.so",
    ["lua5.4"] = "build/lua5.4/?.so",
    luajit = "build/luajit/?.so",
}

local h = require("spec.helpers")

-- Lua 5.5 is there only where someone installed it (Debian 12 has none): make test says
-- in IK_LUA55_SKIP why it skipped it (empty: it did not); run by hand, a lua5.5 on PATH and
-- its build are enough. Why the Lua 5.5 cases do not run, or nil when they do.
local function lua55_skip()
    local skip = os.getenv("IK_LUA55_SKIP")
    if skip then return skip ~= "" and skip or nil end
    if not h.posix then return "not a POSIX system" end
    local p = assert(io.popen("command -v lua5.5"))
    local found = p:read("*a")
    p:close()
    if found == "" then return "no lua5.5 command on PATH" end
    local f = io.open("build/lua5.5/ik/core.so", "rb")
    if not f then return "build/lua5.5/ik/core.so is missing (make lua5.5)" end
    f:close()
    return nil
end
local LUA55_SKIP = lua55_skip()
if not LUA55_SKIP then BUILDS["lua5.5"] = "build/lua5.5/?.so" end

-- Runs `code` in VM with package.cpath = the build of `build_of`; returns everything it
-- printed and its exit status in one string ("...\nexit status N\n").
local function child(vm, build_of, code)
    local module = BUILDS[build_of]:gsub("%?", "ik/core")
    local f = io.open(module, "rb")
    assert(f, module .. " is missing (make test builds it)")
    f:close()
    local script = ("package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path; "
        .. "package.cpath = '%s'; %s"):format(BUILDS[build_of], code)
    local cmd = ("env -u LD_PRELOAD %s -e \"%s\" 2>&1; echo \"exit status $?\""):format(vm, script)
    local p = assert(io.popen(cmd))
    local out = p:read("*a")
    p:close()
    return out
end

-- What require("ik") gave: its backend, then its fallback_reason; or the error it raised.
local REQUIRE_IK = "local ok, ik = pcall(require, 'ik'); "
    .. "if ok then print('backend ' .. ik.backend); print(ik.fallback_reason) else print('raised ' .. tostring(ik)) end"

local function has(out, text)
    assert.is_truthy(out:find(text, 1, true), ("%q not in:\n%s"):format(text, out))
end

-- The children run through sh: not under Windows (make test-windows).
local describe_posix = h.posix and describe or pending

describe_posix("require('ik') with a build for another Lua", function()
    local cases = {
        -- host, build, what the host is called, its build's make target, the loader's words
        { "luajit", "lua5.4", "in LuaJIT 2.1", "`make luajit` (build/luajit/ik/core.so)",
            "undefined symbol: lua_newuserdatauv|lua_getiuservalue|lua_setiuservalue" },
        { "lua5.4", "luajit", "in Lua 5.4", "`make` (build/lua5.4/ik/core.so)", "undefined symbol: lua_objlen|lua_replace|lua_pcall" },
        { "lua5.1", "luajit", "in Lua 5.1", "`make lua5.1` (build/lua5.1/ik/core.so)",
            "undefined symbol: luaL_setfuncs" },
        { "lua5.4", "lua5.3", "in Lua 5.4", "`make` (build/lua5.4/ik/core.so)", "undefined symbol: lua_newuserdata" },
        { "luajit", "lua5.2", "in LuaJIT 2.1", "`make luajit` (build/luajit/ik/core.so)",
            "undefined symbol: lua_rawlen|lua_setuservalue|lua_getuservalue" },
        { "lua5.2", "lua5.1", "in Lua 5.2", "`make lua5.2` (build/lua5.2/ik/core.so)",
            "undefined symbol: lua_objlen|lua_pcall" },
        -- These two load; luaopen_ik_core's check stops them.
        { "lua5.3", "lua5.2", "in Lua 5.3", "`make lua5.3` (build/lua5.3/ik/core.so)",
            "ik.core was built for Lua 5.2 but this is Lua 5.3" },
        { "lua5.2", "lua5.3", "in Lua 5.2", "`make lua5.2` (build/lua5.2/ik/core.so)",
            "ik.core was built for Lua 5.3 but this is Lua 5.2" },
    }
    local cases55 = {
        -- These two load, as 5.2 and 5.3 do: luaopen_ik_core's check stops them.
        { "lua5.5", "lua5.4", "in Lua 5.5", "`make lua5.5` (build/lua5.5/ik/core.so)",
            "ik.core was built for Lua 5.4 but this is Lua 5.5: build ik.core for Lua 5.5 with "
            .. "`make lua5.5` (build/lua5.5/ik/core.so), or with `luarocks --lua-version=5.5 make`" },
        { "lua5.4", "lua5.5", "in Lua 5.4", "`make` (build/lua5.4/ik/core.so)",
            "ik.core was built for Lua 5.5 but this is Lua 5.4: build ik.core for Lua 5.4 with "
            .. "`make` (build/lua5.4/ik/core.so), or with `luarocks --lua-version=5.4 make`" },
        { "lua5.5", "lua5.3", "in Lua 5.5", "`make lua5.5` (build/lua5.5/ik/core.so)", "undefined symbol: lua_newuserdata" },
        { "luajit", "lua5.5", "in LuaJIT 2.1", "`make luajit` (build/luajit/ik/core.so)",
            "undefined symbol: lua_newuserdatauv|lua_getiuservalue|lua_setiuservalue" },
    }
    if LUA55_SKIP then
        pending("the Lua 5.5 cases: " .. LUA55_SKIP)
    else
        for _, case in ipairs(cases55) do cases[#cases + 1] = case end
    end
    for _, case in ipairs(cases) do
        local host, build, named, target, loader = case[1], case[2], case[3], case[4], case[5]
        it(("in %s, the %s build: the pure backend, its fallback_reason names the host, %s and the loader's %q"):format(
            host, build, target, loader), function()
            local out = child(host, build, REQUIRE_IK)
            has(out, "backend lua\n")
            has(out, "ik: the C module ik.core did not load " .. named)
            has(out, "which needs the ")
            has(out, target)
            has(out, "The loader said:\n")
            -- "undefined symbol: a|b": the loader names the first symbol it cannot resolve,
            -- which of those the build needs depends on the linker's order
            local prefix, names = loader:match("^(undefined symbol: )(.*)$")
            if prefix then
                local found = false
                for name in names:gmatch("[^|]+") do
                    found = found or out:find(prefix .. name, 1, true) ~= nil
                end
                assert.is_true(found, ("%q not in:\n%s"):format(loader, out))
            else
                has(out, loader)
            end
            has(out, "exit status 0\n")
        end)
    end

    it("luaopen_ik_core itself, the Lua 5.2 build in Lua 5.3: an error naming both versions and `make lua5.3`", function()
        local out = child("lua5.3", "lua5.2", "local ok, e = pcall(require, 'ik.core'); print(ok and 'loaded' or e)")
        has(out, "ik.core was built for Lua 5.2 but this is Lua 5.3: build ik.core for Lua 5.3 "
            .. "with `make lua5.3` (build/lua5.3/ik/core.so), or with `luarocks --lua-version=5.3 make`")
    end)

    it("the plain Lua 5.1 build loads and solves in LuaJIT (the same C ABI)", function()
        local out = child("luajit", "lua5.1",
            "local ik = require('ik'); print(ik._VERSION, ik.backend, ik.fallback_reason, (ik.chain2d({ 1, 1 }):solve(1, 1)))")
        assert.is_truthy(out:find("^ik [^\n]*\tc\tnil\ttrue\nexit status 0\n$"), out)
    end)

    it("each VM loads its own build and solves", function()
        for vm in pairs(BUILDS) do
            local out = child(vm, vm,
                "local ik = require('ik'); print(ik.backend, ik.fallback_reason, (ik.chain2d({ 1, 1 }):solve(1, 1)))")
            assert.are.equal("c\tnil\ttrue\nexit status 0\n", out, vm)
        end
    end)

    it("the pure backend a wrong build falls back to solves (a two-bone chain)", function()
        local out = child("lua5.4", "luajit",
            "local ik = require('ik'); print(ik.backend, (ik.chain2d({ 1, 1 }):solve_two_bone(1, 1)))")
        assert.are.equal("lua\ttrue\nexit status 0\n", out)
    end)
end)

-- In this process, on every platform (the only cases that run on Windows). require("ik") anew
-- with package.cpath, package.loaded and package.preload as `setup` leaves them: returns
-- what it gave, or raises what it raised.
local function require_ik_with(setup)
    local saved = { package.cpath, package.loaded["ik"], package.loaded["ik.core"], package.preload["ik.core"] }
    local pure_reason = package.loaded["ik.pure"] and package.loaded["ik.pure"].fallback_reason
    package.loaded["ik"], package.loaded["ik.core"] = nil, nil
    setup()
    local ok, ik = pcall(require, "ik")
    package.cpath, package.loaded["ik"], package.loaded["ik.core"], package.preload["ik.core"] =
        saved[1], saved[2], saved[3], saved[4]
    if not ok then error(ik, 0) end
    local reason = ik.fallback_reason
    if package.loaded["ik.pure"] then package.loaded["ik.pure"].fallback_reason = pure_reason end
    return ik, reason
end

describe("require('ik') where ik.core is not the C module of this release", function()
    it("gives the pure backend when ik.core is another release's, and says which", function()
        local ik, reason = require_ik_with(function()
            package.preload["ik.core"] = function() return { _VERSION = "ik 0.0.1", backend = "c" } end
        end)
        assert.are.equal("lua", ik.backend)
        assert.are.equal(require("ik.pure"), ik)
        has(tostring(reason), "ik: the C module ik.core is ik 0.0.1 but these Lua files are " .. ik._VERSION)
    end)
end)

describe("require('ik') where neither backend loads", function()
    it("raises ik.core's reason and then why ik.pure did not load", function()
        local saved_pure, saved_preload = package.loaded["ik.pure"], package.preload["ik.pure"]
        local ok, err = pcall(require_ik_with, function()
            package.cpath = "nowhere/?.none"
            package.loaded["ik.pure"] = nil
            package.preload["ik.pure"] = function() error("ik.pure is missing here", 0) end
        end)
        package.loaded["ik.pure"], package.preload["ik.pure"] = saved_pure, saved_preload
        assert.is_false(ok)
        has(tostring(err), "ik: the C module ik.core did not load ")
        has(tostring(err), "The pure-Lua backend ik.pure did not load either (it is the folder "
            .. "ik/pure/ beside ik/init.lua):\nik.pure is missing here")
    end)
end)

-- With no ik.core on package.cpath, require("ik") gives the pure backend, and its
-- fallback_reason names this host and its own build's make target.
describe("require('ik') with no ik.core to be found", function()
    it("gives the pure backend; fallback_reason names this host, its build's make target and the loader's 'not found'", function()
        local host, target
        if jit then
            host = "in " .. jit.version
            target = jit.os == "Windows" and "`make windows` (build/windows/ik/core.dll)"
                or "`make luajit` (build/luajit/ik/core.so)"
        else
            local minor = _VERSION:match("^Lua 5%.(%d)$")
            host = "in " .. _VERSION
            target = minor == "4" and "`make` (build/lua5.4/ik/core.so)"
                or ("`make lua5.%s` (build/lua5.%s/ik/core.so)"):format(minor, minor)
        end
        local ik, err = require_ik_with(function() package.cpath = "nowhere/?.none" end)
        assert.are.equal("lua", ik.backend)
        assert.are.equal(require("ik.pure"), ik)
        err = tostring(err)
        has(err, "ik: the C module ik.core did not load " .. host .. ", which needs the ")
        has(err, target)
        has(err, "The loader said:\n")
        has(err, "module 'ik.core' not found")
        has(err, "nowhere/ik")
    end)
end)
