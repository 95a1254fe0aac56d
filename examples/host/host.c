/*
 * host.c - an engine that embeds Lua 5.4 and has ik compiled into its own executable: the
 * core (src/chain.c ... src/rig.c, the Makefile's CORE_SRC) and the binding (src/ik_lua.c)
 * are built with the host, so there is no shared object to find at run time. Registering
 * the module is one call, luaL_requiref(L, "ik.core", luaopen_ik_core, 0); the Lua side,
 * lua/ik/init.lua, becomes module "ik" through package.preload, the way an engine serves
 * its own Lua files. Then a rig script is driven frame by frame, as a game loop would.
 *
 *   make build/examples/host
 *   build/examples/host [rig.lua [frames]]    (defaults: examples/host/rig.lua, 600)
 *
 * Run from the repository root (it loads lua/ik/init.lua from there; build with
 * -DIK_INIT_LUA=\"path\" to load it from elsewhere).
 *
 * The rig script returns a table with
 *   update(dt)  called every frame with dt = 1/60; returns how many of its solves reached
 *               their goals (a rig's solve counts once); fills rig.bones, a flat array x, y, angle per 2D bone, which the
 *               host copies into its own bone array, as an engine hands poses to its
 *               renderer;
 *   summary()   called once at the end; returns ok (a boolean) and a line of text.
 * The host prints a short summary and exits 0 only when every call succeeded, every bone
 * it copied was finite, the rig says ok, and the frames allocated no Lua memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#include "ik.h"

#ifndef IK_INIT_LUA
#define IK_INIT_LUA "lua/ik/init.lua"
#endif

/* The binding's entry point (src/ik_lua.c); the one declaration an engine needs. */
int luaopen_ik_core(lua_State *L);

#define MAX_BONES 256
#define WARM_UP_FRAMES 10 /* frames before the memory measurement (first-call setup) */

/* The engine's side of a pose: what it would hand to its renderer. */
typedef struct bone2 {
    double x, y, angle;
} bone2;

static bone2 bones[MAX_BONES];

/* A message handler for lua_pcall: the error with a traceback. */
static int traceback(lua_State *L)
{
    const char *message = lua_tostring(L, 1);
    luaL_traceback(L, L, message ? message : "(error object is not a string)", 1);
    return 1;
}

/* Calls the function on top of the stack with nargs arguments below it; prints the error. */
static int call(lua_State *L, int nargs, int nresults, const char *what)
{
    int base = lua_gettop(L) - nargs;
    int status;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    status = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    if (status != LUA_OK) {
        fprintf(stderr, "host: %s failed:\n%s\n", what, lua_tostring(L, -1));
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* package.preload[name] = the chunk in file: require(name) then runs it, once. */
static int preload_file(lua_State *L, const char *name, const char *file)
{
    if (luaL_loadfile(L, file) != LUA_OK) {
        fprintf(stderr, "host: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
        return 0;
    }
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
    return 1;
}

/* Copies rig.bones (the rig table at index rig) into bones[]; returns the bone count or -1. */
static int copy_bones(lua_State *L, int rig)
{
    int count, k, finite = 1;
    lua_getfield(L, rig, "bones");
    if (!lua_istable(L, -1)) {
        fprintf(stderr, "host: rig.bones is not a table\n");
        lua_pop(L, 1);
        return -1;
    }
    count = (int)(lua_rawlen(L, -1) / 3);
    if (count > MAX_BONES) count = MAX_BONES;
    for (k = 0; k < count; k++) {
        lua_rawgeti(L, -1, 3 * k + 1);
        lua_rawgeti(L, -2, 3 * k + 2);
        lua_rawgeti(L, -3, 3 * k + 3);
        bones[k].x = lua_tonumber(L, -3);
        bones[k].y = lua_tonumber(L, -2);
        bones[k].angle = lua_tonumber(L, -1);
        lua_pop(L, 3);
        finite = finite && isfinite(bones[k].x) && isfinite(bones[k].y) && isfinite(bones[k].angle);
    }
    lua_pop(L, 1);
    if (!finite) {
        fprintf(stderr, "host: the rig gave a bone that is not finite\n");
        return -1;
    }
    return count;
}

int main(int argc, char **argv)
{
    const char *script = argc > 1 ? argv[1] : "examples/host/rig.lua";
    int frames = argc > 2 ? atoi(argv[2]) : 600;
    const double dt = 1.0 / 60.0;
    int frame, rig, bone_count = 0, ok = 0, rig_ok;
    long reached = 0;
    double kb_before = 0.0, kb_grown;
    clock_t started, spent = 0;
    lua_State *L;

    if (frames < WARM_UP_FRAMES + 1) {
        fprintf(stderr, "usage: %s [rig.lua [frames > %d]]\n", argv[0], WARM_UP_FRAMES);
        return 2;
    }
    L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "host: no memory for a Lua state\n");
        return 1;
    }
    luaL_openlibs(L);

    /* The one call that registers the C module; it also sets package.loaded["ik.core"]. */
    luaL_requiref(L, "ik.core", luaopen_ik_core, 0);
    lua_pop(L, 1);
    if (!preload_file(L, "ik", IK_INIT_LUA)) goto done;

    if (luaL_loadfile(L, script) != LUA_OK) {
        fprintf(stderr, "host: %s\n", lua_tostring(L, -1));
        goto done;
    }
    if (!call(L, 0, 1, script)) goto done;
    if (!lua_istable(L, -1)) {
        fprintf(stderr, "host: %s did not return a table\n", script);
        goto done;
    }
    rig = lua_gettop(L);

    for (frame = 1; frame <= frames; frame++) {
        if (frame == WARM_UP_FRAMES / 2) {
            /* Stop the collector, so that the heap's size counts every allocation, collected
               or not. A collection shrinks the thread's call-info list and stack, which the
               next frames grow back: measure only from a few frames later. */
            lua_gc(L, LUA_GCCOLLECT, 0);
            lua_gc(L, LUA_GCSTOP, 0);
        }
        if (frame == WARM_UP_FRAMES + 1) {
            /* From here on nothing may allocate. */
            kb_before = lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0;
        }
        lua_getfield(L, rig, "update");
        lua_pushnumber(L, dt);
        started = clock();
        if (!call(L, 1, 1, "rig.update")) goto done;
        spent += clock() - started;
        reached += (long)lua_tointeger(L, -1);
        lua_pop(L, 1);
        bone_count = copy_bones(L, rig);
        if (bone_count < 0) goto done;
    }
    kb_grown = lua_gc(L, LUA_GCCOUNT, 0) + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0 - kb_before;
    lua_gc(L, LUA_GCRESTART, 0);

    lua_getfield(L, rig, "summary");
    if (!call(L, 0, 2, "rig.summary")) goto done;
    rig_ok = lua_toboolean(L, -2);

    lua_getglobal(L, "require");
    lua_pushliteral(L, "ik");
    if (!call(L, 1, 1, "require(\"ik\")")) goto done;
    lua_getfield(L, -1, "_VERSION");
    printf("host: %s, %s compiled in (IK_VERSION %s)\n", LUA_RELEASE, lua_tostring(L, -1),
           IK_VERSION);
    lua_pop(L, 2);
    printf("rig: %s\n", lua_tostring(L, -1));
    printf("frames: %d, %d bones copied per frame, %ld solves reached in all, %.1f us per "
           "update, Lua heap grew %.2f KB over the last %d frames\n",
           frames, bone_count, reached, 1e6 * (double)spent / CLOCKS_PER_SEC / frames, kb_grown,
           frames - WARM_UP_FRAMES);
    if (!rig_ok) fprintf(stderr, "host: the rig's summary says it failed\n");
    if (kb_grown >= 1.0) fprintf(stderr, "host: the frames allocated Lua memory\n");
    ok = rig_ok && kb_grown < 1.0;
    printf("host: %s\n", ok ? "ok" : "FAILED");

done:
    lua_close(L);
    return ok ? 0 : 1;
}
