-- What large trees cost, at two sizes five times apart: linear work grows about 5 times,
-- quadratic work 25. Run from the repository root (make bench does, under Lua 5.4 and LuaJIT):
--   lua5.4 bench/trees.lua
-- Rows:
--   read after a root move  a line of D one-bone chains, each on the tip of the one before:
--                           the root turns, then the last chain's effector() is read
--   deep rig, per iteration  a rig over a line of D two-bone chains, its tip given a goal
--   wide rig, per iteration  a body of N bones with a two-bone leg on every joint, every
--                           leg given a goal
--   ik.rig                   making a rig of C chains attached as a binary tree
-- A rig's time per iteration is the time of a solve of 4 iterations (tolerance 0) over 4.
-- The time ratio counts cache misses too (10,000 chains outgrow the caches), and a busy
-- machine: the work itself is counted by instructions, repeatable under callgrind, e.g.
-- a row's workload alone at each size under valgrind --tool=callgrind (measured so at
-- 2,000 and 10,000: 4.96x for a read after a root move, 5.0x for a FABRIK rig solve, 6.2x
-- for relaxation, whose iterations differ).
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")

local clock = os.clock
local vm = jit and jit.version or _VERSION

-- seconds per call of f(i), over at least `least` seconds (at least 3 calls)
local function per_call(f, least)
    local n, t0 = 0, clock()
    repeat
        n = n + 1
        f(n)
    until n >= 3 and clock() - t0 >= least
    return (clock() - t0) / n
end

local function line(depth, bones)
    local lengths = {}
    for i = 1, bones do lengths[i] = 1 end
    local chains = {}
    for k = 1, depth do
        chains[k] = ik.chain2d(lengths)
        if k > 1 then chains[k]:attach(chains[k - 1], bones + 1, 0.001) end
    end
    return chains
end

-- The rig over a line of d two-bone chains, its tip's goal moving between two points.
local function deep_rig(solver)
    return {
        name = "deep rig (" .. solver .. "), per iteration", unit = "us", sizes = { 2000, 10000 },
        run = function(d)
            local chains = line(d, 2)
            local rig = ik.rig(chains)
            rig:configure({ solver = solver, iterations = 4, tolerance = 0 })
            return per_call(function(i)
                chains[d]:set_target(d * (1 + 0.1 * (i % 2)), d * 0.5)
                rig:solve()
            end, 0.5) / 4 * 1e6
        end,
    }
end

local rows = {
    {
        name = "read after a root move", unit = "us per read", sizes = { 2000, 10000 },
        run = function(d)
            local chains = line(d, 1)
            return per_call(function(i)
                chains[1]:set_angle(1, i * 1e-3)
                chains[d]:effector()
            end, 0.3) * 1e6
        end,
    },
    deep_rig("fabrik"),
    deep_rig("relax"),
    {
        name = "wide rig (relax), per iteration", unit = "us", sizes = { 1000, 5000 },
        run = function(n)
            local lengths = {}
            for i = 1, n do lengths[i] = 1 end
            local body = ik.chain2d(lengths)
            local chains = { body }
            for j = 2, n + 1 do
                local leg = ik.chain2d({ 0.5, 0.5 })
                leg:attach(body, j, -math.pi / 2)
                chains[j] = leg
            end
            local rig = ik.rig(chains)
            rig:configure({ solver = "relax", iterations = 4, tolerance = 0 })
            return per_call(function(i)
                for j = 2, n + 1 do chains[j]:set_target(j - 1 + 0.1 * (i % 3), -0.8) end
                rig:solve()
            end, 0.5) / 4 * 1e6
        end,
    },
    {
        name = "ik.rig", unit = "ms", sizes = { 8000, 40000 },
        run = function(count)
            local chains = { ik.chain2d({ 1, 1 }) }
            for k = 2, count do
                chains[k] = ik.chain2d({ 1 })
                chains[k]:attach(chains[math.floor(k / 2)], 2)
            end
            return per_call(function() ik.rig(chains) end, 0.3) * 1e3
        end,
    },
}

print(("trees (%s): time at two sizes, and their ratio (x5 size: 5 linear, 25 quadratic)"):format(vm))
for _, row in ipairs(rows) do
    local a, b = row.run(row.sizes[1]), row.run(row.sizes[2])
    collectgarbage()
    print(("  %-34s %6d: %9.2f %s  %6d: %9.2f %s  ratio %5.1f"):format(row.name, row.sizes[1], a,
        row.unit, row.sizes[2], b, row.unit, b / a))
end
