-- ik.pure.solve: the start of src/solve.c in plain Lua, with the same arithmetic:
-- ik_soft_distance. Not yet: the dispatcher (the solvers' table, goals, stretch, softness
-- around a solve, the tries, solve_many), which comes with the solvers.

local exp = math.exp

local M = {}

-- The distance d eased towards reach over the last `softness` of it: never beyond reach.
function M.soft_distance(d, reach, softness)
    -- The ease begins at reach - softness (or at the base, for a softness beyond reach).
    local start, span = reach - softness, softness
    if not (softness > 0) then return d end -- off
    if start < 0 then start, span = 0.0, reach end
    if not (span > 0) then -- no reach to ease into: never beyond it
        if d < reach then return d end
        return reach
    end
    if not (d > start) then return d end
    -- Written from the reach down, so rounding can never put the result beyond it.
    return reach - span * exp(-(d - start) / span)
end

return M
