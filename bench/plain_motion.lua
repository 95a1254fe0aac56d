-- The peer of bench/motion.lua: follow-the-leader and a Verlet rope as a game writes them by
-- hand, in plain Lua over flat arrays of joints (no limits; the rope's lengths are only as
-- exact as its relaxation passes make them).
local sqrt = math.sqrt

local plain = {}

-- A straight chain along +x from the origin: joints x, y, z, and the rope's previous ones.
function plain.chain(dim, lengths)
  local c = { n = #lengths, len = {}, x = {}, y = {}, z = {}, px = {}, py = {}, pz = {} }
  local x = 0
  for i = 1, c.n + 1 do
    c.x[i], c.y[i], c.z[i] = x, 0, 0
    c.px[i], c.py[i], c.pz[i] = x, 0, 0
    if i <= c.n then
      c.len[i] = lengths[i]
      x = x + lengths[i]
    end
  end
  return c
end

-- The tip to (tx, ty, tz); each joint from the tip down follows the one after it.
function plain.drag(c, tx, ty, tz)
  local x, y, z, len = c.x, c.y, c.z, c.len
  local n = c.n
  x[n + 1], y[n + 1], z[n + 1] = tx, ty, tz
  for i = n, 1, -1 do
    local dx, dy, dz = x[i] - x[i + 1], y[i] - y[i + 1], z[i] - z[i + 1]
    local d = sqrt(dx * dx + dy * dy + dz * dz)
    if d > 0 then
      local k = len[i] / d
      x[i], y[i], z[i] = x[i + 1] + dx * k, y[i + 1] + dy * k, z[i + 1] + dz * k
    end
  end
end

local PASSES = 4

-- dt seconds of a rope hanging from a base at (bx, 0, 0), in sub-steps of 1/240 s: Verlet,
-- damping 0.5, gravity g down, PASSES relaxation passes of the lengths a sub-step.
function plain.simulate(c, bx, dt, g)
  local x, y, z, px, py, pz, len = c.x, c.y, c.z, c.px, c.py, c.pz, c.len
  local n = c.n
  local steps = math.ceil(dt * 240)
  local h = dt / steps
  local keep = math.exp(-0.5 * h)
  local fall = g * h * h
  for _ = 1, steps do
    x[1], y[1], z[1] = bx, 0, 0
    for i = 2, n + 1 do
      local nx = x[i] + (x[i] - px[i]) * keep
      local ny = y[i] + (y[i] - py[i]) * keep - fall
      local nz = z[i] + (z[i] - pz[i]) * keep
      px[i], py[i], pz[i] = x[i], y[i], z[i]
      x[i], y[i], z[i] = nx, ny, nz
    end
    for _ = 1, PASSES do
      for i = 1, n do
        local dx, dy, dz = x[i + 1] - x[i], y[i + 1] - y[i], z[i + 1] - z[i]
        local d = sqrt(dx * dx + dy * dy + dz * dz)
        if d > 0 then
          local f = (d - len[i]) / d
          if i == 1 then
            x[2], y[2], z[2] = x[2] - dx * f, y[2] - dy * f, z[2] - dz * f
          else
            f = f * 0.5
            x[i], y[i], z[i] = x[i] + dx * f, y[i] + dy * f, z[i] + dz * f
            x[i + 1], y[i + 1], z[i + 1] = x[i + 1] - dx * f, y[i + 1] - dy * f, z[i + 1] - dz * f
          end
        end
      end
    end
  end
end

-- A stepping controller as the demo's spider had it by hand: feet planted at x, y, z; homes
-- at fixed offsets from a body at (bx, by, bz) (no turn); a group steps when one of its
-- feet is farther than stride from its home and no other group is in the air, along an
-- arc to lead * stride past the home, on ground(x, z).
function plain.gait(offsets, groups, stride, step_time, lift, lead, ground)
  local g = { n = #offsets, off = offsets, group = {}, stride = stride, step_time = step_time,
    lift = lift, lead = lead, ground = ground, x = {}, y = {}, z = {}, fx = {}, fy = {}, fz = {},
    tx = {}, ty = {}, tz = {}, t = {}, up = {}, air = 0, groups = #groups, bx = 0, by = 0, bz = 0 }
  for j, grp in ipairs(groups) do
    for _, k in ipairs(grp) do g.group[k] = j end
  end
  for k = 1, g.n do
    local o = offsets[k]
    g.x[k], g.y[k], g.z[k] = o[1], o[2], o[3]
    g.t[k], g.up[k] = 0, false
  end
  return g
end

function plain.gait_update(g, bx, by, bz, dt)
  local vx, vz = bx - g.bx, bz - g.bz
  local v = sqrt(vx * vx + vz * vz)
  if v > 0 then vx, vz = vx / v, vz / v end
  g.bx, g.by, g.bz = bx, by, bz
  local x, y, z, off, up, t = g.x, g.y, g.z, g.off, g.up, g.t
  for k = 1, g.n do
    if up[k] then
      local o = off[k]
      local tx, tz = bx + o[1] + vx * g.lead * g.stride, bz + o[3] + vz * g.lead * g.stride
      local ty = g.ground(tx, tz)
      t[k] = t[k] + dt / g.step_time
      if t[k] >= 1 then
        x[k], y[k], z[k], up[k] = tx, ty, tz, false
        g.air = g.air - 1
      else
        local s = t[k]
        x[k] = g.fx[k] + (tx - g.fx[k]) * s
        z[k] = g.fz[k] + (tz - g.fz[k]) * s
        y[k] = g.fy[k] + (ty - g.fy[k]) * s + g.lift * 4 * s * (1 - s)
      end
    end
  end
  if g.air == 0 then
    local best, far = nil, g.stride
    for k = 1, g.n do
      local o = off[k]
      local dx, dz = x[k] - bx - o[1], z[k] - bz - o[3]
      local d = sqrt(dx * dx + dz * dz)
      if d > far then best, far = g.group[k], d end
    end
    if best then
      for k = 1, g.n do
        if g.group[k] == best then
          up[k], t[k] = true, 0
          g.fx[k], g.fy[k], g.fz[k] = x[k], y[k], z[k]
          g.air = g.air + 1
        end
      end
    end
  end
end

return plain
