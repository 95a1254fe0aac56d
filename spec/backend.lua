-- busted's helper (.busted names it): which backend `require("ik")` gives the specs.
--   IK_BACKEND=lua busted --lua=lua5.4 spec/    the specs against ik.pure, the pure-Lua
--                                               backend, as where ik.core cannot load
--   IK_BACKEND unset, empty or c                the C core, as `make test` runs them
-- The differential specs (pure_*_spec.lua) take their C side from ik.core itself, so they
-- still compare ik.pure with the C core under IK_BACKEND=lua.
local backend = os.getenv("IK_BACKEND")
if backend == "lua" then
    package.loaded["ik"] = require("ik.pure")
elseif backend ~= nil and backend ~= "" and backend ~= "c" then
    error(("IK_BACKEND is %q: it must be lua or c"):format(backend), 0)
end
