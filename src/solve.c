/*
 * solve.c - what every solve does around its solver: the target check, stretch and
 * softness on the way in; the limits' last word and mix on the way out; and the escape
 * from lock-ups that the iterative solvers call.
 *
 * The order of a solve: check everything (a rejected call changes nothing); remember the
 * pose for mix; stretch (a target out of reach scales the bones and straightens the chain,
 * and no solver runs) or else soften the target; run the solver towards the (softened)
 * target; bring every bone within its limits; blend with the remembered pose; report the
 * distance to the real target.
 */
#include "chain.h"

/* ---- the way in ---- */

static ik_status check_target(const ik_chain *c, const ik_real *target, ik_vec3 *t)
{
    ik_status st = ik_check_coords(target, c->dim);
    if (st != IK_OK) return st;
    *t = ik_v3(target[0], target[1], c->dim == 3 ? target[2] : 0);
    return IK_OK;
}

static ik_real total_length(const ik_chain *c)
{
    ik_real total = 0;
    int i;
    for (i = 0; i < c->n; i++) total += c->length[i];
    return total;
}

ik_real ik_soft_distance(ik_real d, ik_real reach, ik_real softness)
{
    /* The ease begins at reach - softness (or at the base, for a softness beyond reach). */
    ik_real start = reach - softness, span = softness;
    if (start < 0) start = 0, span = reach;
    if (!(span > 0) || !(d > start)) return d;
    /* Written from the reach down, so rounding can never put the result beyond it. */
    return reach - span * exp(-(d - start) / span);
}

/* Every bone along the base->target line (within its limits). */
static void straighten(ik_chain *c, ik_vec3 target)
{
    ik_aim parent = ik_aim_start(c);
    ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(target, c->joint[0]), c->dir[0]);
    int i;
    for (i = 0; i < c->n; i++) ik_aim_bone(c, i, c->length[i] > 0 ? dir : c->dir[i], &parent);
    c->stale_from = 0;
    ik_chain_update(c);
}

static void save_pose(ik_chain *c)
{
    int i;
    for (i = 0; i < c->n; i++) {
        if (c->dim == 2) {
            c->prev_turn[i] = c->turn[i];
            c->prev_angle[i] = c->angle[i];
        } else {
            c->prev_rot[i] = c->rot[i];
        }
    }
}

/* ---- the way out ---- */

/* The local pose moved the fraction mix of the way from the remembered pose to the new one. */
static void mix_pose(ik_chain *c, ik_real mix)
{
    int i;
    for (i = 0; i < c->n; i++) {
        if (mix == 0) { /* exactly the pose before, angles and all */
            if (c->dim == 2) {
                c->turn[i] = c->prev_turn[i];
                c->angle[i] = c->prev_angle[i];
            } else {
                c->rot[i] = c->prev_rot[i];
            }
        } else if (c->dim == 2) {
            ik_real from = c->prev_angle[i], to = ik_chain_angle(c, i);
            if (from != from) from = atan2(c->prev_turn[i].y, c->prev_turn[i].x);
            /* A limited bone moves inside its range; others take the shorter way round. */
            ik_chain_set_turn_angle(c, i, c->limit[i].flags ? from + mix * (to - from)
                                                            : from + mix * ik_wrap_angle(to - from));
        } else {
            c->rot[i] = ik_q_slerp(c->prev_rot[i], c->rot[i], mix);
        }
    }
    /* The pose before may have been beyond the limits: they win over mix too. */
    ik_chain_clamp_limits(c);
    c->stale_from = 0;
}

/*
 * 3D position-based solves promise that each bone's new world rotation is the smallest
 * turn from its direction before the call to its new one, applied to its world rotation
 * before the call. An escape bend in between would leave the bend's own turn in the
 * twist, so after one the rotations are rebuilt from the remembered pose that way (within
 * the limits, which win).
 */
static void restore_twist(ik_chain *c)
{
    ik_quat before_parent = c->base_rot, parent = c->base_rot;
    int i;
    ik_chain_update(c);
    for (i = 0; i < c->n; i++) {
        ik_quat before = ik_q_mul(before_parent, c->prev_rot[i]);
        ik_quat world = ik_q_mul(ik_q_from_to(ik_q_x_axis(before), c->dir[i]), before);
        ik_quat local = ik_q_normalize(ik_q_mul(ik_q_conj(parent), world));
        c->rot[i] = ik_limit_rotation(&c->limit[i], local);
        parent = ik_q_normalize(ik_q_mul(parent, c->rot[i]));
        before_parent = before;
    }
    c->stale_from = 0;
}

typedef void (*solver_fn)(ik_chain *, ik_vec3, ik_result *);

/*
 * The way in, for a checked target t: remembers the pose, then either stretches (the
 * chain is solved: returns 0) or sets *aim, the (softened) target the solver is to reach,
 * and returns 1.
 */
static int way_in(ik_chain *c, ik_vec3 t, ik_vec3 *aim)
{
    const ik_settings *s = &c->settings;
    ik_real reach, d;
    ik_chain_update(c);
    save_pose(c);
    c->kicked = 0;
    reach = total_length(c);
    d = ik_v3_len(ik_v3_sub(t, c->joint[0]));
    if (s->stretch && d > reach && reach > 0) {
        c->scale = d / reach;
        straighten(c, t);
        return 0;
    }
    if (c->scale != 1) { /* back to the bones' own lengths */
        c->scale = 1;
        c->stale_from = 0;
        ik_chain_update(c);
    }
    *aim = t;
    if (!s->stretch && s->softness > 0 && d > 0)
        *aim = ik_v3_add(c->joint[0], ik_v3_scale(ik_v3_sub(t, c->joint[0]),
                                                  ik_soft_distance(d, reach, s->softness) / d));
    return 1;
}

/* The way out: twist after an escape (position-based solvers), the limits, mix, the result. */
static void way_out(ik_chain *c, ik_vec3 t, int iterations, int position_based, ik_result *out)
{
    if (c->kicked && c->dim == 3 && position_based) restore_twist(c);
    ik_chain_clamp_limits(c);
    if (c->settings.mix < 1) mix_pose(c, c->settings.mix);
    c->stale_from = 0;
    ik_chain_finish(c, t, iterations, out);
}

static ik_status run(ik_chain *c, const ik_real *target, ik_result *out, solver_fn solve)
{
    ik_vec3 t, aim;
    ik_result r;
    ik_status st = check_target(c, target, &t);
    if (st != IK_OK) return st;
    if (solve == ik_two_bone_chain && c->n != 2) return IK_ERR_NOT_TWO_BONE;
    r.iterations = 1;
    if (way_in(c, t, &aim)) solve(c, aim, &r);
    way_out(c, t, r.iterations, solve != ik_ccd, out);
    return IK_OK;
}

ik_status ik_chain_solve_fabrik(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_fabrik);
}

ik_status ik_chain_solve_ccd(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_ccd);
}

ik_status ik_chain_solve_relax(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_relax);
}

ik_status ik_chain_solve_two_bone(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_two_bone_chain);
}

static const solver_fn solvers[] = {ik_fabrik, ik_ccd, ik_relax, ik_two_bone_chain};

ik_status ik_chain_solve(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, solvers[c->settings.solver]);
}

/*
 * A batch: FABRIK solves of chains without limits, run interleaved (ik_fabrik_batch) so
 * the independent chains' square roots and divisions overlap. Each chain is solved exactly
 * as ik_chain_solve would: the same way in and out, the same arithmetic in the same order.
 */
typedef struct batch {
    int count;
    ik_chain *chain[IK_BATCH];
    ik_vec3 target[IK_BATCH], aim[IK_BATCH];
    ik_result result[IK_BATCH];
} batch;

static int flush(batch *b)
{
    int k, reached = 0;
    ik_fabrik_batch(b->chain, b->aim, b->count, b->result);
    for (k = 0; k < b->count; k++) {
        way_out(b->chain[k], b->target[k], b->result[k].iterations, 1, &b->result[k]);
        reached += b->result[k].reached;
    }
    b->count = 0;
    return reached;
}

ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, int *failed)
{
    int k, j, reached = 0, dim = count > 0 ? chains[0]->dim : 2;
    ik_vec3 t;
    ik_result r;
    batch b;
    for (k = 0; k < count; k++) {
        ik_status st = chains[k]->dim != dim
                           ? IK_ERR_DIMENSION
                           : check_target(chains[k], targets + (size_t)k * (size_t)dim, &t);
        if (st != IK_OK) {
            if (failed) *failed = k;
            return st;
        }
    }
    b.count = 0;
    for (k = 0; k < count; k++) {
        ik_chain *c = chains[k];
        const ik_real *target = targets + (size_t)k * (size_t)dim;
        if (c->settings.solver != IK_SOLVER_FABRIK || c->limited) {
            ik_chain_solve(c, target, &r);
            reached += r.reached;
            continue;
        }
        /* A chain already in the batch must see its first solve finished first. */
        for (j = 0; j < b.count; j++)
            if (b.chain[j] == c) reached += flush(&b);
        check_target(c, target, &t);
        if (!way_in(c, t, &b.aim[b.count])) {
            way_out(c, t, 1, 1, &r);
            reached += r.reached;
            continue;
        }
        b.chain[b.count] = c;
        b.target[b.count] = t;
        if (++b.count == IK_BATCH) reached += flush(&b);
    }
    if (b.count > 0) reached += flush(&b);
    if (reached_count) *reached_count = reached;
    return IK_OK;
}

/* ---- the escape from lock-ups ---- */

/*
 * A solve is stuck when an iteration brings the tip no closer (by a part in a million)
 * while the target is within the chain's reach and the distance is more than rounding:
 * FABRIK and relaxation on a straight chain with the target on its line, CCD when every
 * joint already sees the tip and the target in one direction, or an oscillation. The
 * escape then turns the first bone (the rest follow rigidly) by ESCAPE_ANGLE towards the
 * preferred side of the line to the target, and the solve goes on from there: with its
 * joints off that line, on that side, the chain converges bending to that side. The side is
 * the one bend (2D: positive joint angles, as in the two-bone solve) or the pole (3D, else
 * a fixed perpendicular of the line) asks for; every other bend tries the other side, in
 * case the limits forbid the first. At most ESCAPE_KICKS bends per solve, so a target out
 * of reach costs bounded work.
 *
 * Limits make minima of their own, where the position-based solvers creep rather than
 * stop: on a chain with limits an iteration that brings the tip less than STUCK_LIMITED
 * (10%) closer counts as stuck, and FABRIK and relaxation hand the iterations they have
 * left to CCD sweeps (ik_escape_finish), whose every turn stays within the limits and which
 * escape their own lock-ups the same way. On limited chains the bend is a curl (every bone
 * turns, each a little more than its parent), which gets more joints off their limits.
 * The bench (`make bench`) measured the thresholds: 1e-6, 1e-3, 1e-2, 5e-2 and 0.1 for
 * limited chains, the last best for every solver in 2D and 3D. Everything is deterministic.
 */
#define ESCAPE_ANGLE 0.25
#define ESCAPE_KICKS 4
#define STUCK_FREE 1e-6
#define STUCK_LIMITED 0.1

ik_escape ik_escape_start(const ik_chain *c, ik_vec3 target)
{
    ik_escape e;
    ik_real longest = 0, total = 0, d = ik_v3_len(ik_v3_sub(target, c->joint[0]));
    int i;
    for (i = 0; i < c->n; i++) {
        total += c->length[i];
        if (c->length[i] > longest) longest = c->length[i];
    }
    e.last = ik_chain_tip_distance(c, target);
    e.kicks = 0;
    /* A converged solve (tolerance 0, say) also stops improving: that is not a lock-up. */
    e.floor = 1e-9 * total;
    e.slow = c->limited ? STUCK_LIMITED : STUCK_FREE;
    /* Reach: the ring between the longest bone less the others, and the whole length. */
    e.reachable = c->settings.escape && d <= total && d >= 2 * longest - total;
    return e;
}

int ik_escape_stuck(const ik_chain *c, ik_escape *e, ik_real distance)
{
    int stuck = e->reachable && e->kicks < ESCAPE_KICKS && distance > c->settings.tolerance &&
                distance > e->floor &&
                distance >= e->last * (1 - e->slow);
    e->last = distance;
    return stuck;
}

int ik_escape_finish(ik_chain *c, ik_vec3 target, int iterations, int first)
{
    ik_escape e = ik_escape_start(c, target);
    int iter = 0;
    e.slow = STUCK_FREE; /* only a real lock-up: slow sweeps are still the way out */
    while (iter < iterations && ik_chain_tip_distance(c, target) > c->settings.tolerance) {
        ik_ccd_sweep(c, target, 1, first);
        iter++;
        /* The sweeps have lock-ups of their own (a chain folded onto the target's line). */
        if (ik_escape_stuck(c, &e, ik_chain_tip_distance(c, target)))
            ik_escape_kick(c, target, &e, first);
    }
    return iter;
}

void ik_escape_kick(ik_chain *c, ik_vec3 target, ik_escape *e, int first)
{
    ik_aim parent = ik_aim_start(c);
    ik_vec3 line, side, axis;
    ik_real angle = ESCAPE_ANGLE * (1 + e->kicks / 2);
    int i;
    if (e->kicks % 2 == 1) angle = -angle; /* every other bend tries the other side */
    e->kicks++;
    c->kicked = 1;

    ik_chain_update(c);
    line = ik_v3_normalize_or(ik_v3_sub(target, c->joint[first]), c->dir[first]);
    if (c->dim == 2) {
        /*
         * bend 1 means positive joint angles, as in the two-bone solve: the joints on the
         * clockwise side of the line to the target.
         */
        side = ik_v3_scale(ik_v3(line.y, -line.x, 0), c->settings.bend);
    } else {
        side = c->settings.use_pole
                   ? ik_v3(c->settings.pole[0], c->settings.pole[1], c->settings.pole[2])
                   : ik_v3_any_perpendicular(line);
    }
    for (i = 0; i < first; i++) ik_aim_bone(c, i, c->dir[i], &parent);
    if (c->limited) {
        /*
         * Limits: a curl. Each bone from `first` on turns (i - first + 1) times the angle
         * about line x side, so every joint moves, and some limit has room for it.
         */
        axis = ik_v3_normalize_or(ik_v3_cross(line, side), ik_v3_any_perpendicular(line));
        for (i = first; i < c->n; i++)
            ik_aim_bone(c, i, ik_q_rotate(ik_q_axis_angle(axis, angle * (i - first + 1)), c->dir[i]),
                        &parent);
    } else {
        /* Bone `first` turns towards the side (about dir x side); the rest follow rigidly. */
        axis = ik_v3_normalize_or(ik_v3_cross(c->dir[first], side),
                                  ik_v3_any_perpendicular(c->dir[first]));
        ik_aim_bone(c, first, ik_q_rotate(ik_q_axis_angle(axis, angle), c->dir[first]), &parent);
    }
    c->stale_from = 0;
    ik_chain_update(c);
    e->last = ik_chain_tip_distance(c, target);
}
