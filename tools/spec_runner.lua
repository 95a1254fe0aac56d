-- A small busted-compatible spec runner, for a Lua that cannot load busted's C dependencies
-- (luafilesystem, lua-term, luasystem): the Windows LuaJIT under wine (`make test-windows`),
-- and Lua 5.5 where busted's modules do not load in it (`make test`: Debian 12's penlight
-- does not compile under 5.5, and its luafilesystem is built for 5.4).
-- Pure Lua; its assertions are Debian's luassert and say, which are pure Lua too.
--
--   luajit tools/spec_runner.lua [--lpath=P] [--cpath=P] [--helper=F] [-o tools/busted_tap.lua] FILE...
--
-- --lpath and --cpath go before package.path and package.cpath, as busted's do; --helper
-- runs F once before the specs, as busted's helper (.busted names spec/backend.lua); `-o` may
-- only name tools/busted_tap.lua, whose TAP lines this runner prints in the same form, so
-- spec/run.sh counts both the same way:
--   ok N - name                  a passing test
--   ok N - # SKIP name           a pending test
--   not ok N - name              a failure, an error, or a file/describe/hook that broke
--   # ...                        where and why, after a `not ok`
--   1..N                         once every file has run
--
-- What it does as busted does (what the specs here use): describe (context), it (test,
-- spec), pending, before_each, after_each, setup and teardown (and their lazy_ and strict_
-- names, all run when the block is entered and left), finally inside a test; `assert` is
-- luassert, and spy, stub, mock and match are luassert's. A describe's body runs first and
-- collects its children; then its setup, then each child in order: a test runs between the
-- before_each hooks of its blocks, outermost first, and their after_each hooks, innermost
-- first; then the teardown. A hook or body that fails is one failure and the tests below it
-- do not run. Each file runs insulated: the globals and package.loaded entries it adds or
-- changes are put back afterwards. The exit status is 1 when anything failed or no test ran.

local args, files = { ... }, {}
local helper
local i = 1
while i <= #args do
    local a = args[i]
    if a:match("^%-%-lpath=") then
        package.path = a:sub(9) .. ";" .. package.path
    elseif a:match("^%-%-cpath=") then
        package.cpath = a:sub(9) .. ";" .. package.cpath
    elseif a:match("^%-%-helper=") then
        helper = a:sub(10)
    elseif a == "-o" then
        i = i + 1
        if not (args[i] or ""):match("busted_tap%.lua$") then
            io.stderr:write("spec_runner: -o: only tools/busted_tap.lua's format is known\n")
            os.exit(2)
        end
    elseif a:sub(1, 1) == "-" then
        io.stderr:write("spec_runner: unknown option " .. a .. "\n")
        os.exit(2)
    else
        files[#files + 1] = a
    end
    i = i + 1
end
if #files == 0 then
    io.stderr:write("usage: spec_runner.lua [--lpath=P] [--cpath=P] [--helper=F] [-o tools/busted_tap.lua] FILE...\n")
    os.exit(2)
end

-- After the options: --lpath may be where luassert is.
local luassert = require("luassert")
if helper then dofile(helper) end

local counter, failures, passes = 0, 0, 0

local function say(line)
    io.write(line, "\n")
    io.flush()
end

local function report_failure(name, where, message)
    counter = counter + 1
    failures = failures + 1
    say(("not ok %d - %s"):format(counter, name))
    if where then say("# " .. where) end
    say("# " .. (tostring(message):gsub("\n", "\n# ")))
end

-- Where a function was written, as busted's TAP handler shows it.
local function where(fn)
    local info = type(fn) == "function" and debug.getinfo(fn, "S")
    return info and ("%s @ %d"):format(info.short_src, info.linedefined) or nil
end

-- A block: a file or a describe. Its children are collected when its body runs.
local function new_block(name, parent)
    return {
        name = name, parent = parent, children = {},
        before_each = {}, after_each = {}, setup = {}, teardown = {},
    }
end

local current -- the block whose body is running (collecting), or nil while tests run
local finalizers -- the `finally` functions of the running test

local function full_name(block, name)
    local parts = { name }
    while block and block.parent do -- the file block (no parent) is not part of the name
        table.insert(parts, 1, block.name)
        block = block.parent
    end
    return table.concat(parts, " ")
end

local function collecting(what)
    if not current then error(what .. " outside a describe block's body", 3) end
    return current
end

local function add_child(kind, name, fn)
    local block = collecting(kind)
    block.children[#block.children + 1] = { kind = kind, name = name, fn = fn }
end

local env = {}
function env.describe(name, fn) add_child("describe", name, fn) end
function env.it(name, fn)
    if fn == nil then return add_child("pending", name) end
    add_child("it", name, fn)
end
function env.pending(name) add_child("pending", name) end
function env.before_each(fn) table.insert(collecting("before_each").before_each, fn) end
function env.after_each(fn) table.insert(collecting("after_each").after_each, fn) end
function env.setup(fn) table.insert(collecting("setup").setup, fn) end
function env.teardown(fn) table.insert(collecting("teardown").teardown, fn) end
function env.finally(fn)
    if not finalizers then error("finally outside a test", 2) end
    finalizers[#finalizers + 1] = fn
end
env.context = env.describe
env.test, env.spec = env.it, env.it
env.lazy_setup, env.strict_setup = env.setup, env.setup
env.lazy_teardown, env.strict_teardown = env.teardown, env.teardown
env.assert = luassert
env.spy, env.stub, env.mock = require("luassert.spy"), require("luassert.stub"), require("luassert.mock")
env.match = require("luassert.match")
for k, v in pairs(env) do _G[k] = v end

-- Calls fn(...); on an error returns false and the message.
local function try(fn, ...)
    local ok, err = pcall(fn, ...)
    if ok then return true end
    return false, err
end

local run_block

local function run_test(block, child)
    local name = full_name(block, child.name)
    -- The before_each hooks of every enclosing block, outermost first.
    local chain = {}
    local b = block
    while b do
        table.insert(chain, 1, b)
        b = b.parent
    end
    local ok, err = true, nil
    local ran = {}
    for _, blk in ipairs(chain) do
        for _, hook in ipairs(blk.before_each) do
            ok, err = try(hook)
            if not ok then break end
        end
        if not ok then break end
        ran[#ran + 1] = blk
    end
    finalizers = {}
    if ok then ok, err = try(child.fn) end
    for k = #finalizers, 1, -1 do
        local fok, ferr = try(finalizers[k])
        if ok and not fok then ok, err = false, ferr end
    end
    finalizers = nil
    -- The after_each hooks of the blocks whose before_each ran, innermost first.
    for k = #ran, 1, -1 do
        for _, hook in ipairs(ran[k].after_each) do
            local hok, herr = try(hook)
            if ok and not hok then ok, err = false, herr end
        end
    end
    if ok then
        counter = counter + 1
        passes = passes + 1
        say(("ok %d - %s"):format(counter, name))
    else
        report_failure(name, where(child.fn), err)
    end
end

-- Runs a block whose body has run: setup, the children in order, teardown.
function run_block(block)
    local name = block.parent and full_name(block.parent, block.name) or block.name
    for _, hook in ipairs(block.setup) do
        local ok, err = try(hook)
        if not ok then
            report_failure(name .. " (setup)", where(hook), err)
            return
        end
    end
    for _, child in ipairs(block.children) do
        if child.kind == "it" then
            run_test(block, child)
        elseif child.kind == "pending" then
            counter = counter + 1
            say(("ok %d - # SKIP %s"):format(counter, full_name(block, child.name)))
        else
            local sub = new_block(child.name, block)
            current = sub
            local ok, err = try(child.fn)
            current = nil
            if ok then
                run_block(sub)
            else
                report_failure(full_name(block, child.name), where(child.fn), err)
            end
        end
    end
    for _, hook in ipairs(block.teardown) do
        local ok, err = try(hook)
        if not ok then report_failure(name .. " (teardown)", where(hook), err) end
    end
end

for _, file in ipairs(files) do
    local globals, loaded = {}, {}
    for k, v in pairs(_G) do globals[k] = v end
    for k, v in pairs(package.loaded) do loaded[k] = v end

    local root = new_block(file, nil)
    local chunk, load_err = loadfile(file)
    local ok, err = chunk ~= nil, load_err
    if chunk then
        current = root
        ok, err = try(chunk)
        current = nil
    end
    if ok then
        run_block(root)
    else
        report_failure("suite " .. file, nil, err)
    end

    for k in pairs(package.loaded) do
        if loaded[k] == nil then package.loaded[k] = nil end
    end
    for k, v in pairs(loaded) do package.loaded[k] = v end
    for k in pairs(_G) do
        if globals[k] == nil then _G[k] = nil end
    end
    for k, v in pairs(globals) do _G[k] = v end
end

say("1.." .. counter)
io.stderr:write(("spec_runner: %d passed, %d failed, %d pending\n"):format(passes, failures,
    counter - passes - failures))
os.exit((failures == 0 and passes > 0) and 0 or 1)
