-- The long run of the randomized API test (spec/random_calls.lua): `make fuzz-lua` runs it
-- under Lua 5.4, LuaJIT and LuaJIT with its compiler off, with the same seed.
--   lua5.4 tools/random_calls.lua SEED [CALLS]     (from the repository root)
--   IK_CPATH="build/luajit/?.so" luajit tools/random_calls.lua SEED [CALLS]
--   JIT=off IK_CPATH="build/luajit/?.so" luajit tools/random_calls.lua SEED [CALLS]
--     (jit.off() after require: the FFI fast paths run interpreted, as in code the JIT
--     does not compile)
-- Prints the seed first, a progress line every 100,000 calls, then the totals, how often the
-- run reached the situations it is made for, and the known bugs of src/ it steered clear of.
-- On a failure it prints the failing call, why, and the calls before it, and exits 1; the
-- same SEED replays it (the sequence of calls depends only on the seed, in either VM).
-- TRACE=1 prints every call as it is made; DUMP=n prints, before call n, the chains it is
-- given as Lua source that rebuilds them (for a reproduction).
package.path = "./?.lua;lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")
local fuzz = require("spec.random_calls")

local seed = tonumber(arg[1])
local calls = tonumber(arg[2]) or 1000000
if not seed then
    io.stderr:write("usage: tools/random_calls.lua SEED [CALLS]\n")
    os.exit(2)
end
local vm = jit and jit.version or _VERSION
if jit and os.getenv("JIT") == "off" then
    jit.off()
    vm = vm .. " (JIT off)"
end

print(("fuzz-lua: %s, seed %d, %d calls (replay: make fuzz-lua SEED=%d CALLS=%d)"):format(vm, seed, calls, seed, calls))
local missing = fuzz.uncovered(ik)
if #missing > 0 then
    print("fuzz-lua: not covered (add them to spec/random_calls.lua's OPS): " .. table.concat(missing, ", "))
end
local _, known = fuzz.known_bugs(ik)
if #known > 0 then
    print(("fuzz-lua: %d known bug(s) of src/ still there, steered clear of (spec/random_calls.lua, KNOWN_BUGS):"):format(#known))
    for _, line in ipairs(known) do print("  " .. line) end
end
io.stdout:flush()

local stats = fuzz.run({
    ik = ik,
    seed = seed,
    calls = calls,
    progress = 100000,
    progress_log = function(line)
        print("  " .. line)
        io.stdout:flush()
    end,
    trace = os.getenv("TRACE") and function(step, call)
        print(("%8d  %s"):format(step, call))
    end or nil,
    -- DUMP=n: before call n, the chains it is given as Lua source that rebuilds them
    dump_at = tonumber(os.getenv("DUMP") or ""),
    dump = function(who, source)
        print("-- " .. who .. "\n" .. source)
    end,
})

if #stats.skipped > 0 then
    print("fuzz-lua: the module lacks (skipped): " .. table.concat(stats.skipped, ", "))
end
local names = {}
for name in pairs(stats.by_op) do names[#names + 1] = name end
table.sort(names)
local per_op = {}
for _, name in ipairs(names) do
    local c = stats.by_op[name]
    per_op[#per_op + 1] = ("%s %d/%d"):format(name, c.ok, c.rejected)
end
print("fuzz-lua: per function, ok/rejected: " .. table.concat(per_op, ", "))
local events = {}
for name, count in pairs(stats.events) do events[#events + 1] = ("%s %d"):format(name, count) end
table.sort(events)
print("fuzz-lua: situations reached: " .. table.concat(events, ", "))
print(("fuzz-lua: %s, seed %d: %d calls (%d ok, %d rejected), %d failures, %.1f s"):format(vm, seed, stats.calls,
    stats.ok, stats.rejected, stats.failures, stats.seconds))
if stats.failures > 0 then
    print(stats.first)
    os.exit(1)
end
if #missing > 0 then
    os.exit(1)
end
