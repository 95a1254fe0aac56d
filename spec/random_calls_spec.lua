-- The short run of the randomized API test (spec/random_calls.lua; `make fuzz-lua` is the
-- long one): 30,000 random calls of every function and method from a fixed seed, the same
-- calls in Lua 5.4 and LuaJIT, every one judged (see spec/random_calls.lua for the rules),
-- and under LuaJIT 10,000 more with the compiler off.
-- With IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) the first 5,000 of them.

local fuzz = require("spec.random_calls")
local ik = require("ik")

local SEED, CALLS = 20240601, os.getenv("IK_SPEC_QUICK") == "1" and 5000 or 30000

describe("the randomized API test", function()
    it("covers every function of the module, every method and metamethod of a chain and of a rig", function()
        local missing = fuzz.uncovered(ik)
        assert(#missing == 0, "not in spec/random_calls.lua's OPS: " .. table.concat(missing, ", "))
    end)

    it(("makes %d random calls (seed %d) and each one succeeds as it must, or fails as it must with nothing changed"):format(CALLS, SEED), function()
        local stats = fuzz.run({ ik = ik, seed = SEED, calls = CALLS })
        assert(stats.failures == 0, tostring(stats.first) .. "\n(replay: make fuzz-lua SEED=" .. SEED .. ")")
        assert(#stats.skipped == 0, "in OPS but not in the module: " .. table.concat(stats.skipped, ", "))
        assert.are.equal(CALLS, stats.calls)
        assert(stats.events["detach, collect, re-attach round"], "no detach, collect, re-attach round ran")
        -- every function succeeded, and in the full run each was also rejected (a bad self
        -- is 4% of a getter's calls: 5,000 calls may not reach one for every getter); # and
        -- tostring cannot be given a bad self
        for name, counts in pairs(stats.by_op) do
            assert(counts.ok > 0, name .. " never succeeded")
            if CALLS == 30000 and not name:find("__len$") and not name:find("__tostring$") then
                assert(counts.rejected > 0, name .. " was never rejected")
            end
        end
    end)

    -- Under LuaJIT, the same calls with the compiler off: the FFI fast paths then run
    -- interpreted, as they do in code the JIT does not compile.
    if jit then
        it(("makes %d random calls (seed %d) with jit.off(), each judged as above"):format(CALLS / 3, SEED + 1), function()
            jit.off()
            jit.flush()
            local ok, stats = pcall(fuzz.run, { ik = ik, seed = SEED + 1, calls = CALLS / 3 })
            jit.on()
            assert(ok, tostring(stats))
            assert(stats.failures == 0, tostring(stats.first) .. "\n(replay: make fuzz-lua SEED=" .. (SEED + 1) .. ")")
            assert.are.equal(CALLS / 3, stats.calls)
        end)
    end

    -- The random run steers clear of the bugs of src/ it knows (M.KNOWN_BUGS), so it can go
    -- on testing the rest; this test fails while any of them is still there.
    it("finds none of the known bugs of src/ still there", function()
        local _, list = fuzz.known_bugs(ik)
        assert(#list == 0, #list .. " known bug(s) of src/ still there:\n  " .. table.concat(list, "\n  "))
    end)
end)
