/*
 * ik_lua.c - the Lua binding of the core: the module ik.core, and the userdata types of
 * chains and rigs.
 *
 * The only C file that includes lua.h. One source for Lua 5.1 to 5.4 and LuaJIT 2.1; the
 * differences live in ik_lua_compat.h. Lua numbers are C doubles, like ik_real.
 *
 * The rules every function follows:
 *   - Arguments are checked before anything changes, so a rejected call changes nothing,
 *     and an error names the argument (luaL_argerror). The core validates again; a status
 *     other than IK_OK still becomes an argument error.
 *   - Numbers are numbers: a string that looks like one is refused in every VM (Lua 5.4 and
 *     LuaJIT disagree on which strings do). -0 is taken as +0. Indices are whole numbers in
 *     range, checked here (LuaJIT's luaL_checkinteger truncates 1.5 silently).
 *   - Tables given as input are read raw; one with an __index metamethod is refused rather
 *     than read as empty.
 *   - Getters and solves allocate nothing; bulk getters fill a table the caller may pass.
 *
 * Chains and rigs are full userdata holding the core's block. Their metatables are kept
 * as upvalues of every function (no registry lookup by name on the hot path) and are
 * protected (__metatable); a userdata is taken as a chain or a rig only if its metatable
 * and the tag in its header agree (and, for a chain, the core recognises the block:
 * ik_chain_check), so a metatable moved onto another userdata with the debug library
 * cannot crash the process. A chain keeps the chain it hangs on alive, and a rig the table
 * of its chains, as the userdata's own user value (ik_lua_setkept), so a hierarchy no one
 * holds is freed in one collection in every VM.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "ik.h"
#include "ik_lua_compat.h"

/* pi as a double, the default hinge range; the same value as Lua's math.pi. */
#define PI 3.14159265358979323846

/* The largest dimension of a chain: sizes the target buffers. */
#define MAX_DIM 3

/* chain2d stages the lengths of chains up to this size on the C stack. */
#define STACK_LENGTHS 64

/* The upvalues every function of the module has. */
#define CHAIN_MT lua_upvalueindex(1)
#define RIG_MT lua_upvalueindex(2)
#define GAIT_MT lua_upvalueindex(3)

/*
 * A chain userdata is this header followed by the core's chain block; a rig's, the same
 * with the rig's block. The union keeps the block after it aligned for ik_real, as Lua
 * aligns a userdata for double.
 *
 * The tag says which of the two the block is. The metatable alone cannot: the debug
 * library moves one onto any userdata (debug.setmetatable(chain, debug.getmetatable(rig))),
 * and a chain's block read as a rig's crashes. A userdata is taken as a chain or a rig only
 * if its metatable, its tag and its core pointer (its own block, which no other userdata
 * holds) all say so; a chain's block is checked by the core too (ik_chain_check).
 */
typedef union box {
    struct {
        void *core;   /* the block after this header, once built; NULL before */
        unsigned tag; /* BOX_CHAIN, BOX_RIG or BOX_GAIT */
    } head;
    ik_real align_real;
} box;

#define BOX_CHAIN 0x69636863u /* "ichc" */
#define BOX_RIG 0x69637267u   /* "icrg" */
#define BOX_GAIT 0x69636774u  /* "icgt" */

typedef ik_status (*solve_fn)(ik_chain *chain, const ik_real *target, ik_result *out);

/* ---- arguments ---- */

static int type_error(lua_State *L, int arg, const char *expected)
{
    return luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", expected,
                                                 luaL_typename(L, arg)));
}

/* The chain at stack index arg, or NULL when it is not one. */
static ik_chain *to_chain(lua_State *L, int arg)
{
    box *b = (box *)lua_touserdata(L, arg);
    int same;
    if (b == NULL || lua_islightuserdata(L, arg) || !lua_getmetatable(L, arg)) return NULL;
    same = lua_rawequal(L, -1, CHAIN_MT);
    lua_pop(L, 1);
    if (!same || ik_lua_rawlen(L, arg) < sizeof(box) || b->head.tag != BOX_CHAIN ||
        b->head.core != (void *)(b + 1) || !ik_chain_check(b + 1, ik_lua_rawlen(L, arg) - sizeof(box)))
        return NULL;
    return (ik_chain *)b->head.core;
}

static ik_chain *check_chain(lua_State *L, int arg)
{
    ik_chain *chain = to_chain(L, arg);
    if (chain == NULL) type_error(L, arg, "ik chain");
    return chain;
}

/* The 2D (3D) methods refuse a chain of the other dimension before reading arguments. */
static ik_chain *check_chain_dim(lua_State *L, int dim)
{
    ik_chain *chain = check_chain(L, 1);
    if (ik_chain_dim(chain) != dim)
        luaL_argerror(L, 1, dim == 2 ? "a 2D chain expected (this one is 3D)"
                                     : "a 3D chain expected (this one is 2D)");
    return chain;
}

static ik_chain *check_chain2d(lua_State *L) { return check_chain_dim(L, 2); }
static ik_chain *check_chain3d(lua_State *L) { return check_chain_dim(L, 3); }

static ik_rig *check_rig(lua_State *L, int arg)
{
    box *b = (box *)lua_touserdata(L, arg);
    int same = 0;
    if (b && !lua_islightuserdata(L, arg) && lua_getmetatable(L, arg)) {
        same = lua_rawequal(L, -1, RIG_MT) && ik_lua_rawlen(L, arg) > sizeof(box) &&
               b->head.tag == BOX_RIG && b->head.core == (void *)(b + 1);
        lua_pop(L, 1);
    }
    if (!same) type_error(L, arg, "ik rig");
    return (ik_rig *)b->head.core;
}

static void check_status(lua_State *L, ik_status status, int arg)
{
    if (status != IK_OK) luaL_argerror(L, arg, ik_status_string(status));
}

/* NaN and the infinities are not whole. */
static int is_whole(lua_Number v) { return isfinite(v) && v == floor(v); }

/* A number, never a string that looks like one; -0 becomes +0. */
static lua_Number check_number(lua_State *L, int arg)
{
    if (lua_type(L, arg) != LUA_TNUMBER) type_error(L, arg, "number");
    return lua_tonumber(L, arg) + 0.0;
}

static ik_real check_real(lua_State *L, int arg)
{
    lua_Number v = check_number(L, arg);
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
    lua_Number v = check_number(L, arg);
    if (!is_whole(v)) luaL_argerror(L, arg, "number has no integer representation");
    if (v < 1 || v > count) luaL_argerror(L, arg, "index out of range");
    return (int)v - 1;
}

static int opt_bend(lua_State *L, int arg)
{
    lua_Number v;
    if (lua_isnoneornil(L, arg)) return IK_DEFAULT_BEND;
    v = check_number(L, arg);
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

/* Nothing at arg or after it, as a call that takes fewer arguments expects (nil is fine). */
static void check_no_more(lua_State *L, int arg, const char *why)
{
    int top = lua_gettop(L), k;
    for (k = arg; k <= top; k++)
        if (!lua_isnil(L, k)) luaL_argerror(L, k, why);
}

/*
 * Whether an optional quaternion is given from argument arg on: any of its four values not
 * nil. Given in part, check_quat then names the first missing one, rather than the call
 * dropping the rest unseen.
 */
static int quat_given(lua_State *L, int arg)
{
    int k;
    for (k = arg; k < arg + 4; k++)
        if (!lua_isnoneornil(L, k)) return 1;
    return 0;
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

/* Whether the table at idx has an __index metamethod: read raw, it would look empty. */
static int is_proxy(lua_State *L, int idx)
{
    int proxy = 0;
    if (lua_getmetatable(L, idx)) {
        lua_pushliteral(L, "__index");
        lua_rawget(L, -2);
        proxy = !lua_isnil(L, -1);
        lua_pop(L, 2);
    }
    return proxy;
}

/* A table to read (raw): one with an __index metamethod would read as empty, so no. */
static void check_input_table(lua_State *L, int arg)
{
    if (lua_type(L, arg) != LUA_TTABLE) type_error(L, arg, "table");
    if (is_proxy(L, arg)) luaL_argerror(L, arg, "a plain table expected (this one has an __index metamethod)");
}

/* The table at arg to fill, or a new one of size hint when arg is none or nil. */
static void out_table(lua_State *L, int arg, int hint)
{
    if (lua_isnoneornil(L, arg)) {
        lua_settop(L, arg - 1);
        lua_createtable(L, hint, 0);
    } else {
        if (lua_type(L, arg) != LUA_TTABLE) type_error(L, arg, "table or nil");
        lua_settop(L, arg);
    }
}

/* Element k of the array at arg (read raw) as a finite number; what names the element. */
static ik_real check_element(lua_State *L, int arg, int k, const char *what)
{
    lua_Number v;
    lua_rawgeti(L, arg, k);
    if (lua_type(L, -1) != LUA_TNUMBER)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %d: number expected, got %s", what, k,
                                              luaL_typename(L, -1)));
    v = lua_tonumber(L, -1) + 0.0;
    lua_pop(L, 1);
    if (!isfinite(v))
        luaL_argerror(L, arg, lua_pushfstring(L, "%s %d: number has no finite value", what, k));
    return (ik_real)v;
}

/* Sets out[k] = nil for k = from, from + 1, ... while they are not nil (a reused table). */
static void clear_tail(lua_State *L, int out, int from)
{
    int k, done;
    for (k = from;; k++) {
        lua_rawgeti(L, out, k);
        done = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (done) break;
        lua_pushnil(L);
        lua_rawseti(L, out, k);
    }
}

/* ---- module: stateless solves ---- */

static int mod_two_bone(lua_State *L)
{
    ik_real l1 = check_length(L, 1), l2 = check_length(L, 2);
    ik_real x = check_real(L, 3), y = check_real(L, 4), a1, a2;
    int bend = opt_bend(L, 5), reached;
    check_status(L, ik_two_bone(l1, l2, x, y, bend, &a1, &a2, &reached), 1);
    lua_pushnumber(L, a1);
    lua_pushnumber(L, a2);
    lua_pushboolean(L, reached);
    return 3;
}

/*
 * The vector forms: the middle joint. The two lengths are arguments l_at and l_at + 1, the
 * target the others of the first `dim + 2` (ik.two_bone_middle: lengths first; the old
 * ik.two_bone_joint: target first); each is checked in the order given. The 3D pole follows.
 */
static void two_bone_args(lua_State *L, int dim, int l_at, ik_real *l1, ik_real *l2, ik_real target[3])
{
    int arg, t = 0;
    for (arg = 1; arg <= dim + 2; arg++) {
        if (arg == l_at) *l1 = check_length(L, arg);
        else if (arg == l_at + 1) *l2 = check_length(L, arg);
        else target[t++] = check_real(L, arg);
    }
}

static int two_bone_vector2(lua_State *L, int l_at)
{
    ik_real l1 = 0, l2 = 0, target[3], jx, jy;
    int bend, reached;
    two_bone_args(L, 2, l_at, &l1, &l2, target);
    bend = opt_bend(L, 5);
    check_status(L, ik_two_bone_middle(l1, l2, target[0], target[1], bend, &jx, &jy, &reached), 1);
    lua_pushnumber(L, jx);
    lua_pushnumber(L, jy);
    lua_pushboolean(L, reached);
    return 3;
}

static int two_bone_vector3(lua_State *L, int l_at)
{
    ik_real l1 = 0, l2 = 0, target[3], pole[3], joint[3];
    int reached, k;
    two_bone_args(L, 3, l_at, &l1, &l2, target);
    for (k = 0; k < 3; k++) pole[k] = check_real(L, 6 + k);
    check_status(L, ik_two_bone_middle3(l1, l2, target, pole, joint, &reached), 1);
    for (k = 0; k < 3; k++) lua_pushnumber(L, joint[k]);
    lua_pushboolean(L, reached);
    return 4;
}

static int mod_two_bone_middle(lua_State *L) { return two_bone_vector2(L, 1); }
static int mod_two_bone_middle3(lua_State *L) { return two_bone_vector3(L, 1); }
static int mod_two_bone_joint(lua_State *L) { return two_bone_vector2(L, 3); }
static int mod_two_bone_joint3(lua_State *L) { return two_bone_vector3(L, 4); }

static int mod_soft_distance(lua_State *L)
{
    ik_real d = check_length(L, 1), reach = check_length(L, 2), softness = check_length(L, 3);
    lua_pushnumber(L, ik_soft_distance(d, reach, softness));
    return 1;
}

/* ---- construction ---- */

/* A new chain userdata of dim and n bones, with the chain metatable; *block for init. */
static void *new_chain_block(lua_State *L, int dim, int n, size_t *size)
{
    box *b;
    *size = dim == 2 ? ik_chain2d_size(n) : ik_chain3d_size(n);
    if (*size == 0 || *size > (size_t)-1 - sizeof(box)) luaL_argerror(L, 1, ik_status_string(IK_ERR_TOO_LARGE));
    b = (box *)ik_lua_newbox(L, sizeof(box) + *size);
    b->head.core = NULL;
    b->head.tag = BOX_CHAIN;
    return b + 1;
}

/* The chain block just made (on top of the stack) gets its metatable: only a built chain. */
static void finish_chain(lua_State *L, ik_chain *chain)
{
    box *b = (box *)lua_touserdata(L, -1);
    b->head.core = chain;
    lua_pushvalue(L, CHAIN_MT);
    lua_setmetatable(L, -2);
}

/* Reads n = #t lengths from the table at arg into a stack buffer or a scratch userdata. */
static ik_real *read_lengths(lua_State *L, int arg, ik_real *stack, int *n)
{
    size_t count;
    ik_real *lengths = stack;
    int k;
    check_input_table(L, arg);
    count = ik_lua_rawlen(L, arg);
    if (count < 1) luaL_argerror(L, arg, ik_status_string(IK_ERR_COUNT));
    if (count > IK_MAX_BONES) luaL_argerror(L, arg, ik_status_string(IK_ERR_TOO_LARGE));
    *n = (int)count;
    /* Larger chains stage their lengths in a scratch userdata: garbage, but only here. */
    if (*n > STACK_LENGTHS) lengths = (ik_real *)ik_lua_newuserdata(L, count * sizeof(ik_real));
    for (k = 0; k < *n; k++) {
        lengths[k] = check_element(L, arg, k + 1, "length");
        if (lengths[k] < 0) luaL_argerror(L, arg, lua_pushfstring(L, "length %d is negative", k + 1));
        if (lengths[k] > IK_MAX_COORD)
            luaL_argerror(L, arg, lua_pushfstring(L, "length %d: %s", k + 1, ik_status_string(IK_ERR_RANGE)));
    }
    return lengths;
}

/* ik.chain2d(lengths [, x, y [, angle]]) and ik.chain3d(lengths [, x, y, z [, w, qx, qy, qz]]). */
static int new_chain(lua_State *L, int dim)
{
    ik_real stack[STACK_LENGTHS], *lengths, base[3], rotation[4];
    size_t size;
    int n, k, rotated = 0;
    ik_chain *chain;
    void *block;
    if (dim == 2) check_no_more(L, 5, "no value expected (chain2d takes lengths, x, y, angle)");
    else check_no_more(L, 9, "no value expected (chain3d takes lengths, x, y, z, w, qx, qy, qz)");
    lua_settop(L, dim == 2 ? 5 : 9); /* the scratch and the chain go above the arguments */
    lengths = read_lengths(L, 1, stack, &n);
    for (k = 0; k < 2; k++) base[k] = opt_coord(L, 2 + k);
    if (dim == 2) {
        base[2] = opt_real(L, 4, 0);
    } else {
        base[2] = opt_coord(L, 4);
        rotated = quat_given(L, 5);
        if (rotated) {
            check_quat(L, 5, rotation);
            if (rotation[0] == 0 && rotation[1] == 0 && rotation[2] == 0 && rotation[3] == 0)
                luaL_argerror(L, 5, ik_status_string(IK_ERR_ZERO_ROTATION));
        }
    }
    block = new_chain_block(L, dim, n, &size);
    if (dim == 2) {
        check_status(L, ik_chain2d_init(block, size, n, lengths, &chain), 1);
        check_status(L, ik_chain2d_set_base(chain, base[0], base[1], base[2]), 2);
    } else {
        check_status(L, ik_chain3d_init(block, size, n, lengths, &chain), 1);
        check_status(L, ik_chain3d_set_base(chain, base, rotated ? rotation : NULL), 2);
    }
    finish_chain(L, chain);
    return 1;
}

static int mod_chain2d(lua_State *L) { return new_chain(L, 2); }
static int mod_chain3d(lua_State *L) { return new_chain(L, 3); }

/*
 * ik.chain2d_points(points) and ik.chain3d_points(points): a chain through the joint
 * positions {x1, y1, [z1,] x2, ...}: its lengths the distances, its base on the first point
 * (2D: base angle 0; 3D: the identity), each bone along its segment.
 */
static int new_chain_points(lua_State *L, int dim)
{
    ik_real stack[STACK_LENGTHS], stack_points[3 * (STACK_LENGTHS + 1)], *lengths = stack;
    ik_real *points = stack_points;
    size_t count, size;
    int n, k, d;
    ik_chain *chain;
    void *block;
    lua_settop(L, 1);
    check_input_table(L, 1);
    count = ik_lua_rawlen(L, 1);
    if (count % (size_t)dim != 0)
        luaL_argerror(L, 1, lua_pushfstring(L, "%d numbers a point expected, got %d numbers", dim, (int)count));
    if (count < 2 * (size_t)dim) luaL_argerror(L, 1, "at least two points expected");
    if (count / (size_t)dim - 1 > IK_MAX_BONES) luaL_argerror(L, 1, ik_status_string(IK_ERR_TOO_LARGE));
    n = (int)(count / (size_t)dim) - 1;
    if (n > STACK_LENGTHS) {
        lengths = (ik_real *)ik_lua_newuserdata(L, (size_t)n * sizeof(ik_real));
        points = (ik_real *)ik_lua_newuserdata(L, count * sizeof(ik_real));
    }
    for (k = 0; k < (int)count; k++) {
        points[k] = check_element(L, 1, k + 1, "coordinate");
        if (fabs(points[k]) > IK_MAX_COORD)
            luaL_argerror(L, 1, lua_pushfstring(L, "coordinate %d: %s", k + 1, ik_status_string(IK_ERR_RANGE)));
    }
    for (k = 0; k < n; k++) {
        ik_real sum = 0, scale = 0;
        /* the distance, scaled first so coordinates near 1e300 do not overflow */
        for (d = 0; d < dim; d++) scale = fmax(scale, fabs(points[dim * (k + 1) + d] - points[dim * k + d]));
        for (d = 0; d < dim && scale > 0; d++) {
            ik_real t = (points[dim * (k + 1) + d] - points[dim * k + d]) / scale;
            sum += t * t;
        }
        lengths[k] = scale * sqrt(sum);
        if (!(lengths[k] <= IK_MAX_COORD))
            luaL_argerror(L, 1, lua_pushfstring(L, "segment %d: %s", k + 1, ik_status_string(IK_ERR_RANGE)));
    }
    block = new_chain_block(L, dim, n, &size);
    if (dim == 2) check_status(L, ik_chain2d_init(block, size, n, lengths, &chain), 1);
    else check_status(L, ik_chain3d_init(block, size, n, lengths, &chain), 1);
    check_status(L, ik_chain_set_points(chain, points), 1);
    finish_chain(L, chain);
    return 1;
}

static int mod_chain2d_points(lua_State *L) { return new_chain_points(L, 2); }
static int mod_chain3d_points(lua_State *L) { return new_chain_points(L, 3); }

/*
 * A chain keeps alive the chains it is linked to, its parent ([1]) and the chain holding its
 * tip ([2]), in a table of two that is its kept value, made at its first link. had: whether
 * the chain was linked before (only then is the kept value set: see ik_lua_getkept).
 * Pushes the table.
 */
static void push_links(lua_State *L, int idx, int had)
{
    if (had) {
        ik_lua_getkept(L, idx);
        if (lua_istable(L, -1)) return;
        lua_pop(L, 1);
    }
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, -1);
    ik_lua_setkept(L, idx);
}

static int is_linked(const ik_chain *chain)
{
    return ik_chain_parent(chain, NULL) != NULL || ik_chain_tip_parent(chain, NULL, NULL) != NULL;
}

/*
 * Pops a value into link slot (1: parent, 2: tip) of the chain at idx. (No lua_insert or
 * lua_remove here: macros in 5.3, functions in 5.2, so a build using them would not load
 * in the other VM for the version check to say why; see ik_lua_compat.h.)
 */
static void set_link(lua_State *L, int idx, int slot, int had)
{
    int value = lua_gettop(L);
    push_links(L, idx, had);
    lua_pushvalue(L, value);
    lua_rawseti(L, -2, slot);
    lua_pop(L, 2);
}

/* Pushes the kept table of the chain at idx, which is linked, then the link in slot above
   it (nil: none there). */
static void get_link(lua_State *L, int idx, int slot)
{
    ik_lua_getkept(L, idx);
    if (lua_istable(L, -1)) lua_rawgeti(L, -1, slot);
    else lua_pushnil(L);
}

/* Releases the tip hold of the chain at argument 1, if any. */
static void release_tip(lua_State *L, ik_chain *chain)
{
    if (ik_chain_tip_parent(chain, NULL, NULL) == NULL) return;
    ik_chain_detach_tip(chain);
    lua_pushnil(L);
    set_link(L, 1, 2, 1);
}

/* chain:clone(): a chain that behaves exactly as this one (its parent and tip hold too; not its
   children). */
static int chain_clone(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1), *copy;
    size_t size;
    void *block = new_chain_block(L, ik_chain_dim(chain), ik_chain_bone_count(chain), &size);
    check_status(L, ik_chain_copy(block, size, chain, &copy), 1);
    finish_chain(L, copy);
    if (is_linked(copy)) { /* hangs on the same parent, held by the same chain: keep them alive */
        int slot, at = lua_gettop(L);
        for (slot = 1; slot <= 2; slot++) {
            get_link(L, 1, slot);
            set_link(L, at, slot, slot == 2);
            lua_pop(L, 1); /* the original's kept table */
        }
    }
    return 1;
}

/* ---- methods: shape and pose ---- */

static int chain_count(lua_State *L)
{
    lua_pushinteger(L, ik_chain_bone_count(check_chain(L, 1)));
    return 1;
}

static int chain_dim(lua_State *L)
{
    lua_pushinteger(L, ik_chain_dim(check_chain(L, 1)));
    return 1;
}

static int chain_reach(lua_State *L)
{
    lua_pushnumber(L, ik_chain_reach(check_chain(L, 1)));
    return 1;
}

static int chain_tostring(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int n = ik_chain_bone_count(chain);
    lua_pushfstring(L, "ik.chain%dd(%d bone%s)", ik_chain_dim(chain), n, n == 1 ? "" : "s");
    return 1;
}

static int push_joint(lua_State *L, ik_chain *chain, int joint)
{
    int dim = ik_chain_dim(chain), d;
    const ik_real *p = ik_chain_positions(chain) + (size_t)joint * (size_t)dim;
    for (d = 0; d < dim; d++) lua_pushnumber(L, p[d]);
    return dim;
}

static int chain_joint(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    return push_joint(L, chain, check_index(L, 2, ik_chain_bone_count(chain) + 1));
}

static int chain_effector(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    return push_joint(L, chain, ik_chain_bone_count(chain));
}

static int chain_positions(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    /* The core keeps (n + 1) * 3 within an int. */
    int m = (ik_chain_bone_count(chain) + 1) * ik_chain_dim(chain), k;
    const ik_real *p;
    out_table(L, 2, m);
    p = ik_chain_positions(chain);
    for (k = 0; k < m; k++) {
        lua_pushnumber(L, p[k]);
        lua_rawseti(L, 2, k + 1);
    }
    clear_tail(L, 2, m + 1); /* a table reused from a longer chain keeps no tail */
    return 1;
}

/* chain:set_points(points): posed along joint positions (see ik_chain_set_points). */
static int chain_set_points(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int m = (ik_chain_bone_count(chain) + 1) * ik_chain_dim(chain), k;
    ik_real stack[3 * (STACK_LENGTHS + 1)], *points = stack;
    check_input_table(L, 2);
    if (ik_lua_rawlen(L, 2) != (size_t)m)
        luaL_argerror(L, 2, lua_pushfstring(L, "%d numbers expected (%d joints), got %d", m,
                                            ik_chain_bone_count(chain) + 1, (int)ik_lua_rawlen(L, 2)));
    lua_settop(L, 2);
    if (m > 3 * (STACK_LENGTHS + 1)) points = (ik_real *)ik_lua_newuserdata(L, (size_t)m * sizeof(ik_real));
    for (k = 0; k < m; k++) points[k] = check_element(L, 2, k + 1, "coordinate");
    check_status(L, ik_chain_set_points(chain, points), 2);
    return 0;
}

static int chain_length(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real length;
    check_status(L, ik_chain_length(chain, check_index(L, 2, ik_chain_bone_count(chain)), &length), 2);
    lua_pushnumber(L, length);
    return 1;
}

static int chain_set_length(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    check_status(L, ik_chain_set_length(chain, bone, check_real(L, 3)), 3);
    return 0;
}

static int chain_weight(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real weight;
    int joint = check_index(L, 2, ik_chain_bone_count(chain) + 1);
    check_status(L, ik_chain_weight(chain, joint, &weight), 2);
    lua_pushnumber(L, weight);
    return 1;
}

static int chain_set_weight(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int joint = check_index(L, 2, ik_chain_bone_count(chain) + 1);
    check_status(L, ik_chain_set_weight(chain, joint, check_real(L, 3)), 3);
    return 0;
}

static int chain_base(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
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

static void check_free(lua_State *L, ik_chain *chain)
{
    if (ik_chain_parent(chain, NULL))
        luaL_argerror(L, 1, "the chain hangs on a parent, which places its base (detach it first)");
}

/* 2D: set_base(x, y [, angle]); 3D: set_base(x, y, z [, w, qx, qy, qz]). */
static int chain_set_base(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real position[3], rotation[4], angle;
    int k, rotated;
    if (ik_chain_dim(chain) == 2) {
        ik_real x = check_coord(L, 2), y = check_coord(L, 3);
        check_status(L, ik_chain2d_base(chain, &position[0], &position[1], &angle), 1);
        if (!lua_isnoneornil(L, 4)) angle = check_real(L, 4);
        check_no_more(L, 5, "no value expected (a 2D base is x, y, angle)");
        check_free(L, chain);
        check_status(L, ik_chain2d_set_base(chain, x, y, angle), 2);
        return 0;
    }
    for (k = 0; k < 3; k++) position[k] = check_coord(L, 2 + k);
    rotated = quat_given(L, 5);
    if (rotated) check_quat(L, 5, rotation);
    check_no_more(L, 9, "no value expected (a 3D base is x, y, z, w, qx, qy, qz)");
    check_free(L, chain);
    check_status(L, ik_chain3d_set_base(chain, position, rotated ? rotation : NULL), 5);
    return 0;
}

static int chain_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    ik_real angle;
    check_status(L, ik_chain2d_angle(chain, check_index(L, 2, ik_chain_bone_count(chain)), &angle), 2);
    lua_pushnumber(L, angle);
    return 1;
}

static int chain_set_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    check_status(L, ik_chain2d_set_angle(chain, bone, check_real(L, 3)), 3);
    return 0;
}

static int chain_world_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    ik_real angle;
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    check_status(L, ik_chain2d_world_angle(chain, bone, &angle), 2);
    lua_pushnumber(L, angle);
    return 1;
}

/* 2D angles(out) / 3D rotations(out): every local angle, or every rotation (w, x, y, z each). */
static int chain_angles(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int n = ik_chain_bone_count(chain), dim = ik_chain_dim(chain), i, k;
    out_table(L, 2, dim == 2 ? n : 4 * n);
    for (i = 0; i < n; i++) {
        if (dim == 2) {
            ik_real a;
            ik_chain2d_angle(chain, i, &a);
            lua_pushnumber(L, a);
            lua_rawseti(L, 2, i + 1);
        } else {
            ik_real q[4];
            ik_chain3d_rotation(chain, i, q);
            for (k = 0; k < 4; k++) {
                lua_pushnumber(L, q[k]);
                lua_rawseti(L, 2, 4 * i + k + 1);
            }
        }
    }
    clear_tail(L, 2, (dim == 2 ? n : 4 * n) + 1);
    return 1;
}

/*
 * 2D set_angles(t) / 3D set_rotations(t): every bone at once, from t[1..n] (angles) or
 * t[1..4n] (quaternions). All are checked first, so a bad one changes nothing.
 */
static int chain_set_angles(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int n = ik_chain_bone_count(chain), dim = ik_chain_dim(chain), per = dim == 2 ? 1 : 4, i, k;
    size_t want = (size_t)n * (size_t)per;
    check_input_table(L, 2);
    if (ik_lua_rawlen(L, 2) != want)
        luaL_argerror(L, 2, lua_pushfstring(L, "%d numbers expected (%s), got %d", (int)want,
                                            dim == 2 ? "an angle a bone" : "w, x, y, z a bone",
                                            (int)ik_lua_rawlen(L, 2)));
    for (k = 1; k <= (int)want; k++) check_element(L, 2, k, dim == 2 ? "angle" : "number");
    for (i = 0; i < n && per == 4; i++) {
        ik_real q[4];
        for (k = 0; k < 4; k++) q[k] = check_element(L, 2, 4 * i + k + 1, "number");
        if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
            luaL_argerror(L, 2, lua_pushfstring(L, "rotation %d: %s", i + 1, ik_status_string(IK_ERR_ZERO_ROTATION)));
    }
    for (i = 0; i < n; i++) {
        if (dim == 2) {
            check_status(L, ik_chain2d_set_angle(chain, i, check_element(L, 2, i + 1, "angle")), 2);
        } else {
            ik_real q[4];
            for (k = 0; k < 4; k++) q[k] = check_element(L, 2, 4 * i + k + 1, "number");
            check_status(L, ik_chain3d_set_rotation(chain, i, q), 2);
        }
    }
    return 0;
}

static int chain_angles2d(lua_State *L)
{
    check_chain2d(L);
    return chain_angles(L);
}

static int chain_rotations(lua_State *L)
{
    check_chain3d(L);
    return chain_angles(L);
}

static int chain_set_angles2d(lua_State *L)
{
    check_chain2d(L);
    return chain_set_angles(L);
}

static int chain_set_rotations(lua_State *L)
{
    check_chain3d(L);
    return chain_set_angles(L);
}

static int chain_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    ik_real q[4];
    check_status(L, ik_chain3d_rotation(chain, check_index(L, 2, ik_chain_bone_count(chain)), q), 2);
    return push_quat(L, q);
}

static int chain_set_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    ik_real q[4];
    check_quat(L, 3, q);
    check_status(L, ik_chain3d_set_rotation(chain, bone, q), 3);
    return 0;
}

static int chain_world_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    ik_real q[4];
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    check_status(L, ik_chain3d_world_rotation(chain, bone, q), 2);
    return push_quat(L, q);
}

/* ---- methods: joint limits ---- */

/* A bound of a limit's range: a finite number within [-pi, pi]. */
static ik_real check_bound(lua_State *L, int arg)
{
    ik_real v = check_real(L, arg);
    if (v < -PI || v > PI) luaL_argerror(L, arg, ik_status_string(IK_ERR_LIMIT_RANGE));
    return v;
}

static ik_real opt_bound(lua_State *L, int arg, ik_real def)
{
    return lua_isnoneornil(L, arg) ? def : check_bound(L, arg);
}

static int chain_set_limit(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    ik_real min = check_bound(L, 3), max = check_bound(L, 4);
    /* Both bounds are in range: what is left is min > max, blamed on min. */
    check_status(L, ik_chain2d_set_limit(chain, bone, min, max), 3);
    return 0;
}

/*
 * 2D: min, max of bone i's limit, or nothing when it has none. 3D: "hinge", ax, ay, az,
 * min, max; or "cone", half_angle, twist_min, twist_max (pi, and -pi, pi, where a cone or a
 * twist limit is not set); nothing when the bone has no limit.
 */
static int chain_limit(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int bone = check_index(L, 2, ik_chain_bone_count(chain)), k;
    if (ik_chain_dim(chain) == 2) {
        ik_real min, max;
        int has;
        check_status(L, ik_chain2d_limit(chain, bone, &has, &min, &max), 2);
        if (!has) return 0;
        lua_pushnumber(L, min);
        lua_pushnumber(L, max);
        return 2;
    } else {
        ik_limit3d limit;
        check_status(L, ik_chain3d_limit(chain, bone, &limit), 2);
        if (limit.hinge) {
            lua_pushliteral(L, "hinge");
            for (k = 0; k < 3; k++) lua_pushnumber(L, limit.axis[k]);
            lua_pushnumber(L, limit.min);
            lua_pushnumber(L, limit.max);
            return 6;
        }
        if (!limit.cone && !limit.twist) return 0;
        lua_pushliteral(L, "cone");
        lua_pushnumber(L, limit.half_angle);
        lua_pushnumber(L, limit.twist_min);
        lua_pushnumber(L, limit.twist_max);
        return 4;
    }
}

static int chain_set_hinge(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_bone_count(chain)), k;
    ik_real axis[3], min, max;
    ik_status status;
    for (k = 0; k < 3; k++) axis[k] = check_real(L, 3 + k);
    min = opt_bound(L, 6, -PI);
    max = opt_bound(L, 7, PI);
    status = ik_chain3d_set_hinge(chain, bone, axis, min, max);
    check_status(L, status, status == IK_ERR_AXIS ? 3 : 6);
    return 0;
}

static int chain_set_cone(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    check_status(L, ik_chain3d_set_cone(chain, bone, check_real(L, 3)), 3);
    return 0;
}

static int chain_set_twist(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    int bone = check_index(L, 2, ik_chain_bone_count(chain));
    ik_real min = check_bound(L, 3), max = check_bound(L, 4);
    check_status(L, ik_chain3d_set_twist(chain, bone, min, max), 3);
    return 0;
}

static int chain_clear_limit(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    check_status(L, ik_chain_clear_limit(chain, check_index(L, 2, ik_chain_bone_count(chain))), 2);
    return 0;
}

static int chain_stretch_factor(lua_State *L)
{
    lua_pushnumber(L, ik_chain_stretch_factor(check_chain(L, 1)));
    return 1;
}

/* ---- methods: settings ---- */

/* The settings entry on top of the stack (key at -2), checked: errors blame argument 2. */
static lua_Number setting_number(lua_State *L, const char *key)
{
    if (lua_type(L, -1) != LUA_TNUMBER)
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: number expected, got %s", key, luaL_typename(L, -1)));
    return lua_tonumber(L, -1) + 0.0;
}

static int setting_whole(lua_State *L, const char *key)
{
    lua_Number v;
    if (lua_type(L, -1) != LUA_TNUMBER)
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: integer expected, got %s", key, luaL_typename(L, -1)));
    v = lua_tonumber(L, -1);
    if (!is_whole(v))
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: number has no integer representation", key));
    if (v > INT_MAX) luaL_argerror(L, 2, lua_pushfstring(L, "%s: number too large", key));
    return v < INT_MIN ? INT_MIN : (int)v;
}

static int setting_boolean(lua_State *L, const char *key)
{
    if (lua_type(L, -1) != LUA_TBOOLEAN)
        luaL_argerror(L, 2, lua_pushfstring(L, "%s: boolean expected, got %s", key, luaL_typename(L, -1)));
    return lua_toboolean(L, -1);
}

static int key_is(const char *key, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(key, name, len) == 0;
}

/* The key of the entry at -2 as a string (lua_tolstring on a number key would break lua_next). */
static const char *setting_key(lua_State *L, size_t *len)
{
    if (lua_type(L, -2) != LUA_TSTRING)
        luaL_argerror(L, 2, lua_pushfstring(L, "keys must be strings, got %s", luaL_typename(L, -2)));
    return lua_tolstring(L, -2, len);
}

static ik_solver setting_solver(lua_State *L)
{
    size_t len;
    const char *name;
    ik_solver solver = IK_SOLVER_FABRIK; /* luaL_argerror does not return */
    if (lua_type(L, -1) != LUA_TSTRING)
        luaL_argerror(L, 2, lua_pushfstring(L, "solver: string expected, got %s", luaL_typename(L, -1)));
    name = lua_tolstring(L, -1, &len);
    /* An embedded zero would let "ccd\0x" pass as "ccd". */
    if (strlen(name) != len || ik_solver_parse(name, &solver) != IK_OK)
        luaL_argerror(L, 2, ik_status_string(IK_ERR_SOLVER));
    return solver;
}

/*
 * Reads the entry (key at -2, value at -1) into settings. Out-of-range numbers that fit the
 * field are left for ik_chain_configure to reject, so its messages are the only ones.
 */
static void read_setting(lua_State *L, ik_chain *chain, ik_settings *settings)
{
    size_t len;
    const char *key = setting_key(L, &len);
    if (key_is(key, len, "iterations")) {
        settings->iterations = setting_whole(L, key);
    } else if (key_is(key, len, "tolerance")) {
        settings->tolerance = setting_number(L, key);
    } else if (key_is(key, len, "angle_tolerance")) {
        settings->angle_tolerance = setting_number(L, key);
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
    } else if (key_is(key, len, "max_turn")) {
        settings->max_turn = setting_number(L, key);
    } else if (key_is(key, len, "effector_weight")) {
        settings->effector_weight = setting_number(L, key);
    } else if (key_is(key, len, "stiffness")) {
        settings->stiffness = setting_number(L, key);
    } else if (key_is(key, len, "damping")) {
        settings->damping = setting_number(L, key);
    } else if (key_is(key, len, "gravity")) {
        int k, dim = ik_chain_dim(chain);
        if (lua_type(L, -1) != LUA_TTABLE || is_proxy(L, lua_gettop(L)) || ik_lua_rawlen(L, -1) != (size_t)dim)
            luaL_argerror(L, 2, dim == 2 ? "gravity: a table of 2 numbers expected"
                                         : "gravity: a table of 3 numbers expected");
        for (k = 0; k < 3; k++) settings->gravity[k] = 0;
        for (k = 0; k < dim; k++) {
            lua_rawgeti(L, -1, k + 1);
            if (lua_type(L, -1) != LUA_TNUMBER)
                luaL_argerror(L, 2, dim == 2 ? "gravity: a table of 2 numbers expected"
                                             : "gravity: a table of 3 numbers expected");
            settings->gravity[k] = lua_tonumber(L, -1) + 0.0;
            lua_pop(L, 1);
        }
    } else if (key_is(key, len, "bend")) {
        int v = setting_whole(L, key);
        if (v != 1 && v != -1) luaL_argerror(L, 2, ik_status_string(IK_ERR_BEND));
        settings->bend = v;
    } else if (key_is(key, len, "solver")) {
        settings->solver = setting_solver(L);
    } else if (key_is(key, len, "pole")) {
        if (ik_chain_dim(chain) != 3) luaL_argerror(L, 2, "pole is for 3D chains");
        if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
            settings->use_pole = 0;
        } else if (lua_type(L, -1) == LUA_TTABLE) {
            int k;
            if (is_proxy(L, lua_gettop(L)))
                luaL_argerror(L, 2, "pole: a plain table expected (this one has an __index metamethod)");
            for (k = 0; k < 3; k++) {
                lua_rawgeti(L, -1, k + 1);
                if (lua_type(L, -1) != LUA_TNUMBER) luaL_argerror(L, 2, "pole: a table of 3 numbers expected");
                settings->pole[k] = lua_tonumber(L, -1) + 0.0;
                lua_pop(L, 1);
            }
            settings->use_pole = 1; /* zero or non-finite: ik_chain_configure says so */
        } else {
            luaL_argerror(L, 2, lua_pushfstring(L, "pole: table or false expected, got %s", luaL_typename(L, -1)));
        }
    } else {
        luaL_argerror(L, 2, lua_pushfstring(L, "unknown key '%s'", key));
    }
}

static int chain_configure(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    /* Parse into a copy: the chain changes only if the whole table is valid. */
    ik_settings settings = *ik_chain_settings(chain);
    lua_settop(L, 2);
    check_input_table(L, 2);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        read_setting(L, chain, &settings);
        lua_pop(L, 1);
    }
    check_status(L, ik_chain_configure(chain, &settings), 2);
    lua_settop(L, 1);
    return 1;
}

static void set_number(lua_State *L, const char *key, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, key);
}

static void set_boolean(lua_State *L, const char *key, int v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, key);
}

static int chain_settings(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    const ik_settings *s = ik_chain_settings(chain);
    out_table(L, 2, 0);
    lua_pushstring(L, ik_solver_name(s->solver));
    lua_setfield(L, 2, "solver");
    lua_pushinteger(L, s->iterations);
    lua_setfield(L, 2, "iterations");
    set_number(L, "tolerance", s->tolerance);
    set_number(L, "angle_tolerance", s->angle_tolerance);
    set_number(L, "greed", s->greed);
    set_boolean(L, "greed_ramp", s->greed_ramp);
    lua_pushinteger(L, s->bend);
    lua_setfield(L, 2, "bend");
    set_boolean(L, "escape", s->escape);
    set_number(L, "mix", s->mix);
    set_number(L, "softness", s->softness);
    set_boolean(L, "stretch", s->stretch);
    set_number(L, "max_turn", s->max_turn);
    set_number(L, "effector_weight", s->effector_weight);
    set_number(L, "stiffness", s->stiffness);
    set_number(L, "damping", s->damping);
    {
        int k, dim = ik_chain_dim(chain);
        lua_createtable(L, dim, 0);
        for (k = 0; k < dim; k++) {
            lua_pushnumber(L, s->gravity[k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, 2, "gravity");
    }
    if (ik_chain_dim(chain) != 3) return 1; /* the pole is a 3D setting */
    if (s->use_pole) {
        int k;
        lua_createtable(L, 3, 0);
        for (k = 0; k < 3; k++) {
            lua_pushnumber(L, s->pole[k]);
            lua_rawseti(L, -2, k + 1);
        }
    } else {
        lua_pushboolean(L, 0);
    }
    lua_setfield(L, 2, "pole");
    return 1;
}

/* ---- methods: goals ---- */

/* dim target coordinates from argument 2 on; nothing after them, in 2D as in 3D. */
static void check_target(lua_State *L, ik_chain *chain, ik_real target[MAX_DIM])
{
    int dim = ik_chain_dim(chain), d;
    for (d = 0; d < dim; d++) target[d] = check_coord(L, 2 + d);
    if (dim == 2) check_no_more(L, 4, "no value expected (a 2D chain takes x, y)");
    else check_no_more(L, 5, "no value expected (a 3D chain takes x, y, z)");
}

static int chain_set_target(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real target[MAX_DIM];
    check_target(L, chain, target);
    if (ik_chain_tip_parent(chain, NULL, NULL)) luaL_argerror(L, 1, ik_status_string(IK_ERR_HELD));
    check_status(L, ik_chain_set_target(chain, target), 2);
    return 0;
}

static int chain_target(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real target[MAX_DIM];
    int has, d;
    ik_chain_target(chain, target, &has);
    if (!has) {
        lua_pushnil(L);
        return 1;
    }
    for (d = 0; d < ik_chain_dim(chain); d++) lua_pushnumber(L, target[d]);
    return ik_chain_dim(chain);
}

/* ---- methods: motion over time ---- */

static int chain_drag(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real point[MAX_DIM];
    check_target(L, chain, point);
    check_status(L, ik_chain_drag(chain, point), 1);
    return 0;
}

static int chain_simulate(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    lua_Number dt = check_number(L, 2);
    if (!(isfinite(dt) && dt > 0)) luaL_argerror(L, 2, ik_status_string(IK_ERR_TIME_STEP));
    check_no_more(L, 3, "no value expected (simulate takes dt)");
    check_status(L, ik_chain_simulate(chain, (ik_real)dt), 2);
    return 0;
}

static int chain_set_rest(lua_State *L)
{
    check_status(L, ik_chain_set_rest(check_chain(L, 1)), 1);
    return 0;
}

static int chain_goal_error(lua_State *L)
{
    ik_real distance, angle_error;
    int has;
    ik_chain_goal_error(check_chain(L, 1), &distance, &angle_error, &has);
    if (!has) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushnumber(L, distance);
    lua_pushnumber(L, angle_error);
    return 2;
}

static int chain_clear_target(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    release_tip(L, chain);
    ik_chain_clear_target(chain);
    return 0;
}

static int chain_set_target_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    check_status(L, ik_chain2d_set_target_angle(chain, check_real(L, 2)), 2);
    return 0;
}

static int chain_target_angle(lua_State *L)
{
    ik_chain *chain = check_chain2d(L);
    ik_real angle;
    int has;
    ik_chain2d_target_angle(chain, &angle, &has);
    if (has) lua_pushnumber(L, angle);
    else lua_pushnil(L);
    return 1;
}

static int chain_set_target_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    ik_real q[4];
    check_quat(L, 2, q);
    check_status(L, ik_chain3d_set_target_rotation(chain, q), 2);
    return 0;
}

static int chain_target_rotation(lua_State *L)
{
    ik_chain *chain = check_chain3d(L);
    ik_real q[4];
    int has;
    ik_chain3d_target_rotation(chain, q, &has);
    if (!has) {
        lua_pushnil(L);
        return 1;
    }
    return push_quat(L, q);
}

/* ---- methods: solves ---- */

/* Whether the arguments from arg on are all nil (or none). */
static int all_nil(lua_State *L, int arg)
{
    int k;
    for (k = arg; k <= lua_gettop(L); k++)
        if (!lua_isnil(L, k)) return 0;
    return 1;
}

static int solve_with(lua_State *L, solve_fn solve)
{
    ik_chain *chain = check_chain(L, 1);
    ik_real target[MAX_DIM];
    ik_result result;
    ik_status status;
    if (all_nil(L, 2)) {
        status = solve(chain, NULL, &result); /* towards the kept goal */
        if (status == IK_ERR_NO_TARGET) luaL_argerror(L, 2, ik_status_string(status));
    } else {
        check_target(L, chain, target);
        if (ik_chain_tip_parent(chain, NULL, NULL)) luaL_argerror(L, 1, ik_status_string(IK_ERR_HELD));
        status = solve(chain, target, &result);
    }
    /* Targets are checked above: what is left is the chain's (IK_ERR_NOT_TWO_BONE). */
    check_status(L, status, 1);
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
static int chain_solve_aim(lua_State *L) { return solve_with(L, ik_chain_solve_aim); }

/*
 * ik.solve_many(chains, targets [, reached [, distances [, iterations]]]): targets nil solves
 * each towards its kept goal; the optional tables receive each chain's result. Everything is
 * checked in a first pass, so a rejected call solves nothing; that pass also gathers the
 * first SOLVE_BLOCK chains and their targets on the C stack, and later blocks are read
 * again when their turn comes (nothing is allocated).
 */
#define SOLVE_BLOCK 64

/* Chain k (1-based) of the array at argument 1, checked: an ik chain, of chain 1's dimension. */
static ik_chain *solve_many_chain(lua_State *L, int k, int *dim)
{
    ik_chain *chain;
    lua_rawgeti(L, 1, k);
    chain = to_chain(L, lua_gettop(L));
    lua_pop(L, 1); /* the array keeps the userdata alive */
    if (chain == NULL) luaL_argerror(L, 1, lua_pushfstring(L, "chain %d is not an ik chain", k));
    if (k == 1) *dim = ik_chain_dim(chain);
    if (ik_chain_dim(chain) != *dim)
        luaL_argerror(L, 1, lua_pushfstring(L, "chain %d is %dD, chain 1 is %dD", k, ik_chain_dim(chain), *dim));
    return chain;
}

/* What the core would refuse of chain k: a two-bone solver on the wrong bone count, no kept
   goal when targets is nil. */
static void solve_many_core_checks(lua_State *L, ik_chain *chain, int k, int dim, int has_targets)
{
    if (ik_chain_settings(chain)->solver == IK_SOLVER_TWO_BONE) {
        ik_real t[4];
        int has_orientation = 0;
        if (dim == 2) ik_chain2d_target_angle(chain, t, &has_orientation);
        else ik_chain3d_target_rotation(chain, t, &has_orientation);
        if (ik_chain_bone_count(chain) != (has_orientation ? 3 : 2))
            luaL_argerror(L, 1, lua_pushfstring(L, "chain %d: %s", k, ik_status_string(IK_ERR_NOT_TWO_BONE)));
    }
    if (has_targets && ik_chain_tip_parent(chain, NULL, NULL))
        luaL_argerror(L, 2, lua_pushfstring(L, "chain %d: %s", k, ik_status_string(IK_ERR_HELD)));
    if (!has_targets) {
        ik_real t[3];
        int has;
        ik_chain_target(chain, t, &has);
        if (!has) luaL_argerror(L, 2, lua_pushfstring(L, "chain %d keeps no target (give targets)", k));
    }
}

static int mod_solve_many(lua_State *L)
{
    size_t raw_count;
    int count, dim = 2, k, block, reached_count = 0, reached, failed, out;
    int has_targets;
    ik_chain *chains[SOLVE_BLOCK];
    ik_real targets[SOLVE_BLOCK * MAX_DIM];
    ik_result results[SOLVE_BLOCK];
    ik_status status;

    lua_settop(L, 5);
    check_input_table(L, 1);
    has_targets = !lua_isnil(L, 2);
    if (has_targets) check_input_table(L, 2);
    for (out = 3; out <= 5; out++)
        if (!lua_isnil(L, out) && lua_type(L, out) != LUA_TTABLE) type_error(L, out, "table or nil");
    raw_count = ik_lua_rawlen(L, 1);
    if (raw_count > INT_MAX / MAX_DIM) luaL_argerror(L, 1, "too many chains");
    count = (int)raw_count;

    /* The first pass: every chain, every target, then what the core would refuse, checked;
       the first block kept. */
    for (k = 1; k <= count; k++) {
        ik_chain *chain = solve_many_chain(L, k, &dim);
        if (k <= SOLVE_BLOCK) chains[k - 1] = chain;
    }
    if (has_targets)
        for (k = 1; k <= count * dim; k++) {
            ik_real v = check_element(L, 2, k, "target");
            if (fabs(v) > IK_MAX_COORD)
                luaL_argerror(L, 2, lua_pushfstring(L, "target %d: %s", k, ik_status_string(IK_ERR_RANGE)));
            if (k <= SOLVE_BLOCK * dim) targets[k - 1] = v;
        }
    for (k = 1; k <= count; k++)
        solve_many_core_checks(L, k <= SOLVE_BLOCK ? chains[k - 1] : solve_many_chain(L, k, &dim), k, dim, has_targets);

    for (block = 0; block < count; block += SOLVE_BLOCK) {
        int size = count - block < SOLVE_BLOCK ? count - block : SOLVE_BLOCK;
        if (block > 0) { /* read again: checked in the first pass */
            for (k = 0; k < size; k++) chains[k] = solve_many_chain(L, block + k + 1, &dim);
            for (k = 0; k < size * dim && has_targets; k++)
                targets[k] = check_element(L, 2, block * dim + k + 1, "target");
        }
        status = ik_solve_many(chains, size, has_targets ? targets : NULL, &reached, results, &failed);
        if (status != IK_OK) /* unreachable after the first pass */
            luaL_argerror(L, 1, lua_pushfstring(L, "chain %d: %s", block + failed + 1, ik_status_string(status)));
        reached_count += reached;
        for (out = 3; out <= 5; out++) {
            if (lua_isnil(L, out)) continue;
            for (k = 0; k < size; k++) {
                if (out == 3) lua_pushboolean(L, results[k].reached);
                else if (out == 4) lua_pushnumber(L, results[k].distance);
                else lua_pushinteger(L, results[k].iterations);
                lua_rawseti(L, out, block + k + 1);
            }
        }
    }
    lua_pushinteger(L, reached_count);
    return 1;
}

/* ---- methods: attachment ---- */

/* 2D child:attach(parent, j [, angle]); 3D child:attach(parent, j [, w, x, y, z]). */
static int chain_attach(lua_State *L)
{
    ik_chain *child = check_chain(L, 1), *parent = check_chain(L, 2);
    int joint, dim = ik_chain_dim(child), had;
    ik_real rotation[4], angle = 0;
    int rotated = 0;
    ik_status status;
    if (ik_chain_dim(parent) != dim)
        luaL_argerror(L, 2, lua_pushfstring(L, "a %dD chain expected (this one is %dD)", dim, ik_chain_dim(parent)));
    joint = check_index(L, 3, ik_chain_bone_count(parent) + 1);
    if (dim == 2) {
        angle = opt_real(L, 4, 0);
        check_no_more(L, 5, "no value expected (a 2D offset is one angle)");
    } else {
        rotated = quat_given(L, 4);
        if (rotated) check_quat(L, 4, rotation);
        if (rotated && rotation[0] == 0 && rotation[1] == 0 && rotation[2] == 0 && rotation[3] == 0)
            luaL_argerror(L, 4, ik_status_string(IK_ERR_ZERO_ROTATION));
        check_no_more(L, 8, "no value expected (a 3D offset is one rotation: w, x, y, z)");
    }
    if (ik_chain_parent(child, NULL)) luaL_argerror(L, 1, ik_status_string(IK_ERR_ATTACHED));
    had = is_linked(child);
    status = dim == 2 ? ik_chain2d_attach(child, parent, joint, angle)
                      : ik_chain3d_attach(child, parent, joint, rotated ? rotation : NULL);
    check_status(L, status, status == IK_ERR_CYCLE ? 2 : 1);
    lua_pushvalue(L, 2);
    set_link(L, 1, 1, had); /* the child keeps its parent alive */
    return 0;
}

static int chain_detach(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int had = is_linked(chain);
    ik_chain_detach(chain);
    lua_pushnil(L);
    set_link(L, 1, 1, had);
    return 0;
}

static int chain_parent(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int joint;
    if (ik_chain_parent(chain, &joint) == NULL) return 0;
    get_link(L, 1, 1);
    lua_pushinteger(L, joint + 1);
    return 2;
}

/* ---- methods: closed loops ---- */

/* 2D chain:attach_tip(other, j [, dx, dy]); 3D chain:attach_tip(other, j [, dx, dy, dz]). */
static int chain_attach_tip(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1), *other = check_chain(L, 2);
    int joint, dim = ik_chain_dim(chain), d, given = 0, had;
    ik_real offset[MAX_DIM];
    if (ik_chain_dim(other) != dim)
        luaL_argerror(L, 2, lua_pushfstring(L, "a %dD chain expected (this one is %dD)", dim, ik_chain_dim(other)));
    if (other == chain) luaL_argerror(L, 2, ik_status_string(IK_ERR_SELF));
    joint = check_index(L, 3, ik_chain_bone_count(other) + 1);
    for (d = 0; d < dim; d++) given |= !lua_isnoneornil(L, 4 + d);
    for (d = 0; d < dim && given; d++) offset[d] = check_coord(L, 4 + d);
    check_no_more(L, 4 + dim, dim == 2 ? "no value expected (a 2D offset is dx, dy)"
                                       : "no value expected (a 3D offset is dx, dy, dz)");
    if (ik_chain_tip_parent(chain, NULL, NULL)) luaL_argerror(L, 1, ik_status_string(IK_ERR_TIP_HELD));
    had = is_linked(chain);
    check_status(L, ik_chain_attach_tip(chain, other, joint, given ? offset : NULL), 1);
    lua_pushvalue(L, 2);
    set_link(L, 1, 2, had); /* the chain keeps the one holding its tip alive */
    return 0;
}

static int chain_detach_tip(lua_State *L)
{
    release_tip(L, check_chain(L, 1));
    return 0;
}

static int chain_tip_parent(lua_State *L)
{
    ik_chain *chain = check_chain(L, 1);
    int joint;
    if (ik_chain_tip_parent(chain, &joint, NULL) == NULL) return 0;
    get_link(L, 1, 2);
    lua_pushinteger(L, joint + 1);
    return 2;
}

/* ---- rigs ---- */

/*
 * ik.rig(chains): a rig over the chains of the array (see ik_rig_init). The rig keeps the
 * array's chains (in a table of its own) alive.
 */
static int mod_rig(lua_State *L)
{
    ik_chain *stack[SOLVE_BLOCK], **chains = stack;
    size_t raw_count, size;
    int count, k, culprit;
    ik_rig *rig;
    box *b;
    ik_status status;
    lua_settop(L, 1);
    check_input_table(L, 1);
    raw_count = ik_lua_rawlen(L, 1);
    if (raw_count < 1) luaL_argerror(L, 1, "at least one chain expected");
    if (raw_count > IK_MAX_BONES) luaL_argerror(L, 1, "too many chains");
    count = (int)raw_count;
    if (count > SOLVE_BLOCK) chains = (ik_chain **)ik_lua_newuserdata(L, (size_t)count * sizeof *chains);
    lua_createtable(L, count, 0); /* the rig's own list: index 3 (or 2) */
    for (k = 1; k <= count; k++) {
        lua_rawgeti(L, 1, k);
        chains[k - 1] = to_chain(L, lua_gettop(L));
        if (chains[k - 1] == NULL) luaL_argerror(L, 1, lua_pushfstring(L, "chain %d is not an ik chain", k));
        lua_rawseti(L, -2, k);
    }
    size = ik_rig_size(count, chains);
    if (size == 0 || size > (size_t)-1 - sizeof(box)) luaL_argerror(L, 1, ik_status_string(IK_ERR_TOO_LARGE));
    b = (box *)ik_lua_newbox(L, sizeof(box) + size);
    b->head.core = NULL;
    b->head.tag = BOX_RIG;
    status = ik_rig_init(b + 1, size, chains, count, &rig, &culprit);
    if (status != IK_OK) {
        if (culprit >= 0) luaL_argerror(L, 1, lua_pushfstring(L, "chain %d: %s", culprit + 1, ik_status_string(status)));
        luaL_argerror(L, 1, ik_status_string(status));
    }
    b->head.core = rig;
    lua_pushvalue(L, RIG_MT);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -2); /* the list */
    ik_lua_setkept(L, lua_gettop(L) - 1);
    return 1;
}

static int rig_count(lua_State *L)
{
    lua_pushinteger(L, ik_rig_chain_count(check_rig(L, 1)));
    return 1;
}

static int rig_tostring(lua_State *L)
{
    ik_rig *rig = check_rig(L, 1);
    lua_pushfstring(L, "ik.rig(%d chain%s)", ik_rig_chain_count(rig), ik_rig_chain_count(rig) == 1 ? "" : "s");
    return 1;
}

static int rig_chain(lua_State *L)
{
    ik_rig *rig = check_rig(L, 1);
    int k = check_index(L, 2, ik_rig_chain_count(rig));
    ik_lua_getkept(L, 1);
    lua_rawgeti(L, -1, k + 1);
    return 1;
}

static int rig_configure(lua_State *L)
{
    ik_rig *rig = check_rig(L, 1);
    ik_rig_settings settings = *ik_rig_settings_of(rig);
    lua_settop(L, 2);
    check_input_table(L, 2);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        size_t len;
        const char *key = setting_key(L, &len);
        if (key_is(key, len, "iterations")) settings.iterations = setting_whole(L, key);
        else if (key_is(key, len, "tolerance")) settings.tolerance = setting_number(L, key);
        else if (key_is(key, len, "angle_tolerance")) settings.angle_tolerance = setting_number(L, key);
        else if (key_is(key, len, "solver")) {
            settings.solver = setting_solver(L);
            if (settings.solver != IK_SOLVER_FABRIK && settings.solver != IK_SOLVER_RELAX)
                luaL_argerror(L, 2, ik_status_string(IK_ERR_RIG_SOLVER));
        } else luaL_argerror(L, 2, lua_pushfstring(L, "unknown key '%s'", key));
        lua_pop(L, 1);
    }
    check_status(L, ik_rig_configure(rig, &settings), 2);
    lua_settop(L, 1);
    return 1;
}

static int rig_settings(lua_State *L)
{
    ik_rig *rig = check_rig(L, 1);
    const ik_rig_settings *s = ik_rig_settings_of(rig);
    out_table(L, 2, 0);
    lua_pushstring(L, ik_solver_name(s->solver));
    lua_setfield(L, 2, "solver");
    lua_pushinteger(L, s->iterations);
    lua_setfield(L, 2, "iterations");
    set_number(L, "tolerance", s->tolerance);
    set_number(L, "angle_tolerance", s->angle_tolerance);
    return 1;
}

static int rig_solve(lua_State *L)
{
    ik_rig *rig = check_rig(L, 1);
    ik_result result;
    check_no_more(L, 2, "no value expected (the goals are kept on the chains: set_target)");
    check_status(L, ik_rig_solve(rig, &result), 1);
    lua_pushboolean(L, result.reached);
    lua_pushnumber(L, result.distance);
    lua_pushinteger(L, result.iterations);
    return 3;
}

/* ---- the LuaJIT FFI path ---- */

/*
 * lua/ik/init.lua calls the core through LuaJIT's FFI where it can: a call from compiled
 * Lua then costs a few nanoseconds, where the C API costs about a hundred. It gets the
 * entry points from this table (declared the same in init.lua), so it needs no symbol
 * lookup, which LÖVE's loader would not allow. Every argument is checked in Lua before a
 * call, and anything the fast path does not take goes to the C API function of the same
 * name, so both paths accept, refuse and compute exactly the same.
 */
typedef struct ffi_api {
    ik_status (*solve)(ik_chain *, const ik_real *, ik_result *);
    ik_status (*solve_fabrik)(ik_chain *, const ik_real *, ik_result *);
    ik_status (*solve_ccd)(ik_chain *, const ik_real *, ik_result *);
    ik_status (*solve_relax)(ik_chain *, const ik_real *, ik_result *);
    ik_status (*solve_two_bone)(ik_chain *, const ik_real *, ik_result *);
    ik_status (*solve_aim)(ik_chain *, const ik_real *, ik_result *);
    const ik_real *(*positions)(ik_chain *);
    ik_status (*angle)(ik_chain *, int, ik_real *);
    ik_status (*world_angle)(ik_chain *, int, ik_real *);
    ik_status (*set_angle)(ik_chain *, int, ik_real);
    ik_status (*rotation)(ik_chain *, int, ik_real *);
    ik_status (*world_rotation)(ik_chain *, int, ik_real *);
    ik_status (*set_target)(ik_chain *, const ik_real *);
    int (*count)(const ik_chain *);
    int (*dim)(const ik_chain *);
    ik_status (*rig_solve)(ik_rig *, ik_result *);
    ik_status (*two_bone)(ik_real, ik_real, ik_real, ik_real, int, ik_real *, ik_real *, int *);
    ik_status (*solve_many)(ik_chain *const *, int, const ik_real *, int *, ik_result *, int *);
    void (*update)(ik_chain *);
} ffi_api;

static const ffi_api the_ffi_api = {
    ik_chain_solve, ik_chain_solve_fabrik, ik_chain_solve_ccd, ik_chain_solve_relax,
    ik_chain_solve_two_bone, ik_chain_solve_aim, ik_chain_positions, ik_chain2d_angle,
    ik_chain2d_world_angle, ik_chain2d_set_angle, ik_chain3d_rotation, ik_chain3d_world_rotation,
    ik_chain_set_target, ik_chain_bone_count, ik_chain_dim, ik_rig_solve, ik_two_bone, ik_solve_many,
    ik_chain_update
};

/* ik.core._ffi(): the table above (a light userdata), and the method tables to fill. */
static int mod_ffi(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)(size_t)&the_ffi_api);
    lua_getfield(L, CHAIN_MT, "__index");
    lua_getfield(L, RIG_MT, "__index");
    return 3;
}

/* ---- the stepping controller: ik.gait ---- */

static ik_gait *check_gait(lua_State *L, int arg)
{
    box *b = (box *)lua_touserdata(L, arg);
    int same = 0;
    if (b && !lua_islightuserdata(L, arg) && lua_getmetatable(L, arg)) {
        same = lua_rawequal(L, -1, GAIT_MT) && ik_lua_rawlen(L, arg) > sizeof(box) && b->head.tag == BOX_GAIT &&
               b->head.core == (void *)(b + 1) && ik_gait_check(b + 1, ik_lua_rawlen(L, arg) - sizeof(box));
        lua_pop(L, 1);
    }
    if (!same) type_error(L, arg, "ik gait");
    return (ik_gait *)b->head.core;
}

/* A gait's ground, called from the core during an update: the Lua function at stack index
   fn, under a pcall. When it fails, its error (or why its value is no height) is left on
   top of the stack, and the core's update, which then stops and changes nothing, hands it
   on. (lua_replace would do, but a Lua 5.2 build would then not load in 5.3 far enough
   to say it is the wrong build.) */
typedef struct ground_call {
    lua_State *L;
    int fn, dim;
} ground_call;

static int call_ground(void *user, ik_real x, ik_real z, ik_real *y)
{
    ground_call *g = (ground_call *)user;
    lua_State *L = g->L;
    lua_pushvalue(L, g->fn);
    lua_pushnumber(L, x);
    if (g->dim == 3) lua_pushnumber(L, z);
    if (lua_pcall(L, g->dim == 3 ? 2 : 1, 1, 0) != 0) return 0;
    if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(lua_tonumber(L, -1)) || fabs(lua_tonumber(L, -1)) > IK_MAX_COORD) {
        const char *got = lua_type(L, -1) == LUA_TNUMBER ? "a number out of range" : luaL_typename(L, -1);
        if (g->dim == 3)
            lua_pushfstring(L, "ik.gait: ground returned %s at x = %f, z = %f (a finite number expected: the height there)", got, x, z);
        else
            lua_pushfstring(L, "ik.gait: ground returned %s at x = %f (a finite number expected: the height there)", got, x);
        return 0;
    }
    *y = lua_tonumber(L, -1) + 0.0;
    lua_pop(L, 1);
    return 1;
}

/* The options table at index 2 read into o (stride required) and groups (leg k's group, or
   none: *has_groups 0); the ground function goes into the table at index 3 (the gait's
   kept table) as its field ground. */
static void read_gait_options(lua_State *L, int count, ik_gait_options *o, int *group_of, int *has_groups)
{
    int has_stride = 0, has_lift = 0, k;
    ik_real lift = 0;
    ik_status st;
    *o = ik_gait_default_options(1);
    *has_groups = 0;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        size_t len;
        const char *key = setting_key(L, &len);
        if (key_is(key, len, "stride")) {
            o->stride = setting_number(L, key), has_stride = 1;
        } else if (key_is(key, len, "step_time")) {
            o->step_time = setting_number(L, key);
        } else if (key_is(key, len, "lift")) {
            lift = setting_number(L, key), has_lift = 1;
        } else if (key_is(key, len, "lead")) {
            o->lead = setting_number(L, key);
        } else if (key_is(key, len, "max_groups")) {
            o->max_groups = setting_whole(L, key);
        } else if (key_is(key, len, "up")) {
            o->up = setting_whole(L, key);
        } else if (key_is(key, len, "ground")) {
            if (lua_type(L, -1) != LUA_TFUNCTION)
                luaL_argerror(L, 2, lua_pushfstring(L, "ground: function expected, got %s", luaL_typename(L, -1)));
            lua_pushvalue(L, -1);
            lua_setfield(L, 3, "ground");
        } else if (key_is(key, len, "groups")) {
            size_t groups;
            int j, i;
            if (lua_type(L, -1) != LUA_TTABLE || is_proxy(L, lua_gettop(L)))
                luaL_argerror(L, 2, "groups: a plain table of arrays of leg numbers expected");
            groups = ik_lua_rawlen(L, -1);
            for (k = 0; k < count; k++) group_of[k] = -1;
            for (j = 1; (size_t)j <= groups; j++) {
                size_t size = 0;
                lua_rawgeti(L, -1, j);
                if (lua_type(L, -1) == LUA_TTABLE && !is_proxy(L, lua_gettop(L))) size = ik_lua_rawlen(L, -1);
                if (size == 0)
                    luaL_argerror(L, 2, lua_pushfstring(L, "groups: group %d is not a plain array of leg numbers", j));
                for (i = 1; (size_t)i <= size; i++) {
                    lua_Number v;
                    lua_rawgeti(L, -1, i);
                    v = lua_tonumber(L, -1);
                    if (lua_type(L, -1) != LUA_TNUMBER || !is_whole(v) || v < 1 || v > count)
                        luaL_argerror(L, 2, lua_pushfstring(L, "groups: group %d holds no leg number in 1..%d", j, count));
                    if (group_of[(int)v - 1] >= 0)
                        luaL_argerror(L, 2, lua_pushfstring(L, "groups: leg %d is in more than one group", (int)v));
                    group_of[(int)v - 1] = j - 1;
                    lua_pop(L, 1);
                }
                lua_pop(L, 1);
            }
            for (k = 0; k < count; k++)
                if (group_of[k] < 0) luaL_argerror(L, 2, lua_pushfstring(L, "groups: leg %d is in no group", k + 1));
            *has_groups = 1;
        } else {
            luaL_argerror(L, 2, lua_pushfstring(L, "unknown key '%s'", key));
        }
        lua_pop(L, 1);
    }
    if (!has_stride) luaL_argerror(L, 2, "stride: a number > 0 is required");
    o->lift = has_lift ? lift : IK_DEFAULT_LIFT * o->stride;
    st = ik_gait_validate(o);
    if (st != IK_OK) luaL_argerror(L, 2, ik_status_string(st));
}

static int mod_gait(lua_State *L)
{
    ik_chain *stack_legs[SOLVE_BLOCK], **legs = stack_legs;
    int stack_groups[SOLVE_BLOCK], *group_of = stack_groups, count, k, has_groups;
    size_t raw_count, size;
    ik_gait_options options;
    ik_gait *gait;
    ik_status st;
    box *b;
    lua_settop(L, 2);
    check_input_table(L, 1);
    check_input_table(L, 2);
    raw_count = ik_lua_rawlen(L, 1);
    if (raw_count < 1) luaL_argerror(L, 1, "at least one leg expected");
    if (raw_count > IK_MAX_BONES) luaL_argerror(L, 1, "too many legs");
    count = (int)raw_count;
    lua_createtable(L, count, 1); /* 3: what the gait keeps: its legs, its ground */
    if (count > SOLVE_BLOCK) {    /* 4, 5: room for many legs, on the stack until the end */
        legs = (ik_chain **)ik_lua_newuserdata(L, (size_t)count * sizeof *legs);
        group_of = (int *)ik_lua_newuserdata(L, (size_t)count * sizeof *group_of);
    }
    read_gait_options(L, count, &options, group_of, &has_groups);
    for (k = 1; k <= count; k++) {
        lua_rawgeti(L, 1, k);
        legs[k - 1] = to_chain(L, lua_gettop(L));
        if (legs[k - 1] == NULL) luaL_argerror(L, 1, lua_pushfstring(L, "leg %d is not an ik chain", k));
        if (ik_chain_dim(legs[k - 1]) != ik_chain_dim(legs[0]))
            luaL_argerror(L, 1, lua_pushfstring(L, "leg %d: %s", k, ik_status_string(IK_ERR_DIMENSION)));
        lua_rawseti(L, 3, k);
    }
    size = ik_gait_size(count);
    if (size == 0 || size > (size_t)-1 - sizeof(box)) luaL_argerror(L, 1, ik_status_string(IK_ERR_TOO_LARGE));
    b = (box *)ik_lua_newbox(L, sizeof(box) + size);
    b->head.core = NULL;
    b->head.tag = BOX_GAIT;
    st = ik_gait_init(b + 1, size, legs, count, has_groups ? group_of : NULL, &options, &gait);
    if (st == IK_ERR_GROUPS) luaL_argerror(L, 1, "a leg is in the array twice");
    check_status(L, st, st == IK_ERR_COUNT || st == IK_ERR_DIMENSION ? 1 : 2);
    b->head.core = gait;
    lua_pushvalue(L, GAIT_MT);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, 3);
    ik_lua_setkept(L, lua_gettop(L) - 1);
    return 1;
}

static int gait_update(lua_State *L)
{
    ik_gait *gait = check_gait(L, 1);
    lua_Number dt = check_number(L, 2);
    ground_call call;
    ik_status st;
    if (!(isfinite(dt) && dt > 0)) luaL_argerror(L, 2, ik_status_string(IK_ERR_TIME_STEP));
    check_no_more(L, 3, "no value expected (update takes dt)");
    lua_settop(L, 2);
    ik_lua_getkept(L, 1);
    lua_getfield(L, 3, "ground"); /* 4 */
    call.L = L, call.fn = 4, call.dim = ik_chain_dim(ik_gait_leg_chain(gait, 0));
    ik_gait_set_ground(gait, lua_isnil(L, 4) ? NULL : call_ground, &call);
    st = ik_gait_update(gait, (ik_real)dt);
    ik_gait_set_ground(gait, NULL, NULL);
    if (st == IK_ERR_GROUND) return lua_error(L); /* what the ground left on top */
    if (st != IK_OK) return luaL_error(L, "ik.gait: %s", ik_status_string(st));
    return 0;
}

static int gait_foot(lua_State *L)
{
    ik_gait *gait = check_gait(L, 1);
    int k = check_index(L, 2, ik_gait_count(gait)), stepping, d, dim = ik_chain_dim(ik_gait_leg_chain(gait, 0));
    ik_real p[3], progress;
    ik_gait_foot(gait, k, p, &stepping, &progress);
    for (d = 0; d < dim; d++) lua_pushnumber(L, p[d]);
    lua_pushboolean(L, stepping);
    lua_pushnumber(L, progress);
    return dim + 2;
}

static int gait_reset(lua_State *L)
{
    ik_gait_reset(check_gait(L, 1));
    return 0;
}

static int gait_count(lua_State *L)
{
    lua_pushinteger(L, ik_gait_count(check_gait(L, 1)));
    return 1;
}

static int gait_tostring(lua_State *L)
{
    ik_gait *gait = check_gait(L, 1);
    lua_pushfstring(L, "ik.gait(%d leg%s)", ik_gait_count(gait), ik_gait_count(gait) == 1 ? "" : "s");
    return 1;
}

/* ---- registration ---- */

static const luaL_Reg chain_methods[] = {
    {"count", chain_count},
    {"dim", chain_dim},
    {"reach", chain_reach},
    {"joint", chain_joint},
    {"effector", chain_effector},
    {"positions", chain_positions},
    {"set_points", chain_set_points},
    {"length", chain_length},
    {"set_length", chain_set_length},
    {"weight", chain_weight},
    {"set_weight", chain_set_weight},
    {"base", chain_base},
    {"set_base", chain_set_base},
    {"angle", chain_angle},
    {"set_angle", chain_set_angle},
    {"world_angle", chain_world_angle},
    {"angles", chain_angles2d},
    {"set_angles", chain_set_angles2d},
    {"rotation", chain_rotation},
    {"set_rotation", chain_set_rotation},
    {"world_rotation", chain_world_rotation},
    {"rotations", chain_rotations},
    {"set_rotations", chain_set_rotations},
    {"set_limit", chain_set_limit},
    {"limit", chain_limit},
    {"set_hinge", chain_set_hinge},
    {"set_cone", chain_set_cone},
    {"set_twist", chain_set_twist},
    {"clear_limit", chain_clear_limit},
    {"stretch_factor", chain_stretch_factor},
    {"configure", chain_configure},
    {"settings", chain_settings},
    {"set_target", chain_set_target},
    {"target", chain_target},
    {"goal_error", chain_goal_error},
    {"clear_target", chain_clear_target},
    {"set_target_angle", chain_set_target_angle},
    {"target_angle", chain_target_angle},
    {"set_target_rotation", chain_set_target_rotation},
    {"target_rotation", chain_target_rotation},
    {"solve", chain_solve},
    {"solve_fabrik", chain_solve_fabrik},
    {"solve_ccd", chain_solve_ccd},
    {"solve_relax", chain_solve_relax},
    {"solve_two_bone", chain_solve_two_bone},
    {"solve_aim", chain_solve_aim},
    {"attach", chain_attach},
    {"detach", chain_detach},
    {"parent", chain_parent},
    {"attach_tip", chain_attach_tip},
    {"detach_tip", chain_detach_tip},
    {"tip_parent", chain_tip_parent},
    {"clone", chain_clone},
    {"drag", chain_drag},
    {"simulate", chain_simulate},
    {"set_rest", chain_set_rest},
    {NULL, NULL}
};

static const luaL_Reg chain_metamethods[] = {
    {"__len", chain_count},
    {"__tostring", chain_tostring},
    {NULL, NULL}
};

static const luaL_Reg rig_methods[] = {
    {"count", rig_count},
    {"chain_count", rig_count},
    {"chain", rig_chain},
    {"configure", rig_configure},
    {"settings", rig_settings},
    {"solve", rig_solve},
    {NULL, NULL}
};

static const luaL_Reg gait_methods[] = {
    {"update", gait_update},
    {"foot", gait_foot},
    {"reset", gait_reset},
    {"count", gait_count},
    {NULL, NULL}
};

static const luaL_Reg gait_metamethods[] = {
    {"__len", gait_count},
    {"__tostring", gait_tostring},
    {NULL, NULL}
};

static const luaL_Reg rig_metamethods[] = {
    {"__len", rig_count},
    {"__tostring", rig_tostring},
    {NULL, NULL}
};

static const luaL_Reg module_functions[] = {
    {"two_bone", mod_two_bone},
    {"two_bone_joint", mod_two_bone_joint},
    {"two_bone_middle", mod_two_bone_middle},
    {"two_bone_middle3", mod_two_bone_middle3},
    {"two_bone_joint3", mod_two_bone_joint3},
    {"soft_distance", mod_soft_distance},
    {"chain2d", mod_chain2d},
    {"chain3d", mod_chain3d},
    {"chain2d_points", mod_chain2d_points},
    {"chain3d_points", mod_chain3d_points},
    {"solve_many", mod_solve_many},
    {"rig", mod_rig},
    {"gait", mod_gait},
    {"_ffi", mod_ffi},
    {NULL, NULL}
};

/* The number of upvalues every function has: the chain metatable and the rig metatable. */
#define UPVALUES 3

/* Pushes the upvalues. */
static void push_upvalues(lua_State *L, int chain_mt, int rig_mt)
{
    lua_pushvalue(L, chain_mt);
    lua_pushvalue(L, rig_mt);
    lua_pushvalue(L, rig_mt + 1); /* the gait's, made right after the rig's */
}

/* A metatable at index mt: methods in __index, metamethods, protected under the name. */
static void fill_metatable(lua_State *L, int mt, const luaL_Reg *methods, const luaL_Reg *meta,
                           const char *name, int chain_mt, int rig_mt)
{
    lua_newtable(L);
    push_upvalues(L, chain_mt, rig_mt);
    luaL_setfuncs(L, methods, UPVALUES);
    lua_setfield(L, mt, "__index");
    lua_pushvalue(L, mt);
    push_upvalues(L, chain_mt, rig_mt);
    luaL_setfuncs(L, meta, UPVALUES);
    lua_pop(L, 1);
    lua_pushstring(L, name);
    lua_setfield(L, mt, "__metatable");
    lua_pushstring(L, name);
    lua_setfield(L, mt, "__name");
}

int luaopen_ik_core(lua_State *L);

int luaopen_ik_core(lua_State *L)
{
    ik_lua_check_version(L);
    int chain_mt, rig_mt;
    lua_newtable(L);
    chain_mt = lua_gettop(L);
    lua_newtable(L);
    rig_mt = lua_gettop(L);
    lua_newtable(L); /* the gait's: rig_mt + 1 */

    fill_metatable(L, chain_mt, chain_methods, chain_metamethods, "ik.chain", chain_mt, rig_mt);
    fill_metatable(L, rig_mt, rig_methods, rig_metamethods, "ik.rig", chain_mt, rig_mt);
    fill_metatable(L, rig_mt + 1, gait_methods, gait_metamethods, "ik.gait", chain_mt, rig_mt);

    lua_createtable(L, 0, 16);
    push_upvalues(L, chain_mt, rig_mt);
    luaL_setfuncs(L, module_functions, UPVALUES);
    lua_pushliteral(L, "ik " IK_VERSION);
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "c"); /* the pure-Lua backend's is "lua" (lua/ik/pure) */
    lua_setfield(L, -2, "backend");
    return 1;
}
