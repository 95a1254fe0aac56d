/*
 * ik_lua.c - the Lua binding of the core: the module ik.core and the userdata type "ik.chain".
 *
 * The only C file that includes lua.h. One source for Lua 5.4 and LuaJIT 2.1 (the Lua 5.1 C
 * API); the differences live in ik_lua_compat.h. Lua numbers are C doubles in both, like
 * ik_real, and indices are never read through lua_Integer (LuaJIT's luaL_checkinteger
 * truncates 1.5 silently), so both VMs accept and reject exactly the same calls.
 *
 * Lua indices are 1-based, the core's 0-based. Every argument is checked here before the core
 * is called, so errors name the right argument; the core validates again, and a status other
 * than IK_OK still becomes a luaL_argerror. Checks come before any mutation: a rejected call
 * changes nothing. Getters and solves allocate nothing.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "ik.h"
#include "ik_lua_compat.h"

#define CHAIN_MT "ik.chain"

/* pi as a double, the default hinge range; the same value as Lua's math.pi. */
#define IK_PI_LUA 3.14159265358979323846

/* The largest dimension of a chain: sizes the target buffers. */
#define MAX_DIM 3

/* chain2d stages the lengths of chains up to this size on the C stack. */
#define STACK_LENGTHS 64

/*
 * A chain userdata is this header followed by the core's chain block. ik.h does not promise
 * where in its block the ik_chain lies, so the header keeps the pointer init returned. The
 * union keeps the block after it aligned for ik_real, as Lua aligns a userdata for double.
 */
typedef union chain_box {
    ik_chain *chain;
    ik_real align_real;
    void *align_ptr;
} chain_box;

typedef ik_status (*solve_fn)(ik_chain *chain, const ik_real *target, ik_result *out);

/* ---- argument checks ---- */

static ik_chain *check_chain(lua_State *L)
{
    return ((chain_box *)luaL_checkudata(L, 1, CHAIN_MT))->chain;
}

/* The 2D (3D) accessors refuse a chain of the other dimension before reading arguments. */
static ik_chain *check_chain_dim(lua_State *L, int dim)
{
    ik_chain *chain = check_chain(L);
    if (ik_chain_dim(chain) != dim) luaL_argerror(L, 1, ik_status_string(IK_ERR_DIMENSION));
    return chain;
}

static ik_chain *check_chain2d(lua_State *L) { return check_chain_dim(L, 2); }
static ik_chain *check_chain3d(lua_State *L) { return check_chain_dim(L, 3); }

static void check_status(lua_State *L, ik_status status, int arg)
{
    if (status != IK_OK) luaL_argerror(L, arg, ik_status_string(status));
}

/* NaN and the infinities are not whole. */
static int is_whole(lua_Number v)
{
    return isfinite(v) && v == floor(v);
}

static ik_real check_real(lua_State *L, int arg)
{
    lua_Number v = luaL_checknumber(L, arg);
    if (!isfinite(v)) luaL_argerror(L, arg, "number has no finite value");
    return (ik_real)v;
}

static ik_real opt_real(lua_State *L, int arg, ik_real def)
{
    return lua_isnoneornil(L, arg) ? def : check_real(L, arg);
}

/* A base or target coordinate: finite and within IK_MAX_COORD (the core's range). */
static ik_real check_coord(lua_State *L, int arg)
{
    ik_real v = check_real(L, arg);
    if (fabs(v) > IK_MAX_COORD) luaL_argerror(L, arg, ik_status_string(IK_ERR_RANGE));
    return v;
}

static ik_real opt_coord(lua_State *L, int arg)
{
    return lua_isnoneornil(L, arg) ? 0 : check_coord(L, arg);
}

/* A 1-based index in 1..count; returns it 0-based, for the core. */
static int check_index(lua_State *L, int arg, int count)
{
    lua_Number v = luaL_checknumber(L, arg);
    if (!is_whole(v)) luaL_argerror(L, arg, "number has no integer representation");
    if (v < 1 || v > count) luaL_argerror(L, arg, "index out of range");
    return (int)v - 1;
}

static int opt_bend(lua_State *L, int arg)
{
    lua_Number v;
    if (lua_isnoneornil(L, arg)) return IK_DEFAULT_BEND;
    v = luaL_checknumber(L, arg);
    if (!is_whole(v)) luaL_argerror(L, arg, "number has no integer representation");
    if (v != 1 && v != -1) luaL_argerror(L, arg, ik_status_string(IK_ERR_BEND));
    return (int)v;
}

static ik_real check_length(lua_State *L, int arg)
{
    ik_real length = check_real(L, arg);
    if (length < 0) luaL_argerror(L, arg, ik_status_string(IK_ERR_NEGATIVE));
    return length;
}

/* Four finite numbers from argument arg on: a quaternion w, x, y, z (the core normalises). */
static void check_quat(lua_State *L, int arg, ik_real q[4])
{
    int k;
    for (k = 0; k < 4; k++) q[k] = check_real(L, arg + k);
}

static int push_quat(lua_State *L, const ik_real q[4])
{
    int k;
    for (k = 0; k < 4; k++) lua_pushnumber(L, q[k]);
    return 4;
}

/*
 * Element k of the array argument arg (bone lengths, target coordinates) as a finite number
 * within IK_MAX_COORD; "what" names the elements in the message. Numeric strings count, as
 * with luaL_checknumber.
 */
static ik_real check_element(lua_State *L, int arg, int k, const char *what)
{
    lua_Number v;
    int is_number;
    lua_rawgeti(L, arg, k);
    is_number = lua_isnumber(L, -1);
    v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!is_number)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %d is not a number", what, k));
    if (!isfinite(v))
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %d is not a finite number", what, k));
    if (fabs(v) > IK_MAX_COORD)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %d is out of range (magnitude above 1e300)",
                                              what, k));
    return (ik_real)v;
}

/* ---- stateless two-bone solves ---- */

static int mod_two_bone(lua_State *L)
{
    ik_real l1 = check_length(L, 1);
    ik_real l2 = check_length(L, 2);
    ik_real x = check_real(L, 3);
    ik_real y = check_real(L, 4);
    int bend = opt_bend(L, 5);
    ik_real a1, a2;
    int reached;
    check_status(L, ik_two_bone(l1, l2, x, y, bend, &a1, &a2, &reached), 1);
    lua_pushnumber(L, a1);
    lua_pushnumber(L, a2);
    lua_pushboolean(L, reached);
    return 3;
}

static int mod_two_bone_joint(lua_State *L)
{
    ik_real x = check_real(L, 1);
    ik_real y = check_real(L, 2);
    ik_real r1 = check_length(L, 3);
    ik_real r2 = check_length(L, 4);
    int bend = opt_bend(L, 5);
    ik_real jx, jy;
    int reached;
    check_status(L, ik_two_bone_joint(x, y, r1, r2, bend, &jx, &jy, &reached), 1);
    lua_pushnumber(L, jx);
    lua_pushnumber(L, jy);
    lua_pushboolean(L, reached);
    return 3;
}

static int mod_soft_distance(lua_State *L)
{
    ik_real d = check_length(L, 1), reach = check_length(L, 2), softness = check_length(L, 3);
    lua_pushnumber(L, ik_soft_distance(d, reach, softness));
    return 1;
}

static int mod_two_bone_joint3(lua_State *L)
{
    ik_real target[3], pole[3], joint[3], r1, r2;
    int reached, k;
    for (k = 0; k < 3; k++) target[k] = check_real(L, 1 + k);
    r1 = check_length(L, 4);
    r2 = check_length(L, 5);
    for (k = 0; k < 3; k++) pole[k] = check_real(L, 6 + k);
    check_status(L, ik_two_bone_joint3(target, r1, r2, pole, joint, &reached), 1);
    for (k = 0; k < 3; k++) lua_pushnumber(L, joint[k]);
    lua_pushboolean(L, reached);
    return 4;
}

/* ---- construction ---- */

/* ik.chain2d(lengths [, x, y [, angle]]) and ik.chain3d(lengths [, x, y, z]). */
static int new_chain(lua_State *L, int dim)
{
    ik_real stack_lengths[STACK_LENGTHS];
    ik_real *lengths = stack_lengths;
    ik_real base[3]; /* 2D: x, y, angle; 3D: x, y, z */
    size_t count, size;
    int n, k;
    chain_box *box;
    ik_chain *chain;

    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 4); /* the scratch and the chain go above the arguments */
    count = ik_lua_rawlen(L, 1);
    if (count < 1) luaL_argerror(L, 1, ik_status_string(IK_ERR_COUNT));
    size = count > INT_MAX ? 0 : dim == 2 ? ik_chain2d_size((int)count) : ik_chain3d_size((int)count);
    if (size == 0 || size > (size_t)-1 - sizeof(chain_box) ||
        count > (size_t)-1 / sizeof(ik_real))
        luaL_argerror(L, 1, ik_status_string(IK_ERR_TOO_LARGE));
    n = (int)count;

    /* Larger chains stage their lengths in a scratch userdata: garbage, but only here. */
    if (n > STACK_LENGTHS) lengths = (ik_real *)ik_lua_newuserdata(L, count * sizeof(ik_real));
    for (k = 0; k < n; k++) {
        lengths[k] = check_element(L, 1, k + 1, "length");
        if (lengths[k] < 0)
            luaL_argerror(L, 1, lua_pushfstring(L, "length %d is negative", k + 1));
    }
    for (k = 0; k < 3; k++) base[k] = dim == 2 && k == 2 ? opt_real(L, 4, 0) : opt_coord(L, 2 + k);

    box = (chain_box *)ik_lua_newuserdata(L, sizeof(chain_box) + size);
    if (dim == 2) {
        check_status(L, ik_chain2d_init(box + 1, size, n, lengths, &chain), 1);
        check_status(L, ik_chain2d_set_base(chain, base[0], base[1], base[2]), 2);
    } else {
        check_status(L, ik_chain3d_init(box + 1, size, n, lengths, &chain), 1);
        check_status(L, ik_chain3d_set_base(chain, base, NULL), 2);
    }
    box->chain = chain;
    /* Only a fully built chain gets the metatable, so methods never see a half-made one. */
    luaL_setmetatable(L, CHAIN_MT);
    return 1;
}

static int mod_chain2d(lua_State *L) { return new_chain(L, 2); }
static int mod_chain3d(lua_State *L) { return new_chain(L, 3); }

/* ---- methods: shape and pose ---- */

static int chain_count(lua_State *L)
{
    lua_pushinteger(L, ik_chain_count(check_chain(L)));
    return 1;
}

static int chain_dim(lua_State *L)
{
    lua_pushinteger(L, ik_chain_dim(check_chain(L)));
    return 1;
}

static int chain_tostring(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    int n = ik_chain_count(chain);
    lua_pushfstring(L, "ik.chain%dd(%d bone%s)", ik_chain_dim(chain), n, n == 1 ? "" : "s");
    return 1;
}

static int push_joint(lua_State *L, ik_chain *chain, int joint)
{
    int dim = ik_chain_dim(chain), d;
    const ik_real *p = ik_chain_positions(chain) + (size_t)joint * 3; /* 3 numbers a joint */
    for (d = 0; d < dim; d++) lua_pushnumber(L, p[d]);
    return dim;
}

static int chain_joint(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    return push_joint(L, chain, check_index(L, 2, ik_chain_count(chain) + 1));
}

static int chain_effector(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    return push_joint(L, chain, ik_chain_count(chain));
}

static int chain_positions(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    /* The core keeps (n + 1) * 4 within an int. */
    int dim = ik_chain_dim(chain), m = (ik_chain_count(chain) + 1) * dim, k, tail_is_nil;
    const ik_real *p;
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_createtable(L, m, 0);
    } else {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_settop(L, 2);
    }
    p = ik_chain_positions(chain); /* 3 numbers a joint; a 2D chain's z is left out */
    for (k = 0; k < m; k++) {
        lua_pushnumber(L, p[k / dim * 3 + k % dim]);
        lua_rawseti(L, 2, k + 1);
    }
    /* A table reused from a longer chain would keep its tail and its old #out. */
    for (k = m + 1;; k++) {
        lua_rawgeti(L, 2, k);
        tail_is_nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (tail_is_nil) break;
        lua_pushnil(L);
        lua_rawseti(L, 2, k);
    }
    return 1;
}

static int chain_length(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    ik_real length;
    check_status(L, ik_chain_length(chain, check_index(L, 2, ik_chain_count(chain)), &length), 2);
    lua_pushnumber(L, length);
    return 1;
}

static int chain_set_length(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    int bone = check_index(L, 2, ik_chain_count(chain));
    check_status(L, ik_chain_set_length(chain, bone, check_real(L, 3)), 3);
    return 0;
}

static int chain_weight(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    ik_real weight;
    int joint = check_index(L, 2, ik_chain_count(chain) + 1);
    check_status(L, ik_chain_weight(chain, joint, &weight), 2);
    lua_pushnumber(L, weight);
    return 1;
}

static int chain_set_weight(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    int joint = check_index(L, 2, ik_chain_count(chain) + 1);
    check_status(L, ik_chain_set_weight(chain, joint, check_real(L, 3)), 3);
    return 0;
}

static int chain_base(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    ik_real position[3], rotation[4], angle;
    int k;
    if (ik_chain_dim(chain) == 2) {
        check_status(L, ik_chain2d_base(chain, &position[0], &position[1], &angle), 1);
        lua_pushnumber(L, position[0]);
        lua_pushnumber(L, position[1]);
        lua_pushnumber(L, angle);
        return 3;
    }
    check_status(L, ik_chain3d_base(chain, position, rotation), 1);
    for (k = 0; k < 3; k++) lua_pushnumber(L, position[k]);
    return 3 + push_quat(L, rotation);
}

/* 2D: set_base(x, y [, angle]); 3D: set_base(x, y, z [, w, qx, qy, qz]). */
static int chain_set_base(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    ik_real position[3], rotation[4], angle;
    int k;
    if (ik_chain_dim(chain) == 2) {
        ik_real x = check_coord(L, 2), y = check_coord(L, 3);
        check_status(L, ik_chain2d_base(chain, &position[0], &position[1], &angle), 1);
        if (!lua_isnoneornil(L, 4)) angle = check_real(L, 4);
        check_status(L, ik_chain2d_set_base(chain, x, y, angle), 2);
        return 0;
    }
    for (k = 0; k < 3; k++) position[k] = check_coord(L, 2 + k);
    if (lua_isnoneornil(L, 5)) {
        check_status(L, ik_chain3d_set_base(chain, position, NULL), 2);
    } else {
        check_quat(L, 5, rotation);
        check_status(L, ik_chain3d_set_base(chain, position, rotation), 5);
    }
    return 0;
}

static int chain_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    ik_real q[4];
    check_status(L, ik_chain3d_rotation(chain, check_index(L, 2, ik_chain_count(chain)), q), 2);
    return push_quat(L, q);
}

static int chain_set_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_count(chain));
    ik_real q[4];
    check_quat(L, 3, q);
    check_status(L, ik_chain3d_set_rotation(chain, bone, q), 3);
    return 0;
}

static int chain_world_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    ik_real q[4];
    int bone = check_index(L, 2, ik_chain_count(chain));
    check_status(L, ik_chain3d_world_rotation(chain, bone, q), 2);
    return push_quat(L, q);
}

static int chain_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    ik_real angle;
    check_status(L, ik_chain2d_angle(chain, check_index(L, 2, ik_chain_count(chain)), &angle), 2);
    lua_pushnumber(L, angle);
    return 1;
}

static int chain_set_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    int bone = check_index(L, 2, ik_chain_count(chain));
    check_status(L, ik_chain2d_set_angle(chain, bone, check_real(L, 3)), 3);
    return 0;
}

static int chain_world_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    ik_real angle;
    int bone = check_index(L, 2, ik_chain_count(chain));
    check_status(L, ik_chain2d_world_angle(chain, bone, &angle), 2);
    lua_pushnumber(L, angle);
    return 1;
}

/* ---- methods: joint limits ---- */

/* A bound of a limit's range: a finite number within [-pi, pi]. */
static ik_real check_bound(lua_State *L, int arg)
{
    ik_real v = check_real(L, arg);
    if (v < -IK_PI_LUA || v > IK_PI_LUA)
        luaL_argerror(L, arg, ik_status_string(IK_ERR_LIMIT_RANGE));
    return v;
}

static ik_real opt_bound(lua_State *L, int arg, ik_real def)
{
    return lua_isnoneornil(L, arg) ? def : check_bound(L, arg);
}

static int chain_set_limit(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    int bone = check_index(L, 2, ik_chain_count(chain));
    ik_real min = check_bound(L, 3), max = check_bound(L, 4);
    /* Both bounds are in range: what is left is min > max, blamed on min. */
    check_status(L, ik_chain2d_set_limit(chain, bone, min, max), 3);
    return 0;
}

/* 2D: min, max of bone i's limit, or nothing when it has none. */
static int chain_limit(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    ik_real min, max;
    int has;
    check_status(L, ik_chain2d_limit(chain, check_index(L, 2, ik_chain_count(chain)), &has, &min,
                                     &max),
                 2);
    if (!has) return 0;
    lua_pushnumber(L, min);
    lua_pushnumber(L, max);
    return 2;
}

static int chain_set_hinge(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_count(chain)), k;
    ik_real axis[3], min, max;
    ik_status status;
    for (k = 0; k < 3; k++) axis[k] = check_real(L, 3 + k);
    min = opt_bound(L, 6, -IK_PI_LUA);
    max = opt_bound(L, 7, IK_PI_LUA);
    status = ik_chain3d_set_hinge(chain, bone, axis, min, max);
    check_status(L, status, status == IK_ERR_AXIS ? 3 : 6);
    return 0;
}

static int chain_set_cone(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_count(chain));
    check_status(L, ik_chain3d_set_cone(chain, bone, check_real(L, 3)), 3);
    return 0;
}

static int chain_set_twist(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_count(chain));
    ik_real min = check_bound(L, 3), max = check_bound(L, 4);
    check_status(L, ik_chain3d_set_twist(chain, bone, min, max), 3);
    return 0;
}

static int chain_clear_limit(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    check_status(L, ik_chain_clear_limit(chain, check_index(L, 2, ik_chain_count(chain))), 2);
    return 0;
}

static int chain_stretch_factor(lua_State *L)
{
    lua_pushnumber(L, ik_chain_stretch(check_chain(L)));
    return 1;
}

/* ---- methods: settings ---- */

/* The value of the configure entry on top of the stack, checked as a number. */
static lua_Number setting_number(lua_State *L, const char *key)
{
    if (!lua_isnumber(L, -1))
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: number expected, got %s", key,
                                            luaL_typename(L, -1)));
    return lua_tonumber(L, -1);
}

static lua_Number setting_whole(lua_State *L, const char *key)
{
    lua_Number v;
    if (!lua_isnumber(L, -1))
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: integer expected, got %s", key,
                                            luaL_typename(L, -1)));
    v = lua_tonumber(L, -1);
    if (!is_whole(v))
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: number has no integer representation", key));
    return v;
}

static int setting_boolean(lua_State *L, const char *key)
{
    if (lua_type(L, -1) != LUA_TBOOLEAN)
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: boolean expected, got %s", key,
                                            luaL_typename(L, -1)));
    return lua_toboolean(L, -1);
}

static int key_is(const char *key, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(key, name, len) == 0;
}

/*
 * Reads the entry (key at -2, value at -1) into settings. Out-of-range numbers that fit the
 * field are left for ik_chain_configure to reject, so its messages are the only ones.
 */
static void read_setting(lua_State *L, ik_chain *chain, ik_settings *settings)
{
    size_t len, name_len;
    const char *key, *name;
    lua_Number v;

    /* lua_tolstring would turn a number key into a string in place and break lua_next. */
    if (lua_type(L, -2) != LUA_TSTRING)
        luaL_argerror(L, 2, lua_pushfstring(L, "keys must be strings, got %s",
                                            luaL_typename(L, -2)));
    key = lua_tolstring(L, -2, &len);
    if (key_is(key, len, "iterations")) {
        v = setting_whole(L, key);
        if (v > INT_MAX) luaL_argerror(L, 2, "iterations: number too large");
        settings->iterations = v < 1 ? 0 : (int)v;
    } else if (key_is(key, len, "tolerance")) {
        settings->tolerance = setting_number(L, key);
    } else if (key_is(key, len, "greed")) {
        settings->greed = setting_number(L, key);
    } else if (key_is(key, len, "greed_ramp")) {
        settings->greed_ramp = setting_boolean(L, key);
    } else if (key_is(key, len, "escape")) {
        settings->escape = setting_boolean(L, key);
    } else if (key_is(key, len, "stretch")) {
        settings->stretch = setting_boolean(L, key);
    } else if (key_is(key, len, "mix")) {
        settings->mix = setting_number(L, key);
    } else if (key_is(key, len, "softness")) {
        settings->softness = setting_number(L, key);
    } else if (key_is(key, len, "bend")) {
        v = setting_whole(L, key);
        if (v != 1 && v != -1) luaL_argerror(L, 2, ik_status_string(IK_ERR_BEND));
        settings->bend = (int)v;
    } else if (key_is(key, len, "solver")) {
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_argerror(L, 2, lua_pushfstring(L, "solver: string expected, got %s",
                                                luaL_typename(L, -1)));
        name = lua_tolstring(L, -1, &name_len);
        /* An embedded zero would let "ccd\0x" pass as "ccd". */
        if (strlen(name) != name_len || ik_solver_parse(name, &settings->solver) != IK_OK)
            luaL_argerror(L, 2, ik_status_string(IK_ERR_SOLVER));
    } else if (key_is(key, len, "pole")) {
        if (ik_chain_dim(chain) != 3) luaL_argerror(L, 2, "pole is for 3D chains");
        if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
            settings->use_pole = 0;
        } else if (lua_type(L, -1) == LUA_TTABLE) {
            int k;
            for (k = 0; k < 3; k++) {
                lua_rawgeti(L, -1, k + 1);
                if (lua_type(L, -1) != LUA_TNUMBER)
                    luaL_argerror(L, 2, "pole: a table of 3 numbers expected");
                settings->pole[k] = lua_tonumber(L, -1);
                lua_pop(L, 1);
            }
            settings->use_pole = 1; /* zero or non-finite: ik_chain_configure says so */
        } else {
            luaL_argerror(L, 2, lua_pushfstring(L, "pole: table or false expected, got %s",
                                                luaL_typename(L, -1)));
        }
    } else {
        luaL_argerror(L, 2, lua_pushfstring(L, "unknown key '%s'", key));
    }
}

static int chain_configure(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    /* Parse into a copy: the chain changes only if the whole table is valid. */
    ik_settings settings = *ik_chain_settings(chain);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        read_setting(L, chain, &settings);
        lua_pop(L, 1);
    }
    check_status(L, ik_chain_configure(chain, &settings), 2);
    lua_settop(L, 1);
    return 1;
}

static int chain_settings(lua_State *L)
{
    ik_chain *chain = check_chain(L);
    const ik_settings *settings = ik_chain_settings(chain);
    if (lua_isnoneornil(L, 2)) {
        lua_settop(L, 1);
        lua_createtable(L, 0, 11);
    } else {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_settop(L, 2);
    }
    lua_pushstring(L, ik_solver_name(settings->solver));
    lua_setfield(L, 2, "solver");
    lua_pushinteger(L, settings->iterations);
    lua_setfield(L, 2, "iterations");
    lua_pushnumber(L, settings->tolerance);
    lua_setfield(L, 2, "tolerance");
    lua_pushnumber(L, settings->greed);
    lua_setfield(L, 2, "greed");
    lua_pushboolean(L, settings->greed_ramp);
    lua_setfield(L, 2, "greed_ramp");
    lua_pushinteger(L, settings->bend);
    lua_setfield(L, 2, "bend");
    lua_pushboolean(L, settings->escape);
    lua_setfield(L, 2, "escape");
    lua_pushnumber(L, settings->mix);
    lua_setfield(L, 2, "mix");
    lua_pushnumber(L, settings->softness);
    lua_setfield(L, 2, "softness");
    lua_pushboolean(L, settings->stretch);
    lua_setfield(L, 2, "stretch");
    if (ik_chain_dim(chain) != 3) return 1; /* the pole is a 3D setting */
    if (settings->use_pole) {
        int k;
        lua_createtable(L, 3, 0);
        for (k = 0; k < 3; k++) {
            lua_pushnumber(L, settings->pole[k]);
            lua_rawseti(L, -2, k + 1);
        }
    } else {
        lua_pushboolean(L, 0);
    }
    lua_setfield(L, 2, "pole");
    return 1;
}

/* ---- methods: solves ---- */

static int solve_with(lua_State *L, solve_fn solve)
{
    ik_chain *chain = check_chain(L);
    int dim = ik_chain_dim(chain), d;
    ik_real target[MAX_DIM];
    ik_result result;
    for (d = 0; d < dim; d++) target[d] = check_coord(L, 2 + d);
    /* Targets are checked above: what is left is the chain's (IK_ERR_NOT_TWO_BONE). */
    check_status(L, solve(chain, target, &result), 1);
    lua_pushboolean(L, result.reached);
    lua_pushnumber(L, result.distance);
    lua_pushinteger(L, result.iterations);
    return 3;
}

static int chain_solve(lua_State *L) { return solve_with(L, ik_chain_solve); }
static int chain_solve_fabrik(lua_State *L) { return solve_with(L, ik_chain_solve_fabrik); }
static int chain_solve_ccd(lua_State *L) { return solve_with(L, ik_chain_solve_ccd); }
static int chain_solve_relax(lua_State *L) { return solve_with(L, ik_chain_solve_relax); }
static int chain_solve_two_bone(lua_State *L) { return solve_with(L, ik_chain_solve_two_bone); }

/* Element k of the chains array at index 1, or NULL when it is not a chain. */
static ik_chain *chain_at(lua_State *L, int k)
{
    chain_box *box;
    lua_rawgeti(L, 1, k);
    box = (chain_box *)luaL_testudata(L, -1, CHAIN_MT);
    lua_pop(L, 1); /* the array keeps the userdata alive */
    return box ? box->chain : NULL;
}

/*
 * Everything is checked in a first pass, so a rejected call solves nothing. Then the chains
 * go to the core in blocks gathered on the C stack (nothing is allocated), where
 * ik_solve_many interleaves chains that share a solver for speed.
 */
#define SOLVE_BLOCK 64

static int mod_solve_many(lua_State *L)
{
    size_t raw_count;
    int count, dim = 2, k, d, block, reached_count = 0, reached;
    ik_chain *chain, *chains[SOLVE_BLOCK];
    ik_real targets[SOLVE_BLOCK * MAX_DIM];
    ik_status status;

    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    raw_count = ik_lua_rawlen(L, 1);
    if (raw_count > INT_MAX / MAX_DIM) luaL_argerror(L, 1, "too many chains");
    count = (int)raw_count;

    for (k = 1; k <= count; k++) {
        chain = chain_at(L, k);
        if (chain == NULL)
            luaL_argerror(L, 1, lua_pushfstring(L, "chain %d is not an ik chain", k));
        if (k == 1) dim = ik_chain_dim(chain);
        if (ik_chain_dim(chain) != dim)
            luaL_argerror(L, 1, lua_pushfstring(L, "chain %d is %dD, chain 1 is %dD", k,
                                                ik_chain_dim(chain), dim));
        /* ik_chain_configure already guarantees this; checked so no solve can fail below. */
        if (ik_chain_settings(chain)->solver == IK_SOLVER_TWO_BONE && ik_chain_count(chain) != 2)
            luaL_argerror(L, 1, lua_pushfstring(L, "chain %d: %s", k,
                                                ik_status_string(IK_ERR_NOT_TWO_BONE)));
    }
    for (k = 1; k <= count * dim; k++) check_element(L, 2, k, "target");

    for (block = 0; block < count; block += SOLVE_BLOCK) {
        int size = count - block < SOLVE_BLOCK ? count - block : SOLVE_BLOCK;
        for (k = 0; k < size; k++) {
            chains[k] = chain_at(L, block + k + 1);
            for (d = 0; d < dim; d++)
                targets[k * dim + d] = check_element(L, 2, (block + k) * dim + d + 1, "target");
        }
        status = ik_solve_many(chains, size, targets, &reached, NULL);
        if (status != IK_OK) /* unreachable after the first pass */
            luaL_argerror(L, 1, ik_status_string(status));
        reached_count += reached;
    }
    lua_pushinteger(L, reached_count);
    return 1;
}

/* ---- registration ---- */

static const luaL_Reg chain_methods[] = {
    {"count", chain_count},
    {"dim", chain_dim},
    {"joint", chain_joint},
    {"effector", chain_effector},
    {"positions", chain_positions},
    {"length", chain_length},
    {"set_length", chain_set_length},
    {"weight", chain_weight},
    {"set_weight", chain_set_weight},
    {"base", chain_base},
    {"set_base", chain_set_base},
    {"angle", chain_angle},
    {"set_angle", chain_set_angle},
    {"world_angle", chain_world_angle},
    {"rotation", chain_rotation},
    {"set_rotation", chain_set_rotation},
    {"world_rotation", chain_world_rotation},
    {"set_limit", chain_set_limit},
    {"limit", chain_limit},
    {"set_hinge", chain_set_hinge},
    {"set_cone", chain_set_cone},
    {"set_twist", chain_set_twist},
    {"clear_limit", chain_clear_limit},
    {"stretch_factor", chain_stretch_factor},
    {"configure", chain_configure},
    {"settings", chain_settings},
    {"solve", chain_solve},
    {"solve_fabrik", chain_solve_fabrik},
    {"solve_ccd", chain_solve_ccd},
    {"solve_relax", chain_solve_relax},
    {"solve_two_bone", chain_solve_two_bone},
    {NULL, NULL}
};

static const luaL_Reg chain_metamethods[] = {
    {"__len", chain_count},
    {"__tostring", chain_tostring},
    {NULL, NULL}
};

static const luaL_Reg module_functions[] = {
    {"two_bone", mod_two_bone},
    {"two_bone_joint", mod_two_bone_joint},
    {"chain2d", mod_chain2d},
    {"chain3d", mod_chain3d},
    {"two_bone_joint3", mod_two_bone_joint3},
    {"soft_distance", mod_soft_distance},
    {"solve_many", mod_solve_many},
    {NULL, NULL}
};

int luaopen_ik_core(lua_State *L);

int luaopen_ik_core(lua_State *L)
{
    ik_lua_check_version(L);
    luaL_newmetatable(L, CHAIN_MT);
    luaL_setfuncs(L, chain_metamethods, 0);
    luaL_newlib(L, chain_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    luaL_newlib(L, module_functions);
    lua_pushliteral(L, "ik " IK_VERSION);
    lua_setfield(L, -2, "_VERSION");
    return 1;
}
