-- Chains with random limits and a puppet of the same bones that plays a smooth animation
-- within them, for tracking with limits: shared by bench/limits_fresh.lua and
-- spec/tracking_spec.lua, each with its own random numbers.
--   local puppets = require("bench.puppets")   (from the repository root)
--   local puppet, chain, play = puppets.chain2d(random)   random(): uniform in [0, 1)
-- play(frame) poses the puppet; its tip is the chain's goal.
local ik = require("ik")

local sin, cos, sqrt = math.sin, math.cos, math.sqrt

local puppets = {}

-- The rotation by angle a about the axis (x, y, z).
function puppets.qaxis(x, y, z, a)
    local s = sin(a / 2) / sqrt(x * x + y * y + z * z)
    return cos(a / 2), x * s, y * s, z * s
end

-- a * b.
function puppets.qmul(aw, ax, ay, az, bw, bx, by, bz)
    return aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw
end

local qaxis, qmul = puppets.qaxis, puppets.qmul

-- 2D: 6 bones, each range 0.4 to 3 rad wide anywhere in (-2.5, 2.5); the puppet's joints
-- sums of two sines within their ranges.
function puppets.chain2d(random)
    local n, lengths, lo, hi, p1, p2, w1, w2 = 6, {}, {}, {}, {}, {}, {}, {}
    for i = 1, n do
        lengths[i] = 0.3 + 1.2 * random()
        local width = 0.4 + 2.6 * random()
        lo[i] = -2.5 + (5 - width) * random()
        hi[i] = lo[i] + width
        p1[i], p2[i] = 6.28 * random(), 6.28 * random()
        w1[i], w2[i] = 0.01 + 0.03 * random(), 0.02 + 0.05 * random()
    end
    local puppet, chain = ik.chain2d(lengths), ik.chain2d(lengths)
    for i = 1, n do chain:set_limit(i, lo[i], hi[i]) end
    return puppet, chain, function(frame)
        for i = 1, n do
            local u = 0.5 + 0.3 * sin(p1[i] + w1[i] * frame) + 0.15 * sin(p2[i] + w2[i] * frame)
            puppet:set_angle(i, lo[i] + (hi[i] - lo[i]) * u)
        end
    end
end

-- 3D: 7 bones, each joint a hinge about a random axis across the bone (0.8 to 2.8 rad wide)
-- or a cone of 0.5 to 1.5 rad with a twist range; the puppet's joints swing within them.
function puppets.chain3d(random)
    local n, lengths, limit, phase, speed = 7, {}, {}, {}, {}
    for i = 1, n do
        lengths[i] = 0.5 + random()
        if random() < 0.4 then
            local a, width = 6.28 * random(), 0.8 + 2 * random()
            local lo = -width * random()
            limit[i] = { axis = { 0, cos(a), sin(a) }, min = lo, max = lo + width }
        else
            local t = 0.3 + random()
            limit[i] = { cone = 0.5 + random(), tmin = -t * random(), tmax = t * random() }
        end
        phase[i] = { 6.28 * random(), 6.28 * random(), 6.28 * random() }
        speed[i] = { 0.01 + 0.03 * random(), 0.01 + 0.03 * random(), 0.01 + 0.03 * random() }
    end
    local puppet, chain = ik.chain3d(lengths), ik.chain3d(lengths)
    for i = 1, n do
        local l = limit[i]
        if l.axis then chain:set_hinge(i, l.axis[1], l.axis[2], l.axis[3], l.min, l.max)
        else chain:set_cone(i, l.cone); chain:set_twist(i, l.tmin, l.tmax) end
    end
    local rots = {}
    return puppet, chain, function(frame)
        for i = 1, n do
            local l, p, w = limit[i], phase[i], speed[i]
            local u = 0.5 + 0.45 * sin(p[1] + w[1] * frame)
            local qw, qx, qy, qz
            if l.axis then
                qw, qx, qy, qz = qaxis(l.axis[1], l.axis[2], l.axis[3], l.min + (l.max - l.min) * u)
            else
                local a = p[2] + w[2] * frame
                local twist = l.tmin + (l.tmax - l.tmin) * (0.5 + 0.45 * sin(p[3] + w[3] * frame))
                local sw, sx, sy, sz = qaxis(0, cos(a), sin(a), 0.9 * l.cone * u)
                qw, qx, qy, qz = qmul(sw, sx, sy, sz, qaxis(1, 0, 0, twist))
            end
            rots[4 * i - 3], rots[4 * i - 2], rots[4 * i - 1], rots[4 * i] = qw, qx, qy, qz
        end
        puppet:set_rotations(rots)
    end
end

return puppets
