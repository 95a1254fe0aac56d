/*
 * ik_lua_compat.h - the differences between the C APIs of Lua 5.1, 5.2, 5.3, 5.4, 5.5 and
 * LuaJIT 2.1 that the binding meets, kept in one place so src/ik_lua.c reads the same for all
 * six. The binding is written against the 5.2+ auxiliary library; for plain Lua 5.1 this
 * header supplies the few functions it lacks. Lua 5.5 changed nothing the binding uses (its
 * API changes are lua_newstate's seed, lua_closethread, the garbage collector's parameters,
 * lua_pushvfstring reporting errors rather than raising them, and new functions), so its
 * build is the 5.4 one compiled against 5.5's headers.
 *
 * Which build loads where (the dynamic loader resolves every symbol when Lua opens a C
 * module): the 5.4 and 5.5 builds need lua_newuserdatauv, which both export, and load in
 * both; the 5.2 and 5.3 builds need lua_rawlen and lua_newuserdata and load in 5.2 and 5.3;
 * in those two pairs the runtime check below tells them apart. The LuaJIT build needs
 * luaL_setfuncs and lua_objlen, so loads only in LuaJIT; the plain 5.1 build loads in Lua
 * 5.1 and in LuaJIT, which keeps Lua 5.1's ABI for C modules. Any other pairing fails in the
 * loader ("undefined symbol"), and lua/ik/init.lua turns that into a message that names the
 * build the host needs.
 */
#ifndef IK_LUA_COMPAT_H
#define IK_LUA_COMPAT_H

#include "lauxlib.h"
#include "lua.h"

#if !defined(LUA_VERSION_NUM) || LUA_VERSION_NUM < 501 || LUA_VERSION_NUM > 505
#error "ik builds for Lua 5.1, 5.2, 5.3, 5.4, 5.5 and LuaJIT 2.1"
#endif

/*
 * Plain Lua 5.1 lacks luaL_setfuncs (the binding's only 5.2 call without a 5.1 twin);
 * LuaJIT 2.1 backports it with luaL_newlib, a macro, which is how we tell the two apart:
 * luajit.h is not part of the headers a module includes. The fallback behaves as 5.2's.
 */
#if LUA_VERSION_NUM == 501 && !defined(luaL_newlib)

/* 5.2's luaL_setfuncs: every function of l into the table below the nup upvalues on top. */
static inline void ik_compat_setfuncs(lua_State *L, const luaL_Reg *l, int nup)
{
    int i;
    luaL_checkstack(L, nup, "too many upvalues");
    for (; l->name != NULL; l++) {
        for (i = 0; i < nup; i++) lua_pushvalue(L, -nup);
        lua_pushcclosure(L, l->func, nup);
        lua_setfield(L, -(nup + 2), l->name);
    }
    lua_pop(L, nup);
}
#define luaL_setfuncs(L, l, nup) ik_compat_setfuncs((L), (l), (nup))

#endif /* plain Lua 5.1 */

#if LUA_VERSION_NUM < 502
#define ik_lua_rawlen(L, idx) lua_objlen((L), (idx))
#else
#define ik_lua_rawlen(L, idx) lua_rawlen((L), (idx))
#endif

/* A scratch userdata needs no user values; 5.4's and 5.5's lua_newuserdata would reserve
   one. */
#if LUA_VERSION_NUM >= 504
#define ik_lua_newuserdata(L, size) lua_newuserdatauv((L), (size), 0)
#else
#define ik_lua_newuserdata(L, size) lua_newuserdata((L), (size))
#endif

/*
 * The one Lua value a chain or a rig keeps alive (a child chain its parent, a rig the table
 * of its chains), held by the userdata itself: its user value, in 5.1 and LuaJIT its
 * environment. The collector reaches the value only through the userdata, so a hierarchy
 * no one holds is freed in one cycle in every VM. (A weak-keyed table, keyed by the
 * userdata, does that only where weak keys are ephemerons, 5.2 on: Lua 5.1 and LuaJIT mark
 * the values of such a table as long as the entry is there, so a chain of 50 parents took 50
 * full collections.)
 *   ik_lua_newbox(L, size)   a userdata with room for the kept value (none at first)
 *   ik_lua_setkept(L, idx)   pops a value: the kept value of the userdata at idx (nil: none)
 *   ik_lua_getkept(L, idx)   pushes the kept value of the userdata at idx (nil: none)
 * idx is a positive index. 5.4's and 5.5's user values and 5.3's take any value; 5.2's user value and
 * 5.1's environment must be a table, so there the value goes in one, at [1].
 */
#if LUA_VERSION_NUM >= 504
#define ik_lua_newbox(L, size) lua_newuserdatauv((L), (size), 1)
#define ik_lua_setkept(L, idx) ((void)lua_setiuservalue((L), (idx), 1))
#define ik_lua_getkept(L, idx) ((void)lua_getiuservalue((L), (idx), 1))
#elif LUA_VERSION_NUM == 503
#define ik_lua_newbox(L, size) lua_newuserdata((L), (size))
#define ik_lua_setkept(L, idx) lua_setuservalue((L), (idx))
#define ik_lua_getkept(L, idx) ((void)lua_getuservalue((L), (idx)))
#else
#define ik_lua_newbox(L, size) lua_newuserdata((L), (size))

static inline void ik_lua_setkept(lua_State *L, int idx)
{
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, 1);
#if LUA_VERSION_NUM == 502
    lua_setuservalue(L, idx);
#else
    lua_setfenv(L, idx);
#endif
    lua_pop(L, 1);
}

/* A 5.1 userdata's environment is, until set, the creating function's (_G): only read it
   once set, as the binding does (it reads a chain's only when the core says it has a
   parent, a rig's always set). */
static inline void ik_lua_getkept(lua_State *L, int idx)
{
#if LUA_VERSION_NUM == 502
    lua_getuservalue(L, idx);
#else
    lua_getfenv(L, idx);
#endif
    if (lua_istable(L, -1)) lua_rawgeti(L, -1, 1);
    else lua_pushnil(L);
    /* 5.2: lua_copy, not lua_replace, a function in 5.2 but a macro in 5.3: a 5.2 build
       would not even load in 5.3 for the version check to say why (see the top) */
#if LUA_VERSION_NUM == 502
    lua_copy(L, -1, -2);
    lua_pop(L, 1);
#else
    lua_replace(L, -2);
#endif
}
#endif

/*
 * ik_lua_check_version(L), first thing in luaopen_ik_core: a build for one Lua version that
 * the loader let into another (a 5.2 build in 5.3, a 5.4 build in 5.5, or the reverse: each
 * pair exports every symbol the other uses) would run with the wrong struct layouts and
 * constants (5.5 moved LUA_REGISTRYINDEX, so lua_upvalueindex, for one). It compares
 * LUA_VERSION_NUM, fixed when the module was compiled, with the version of the running Lua,
 * and raises an error naming both and the make target of the build the host needs.
 *
 * The running version comes from lua_version: a number in 5.4 and 5.5, a pointer to one in
 * 5.2 and 5.3. Reading it as a pointer in 5.4 or 5.5 would crash, so the 5.2 and 5.3 checks
 * also take the address of lua_newuserdata, which 5.4 and 5.5 do not export (a macro there):
 * a 5.2 or 5.3 build then always fails in their loader, before this code could run. Lua 5.1
 * has no lua_version (its builds and LuaJIT's rely on the loader alone); LuaJIT's returns
 * 501. The message it raises only uses %d and %s, which lua_pushfstring (luaL_error) takes
 * in every version.
 */
#if LUA_VERSION_NUM >= 502
/* The make target that builds ik.core for the running Lua (version: 502 for 5.2, ...). */
static inline const char *ik_compat_make_target(int version)
{
    switch (version) {
    case 502: return "`make lua5.2` (build/lua5.2/ik/core.so)";
    case 503: return "`make lua5.3` (build/lua5.3/ik/core.so)";
    case 504: return "`make` (build/lua5.4/ik/core.so)";
    case 505: return "`make lua5.5` (build/lua5.5/ik/core.so)";
    default: return NULL;
    }
}

static inline void ik_lua_check_version(lua_State *L)
{
    int running;
    const char *target;
#if LUA_VERSION_NUM >= 504
    running = (int)lua_version(L);
#else
    /* A volatile read, so the compiler keeps the reference (see above). */
    void *(*volatile not_in_5_4)(lua_State *, size_t) = lua_newuserdata;
    const lua_Number *v = lua_version(L);
    running = (not_in_5_4 != NULL && v != NULL) ? (int)*v : LUA_VERSION_NUM;
#endif
    if (running == LUA_VERSION_NUM) return;
    target = ik_compat_make_target(running);
    if (target == NULL)
        luaL_error(L, "ik.core was built for Lua %d.%d but this is Lua %d.%d: ik builds for "
                      "Lua 5.1 to 5.5 and LuaJIT 2.1 only",
                   LUA_VERSION_NUM / 100, LUA_VERSION_NUM % 100, running / 100, running % 100);
    luaL_error(L, "ik.core was built for Lua %d.%d but this is Lua %d.%d: build ik.core for "
                  "Lua %d.%d with %s, or with `luarocks --lua-version=%d.%d make`",
               LUA_VERSION_NUM / 100, LUA_VERSION_NUM % 100, running / 100, running % 100,
               running / 100, running % 100, target, running / 100, running % 100);
}
#else
#define ik_lua_check_version(L) ((void)(L))
#endif

#endif /* IK_LUA_COMPAT_H */
