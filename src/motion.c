/*
 * motion.c - chains moved over time: follow-the-leader (drag) and secondary motion
 * (simulate). Both end in the local pose, posed bone by bone from the base (ik_pose_bone),
 * so lengths are exact and every limit holds after each call, as after a solve.
 */
#include "chain.h"

#include <string.h>

/* ---- drag ---- */

/* A point of dim numbers as a 3D vector (z = 0 in 2D), and back. */
static ik_vec3 point_load(const ik_chain *c, const ik_real *p)
{
    return ik_v3(p[0], p[1], c->dim == 3 ? p[2] : 0);
}

static void point_store(const ik_chain *c, ik_real *p, ik_vec3 v)
{
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/* Point i of the scratch points. */
static ik_vec3 work_point(const ik_chain *c, int i) { return point_load(c, c->work + (size_t)i * (size_t)c->dim); }
static void set_work_point(ik_chain *c, int i, ik_vec3 v) { point_store(c, c->work + (size_t)i * (size_t)c->dim, v); }

/* Joint 0 on the base. */
static void store_joint0(ik_chain *c)
{
    ik_real *p = ik_joint(c, 0);
    p[0] = c->base.x, p[1] = c->base.y;
    if (c->dim == 3) p[2] = c->base.z;
}

/*
 * Poses bones first..n-1 from the base out, each pointing from its joint as posed towards
 * point i + 1 of the scratch points (within its limits; a zero-length bone, or no
 * direction, keeps its world direction). The world data is current afterwards.
 */
static void pose_towards_work(ik_chain *c, int first)
{
    int i;
    for (i = first; i < c->n; i++) {
        ik_vec3 before = ik_dir_v3(c, i);
        ik_vec3 to = ik_v3_sub(work_point(c, i + 1), ik_joint_v3(c, i));
        ik_pose_bone(c, i, c->length[i] > 0 ? ik_v3_normalize_or(to, before) : before);
    }
    c->stale_from = c->n;
}

ik_status ik_chain_drag(ik_chain *c, const ik_real *point)
{
    ik_status st = ik_check_coords(point, c->dim);
    ik_vec3 next, dir0;
    int i;
    if (st != IK_OK) return st;
    if (c->parent) return IK_ERR_ATTACHED;
    ik_chain_settle(c);
    ik_chain_fk(c);

    /* Backward from the tip: bone i points from where joint i is towards the new joint
       i + 1, held within what bone i + 1's limit allows. */
    set_work_point(c, c->n, ik_v3(point[0] + 0.0, point[1] + 0.0, c->dim == 3 ? point[2] + 0.0 : 0));
    next = ik_dir_v3(c, c->n - 1);
    for (i = c->n - 1; i >= 0; i--) {
        ik_vec3 to = work_point(c, i + 1), dir = ik_dir_v3(c, i);
        if (c->length[i] > 0) dir = ik_v3_normalize_or(ik_v3_sub(to, ik_joint_v3(c, i)), dir);
        if (i < c->n - 1 && c->limited) dir = ik_limit_backward(c, i, dir, next);
        set_work_point(c, i, ik_v3_sub(to, ik_v3_scale(dir, c->length[i] * c->scale)));
        /* The new direction, which the bones are posed along below (a zero-length bone's
           too, which the points cannot tell): 2D in place of the old one (read above, and
           never again); 3D aside, the old one being what each bone turns from. */
        if (c->dim == 2) ik_v2_store(ik_dir(c, i), ik_v2(dir.x, dir.y));
        else ik_v3_store(c->sim_scratch + 3 * (size_t)i, dir);
        next = dir;
    }
    dir0 = next;

    /* The base moves to joint 1's new place, its frame turned with bone 1, which keeps its
       local angle; the other bones are posed along the points from it. */
    c->base = work_point(c, 0);
    if (c->dim == 2) {
        c->base_turn = ik_v2_renorm(ik_v2_unrotate(ik_v2(dir0.x, dir0.y), c->turn[0]));
        c->base_angle = atan2(c->base_turn.y, c->base_turn.x);
    } else {
        ik_quat world = ik_q_normalize(ik_q_mul(ik_q_from_to(ik_dir3(c, 0), dir0), c->wrot[0]));
        c->base_rot = ik_q_normalize(ik_q_mul(world, ik_q_conj(c->rot[0])));
    }
    store_joint0(c);
    ik_chain_fk_bone(c, 0);
    for (i = 1; i < c->n; i++) {
        if (c->dim == 2) ik_pose_bone_turn(c, i, ik_dir2(c, i));
        else ik_pose_bone(c, i, ik_v3_load(c->sim_scratch + 3 * (size_t)i));
    }
    c->stale_from = c->n;
    ik_chain_changed(c);
    return IK_OK;
}

/* ---- simulate ---- */

/* The longest time one call simulates, and the sub-steps per second. */
#define SIM_MAX_TIME 1.0
#define SIM_RATE 240
/* Newton steps on the lengths before the exact posing (a second one leaves a residual of
   the fourth order in the step, which the posing takes up). */
#define SIM_PASSES 2

static ik_real *sim_now(const ik_chain *c, int i) { return c->sim + (size_t)i * (size_t)c->dim; }
static ik_real *sim_before(const ik_chain *c, int i)
{
    return c->sim + ((size_t)(c->n + 1) + (size_t)i) * (size_t)c->dim;
}

/* Whether the joints simulate kept still move on: the pose is the one it left. */
static int sim_continues(const ik_chain *c)
{
    size_t bytes = (size_t)c->n * (c->dim == 2 ? sizeof(ik_vec2) : sizeof(ik_quat));
    if (!c->sim_live || c->sim_scale != c->scale) return 0;
    return c->dim == 2 ? memcmp(c->sim_turn, c->turn, bytes) == 0 : memcmp(c->sim_rot, c->rot, bytes) == 0;
}

/* The joints at rest in the world where the chain is now: no speed. */
static void sim_start(ik_chain *c)
{
    int i;
    for (i = 0; i <= c->n; i++) {
        point_store(c, sim_now(c, i), ik_joint_v3(c, i));
        point_store(c, sim_before(c, i), ik_joint_v3(c, i));
    }
    c->sim_base = c->base;
    c->sim_base_before = c->base;
    c->sim_time = 0;
    c->sim_base_angle = c->base_angle;
    c->sim_base_rot = c->base_rot;
}

/*
 * The base frame the fraction t of the way from the last call's to the current one (time
 * seconds later): its place on the parabola through the bases of the two calls before and
 * this one (a body's path sampled once a frame is smooth: a straight line between frames
 * would make the motion depend on the frame rate), or on the straight line when the call
 * before is missing or took a time far from this one's; the turn of its frame in between.
 */
static void sim_base_at(ik_chain *c, ik_vec3 base, ik_real angle, ik_quat rot, ik_real t, ik_real time)
{
    ik_real r = c->sim_time / time;
    if (r >= 0.25 && r <= 4) {
        ik_real before = t * (t - 1) / (r * (r + 1)), last = -(t + r) * (t - 1) / r, now = t * (t + r) / (1 + r);
        c->base = ik_v3_add(ik_v3_add(ik_v3_scale(c->sim_base_before, before), ik_v3_scale(c->sim_base, last)),
                            ik_v3_scale(base, now));
    } else {
        c->base = ik_v3_add(c->sim_base, ik_v3_scale(ik_v3_sub(base, c->sim_base), t));
    }
    if (c->dim == 2) {
        c->base_angle = ik_wrap_angle(c->sim_base_angle + t * ik_wrap_angle(angle - c->sim_base_angle));
        c->base_turn = ik_v2_turn(c->base_angle);
    } else {
        c->base_rot = ik_q_slerp(c->sim_base_rot, rot, t);
    }
}

/* Bone i's rest direction in the world, from its parent's frame as it is now. */
static ik_vec3 rest_dir(const ik_chain *c, int i)
{
    if (c->dim == 2) {
        ik_vec2 parent = i == 0 ? c->base_turn : ik_dir2(c, i - 1);
        ik_vec2 d = ik_v2_rotate(c->rest_turn[i], parent);
        return ik_v3(d.x, d.y, 0);
    }
    return ik_q_x_axis(ik_q_mul(i == 0 ? c->base_rot : c->wrot[i - 1], c->rest_rot[i]));
}

/* Bone i's direction at the last sub-step (unit; zero for a zero-length bone), kept for the
   sub-step by sim_keep_dirs. */
static ik_vec3 sim_dir(const ik_chain *c, int i)
{
    const ik_real *u = c->sim_scratch + (size_t)i * (size_t)c->dim;
    return ik_v3(u[0], u[1], c->dim == 3 ? u[2] : 0);
}

static void sim_keep_dirs(ik_chain *c)
{
    int i;
    for (i = 0; i < c->n; i++) {
        ik_vec3 u = ik_v3_sub(point_load(c, sim_now(c, i + 1)), point_load(c, sim_now(c, i)));
        point_store(c, c->sim_scratch + (size_t)i * (size_t)c->dim, ik_v3_normalize_or(u, ik_v3(0, 0, 0)));
    }
}

/*
 * One Newton step on the lengths of the bones between the scratch points (SHAKE): joint i
 * moves along the directions of the bones beside it at the last sub-step, by multipliers
 * (one per bone) that solve the lengths to first order, the base held and the other joints
 * of equal mass. The system is tridiagonal: one sweep down and one up, O(n). 0 when it is
 * degenerate (a step so large the bones folded): the posing from the base then does it.
 */
static int sim_constrain(ik_chain *c)
{
    ik_real *sweep = c->sim_scratch + (size_t)c->n * (size_t)c->dim;
    int i, n = c->n;
    ik_real lower = 0;
    for (i = 0; i < n; i++) {
        ik_vec3 d = ik_v3_sub(work_point(c, i + 1), work_point(c, i));
        ik_real len = ik_v3_len(d), wi = i == 0 ? 0 : 1, diag, upper = 0, pivot;
        ik_vec3 e, u = sim_dir(c, i);
        if (!(len > 0) || !isfinite(len)) return 0;
        e = len > 1e-150 && len < 1e150 ? ik_v3_scale(d, 1 / len) : ik_v3_normalize_or(d, u);
        diag = (wi + 1) * ik_v3_dot(e, u);
        if (i + 1 < n) upper = -ik_v3_dot(e, sim_dir(c, i + 1));
        if (i > 0) lower = -wi * ik_v3_dot(e, sim_dir(c, i - 1));
        pivot = diag - (i > 0 ? lower * sweep[2 * (i - 1)] : 0);
        if (!(fabs(pivot) > 1e-9)) return 0;
        pivot = 1 / pivot;
        sweep[2 * i] = upper * pivot;
        sweep[2 * i + 1] = (c->length[i] * c->scale - len - (i > 0 ? lower * sweep[2 * i - 1] : 0)) * pivot;
    }
    for (i = n - 2; i >= 0; i--) sweep[2 * i + 1] -= sweep[2 * i] * sweep[2 * i + 3];
    for (i = 1; i <= n; i++) {
        ik_vec3 move = ik_v3_scale(sim_dir(c, i - 1), sweep[2 * (i - 1) + 1]);
        if (i < n) move = ik_v3_sub(move, ik_v3_scale(sim_dir(c, i), sweep[2 * i + 1]));
        set_work_point(c, i, ik_v3_add(work_point(c, i), move));
    }
    return 1;
}

/* Moves scratch point i by v (joint 0, the base, holds). */
static void sim_push(ik_chain *c, int i, ik_vec3 v)
{
    if (i > 0) set_work_point(c, i, ik_v3_add(work_point(c, i), v));
}

/*
 * Bone i's spring towards its rest direction, for a sub-step: the turn it asks for, the
 * angle off rest times pull (stiffness h^2, at most 1) times the bone's length, moves its
 * end joint across the bone and its start joint back; its parent bone takes the opposite
 * torque (so the springs are conservative: a turn asked of a bone does not push the whole
 * chain round). A parent far shorter than the bone passes on at most 1000 times its share.
 */
static void sim_spring(ik_chain *c, int i, ik_real pull)
{
    ik_vec3 d = sim_dir(c, i), r = rest_dir(c, i), axis, across;
    ik_real len = c->length[i] * c->scale, angle, s;
    if (!(len > 0) || (d.x == 0 && d.y == 0 && d.z == 0)) return;
    axis = ik_v3_cross(d, r);
    s = ik_v3_len(axis);
    angle = atan2(s, ik_v3_dot(d, r));
    if (!(angle > 0)) return; /* at rest */
    /* turned half round: any axis across the bone */
    axis = ik_v3_normalize_or(axis, c->dim == 2 ? ik_v3(0, 0, 1) : ik_v3_any_perpendicular(d));
    /* The torque angle * len^2 about axis, as a move of the bone's end across it. */
    across = ik_v3_scale(ik_v3_cross(axis, d), pull * angle * len);
    sim_push(c, i + 1, across);
    sim_push(c, i, ik_v3_scale(across, -1));
    if (i > 0) {
        ik_vec3 p = sim_dir(c, i - 1);
        ik_real plen = c->length[i - 1] * c->scale, ratio;
        if (!(plen > 0) || (p.x == 0 && p.y == 0 && p.z == 0)) return;
        ratio = len / plen < 1000 ? len / plen : 1000;
        across = ik_v3_scale(ik_v3_cross(axis, p), -pull * angle * len * ratio);
        sim_push(c, i, across);
        sim_push(c, i - 1, ik_v3_scale(across, -1));
    }
}

/*
 * A scratch point that left the finite numbers (joints near the range's end, moving fast:
 * now + speed overflows) stays where its joint is: the sub-step is lost for it, never the
 * chain's numbers.
 */
static void sim_keep_finite(ik_chain *c)
{
    int i;
    for (i = 1; i <= c->n; i++) {
        ik_vec3 v = work_point(c, i);
        if (!(isfinite(v.x) && isfinite(v.y) && isfinite(v.z))) set_work_point(c, i, point_load(c, sim_now(c, i)));
    }
}

/*
 * One sub-step of h seconds: each joint moves on with its speed (times keep) and gravity,
 * and the fraction pull of the way towards its place at rest; the distance constraints
 * between equal masses pull the joints together (the base holds), and the bones are posed
 * along them from the base, which makes the lengths exact and holds the limits.
 */
static void sim_step(ik_chain *c, ik_real h, ik_real keep, ik_real pull)
{
    const ik_settings *s = &c->settings;
    /* The forces act in the middle of the sub-step, where the speed has decayed by half
       of keep: the scheme stays second order with damping. */
    ik_real half = sqrt(keep);
    ik_vec3 fall = ik_v3_scale(ik_v3(s->gravity[0], s->gravity[1], c->dim == 3 ? s->gravity[2] : 0), h * h * half);
    int i, pass;
    sim_keep_dirs(c);
    set_work_point(c, 0, c->base);
    for (i = 1; i <= c->n; i++) {
        ik_vec3 now = point_load(c, sim_now(c, i)), before = point_load(c, sim_before(c, i));
        set_work_point(c, i, ik_v3_add(now, ik_v3_add(ik_v3_scale(ik_v3_sub(now, before), keep), fall)));
    }
    sim_keep_finite(c);
    if (pull > 0) {
        for (i = 0; i < c->n; i++) sim_spring(c, i, pull * half);
        sim_keep_finite(c);
    }
    for (pass = 0; pass < SIM_PASSES; pass++)
        if (!sim_constrain(c)) break;
    sim_keep_finite(c);
    store_joint0(c);
    pose_towards_work(c, 0);
    for (i = 0; i <= c->n; i++) {
        ik_real *now = sim_now(c, i), *before = sim_before(c, i);
        point_store(c, before, point_load(c, now));
        point_store(c, now, ik_joint_v3(c, i));
    }
}

ik_status ik_chain_simulate(ik_chain *c, ik_real dt)
{
    ik_vec3 base;
    ik_vec2 turn;
    ik_real angle, time, h, keep, pull;
    ik_quat rot;
    int steps, k;
    if (isnan(dt) || !(dt > 0) || !isfinite(dt)) return IK_ERR_TIME_STEP;
    ik_chain_follow(c);
    ik_chain_settle(c);
    ik_chain_fk(c);
    if (!sim_continues(c)) sim_start(c);

    /* A longer dt (a hitch) counts as SIM_MAX_TIME: the work per call is bounded. */
    time = dt < SIM_MAX_TIME ? dt : SIM_MAX_TIME;
    steps = (int)ceil(time * SIM_RATE);
    if (steps < 1) steps = 1;
    h = time / steps;
    keep = exp(-c->settings.damping * h);
    pull = c->settings.stiffness * h * h;
    if (pull > 1) pull = 1;
    base = c->base, angle = c->base_angle, turn = c->base_turn, rot = c->base_rot;
    for (k = 1; k <= steps; k++) {
        if (k < steps) sim_base_at(c, base, angle, rot, (ik_real)k / steps, time);
        else c->base = base, c->base_angle = angle, c->base_turn = turn, c->base_rot = rot;
        sim_step(c, h, keep, pull);
    }

    c->sim_live = 1;
    c->sim_scale = c->scale;
    c->sim_base_before = c->sim_base, c->sim_time = time;
    c->sim_base = base, c->sim_base_angle = angle, c->sim_base_rot = rot;
    if (c->dim == 2) memcpy(c->sim_turn, c->turn, (size_t)c->n * sizeof(ik_vec2));
    else memcpy(c->sim_rot, c->rot, (size_t)c->n * sizeof(ik_quat));
    ik_chain_changed(c);
    return IK_OK;
}

ik_status ik_chain_set_rest(ik_chain *c)
{
    int i;
    ik_chain_follow(c);
    ik_chain_settle(c);
    for (i = 0; i < c->n; i++) {
        if (c->dim == 2) c->rest_turn[i] = c->turn[i];
        else c->rest_rot[i] = c->rot[i];
    }
    return IK_OK;
}
