-- The README's LÖVE example (main.lua), run for 120 frames by tools/readme_check.sh: inside
-- LÖVE itself (a headless game folder: no window, no graphics module) or under plain LuaJIT
-- with a stand-in `love` table. Either way love.graphics and love.mouse are stand-ins (there
-- is no display): the drawing calls are counted, the mouse circles the arm's shoulder, in
-- reach and out of it. What is real: require("ik") and require("ik.love") as the game does
-- them, the example's love.load/update/draw, every solve and every ik.love call.
--   luajit tools/readme_love.lua EXAMPLE.lua     (package.path and cpath find ik)
--   love GAME-FOLDER                             (main.lua: this file; example.lua beside it)
-- Prints `love example: ok (...)` and exits 0, or `love example: FAIL ...` and exits 1.
local in_love = type(love) == "table" and love.filesystem ~= nil
local example = in_love and "example.lua" or arg[1]
love = love or {}

local lines, circles, arcs = 0, 0, 0
love.graphics = {
    getColor = function() return 1, 1, 1, 1 end,
    setColor = function() end,
    getLineWidth = function() return 1 end,
    setLineWidth = function() end,
    line = function() lines = lines + 1 end,
    circle = function() circles = circles + 1 end,
    arc = function() arcs = arcs + 1 end,
}
local mx, my = 0, 0
love.mouse = {
    getPosition = function() return mx, my end,
    getX = function() return mx end,
    getY = function() return my end,
}

local function finish(ok, message)
    print("love example: " .. (ok and "ok" or "FAIL") .. " (" .. message .. ")")
    if in_love then
        function love.load() love.event.quit(ok and 0 or 1) end
    else
        os.exit(ok and 0 or 1)
    end
end

local ok, err = pcall(function()
    local chunk = assert((in_love and love.filesystem.load or loadfile)(example))
    chunk()
    assert(type(love.update) == "function" and type(love.draw) == "function",
        "the example defines no love.update or love.draw")
    if love.load then love.load() end
    for frame = 1, 120 do
        -- around (400, 300): radius 150 (within the 270-pixel arm) then 400 (beyond it)
        local r, a = frame <= 60 and 150 or 400, frame * 0.1
        mx, my = 400 + r * math.cos(a), 300 + r * math.sin(a)
        love.update(1 / 60)
        love.draw()
    end
end)
if not ok then
    finish(false, tostring(err))
elseif lines == 0 or circles == 0 then
    finish(false, "nothing was drawn")
else
    finish(true, ("%s, 120 frames, %d lines, %d circles, %d arcs drawn"):format(
        in_love and ("inside LÖVE %d.%d"):format(love.getVersion()) or tostring(jit and jit.version or _VERSION),
        lines, circles, arcs))
end
