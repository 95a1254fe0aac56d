-- FABRIK and CCD in plain Lua, 2D: what a game programmer writes without the module, the
-- yardstick bench/lua_bench.lua holds the module against. Flat tables of numbers, joints
-- x[1..n+1], y[1..n+1] (x[1], y[1] the base, which stays put; x[n+1], y[n+1] the tip),
-- bone lengths len[1..n]; positions only, no angles, no limits, no tricks beyond keeping
-- the math functions in locals, as most Lua code does.
local sqrt, cos, sin = math.sqrt, math.cos, math.sin
local atan2 = math.atan2 or math.atan -- LuaJIT / Lua 5.4

local plain = {}

-- Aristidou and Lasenby's FABRIK as printed: a target out of reach straightens the chain
-- towards it; else backward and forward passes until the tip is within tolerance or the
-- iterations run out. Returns reached, iterations.
function plain.fabrik(x, y, len, n, tx, ty, iterations, tolerance)
  local bx, by = x[1], y[1]
  local total = 0
  for i = 1, n do total = total + len[i] end
  local dx, dy = tx - bx, ty - by
  local d = sqrt(dx * dx + dy * dy)
  if d >= total then
    for i = 1, n do
      x[i + 1] = x[i] + dx / d * len[i]
      y[i + 1] = y[i] + dy / d * len[i]
    end
    return false, 1
  end
  local it = 0
  while it < iterations do
    dx, dy = x[n + 1] - tx, y[n + 1] - ty
    if sqrt(dx * dx + dy * dy) <= tolerance then break end
    x[n + 1], y[n + 1] = tx, ty
    for i = n, 1, -1 do
      dx, dy = x[i] - x[i + 1], y[i] - y[i + 1]
      local r = len[i] / sqrt(dx * dx + dy * dy)
      x[i], y[i] = x[i + 1] + dx * r, y[i + 1] + dy * r
    end
    x[1], y[1] = bx, by
    for i = 1, n do
      dx, dy = x[i + 1] - x[i], y[i + 1] - y[i]
      local r = len[i] / sqrt(dx * dx + dy * dy)
      x[i + 1], y[i + 1] = x[i] + dx * r, y[i] + dy * r
    end
    it = it + 1
  end
  dx, dy = x[n + 1] - tx, y[n + 1] - ty
  return sqrt(dx * dx + dy * dy) <= tolerance, it
end

-- Textbook CCD: each iteration visits the joints from the last to the base and turns the
-- rest of the chain about the joint by the whole angle from joint->tip to joint->target
-- (one atan2 of a cross and a dot product). Returns reached, iterations.
function plain.ccd(x, y, n, tx, ty, iterations, tolerance)
  local it = 0
  local dx, dy
  while it < iterations do
    dx, dy = x[n + 1] - tx, y[n + 1] - ty
    if sqrt(dx * dx + dy * dy) <= tolerance then break end
    for j = n, 1, -1 do
      local jx, jy = x[j], y[j]
      local ux, uy = x[n + 1] - jx, y[n + 1] - jy
      local vx, vy = tx - jx, ty - jy
      local a = atan2(ux * vy - uy * vx, ux * vx + uy * vy)
      local c, s = cos(a), sin(a)
      for k = j + 1, n + 1 do
        local px, py = x[k] - jx, y[k] - jy
        x[k], y[k] = jx + c * px - s * py, jy + s * px + c * py
      end
    end
    it = it + 1
  end
  dx, dy = x[n + 1] - tx, y[n + 1] - ty
  return sqrt(dx * dx + dy * dy) <= tolerance, it
end

return plain
