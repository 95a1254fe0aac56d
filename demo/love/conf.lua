-- The interactive LÖVE demo of ik: `make love` (or `love demo/love` once make has copied
-- ik/ into this folder). A folder, not a zipped .love: LÖVE cannot load the C module
-- ik/core.so from inside a zip.
function love.conf(t)
    t.identity = "ik-demo"
    t.version = "11.4"
    t.window.title = "ik: drag the crosses"
    t.window.width = 1280
    t.window.height = 720
    t.window.msaa = 4
    t.window.vsync = 1
    -- Not needed, and under xvfb-run (make love-screenshot) there is no sound device. But in
    -- love.js (make web: LÖVE on plain Lua 5.1, so no `jit`) a window without them stops
    -- after love.load with "RuntimeError: null function", the canvas left blank.
    local web = jit == nil
    t.modules.audio = web
    t.modules.sound = web
    t.modules.video = false
    t.modules.joystick = false
    t.modules.physics = false
end
