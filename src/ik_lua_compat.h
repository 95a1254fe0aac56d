/*
 * ik_lua_compat.h - the few differences between the Lua 5.4 and the Lua 5.1 (LuaJIT 2.1) C
 * APIs that the binding meets, kept in one place so src/ik_lua.c reads the same for both.
 */
#ifndef IK_LUA_COMPAT_H
#define IK_LUA_COMPAT_H

#include "lauxlib.h"
#include "lua.h"

/*
 * Plain Lua 5.1 lacks luaL_setfuncs, luaL_newlib, luaL_testudata and luaL_setmetatable;
 * LuaJIT 2.1 backports them (luaL_newlib as a macro, which is how we recognise it).
 */
#if LUA_VERSION_NUM < 502 && !defined(luaL_newlib)
#error "ik needs Lua 5.2 or later, or LuaJIT 2.1"
#endif

#if LUA_VERSION_NUM < 502
#define ik_lua_rawlen(L, idx) lua_objlen((L), (idx))
#else
#define ik_lua_rawlen(L, idx) lua_rawlen((L), (idx))
#endif

/* A chain userdata needs no user values; 5.4's lua_newuserdata would reserve one. */
#if LUA_VERSION_NUM >= 504
#define ik_lua_newuserdata(L, size) lua_newuserdatauv((L), (size), 0)
#else
#define ik_lua_newuserdata(L, size) lua_newuserdata((L), (size))
#endif

#endif /* IK_LUA_COMPAT_H */
