-- The FFI declarations in lua/ik/init.lua are written by hand beside the C they mirror: the
-- entry-point table of src/ik_lua.c (struct ffi_api) and ik_result of src/ik.h. A field
-- added, dropped, reordered or retyped on one side only would make LuaJIT call the wrong
-- function or read the wrong bytes; this reads both sides and compares them field by field.

local function read(path)
    local f = assert(io.open(path, "r"), path .. " not found (busted runs from the repository root)")
    local text = f:read("*a")
    f:close()
    return text
end

-- The fields of a struct body, one per declaration, with C's names for types made the
-- FFI's (the FFI side names the core's types by its own opaque names) and spaces squeezed.
local C_TO_FFI = {
    { "ik_status", "int" }, { "ik_real", "double" }, { "ik_chain", "ik_ffi_chain" },
    { "ik_rig", "ik_ffi_rig" }, { "ik_result", "ik_ffi_result" },
}

local function fields(body, from_c)
    local list = {}
    body = body:gsub("/%*.-%*/", "") -- comments first: they may hold semicolons
    for found in body:gmatch("([^;]+);") do
        local decl = found:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
        if from_c then
            for _, pair in ipairs(C_TO_FFI) do
                decl = decl:gsub("%f[%w_]" .. pair[1] .. "%f[^%w_]", pair[2])
            end
        end
        decl = decl:gsub(" ?%* ?", "*"):gsub(" ?%( ?", "("):gsub(" ?%) ?", ")"):gsub(" ?, ?", ",")
        if decl ~= "" then list[#list + 1] = decl end
    end
    return list
end

describe("the FFI declarations in lua/ik/init.lua", function()
    local init, binding, header = read("lua/ik/init.lua"), read("src/ik_lua.c"), read("src/ik.h")

    it("declare the entry-point table exactly as src/ik_lua.c defines it", function()
        local c_body = assert(binding:match("typedef struct ffi_api {(.-)} ffi_api;"), "struct ffi_api not found in src/ik_lua.c")
        local ffi_body = assert(init:match("typedef struct {([^}]-)} ik_ffi_api;"), "ik_ffi_api not found in lua/ik/init.lua")
        local c, ffi = fields(c_body, true), fields(ffi_body, false)
        assert.is_true(#c >= 19, "fields read from src/ik_lua.c: " .. #c)
        assert.are.same(c, ffi)
        -- and the table's initialiser lists as many functions as the struct has fields
        local init_list = assert(binding:match("static const ffi_api the_ffi_api = {(.-)};"))
        local count = 0
        for _ in init_list:gmatch("[%w_]+") do count = count + 1 end
        assert.are.equal(#c, count)
    end)

    it("declare ik_result as src/ik.h does", function()
        local c_body = assert(header:match("typedef struct ik_result {(.-)} ik_result;"))
        local ffi_body = assert(init:match("typedef struct {([^}]-)} ik_ffi_result;"))
        assert.are.same(fields(c_body, true), fields(ffi_body, false))
    end)
end)
