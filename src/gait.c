/*
 * gait.c - a stepping controller: feet planted on the ground that step, in groups that take
 * turns, to keep under a moving body (ik_gait_*). It moves no bone itself: each update
 * sets every leg's goal to its foot, and the caller solves the legs (a rig, or each chain).
 *
 * Up is +y (or -y, for a y-down screen: the option up). Each leg's home is where its tip was when the gait was made, kept in its base
 * frame (for a leg attached to a body, the frame of the body's bone it hangs on). A
 * planted foot stays where it is; once it is farther than stride from its home (measured
 * across the ground: x in 2D, x and z in 3D), its group steps when its turn comes: the
 * feet rise on an arc to a landing point lead * stride past the home along the home's
 * motion, which follows the home until they land, at the ground's height there.
 */
#include "chain.h"

#include <stdlib.h>
#include <string.h>

typedef struct ik_gait_leg {
    ik_chain *chain;
    ik_vec3 home_local; /* the home in the leg's base frame */
    ik_vec3 home;       /* in the world, at the last update */
    ik_vec3 foot;       /* in the world */
    ik_vec3 from, to;   /* a step's lift-off and landing points */
    ik_real progress;   /* 0 to 1 through a step */
    int stepping;
    int group;
} ik_gait_leg;

/* "ikgt": the first word of every gait. */
#define IK_GAIT_MAGIC 0x696b6774u

struct ik_gait {
    unsigned magic;
    int count, groups, dim;
    ik_gait_options options;
    ik_gait_leg *leg;  /* [count] */
    ik_gait_leg *next; /* [count]: an update's new state, kept only when all of it is good */
    ik_real *far;      /* [count]: per group, its farthest foot's distance from home */
    ik_real *since;    /* [count]: per group, how long its farthest foot has been past stride */
    ik_real *room;     /* [count]: how long each free place in the air has been free */
};

#define GAIT_HEADER ((sizeof(struct ik_gait) + 15u) / 16u * 16u)

ik_gait_options ik_gait_default_options(ik_real stride)
{
    ik_gait_options o;
    memset(&o, 0, sizeof o);
    o.stride = stride;
    o.step_time = IK_DEFAULT_STEP_TIME;
    o.lift = IK_DEFAULT_LIFT * stride;
    o.lead = IK_DEFAULT_LEAD;
    o.max_groups = 1;
    o.up = 1;
    o.ground = NULL;
    o.user = NULL;
    return o;
}

size_t ik_gait_size(int count)
{
    if (count < 1 || (size_t)count > ((size_t)-1 - GAIT_HEADER) / (2 * sizeof(ik_gait_leg) + 3 * sizeof(ik_real)))
        return 0;
    return GAIT_HEADER + (size_t)count * (2 * sizeof(ik_gait_leg) + 3 * sizeof(ik_real));
}

static int in_range(ik_real v) { return isfinite(v) && fabs(v) <= IK_MAX_COORD; }

ik_status ik_gait_validate(const ik_gait_options *o)
{
    if (!(in_range(o->stride) && o->stride > 0)) return IK_ERR_STRIDE;
    if (!(in_range(o->step_time) && o->step_time > 0)) return IK_ERR_STEP_TIME;
    if (!(in_range(o->lift) && o->lift >= 0)) return IK_ERR_LIFT;
    if (!(isfinite(o->lead) && o->lead >= 0 && o->lead * o->stride <= IK_MAX_COORD)) return IK_ERR_LEAD;
    if (o->max_groups < 1) return IK_ERR_MAX_GROUPS;
    if (o->up != 1 && o->up != -1) return IK_ERR_UP;
    return IK_OK;
}

/* The leg's base frame applied to a local point, and undone. */
static ik_vec3 to_world(const ik_chain *c, ik_vec3 p)
{
    if (c->dim == 2) {
        ik_vec2 r = ik_v2_rotate(ik_v2(p.x, p.y), c->base_turn);
        return ik_v3(c->base.x + r.x, c->base.y + r.y, 0);
    }
    return ik_v3_add(c->base, ik_q_rotate(c->base_rot, p));
}

static ik_vec3 to_local(const ik_chain *c, ik_vec3 p)
{
    ik_vec3 d = ik_v3_sub(p, c->base);
    if (c->dim == 2) {
        ik_vec2 r = ik_v2_unrotate(ik_v2(d.x, d.y), c->base_turn);
        return ik_v3(r.x, r.y, 0);
    }
    return ik_q_rotate(ik_q_conj(c->base_rot), d);
}

/* The leg's home in the world now (its base brought up to date with its parents). */
static ik_vec3 home_now(ik_gait_leg *leg)
{
    ik_chain_follow(leg->chain);
    return to_world(leg->chain, leg->home_local);
}

ik_status ik_gait_init(void *memory, size_t size, ik_chain *const *legs, int count, const int *groups,
                       const ik_gait_options *options, ik_gait **out)
{
    ik_gait *g = (ik_gait *)memory;
    ik_status st;
    int k, j, most = -1;
    if (count < 1) return IK_ERR_COUNT;
    if (memory == NULL || ik_gait_size(count) == 0 || size < ik_gait_size(count)) return IK_ERR_TOO_LARGE;
    st = ik_gait_validate(options);
    if (st != IK_OK) return st;
    for (k = 0; k < count; k++) {
        if (legs[k]->dim != legs[0]->dim) return IK_ERR_DIMENSION;
        for (j = 0; j < k; j++)
            if (legs[j] == legs[k]) return IK_ERR_GROUPS; /* a leg twice */
        if (groups) {
            if (groups[k] < 0 || groups[k] >= count) return IK_ERR_GROUPS;
            if (groups[k] > most) most = groups[k];
        }
    }
    if (groups) { /* every group from 0 to the last has a leg */
        for (j = 0; j <= most; j++) {
            for (k = 0; k < count && groups[k] != j; k++) {}
            if (k == count) return IK_ERR_GROUPS;
        }
    }

    memset(g, 0, ik_gait_size(count));
    g->magic = IK_GAIT_MAGIC;
    g->count = count;
    g->groups = groups ? most + 1 : count;
    g->dim = legs[0]->dim;
    g->options = *options;
    g->leg = (ik_gait_leg *)((unsigned char *)g + GAIT_HEADER);
    g->next = g->leg + count;
    g->far = (ik_real *)(g->next + count);
    g->since = g->far + count;
    g->room = g->since + count;
    for (k = 0; k < count; k++) {
        ik_gait_leg *leg = &g->leg[k];
        ik_chain *c = legs[k];
        leg->chain = c;
        leg->group = groups ? groups[k] : k;
        ik_chain_update(c);
        leg->home_local = to_local(c, ik_joint_v3(c, c->n));
    }
    ik_gait_reset(g);
    *out = g;
    return IK_OK;
}

ik_gait *ik_gait_create(ik_chain *const *legs, int count, const int *groups, const ik_gait_options *options,
                        ik_status *status)
{
    size_t size = ik_gait_size(count);
    void *memory = size ? malloc(size) : NULL;
    ik_gait *g = NULL;
    ik_status st = count < 1 ? IK_ERR_COUNT : size == 0 ? IK_ERR_TOO_LARGE : memory ? IK_OK : IK_ERR_NO_MEMORY;
    if (st == IK_OK) st = ik_gait_init(memory, size, legs, count, groups, options, &g);
    if (st != IK_OK) {
        free(memory);
        g = NULL;
    }
    if (status) *status = st;
    return g;
}

void ik_gait_destroy(ik_gait *gait) { free(gait); }

int ik_gait_count(const ik_gait *gait) { return gait->count; }

void ik_gait_set_ground(ik_gait *gait, ik_ground_fn ground, void *user)
{
    gait->options.ground = ground;
    gait->options.user = user;
}

int ik_gait_check(const void *memory, size_t size)
{
    const ik_gait *g = (const ik_gait *)memory;
    return memory && size >= GAIT_HEADER && g->magic == IK_GAIT_MAGIC && g->count >= 1 &&
           size >= ik_gait_size(g->count) && g->leg == (const ik_gait_leg *)((const unsigned char *)g + GAIT_HEADER);
}

void ik_gait_reset(ik_gait *g)
{
    int k;
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &g->leg[k];
        leg->home = home_now(leg);
        leg->foot = leg->from = leg->to = leg->home;
        leg->progress = 0;
        leg->stepping = 0;
    }
}

/* The distance across the ground (x in 2D; x and z in 3D) from a to b. */
static ik_real across(const ik_gait *g, ik_vec3 a, ik_vec3 b)
{
    ik_real dx = b.x - a.x, dz = g->dim == 3 ? b.z - a.z : 0;
    return g->dim == 3 ? hypot(dx, dz) : fabs(dx);
}

/* Where a step lands with the home at `at`: lead * stride past it along the home's motion
   across the ground since the last update (from before to home), at the ground's height. */
static int landing(const ik_gait *g, ik_vec3 at, ik_vec3 home, ik_vec3 before, ik_vec3 *out)
{
    const ik_gait_options *o = &g->options;
    ik_vec3 move = ik_v3(home.x - before.x, 0, g->dim == 3 ? home.z - before.z : 0);
    ik_vec3 to = ik_v3_add(at, ik_v3_scale(ik_v3_normalize_or(move, ik_v3(0, 0, 0)), o->lead * o->stride));
    if (o->ground) {
        ik_real y = 0;
        if (!o->ground(o->user, to.x, g->dim == 3 ? to.z : 0, &y) || !in_range(y)) return 0;
        to.y = y + 0.0;
    }
    *out = to;
    return 1;
}

/* The foot through a step: along the line from lift-off to landing, raised lift at the
   middle (a parabola). */
static ik_vec3 on_arc(const ik_gait *g, const ik_gait_leg *leg)
{
    ik_real s = leg->progress;
    ik_vec3 p = ik_v3_add(leg->from, ik_v3_scale(ik_v3_sub(leg->to, leg->from), s));
    p.y += g->options.up * g->options.lift * 4 * s * (1 - s);
    return p;
}

static int within(const ik_gait *g, ik_vec3 p)
{
    return in_range(p.x) && in_range(p.y) && (g->dim == 2 || in_range(p.z));
}

/*
 * Events between two updates happen at their own time, not at the update's: a foot that
 * lands early in the frame frees its place in the air then, and a group that steps starts
 * from when its foot passed stride (the home's motion across the ground tells when) or its
 * place came free, whichever is later. So the walk is the same at 30 Hz as at 144.
 */
ik_status ik_gait_update(ik_gait *g, ik_real dt)
{
    const ik_gait_options *o = &g->options;
    ik_gait_leg *next = g->next;
    ik_real advance;
    int k, j, in_air = 0, rooms = 0;
    if (isnan(dt) || !(dt > 0) || !isfinite(dt)) return IK_ERR_TIME_STEP;
    for (k = 0; k < g->count; k++) /* a held tip's goal is its hold: no foot to set */
        if (g->leg[k].chain->tip_parent) return IK_ERR_HELD;
    advance = dt / o->step_time;
    memcpy(next, g->leg, (size_t)g->count * sizeof *next);

    /* Places in the air free for the whole update. */
    for (j = 0; j < g->groups; j++) g->far[j] = 0;
    for (k = 0; k < g->count; k++)
        if (next[k].stepping) g->far[next[k].group] = -1;
    for (j = 0; j < g->groups; j++) in_air += g->far[j] < 0;
    for (; rooms < o->max_groups - in_air && rooms < g->count; rooms++) g->room[rooms] = dt;

    /* The feet in the air move on; those at the end of their step land, freeing a place. */
    for (j = 0; j < g->groups; j++) g->since[j] = -1; /* a group's landing time, once */
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &next[k];
        ik_vec3 before = leg->home;
        leg->home = home_now(leg);
        if (!within(g, leg->home)) return IK_ERR_RANGE;
        if (!leg->stepping) continue;
        leg->progress += advance;
        if (leg->progress >= 1) { /* down `ago` seconds ago, where the home was then */
            ik_real ago = fmin((leg->progress - 1) * o->step_time, dt);
            ik_vec3 then = ik_v3_sub(leg->home, ik_v3_scale(ik_v3_sub(leg->home, before), ago / dt));
            if (!landing(g, then, leg->home, before, &leg->to)) return IK_ERR_GROUND;
            leg->foot = leg->to;
            leg->progress = 0;
            leg->stepping = 0;
            if (g->since[leg->group] < 0) g->since[leg->group] = ago;
        } else {
            if (!landing(g, leg->home, leg->home, before, &leg->to)) return IK_ERR_GROUND;
            leg->foot = on_arc(g, leg);
        }
    }
    for (j = 0; j < g->groups; j++)
        if (g->since[j] >= 0 && rooms < g->count) g->room[rooms++] = g->since[j];

    /* How far each group on the ground is from home, and since when past stride. */
    for (j = 0; j < g->groups; j++) g->far[j] = 0, g->since[j] = 0;
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &next[k];
        ik_real d = across(g, leg->foot, leg->home);
        if (leg->stepping) {
            g->far[leg->group] = -1;
        } else if (g->far[leg->group] >= 0 && d > g->far[leg->group]) {
            ik_real speed = across(g, g->leg[k].home, leg->home) / dt;
            g->far[leg->group] = d;
            g->since[leg->group] = speed > 0 ? fmin((d - o->stride) / speed, dt) : dt;
        }
    }

    /* While a place is free, the group whose foot is farthest past stride steps, from the
       later of when it passed stride and when the place (the longest free) came free. */
    while (rooms > 0) {
        int best = -1, oldest = 0;
        ik_real credit;
        /* (farther by more than rounding: feet as far as each other go in the groups' order,
           the same at every frame rate) */
        for (j = 0; j < g->groups; j++)
            if (g->far[j] > o->stride && (best < 0 || g->far[j] > g->far[best] + 1e-9 * o->stride)) best = j;
        if (best < 0) break;
        for (j = 1; j < rooms; j++)
            if (g->room[j] > g->room[oldest]) oldest = j;
        credit = fmin(g->since[best], g->room[oldest]);
        g->room[oldest] = g->room[--rooms];
        for (k = 0; k < g->count; k++) {
            ik_gait_leg *leg = &next[k];
            if (leg->group != best) continue;
            leg->stepping = 1;
            leg->progress = fmin(credit / o->step_time, 1);
            leg->from = leg->foot;
            if (!landing(g, leg->home, leg->home, g->leg[k].home, &leg->to)) return IK_ERR_GROUND;
            if (leg->progress >= 1) { /* a step shorter than the time since: it is down */
                leg->foot = leg->to;
                leg->progress = 0;
                leg->stepping = 0;
            } else {
                leg->foot = on_arc(g, leg);
            }
        }
        g->far[best] = -1;
    }
    for (k = 0; k < g->count; k++)
        if (!within(g, next[k].foot) || !within(g, next[k].to)) return IK_ERR_RANGE;

    /* All of it is good: kept, and every leg's goal is its foot. */
    memcpy(g->leg, next, (size_t)g->count * sizeof *next);
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &g->leg[k];
        ik_real t[3];
        t[0] = leg->foot.x, t[1] = leg->foot.y, t[2] = leg->foot.z;
        ik_chain_set_target(leg->chain, t);
    }
    return IK_OK;
}

ik_status ik_gait_foot(const ik_gait *g, int k, ik_real out[3], int *stepping, ik_real *progress)
{
    const ik_gait_leg *leg;
    if (k < 0 || k >= g->count) return IK_ERR_INDEX;
    leg = &g->leg[k];
    out[0] = leg->foot.x, out[1] = leg->foot.y, out[2] = g->dim == 3 ? leg->foot.z : 0;
    if (stepping) *stepping = leg->stepping;
    if (progress) *progress = leg->stepping ? leg->progress : 0;
    return IK_OK;
}

ik_chain *ik_gait_leg_chain(const ik_gait *g, int k)
{
    return k >= 0 && k < g->count ? g->leg[k].chain : NULL;
}
