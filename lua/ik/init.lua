-- ik: inverse kinematics for bone chains. The C core ik.core does all the work (and sets
-- _VERSION); this file is what require("ik") finds, and the place for Lua-side helpers.
local core = require("ik.core")

return core
