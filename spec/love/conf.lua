-- The LÖVE runtime test runs headless: no window, no graphics, no sound. LÖVE then needs
-- no display (no X server, no xvfb) and still runs main.lua and love.event.quit(code).
function love.conf(t)
    t.identity = "ik-spec-love" -- a save directory of its own; the test writes nothing to it
    t.version = "11.4"
    t.console = false
    t.window = false
    t.modules.window = false
    t.modules.graphics = false
    t.modules.image = false
    t.modules.font = false
    t.modules.audio = false
    t.modules.sound = false
    t.modules.video = false
    t.modules.joystick = false
    t.modules.physics = false
end
