-- ik: inverse kinematics for bone chains. The C core ik.core does all the work (and sets
-- _VERSION); this file is what require("ik") finds, and the place for Lua-side helpers.

-- The build of ik.core this host needs, and how to make it (a sentence for the error below).
local function needed_build()
    if type(jit) == "table" then
        local host = tostring(jit.version)
        if type(love) == "table" and type(love.getVersion) == "function" then
            host = ("LÖVE %d.%d, %s"):format(love.getVersion(), host)
        end
        if jit.os == "Windows" then
            return host, "the LuaJIT build for Windows: `make windows` (build/windows/ik/core.dll)"
        end
        return host, "the LuaJIT build: `make luajit` (build/luajit/ik/core.so)"
    end
    local version = tostring(_VERSION)
    local minor = version:match("^Lua 5%.([1-4])$")
    if minor == "4" then
        return version, "the Lua 5.4 build: `make` (ik/core.so)"
    elseif minor then
        return version, ("the Lua 5.%s build: `make lua5.%s` (build/lua5.%s/ik/core.so)"):format(
            minor, minor, minor)
    end
    return version, "a build ik does not have: it builds for Lua 5.1 to 5.4 and LuaJIT 2.1"
end

-- A C module built for another Lua fails in the loader ("undefined symbol: ...") or in
-- luaopen_ik_core's own version check; either way, say which build this host needs and
-- keep what the loader said.
local loaded, core = pcall(require, "ik.core")
if not loaded then
    local host, build = needed_build()
    error(("ik: the C module ik.core did not load in %s, which needs %s in the ik sources, "
        .. "where package.cpath finds it (or `luarocks make` of the rockspec for this Lua). "
        .. "The loader said:\n%s"):format(host, build, tostring(core)), 0)
end

return core
