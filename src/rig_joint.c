/*
 * rig_joint.c - the stages of a rig solve after the passes, on the bones' rotations: the
 * tree sweeps (CCD over the whole tree) and the joint-space stage (damped least squares on
 * every bone at once), which get a rig out of the minima joint limits make and track
 * moving goals smoothly. One bone's part of a step is joint_space.c's, as for single chains.
 */
#include "rig_tree.h"

#include <string.h>

/*
 * The way out of the minima joint limits make, for the whole tree at once: the passes above
 * work on points, and with limits they can park a sub-base where its limbs' limits cannot
 * reach their goals; a limb's own sweeps (finish_limbs) cannot move the body it hangs on.
 * A tree sweep is CCD over every bone of the rig that bends for a goal, from the leaves in
 * and each chain from its tip down (so the bones nearer the root, not yet turned in the
 * sweep, hold their world data): each bone turns, within its limits, by the rotation that
 * best brings the goals beyond it to their places, each weighed as in merge. For one goal
 * that is the CCD turn; for several, the turn about the summed torque by the angle whose
 * tangent is the summed cross over the summed dot products (exact in 2D: the least-squares
 * turn). Each goal's joint is carried along (eff); forward kinematics at the end.
 */

/* Turns node nd's bone i, about joint p, by the world turn that the goals beyond it ask for. */
static void sweep_bone(ik_rig *rig, rig_node *nd, int i)
{
    ik_chain *c = nd->chain;
    ik_vec3 p = joint_at(c, i), torque = ik_v3(0, 0, 0);
    ik_real dot = 0;
    rig_node *g;
    int k, from = nd->end > i ? nd->pre : nd->pre + 1, to = beyond_end(rig, nd, i);
#define PULL(g)                                                                             \
    do {                                                                                    \
        const rig_node *g_ = (g);                                                           \
        ik_real w_ = g_->weight;                                                            \
        ik_vec3 r_ = ik_v3_sub(g_->eff, p), t_ = ik_v3_sub(g_->goal, p);                    \
        torque = ik_v3_add(torque, ik_v3_scale(ik_v3_cross(r_, t_), w_));                   \
        dot += w_ * ik_v3_dot(r_, t_);                                                      \
    } while (0)
    FOR_GOALS(rig, g, k, from, to) PULL(g); /* dfs[pre] is nd itself */
#undef PULL
    if (c->dim == 2) {
        ik_real turn = atan2(torque.z, dot), angle, held;
        ik_vec2 r;
        if (turn == 0) return;
        angle = ik_turn_angle(c, i);
        held = c->limit[i].flags ? ik_limit_angle(&c->limit[i], ik_wrap_angle(angle + turn)) : angle + turn;
        turn = ik_wrap_angle(held - angle);
        if (turn == 0) return;
        ik_chain_set_turn_angle(c, i, held);
        r = ik_v2(cos(turn), sin(turn));
        FOR_GOALS(rig, g, k, from, to) {
            ik_vec2 v = ik_v2_rotate(ik_v2(g->eff.x - p.x, g->eff.y - p.y), r);
            if (g->end >= 0) g->eff = ik_v3(p.x + v.x, p.y + v.y, 0);
        }
    } else {
        ik_real size = ik_v3_len(torque), angle = atan2(size, dot);
        ik_vec3 unit = ik_v3_normalize_or(torque, ik_v3(0, 0, 0));
        ik_quat r, parent, local;
        if (!(size > 0) || angle == 0 || ik_v3_dot(unit, unit) == 0) return;
        r = ik_q_axis_angle(unit, angle);
        /* As in sweep.c: the world turn r as a change of the local rotation, within limits. */
        parent = i == 0 ? c->base_rot : c->wrot[i - 1];
        local = ik_q_normalize(ik_q_mul(ik_q_mul(ik_q_mul(ik_q_conj(parent), r), parent), c->rot[i]));
        if (c->limit[i].flags) {
            local = ik_limit_rotation(&c->limit[i], local);
            r = ik_q_normalize(ik_q_mul(ik_q_mul(parent, local), ik_q_conj(ik_q_mul(parent, c->rot[i]))));
        }
        c->rot[i] = local;
        FOR_GOALS(rig, g, k, from, to) {
            g->eff = ik_v3_add(p, ik_q_rotate(r, ik_v3_sub(g->eff, p)));
        }
    }
    ik_chain_mark_stale(c, i);
}

/* The largest distance of a goal's joint from its goal, as the sweeps have carried it. */
static ik_real sweep_distance(const ik_rig *rig)
{
    ik_real largest = 0;
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end >= 0) {
            ik_real d = ik_v3_len(ik_v3_sub(nd->goal, nd->eff));
            if (d > largest) largest = d;
        }
    }
    return largest;
}

/*
 * Tree sweeps while the goals are missed and they gain, at most `iterations`; then every
 * chain finished (orientation goals, max_turn, limits). The chains are current and
 * settled. Returns the sweeps made.
 */
int rig_tree_sweeps(ik_rig *rig, int iterations, ik_real reach)
{
    ik_progress progress;
    ik_real distance;
    int o, i, sweeps = 0;
    rig_fk(rig);
    distance = sweep_distance(rig);
    progress = ik_progress_plain(distance, reach);
    while (distance > rig->settings.tolerance && sweeps < iterations) {
        for (o = rig->count - 1; o >= 0; o--) {
            rig_node *nd = &rig->node[rig->order[o]];
            int hi = nd->top < nd->last ? nd->top : nd->last;
            for (i = hi - 1; i >= 0; i--) sweep_bone(rig, nd, i);
        }
        rig_fk(rig);
        sweeps++;
        distance = sweep_distance(rig);
        if (ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP) break;
    }
    rig_finish_all(rig);
    return sweeps;
}


/* ---- the joint-space stage ---- */

/*
 * Damped least squares (Levenberg-Marquardt) on every rotation of the rig that bends for a
 * goal, all at once: the passes work on points and, with limits, park sub-bases where the
 * limbs' limits cannot reach; a step in joint space moves the body and its limbs together,
 * each bone within its limits. The unknowns are each bone's turn about the world axes at
 * its joint (one about the hinge's axis for a 3D hinge, one about z in 2D); the residuals
 * are the goals' joints' offsets from their goals, each weighed by the square root of its
 * effector weight (a goal of weight 0 has no pull). With J the Jacobian of the residuals,
 * a step solves (J J^T + lambda^2 I) y = e and turns the bones by J^T y: the normal
 * equations have one row per goal coordinate (at most DLS_ROWS), whatever the number of
 * bones, and J is never stored (each bone's columns are made when needed). A step that
 * does not lower the weighted squared error is undone and lambda grows; one that does is
 * kept and lambda shrinks. S. Buss, "Introduction to inverse kinematics with Jacobian
 * transpose, pseudoinverse and damped least squares methods" (2004), section 5.
 */

/* A goal weighed less than this, in units of the largest, has no pull here: its rounding
   (a subnormal weight's few bits) would decide the step's last bits. */
#define DLS_LEAST 1e-200

static ik_real dls_weight(const rig_node *nd) { return nd->weight >= DLS_LEAST ? nd->weight : 0; }

/*
 * The scale the stage works at: the joints and goals within DLS_RANGE of the origin and the
 * reach within [1 / DLS_RANGE, DLS_RANGE], so no product it forms overflows or loses all
 * its bits (inf - inf would make a NaN). Beyond that the passes' answer stands.
 */
#define DLS_RANGE 1e100

int rig_dls_in_range(const ik_rig *rig, ik_real reach)
{
    int k, j;
    if (!(reach <= DLS_RANGE && reach >= 1 / DLS_RANGE)) return 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_real *p = nd->chain->joint;
        if (nd->end >= 0 && !(fabs(nd->goal.x) <= DLS_RANGE && fabs(nd->goal.y) <= DLS_RANGE &&
                              fabs(nd->goal.z) <= DLS_RANGE))
            return 0;
        for (j = 0; j < (nd->chain->n + 1) * rig->dim; j++)
            if (!(fabs(p[j]) <= DLS_RANGE)) return 0;
    }
    return 1;
}

/* The goals' rows (nd->row); 0 when they need more than DLS_ROWS, or are out of range. */
int rig_dls_rows(ik_rig *rig, ik_real reach)
{
    int k, m = 0;
    if (!rig_dls_in_range(rig, reach)) return 0;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        nd->row = -1;
        if (nd->end < 0) continue;
        if (m + rig->dim > DLS_ROWS) return 0;
        nd->row = m;
        m += rig->dim;
    }
    return m;
}

/* One column of J: how the goals beyond bone i of nd move as it turns about axis. */
typedef struct dls_column {
    int count;
    int row[2 * DLS_ROWS]; /* a loop's rows may come twice: its two sides */
    ik_real value[2 * DLS_ROWS];
} dls_column;

static void column_add(const ik_rig *rig, dls_column *col, int row, ik_vec3 v)
{
    int d;
    for (d = 0; d < rig->dim; d++) {
        col->row[col->count] = row + d;
        col->value[col->count++] = d == 0 ? v.x : d == 1 ? v.y : v.z;
    }
}

/*
 * A loop's residual is its held point less its tip (the goal less the joint, as for any
 * goal), so a bone that moves the held point counts in its rows with the opposite sign: both
 * sides of the loop bend to close it.
 */
static void dls_column_of(const ik_rig *rig, const rig_node *nd, int i, ik_vec3 axis, dls_column *col)
{
    ik_vec3 p = joint_at(nd->chain, i);
    int k, to = beyond_end(rig, nd, i);
    col->count = 0;
    const rig_node *g;
    FOR_GOALS(rig, g, k, nd->end > i ? nd->pre : nd->pre + 1, to) {
        if (g->end < 0 || dls_weight(g) == 0) continue;
        column_add(rig, col, g->row, ik_v3_scale(ik_v3_cross(axis, ik_v3_sub(g->eff, p)), sqrt(dls_weight(g))));
    }
    for (k = 0; k < rig->loop_count; k++) {
        g = &rig->node[rig->loops[k]];
        if (g->row < 0 || dls_weight(g) == 0 || !moves_hold(rig, nd, i, &rig->node[g->hold], g->chain->tip_joint))
            continue;
        column_add(rig, col, g->row, ik_v3_scale(ik_v3_cross(axis, ik_v3_sub(g->chain->target, p)), -sqrt(dls_weight(g))));
    }
}

/* The weighted squared error; *largest: the largest distance of a goal's joint. */
static ik_real dls_cost(const ik_rig *rig, ik_real *largest)
{
    ik_real cost = 0;
    int k;
    *largest = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        ik_real d;
        if (nd->end < 0) continue;
        d = ik_v3_len(ik_v3_sub(nd->goal, nd->eff));
        if (d > *largest) *largest = d;
        cost += dls_weight(nd) * d * d;
    }
    return cost;
}

/* The largest turn of one bone in one step (radians): the linear model holds near it. */
#define DLS_MAX_TURN 0.5

/* Bone i's turn in the step (the convention of ik_joint_turn) from its turns about its axes. */
static ik_vec3 dls_turn(const rig_node *nd, int i, const ik_vec3 *axis, int axes, const ik_real *delta)
{
    ik_vec3 v = ik_v3(0, 0, 0);
    int a;
    if (nd->chain->dim == 2 || (nd->chain->limit[i].flags & IK_LIMIT_HINGE)) return ik_v3(delta[0], 0, 0);
    for (a = 0; a < axes; a++) v = ik_v3_add(v, ik_v3_scale(axis[a], delta[a]));
    return v;
}

/* Keeps (back = 0) or puts back (1) the local pose of every chain that bends: in the first
   place (which = 0: before a step) or the second (1: the best before a kick). */
static void dls_pose(ik_rig *rig, int back, int which)
{
    int k;
    for (k = 0; k < rig->count; k++) rig_keep_pose(&rig->node[k], turns(&rig->node[k]), back, which);
}

/* The turns J^T y of bone i of nd about its axes (delta[axes]). */
static int dls_delta(const ik_rig *rig, const rig_node *nd, int i, ik_vec3 axis[3], ik_real delta[3])
{
    dls_column col;
    int o, a, axes = ik_joint_axes(nd->chain, i, nd->mode[i], axis);
    for (o = 0; o < axes; o++) {
        dls_column_of(rig, nd, i, axis[o], &col);
        delta[o] = 0;
        for (a = 0; a < col.count; a++) delta[o] += col.value[a] * rig->y[col.row[a]];
    }
    return axes;
}

/*
 * While tracking, a bounded joint (2D range, 3D hinge) within REST_MARGIN of a bound is
 * pushed off it by up to REST_PUSH radians a step, in the null space of the goals' rows
 * (they see the push as an error of their own, e - J z, and the step is J^T y + z): the goals
 * are met as before, and a rig's spare freedom keeps its joints out of the corners of
 * their ranges, from which a goal's next move is reached only by a jump (a 2D body whose
 * two 3-bone arms had slid to straight elbows and wrists at their bounds missed 32 frames
 * running). The margin and push were chosen on bench/limits.lua's rows (0.2 to 0.5 and
 * 0.05 to 0.2 tried) and hold on the spec's body, which they were not chosen on.
 */
#define REST_MARGIN 0.3
#define REST_PUSH 0.1

/*
 * A free 2D joint of a chain with a goal, but its first, within SINGULAR_MARGIN of straight
 * (0) or folded (pi) is pushed away from it the same way, by up to SINGULAR_PUSH radians a
 * step, to the side it is on. There the bones beyond it cannot come nearer its joint or go
 * farther in a step (the steps' model is linear), so tracking, which takes the smallest
 * turns that meet the goals, lets such a joint drift there over a few strides, and the goal
 * that then turns back is followed by a fold that grows as the square root of its move
 * (bench/limits.lua's walk, quadruped 2D without limits: knees straightened from 0.6 to 0.08
 * rad, then an ankle folded 0.24 to 0.29 rad in a frame; its 20 animations: an elbow through
 * straight 0.259 rad, a knee off it 0.356). The root and chains without a goal, bent only for
 * others, are left as they are (pushed too, a quadruped's back made its legs jump 0.37 rad);
 * 3D joints are not pushed (3D rigs without limits turn at most 0.2 rad in the same rows).
 * The push is taken out of the goals' rows with a damping of SINGULAR_DAMPING (squared, in
 * mean bone lengths), not the step's: with the step's damping it moved the goals by up to
 * a tenth of itself, and the frame took another step to put them back (0.9 more a frame on
 * bench/rigs.lua's spider). Margin and push chosen on the 20 animations of 4 seeds
 * (IK_ANIM_SEED 555, 777, 4242, 31337) in commit cf9958a; see docs/performance.md.
 */
#define SINGULAR_MARGIN 0.5
#define SINGULAR_PUSH 0.05
#define SINGULAR_DAMPING 1e-6

static ik_real off_singular(const ik_chain *c, int i)
{
    ik_real angle = ik_turn_angle(c, i), size = fabs(angle), side;
    side = angle > 0 ? 1 : angle < 0 ? -1 : c->settings.bend >= 0 ? 1 : -1;
    if (size > IK_PI - SINGULAR_MARGIN) return -side * SINGULAR_PUSH * (size - (IK_PI - SINGULAR_MARGIN)) / SINGULAR_MARGIN;
    if (size < SINGULAR_MARGIN) return side * SINGULAR_PUSH * (SINGULAR_MARGIN - size) / SINGULAR_MARGIN;
    return 0;
}

static ik_real off_bounds(const ik_chain *c, int i)
{
    const ik_limit *l = &c->limit[i];
    ik_real angle;
    if (c->dim == 2 && !l->flags) return i > 0 && c->has_target ? off_singular(c, i) : 0;
    if (!ik_joint_has_bounds(c, i) || l->max - l->min < 4 * REST_MARGIN) return 0;
    angle = ik_joint_bound_angle(c, i);
    if (angle - l->min < REST_MARGIN) return REST_PUSH * (REST_MARGIN - (angle - l->min)) / REST_MARGIN;
    if (l->max - angle < REST_MARGIN) return -REST_PUSH * (REST_MARGIN - (l->max - angle)) / REST_MARGIN;
    return 0;
}

/* Whether bone i of c is pushed off straight and folded (off_singular), not off bounds. */
static int singular_push(const ik_chain *c, int i) { return c->dim == 2 && !c->limit[i].flags; }

/*
 * The normal equations of the bones not pinned, solved into rig->y. 0: no solution. The
 * pushes z (off_bounds) come out of the goals' rows: the bounds' from the error, solved
 * with the step's damping, e - J z; the free joints' (off_singular) alone, J z, with
 * SINGULAR_DAMPING, taken off y. Not while the step's damping is above PUSH_MOST_DAMPING
 * times that (steps refused again and again): the push's diagonal, the step's less its
 * damping, would keep the sums only to a rounding of the damping, which is then near
 * SINGULAR_DAMPING itself.
 */
#define PUSH_MOST_DAMPING 1e12

static int dls_solve(ik_rig *rig, int m, ik_real lambda2)
{
    dls_column col;
    ik_vec3 axis[3];
    int k, i, a, b, o, pushed = 0;
    for (k = 0; k < m * m; k++) rig->normal[k] = 0;
    for (k = 0; k < m; k++) rig->normal[k * m + k] = lambda2, rig->push[k] = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->row >= 0) {
            ik_vec3 e = ik_v3_scale(ik_v3_sub(nd->goal, nd->eff), sqrt(dls_weight(nd)));
            rig->error[nd->row] = e.x, rig->error[nd->row + 1] = e.y;
            if (rig->dim == 3) rig->error[nd->row + 2] = e.z;
        }
        for (i = 0; i < turns(nd); i++) {
            int axes;
            if (nd->mode[i] < 0) continue;
            axes = ik_joint_axes(nd->chain, i, nd->mode[i], axis);
            for (o = 0; o < axes; o++) {
                dls_column_of(rig, nd, i, axis[o], &col);
                for (a = 0; a < col.count; a++)
                    for (b = 0; b < col.count; b++)
                        rig->normal[col.row[a] * m + col.row[b]] += col.value[a] * col.value[b];
            }
        }
    }
    if (rig->rest) { /* the pushes, in the null space of the goals' rows */
        for (k = 0; k < rig->count; k++) {
            const rig_node *nd = &rig->node[k];
            for (i = 0; i < turns(nd); i++) {
                ik_real z = nd->mode[i] < 0 ? 0 : off_bounds(nd->chain, i);
                int singular = singular_push(nd->chain, i);
                if (z == 0 || (singular && !(lambda2 <= PUSH_MOST_DAMPING * rig->push_lambda2))) continue;
                ik_joint_axes(nd->chain, i, nd->mode[i], axis);
                dls_column_of(rig, nd, i, axis[0], &col);
                if (singular) {
                    for (a = 0; a < col.count; a++) rig->push[col.row[a]] += col.value[a] * z;
                    pushed = 1;
                } else {
                    for (a = 0; a < col.count; a++) rig->error[col.row[a]] -= col.value[a] * z;
                }
            }
        }
    }
    rig->pushing = 0;
    if (pushed) { /* (a push that cannot be solved for is left out of the step: dls_step) */
        for (k = 0; k < m * m; k++) rig->push_normal[k] = rig->normal[k];
        for (k = 0; k < m; k++) rig->push_normal[k * m + k] = rig->normal[k * m + k] - lambda2 + rig->push_lambda2;
        rig->pushing = ik_solve_spd(rig->push_normal, m, m, rig->push, rig->push_y);
    }
    if (!ik_solve_spd(rig->normal, m, m, rig->error, rig->y)) return 0;
    if (rig->pushing) for (k = 0; k < m; k++) rig->y[k] -= rig->push_y[k];
    for (k = 0; k < m; k++)
        if (!isfinite(rig->y[k])) return 0; /* out of the range the model holds in */
    return 1;
}

/*
 * Whether a 2D bone or a 3D hinge would be held back by its bounds from more than half of
 * a turn (at most DLS_MAX_TURN): counted in, it makes the others' turns too small.
 */
static int held_back(const ik_chain *c, int i, ik_real turn)
{
    const ik_limit *l = &c->limit[i];
    ik_real angle, to;
    if (!ik_joint_has_bounds(c, i)) return 0;
    turn = ik_clamp(turn, -DLS_MAX_TURN, DLS_MAX_TURN);
    angle = ik_joint_bound_angle(c, i);
    to = ik_limit_angle(l, ik_wrap_angle(angle + turn));
    return fabs(ik_wrap_angle(to - angle)) < 0.5 * fabs(turn);
}

/*
 * One step: solved, then solved again without the ways out the limits block (an active
 * set: a 2D range or hinge at a bound the step pushes beyond leaves the step, a cone or
 * twist at its bound loses only the way out of it; counted in, a bone held at its limit
 * makes the others' turns too small), then every bone turned from the pose before the
 * step, each by at most DLS_MAX_TURN, within its limits. 0: no step.
 */
#define DLS_PASSES 3

static int dls_step(ik_rig *rig, int m, ik_real lambda2)
{
    ik_vec3 axis[3];
    ik_real delta[3];
    int k, i, pass, axes;
    for (k = 0; k < rig->count; k++) memset(rig->node[k].mode, 0, (size_t)rig->node[k].chain->n + 1);
    for (pass = 0; pass < DLS_PASSES; pass++) {
        int more = 0;
        if (!dls_solve(rig, m, lambda2)) return 0;
        if (!rig->limited || pass == DLS_PASSES - 1) break;
        for (k = 0; k < rig->count; k++) {
            rig_node *nd = &rig->node[k];
            if (!nd->chain->limited) continue;
            for (i = 0; i < turns(nd); i++) {
                int blocked;
                if (nd->mode[i] < 0 || !nd->chain->limit[i].flags) continue;
                axes = dls_delta(rig, nd, i, axis, delta);
                blocked = ik_joint_blocked(nd->chain, i, dls_turn(nd, i, axis, axes, delta));
                if (blocked == 0 && held_back(nd->chain, i, delta[0])) blocked = -1;
                if (blocked < 0) nd->mode[i] = -1, more = 1;
                else if ((blocked | nd->mode[i]) != nd->mode[i]) nd->mode[i] = (signed char)(nd->mode[i] | blocked), more = 1;
            }
        }
        if (!more) break;
    }
    /* Every column from the pose before the step: each chain's bones from its tip down. */
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        ik_chain *c = nd->chain;
        for (i = turns(nd) - 1; i >= 0; i--) {
            ik_vec3 t;
            ik_real size;
            if (nd->mode[i] < 0) continue;
            axes = dls_delta(rig, nd, i, axis, delta);
            t = dls_turn(nd, i, axis, axes, delta);
            if (rig->rest && (rig->pushing || !singular_push(c, i))) t.x += off_bounds(c, i);
            size = c->dim == 2 || (c->limit[i].flags & IK_LIMIT_HINGE) ? fabs(t.x) : ik_v3_len(t);
            if (!(size > 0 && isfinite(size))) continue;
            if (size > DLS_MAX_TURN) t = ik_v3_scale(t, DLS_MAX_TURN / size);
            ik_joint_turn(c, i, t);
            ik_chain_mark_stale(c, i);
        }
    }
    return 1;
}

/*
 * A kick out of a minimum the limits make: the limited bones of every chain on the way from
 * a missed goal (and a missed loop's held point) to the root turn towards the middle of their ranges (2D range, 3D hinge;
 * other 3D limits: towards straight along the parent, then within them), the start the
 * limits leave most room around, by at most `most` radians each; the rest of the pose stays.
 */
static void dls_kick(ik_rig *rig, ik_real most)
{
    int k, i, x, way;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end < 0 || ik_v3_len(ik_v3_sub(nd->goal, nd->eff)) <= rig->settings.tolerance) continue;
        /* a loop's way to the root, and its held point's */
        for (way = 0; way <= (nd->hold >= 0); way++)
        for (x = way ? nd->hold : k; x >= 0; x = rig->node[x].parent) {
            rig_node *on = &rig->node[x];
            ik_chain *c = on->chain;
            if (!c->limited && most == INFINITY) continue;
            for (i = 0; i < turns(on); i++) {
                const ik_limit *l = &c->limit[i];
                ik_quat to;
                if (ik_joint_has_bounds(c, i)) {
                    ik_real now = ik_joint_bound_angle(c, i);
                    ik_real turn = ik_clamp((l->min + l->max) / 2 - now, -most, most);
                    if (c->dim == 2) ik_chain_set_turn_angle(c, i, now + turn);
                    else c->rot[i] = ik_limit_rotation(l, ik_q_axis_angle(l->axis, now + turn));
                } else if (most < INFINITY) {
                    /* A nudge while tracking: a bone nearly in line with its parent bends a
                       little to the chain's side, so the steps can shorten what is straight
                       (a straight run of bones cannot come nearer its base in a step). */
                    ik_vec3 line = ik_v3_normalize_or(ik_v3_sub(nd->goal, c->base), ik_v3(1, 0, 0));
                    ik_vec3 side = ik_chain_bend_side(c, line), d, p;
                    if (c->dim == 2) {
                        ik_real now = ik_turn_angle(c, i);
                        if (fabs(now) >= most) continue;
                        ik_joint_turn(c, i, ik_v3((c->settings.bend >= 0 ? most : -most) - now, 0, 0));
                    } else {
                        d = ik_dir3(c, i);
                        p = ik_q_x_axis(i == 0 ? c->base_rot : c->wrot[i - 1]);
                        if (ik_v3_dot(p, d) < cos(most)) continue;
                        ik_joint_turn(c, i, ik_v3_scale(ik_v3_normalize_or(ik_v3_cross(d, side), ik_v3(0, 0, 0)), most));
                    }
                } else if (l->flags) {
                    to = ik_limit_rotation(l, ik_q_identity());
                    c->rot[i] = to;
                } else {
                    continue;
                }
                ik_chain_mark_stale(c, i);
            }
        }
    }
}

/* Kicks a stalled joint-space stage may make after the passes; while tracking, nudges of
   at most DLS_NUDGE radians a bone (a kick turns bones far in one frame). */
#define DLS_KICKS 2

/*
 * Steps that did not halve the error, with limits, that are a stall too: a rig whose bones
 * press on their limits can creep, a step refused and taken again with more damping every
 * other time, each gaining a few percent (a 3D figure with both hands on a staff spent its
 * 100 iterations creeping at 0.01 from its goals). 8, 12 and 20 gave the same rates on
 * bench/loops.lua, and left bench/limits.lua's unchanged.
 */
#define DLS_SLOW 12
#define DLS_NUDGE 0.1

/*
 * Steps while the goals are missed and they gain, at most `iterations` (a stall with limits
 * kicks, at most kicks_allowed times, and the best pose is kept); then every chain
 * finished. m: the rows (dls_rows). The chains are settled. Returns the steps tried.
 */
int rig_joint_space(ik_rig *rig, int iterations, ik_real reach, int bones, int m, int mode)
{
    ik_progress progress;
    ik_real distance, cost, best = INFINITY, unit = reach / bones, lambda2 = 0.01 * unit * unit, halved;
    int tracking = mode != RIG_SOLVE, calm = mode == RIG_CALM;
    int steps = 0, kicks = 0, kicks_allowed = calm ? 0 : tracking ? 1 : DLS_KICKS, creeping = 0, since = 0;
    rig->rest = tracking && !calm;
    rig->push_lambda2 = SINGULAR_DAMPING * unit * unit;
    rig_fk(rig);
    cost = dls_cost(rig, &distance);
    halved = cost;
    progress = ik_progress_plain(distance, reach);
    while (distance > rig->settings.tolerance && steps < iterations) {
        ik_real now, largest;
        int stalled;
        dls_pose(rig, 0, 0);
        stalled = !dls_step(rig, m, lambda2);
        if (!stalled) {
            steps++;
            rig_fk(rig);
            now = dls_cost(rig, &largest);
            if (now < cost) {
                /* gains of less than a percent twice running: a minimum the limits made */
                creeping = now > 0.99 * cost ? creeping + 1 : 0;
                stalled = creeping >= 2;
                if (now < 0.5 * halved) halved = now, since = 0;
                cost = now, distance = largest;
                lambda2 *= 0.25;
                if (lambda2 < 1e-12 * unit * unit) lambda2 = 1e-12 * unit * unit;
            } else {
                dls_pose(rig, 1, 0);
                rig_fk(rig);
                lambda2 *= 8;
                stalled = !(lambda2 < 1e12 * unit * unit);
            }
            since++;
            stalled = stalled || ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP;
        }
        /* Tracking: three steps that did not halve the error are a stall worth a nudge (a
           straight run of bones, which the steps approach ever more slowly). With none
           left, a rig with limits hands what remains to its limbs' sweeps (finish_limbs
           in rig.c), one without goes on stepping. Otherwise, with limits, DLS_SLOW steps
           that did not halve it are a stall worth a kick while kicks are left. */
        if (!stalled && !(tracking && !calm && since >= 3 && (kicks < kicks_allowed || rig->limited)) &&
            !(!tracking && rig->limited && since >= DLS_SLOW && kicks < kicks_allowed))
            continue;
        if ((!rig->limited && !tracking) || kicks == kicks_allowed) break;
        if (cost < best) {
            best = cost;
            dls_pose(rig, 0, 1);
        }
        dls_kick(rig, tracking ? DLS_NUDGE : INFINITY);
        kicks++;
        rig_fk(rig);
        cost = dls_cost(rig, &distance);
        progress = ik_progress_plain(distance, reach);
        lambda2 = 0.01 * unit * unit;
        creeping = 0;
        halved = cost, since = 0;
    }
    if (best < cost) {
        dls_pose(rig, 1, 1);
        rig_fk(rig);
    }
    rig_finish_all(rig);
    return steps;
}
