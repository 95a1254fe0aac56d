-- A TAP output handler for busted (spec/run.sh loads it with `-o tools/busted_tap.lua`).
--
-- Why not busted's own `-o TAP`: in busted 2.1.1 it crashes when a spec file fails to
-- load (the load error has no `currentline`), which stops the whole run and hides every
-- later file. This one prints the same lines but never indexes a missing field:
--   ok N - name                  a passing test
--   ok N - # SKIP name           a pending test
--   not ok N - name              a failure, an error, or a file/describe/hook that broke
--   # ...                        where and why, after a `not ok`
--   1..N                         once the suite has ended
return function(options)
    local busted = require("busted")
    local handler = require("busted.outputHandlers.base")()
    local counter = 0

    local function say(line)
        io.write(line, "\n")
        io.flush()
    end

    local function show_failure(t)
        local message = t.message
        if message == nil then
            message = "nil error"
        elseif type(message) ~= "string" then
            message = require("pl.pretty").write(message)
        end
        say(("not ok %d - %s"):format(counter, tostring(t.name)))
        local trace = (t.element and t.element.trace) or t.trace or {}
        if trace.short_src and trace.currentline then
            say(("# %s @ %s"):format(trace.short_src, trace.currentline))
        end
        say("# " .. (message:gsub("\n", "\n# ")))
    end

    handler.suiteReset = function()
        counter = 0
        return nil, true
    end

    handler.suiteEnd = function()
        say("1.." .. counter)
        return nil, true
    end

    handler.testEnd = function(element, parent, status)
        counter = counter + 1
        if status == "success" then
            say(("ok %d - %s"):format(counter, handler.getFullName(element)))
        elseif status == "pending" then
            say(("ok %d - # SKIP %s"):format(counter, handler.getFullName(element)))
        else
            local list = status == "failure" and handler.failures or handler.errors
            show_failure(list[#list] or { name = handler.getFullName(element) })
        end
        return nil, true
    end

    -- Errors outside an `it` (a file that does not load, a failing describe body or hook)
    -- are not test ends: count each as one failure so that it cannot vanish.
    handler.error = function(element)
        if element.descriptor ~= "it" then
            counter = counter + 1
            show_failure(handler.errors[#handler.errors] or { name = element.name })
        end
        return nil, true
    end

    busted.subscribe({ "suite", "reset" }, handler.suiteReset)
    busted.subscribe({ "suite", "end" }, handler.suiteEnd)
    busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
    busted.subscribe({ "error" }, handler.error)
    return handler
end
