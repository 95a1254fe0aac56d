/*
 * joint_space.c - damped least-squares steps on joint rotations, the limits as bounds:
 * the primitives a step needs for one bone (the axes it turns about, what its limits
 * block, the turn applied within them, the small symmetric solve), shared by the finish
 * of single chains below and the joint-space stage of rigs (rig_joint.c).
 */
#include "chain.h"

#include <string.h>

/* ---- the finish on chains with limits: damped least squares within the bounds ---- */

/*
 * Where a solve on a chain with limits gets stuck, it is rarely in a true minimum: FABRIK
 * and relaxation fight the limits pass against pass, and CCD sweeps crawl when the tip is
 * near full reach or a joint rests on a bound (a knee just off straight: each sweep gains
 * a percent; measured with bench/limits.lua, most limited misses ended at the iteration cap
 * that way). Every joint moved together by a Gauss-Newton step on the joint angles does
 * not crawl there: it converges quadratically near a goal the limits allow.
 *
 * The step is damped least squares (Levenberg-Marquardt): the joints' turns d that bring
 * the tip by J d closest to the error e, with lambda^2 |d|^2 added so a straight chain or a
 * singular pose takes a small step, not a wild one: d = J^T (J J^T + lambda^2 I)^-1 e, a
 * system of 2 or 3 rows whatever the chain's length (one or three more with an orientation
 * goal, see ik_rows). Limits are bounds: a joint held at a bound that the step would push
 * beyond it leaves the step (a 2D range or a 3D hinge), or loses only that way out (a cone:
 * its swing away from the parent; a twist: its turn about the bone), and the step is solved
 * again without it; whatever is left of a turn beyond a limit, the limit then takes back. A
 * step that does not bring the tip closer is undone and the damping raised; one that does
 * lowers it. Each joint turns at most IK_STEP_MAX_TURN per step, which keeps the linearisation
 * honest.
 *
 * Where the step cannot help (a chain straight along the line to its target: J J^T sees no
 * way to shorten it), the joints with bounds turn towards the middle of their ranges: that
 * is the way each is allowed to bend, whichever side the pole asks for (a hinge cannot bend
 * towards a pole across its axis, where the escape's bend goes). What the steps leave, the
 * solvers hand to the CCD sweeps of the escape (ik_escape_finish): alternating steps and
 * sweeps was measured too, and reached less (2D: 97.3% against 98.7% for FABRIK).
 */
#define FINISH_UNBEND 0.3
#define FINISH_UNBENDS 2
#define FINISH_DAMPING 1e-3 /* lambda^2 to start with (lengths in reaches) */

/* The world axis of bone j's hinge (its parent's frame), 3D. */
static ik_vec3 hinge_axis(const ik_chain *c, int j)
{
    ik_quat parent = j == 0 ? c->base_rot : c->wrot[j - 1];
    return ik_q_rotate(parent, c->limit[j].axis);
}

/* Whether a joint at a bound would be pushed beyond it by a turn of sign s (2D, hinge). */
static int pushed_out(ik_real angle, ik_real s, const ik_limit *limit)
{
    ik_real room = 1e-9;
    return (s < 0 && angle <= limit->min + room) || (s > 0 && angle >= limit->max - room);
}

/* Bone j's current angle about its 2D range or its hinge's axis. */
ik_real ik_joint_bound_angle(const ik_chain *c, int j)
{
    if (c->dim == 2) return ik_turn_angle(c, j);
    return ik_twist_angle(c->rot[j], c->limit[j].axis);
}

int ik_joint_has_bounds(const ik_chain *c, int j)
{
    return c->dim == 2 ? (c->limit[j].flags & IK_LIMIT_RANGE) != 0 : (c->limit[j].flags & IK_LIMIT_HINGE) != 0;
}

/* Keeps the local pose of bones first..m-1 in work (2D: the turn; 3D: x, y, z of the
   quaternion, w >= 0). */
static void keep_pose(ik_chain *c, int first, int m)
{
    int j;
    if (c->dim == 2) { /* the turns themselves: no angle read from them (an atan2) */
        if (m > first) memcpy(c->work + 2 * (size_t)first, c->turn + first, (size_t)(m - first) * sizeof *c->turn);
        return;
    }
    for (j = first; j < m; j++) {
        ik_quat q = c->rot[j];
        ik_real s = q.w < 0 ? -1 : 1;
        c->work[3 * j] = s * q.x, c->work[3 * j + 1] = s * q.y, c->work[3 * j + 2] = s * q.z;
    }
}

static void restore_pose(ik_chain *c, int first, int m)
{
    int j;
    for (j = first; j < m; j++) {
        if (c->dim == 2) {
            c->turn[j] = ik_v2(c->work[2 * j], c->work[2 * j + 1]);
            c->angle[j] = IK_ANGLE_UNKNOWN;
        } else {
            ik_real x = c->work[3 * j], y = c->work[3 * j + 1], z = c->work[3 * j + 2];
            ik_real w2 = 1 - (x * x + y * y + z * z);
            c->rot[j] = ik_q_normalize(ik_q(w2 > 0 ? sqrt(w2) : 0, x, y, z));
        }
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
}

/* ---- one bone in a step ---- */

/*
 * The world axes joint j turns about in a step: 2D z (its angle); a hinge its axis; a
 * cone or free joint any axis (x, y, z), or, where a bound holds it (mode), an orthonormal
 * set without the way out: s, the swing away from the parent's +x (left out when the cone
 * holds the bone: mode bit 1), t, round the cone, and d, the twist about the bone itself
 * (left out when the twist limit holds it: bit 2). Returns how many.
 */
int ik_joint_axes(const ik_chain *c, int j, int mode, ik_vec3 axes[3])
{
    ik_vec3 d, p;
    int n = 0;
    if (c->dim == 2) {
        axes[0] = ik_v3(0, 0, 1);
        return 1;
    }
    if (c->limit[j].flags & IK_LIMIT_HINGE) {
        axes[0] = hinge_axis(c, j);
        return 1;
    }
    if (mode == 0) {
        axes[0] = ik_v3(1, 0, 0), axes[1] = ik_v3(0, 1, 0), axes[2] = ik_v3(0, 0, 1);
        return 3;
    }
    d = ik_dir3(c, j);
    p = ik_q_x_axis(j == 0 ? c->base_rot : c->wrot[j - 1]);
    if (!(mode & 1)) axes[n++] = ik_v3_normalize_or(ik_v3_cross(p, d), ik_v3_any_perpendicular(d));
    axes[n++] = ik_v3_normalize_or(ik_v3_sub(p, ik_v3_scale(d, ik_v3_dot(p, d))), ik_v3_any_perpendicular(d));
    if (!(mode & 2)) axes[n++] = d;
    return n;
}

int ik_joint_blocked(const ik_chain *c, int j, ik_vec3 turn)
{
    const ik_limit *limit = &c->limit[j];
    ik_vec3 d, p;
    int mode = 0;
    if (!limit->flags) return 0;
    if (ik_joint_has_bounds(c, j)) return pushed_out(ik_joint_bound_angle(c, j), turn.x, limit) ? -1 : 0;
    if (c->dim == 2) return 0;
    d = ik_dir3(c, j);
    p = ik_q_x_axis(j == 0 ? c->base_rot : c->wrot[j - 1]);
    if (limit->flags & IK_LIMIT_CONE) {
        /* out: the turn's part that swings the bone away from the parent's axis */
        ik_vec3 s = ik_v3_normalize_or(ik_v3_cross(p, d), ik_v3(0, 0, 0));
        ik_real swing = acos(ik_clamp(ik_v3_dot(p, d), -1, 1)), out = ik_v3_dot(turn, s);
        if (out > 0 && (swing >= limit->cone - 1e-9 || swing + out - limit->cone > 0.5 * out)) mode |= 1;
    }
    if (limit->flags & IK_LIMIT_TWIST) {
        ik_real twist = ik_twist_angle(c->rot[j], ik_v3(1, 0, 0)), along = ik_v3_dot(turn, d);
        if ((along > 0 && (twist >= limit->twist_max - 1e-9 || twist + along - limit->twist_max > 0.5 * along)) ||
            (along < 0 && (twist <= limit->twist_min + 1e-9 || limit->twist_min - (twist + along) > -0.5 * along)))
            mode |= 2;
    }
    return mode;
}

void ik_joint_turn(ik_chain *c, int j, ik_vec3 t)
{
    if (c->dim == 2 && !c->limit[j].flags) {
        /* A free joint's turn turned by t: no angle read back from it (an atan2). */
        c->turn[j] = ik_v2_renorm(ik_v2_rotate(c->turn[j], ik_v2(cos(t.x), sin(t.x))));
        c->angle[j] = IK_ANGLE_UNKNOWN;
    } else if (c->dim == 2) {
        ik_real a = ik_turn_angle(c, j) + t.x;
        ik_chain_set_turn_angle(c, j, ik_limit_angle(&c->limit[j], ik_wrap_angle(a)));
    } else {
        ik_quat parent = j == 0 ? c->base_rot : c->wrot[j - 1], r;
        if (c->limit[j].flags & IK_LIMIT_HINGE) {
            r = ik_q_axis_angle(c->limit[j].axis, t.x); /* in the parent's frame already */
        } else {
            ik_real angle = ik_v3_len(t);
            ik_vec3 unit = ik_v3_normalize_or(t, ik_v3(0, 0, 0)); /* 1 / angle overflows */
            if (!(angle > 0 && isfinite(angle)) || ik_v3_dot(unit, unit) == 0) return;
            r = ik_q_axis_angle(unit, angle);
            r = ik_q_mul(ik_q_mul(ik_q_conj(parent), r), parent);
        }
        c->rot[j] = ik_limit_rotation(&c->limit[j], ik_q_normalize(ik_q_mul(r, c->rot[j])));
    }
}

/*
 * With an orientation goal, the solvers reach for the point behind the tip bone with bones
 * 0..m-1 (m = n - 1), and the tip bone then takes its goal within its own limit: the goal
 * is met only if the turn from bone m - 1 to the goal is one that limit allows. The turn
 * bone m - 1 still needs for that: the goal's world orientation against the nearest local
 * rotation the tip's limit allows (2D an angle, 3D a rotation vector, world frame).
 */
static ik_vec3 orientation_gap(const ik_chain *c, int m)
{
    const ik_limit *limit = &c->limit[m];
    if (c->dim == 2) {
        ik_vec2 d = ik_dir2(c, m - 1);
        ik_real local = ik_wrap_angle(c->target_angle - atan2(d.y, d.x));
        return ik_v3(ik_wrap_angle(local - ik_limit_angle(limit, local)), 0, 0);
    } else {
        ik_quat w = c->wrot[m - 1], local = ik_q_normalize(ik_q_mul(ik_q_conj(w), c->target_rot));
        ik_quat held = ik_limit_rotation(limit, local);
        /* bone m - 1 must become goal * held^-1: the turn from w to that, in the world */
        ik_quat r = ik_q_normalize(ik_q_mul(ik_q_mul(c->target_rot, ik_q_conj(held)), ik_q_conj(w)));
        ik_real s = sqrt(r.x * r.x + r.y * r.y + r.z * r.z), angle;
        if (r.w < 0) r = ik_q(-r.w, -r.x, -r.y, -r.z);
        if (!(s > 0)) return ik_v3(0, 0, 0);
        angle = 2 * atan2(s, r.w);
        return ik_v3(r.x / s * angle, r.y / s * angle, r.z / s * angle);
    }
}

static ik_real gap_angle(const ik_chain *c, ik_vec3 gap)
{
    return c->dim == 2 ? fabs(gap.x) : ik_v3_len(gap);
}

/*
 * The axis gap_turn works with. 2D: (1, 0, 0) while there is a gap, else 0. 3D: a hinge on
 * the tip bone, while the goal's turn about it (from bone m - 1) is inside its range: its
 * axis in the world (gap_turn then takes a turn's part about it away); at a bound the hinge
 * takes nothing back that way: 0, and the whole turn counts (taken away there, 300 reachable
 * goals of 3-bone chains with hinges were reached 280 to 284 times, where 299 is right). A
 * cone or twist: the gap's direction, 0 without a gap (a gap below GAP_NONE, rounding, is
 * none: normalised, it would be a direction of noise).
 */
#define GAP_NONE 1e-12

static ik_vec3 gap_axis(const ik_chain *c, int m, ik_vec3 gap, int *hinge_tip)
{
    const ik_limit *limit = &c->limit[m];
    ik_vec3 none = ik_v3(0, 0, 0);
    *hinge_tip = c->dim == 3 && (limit->flags & IK_LIMIT_HINGE) != 0;
    if (c->dim == 2) return ik_v3(gap.x != 0 ? 1 : 0, 0, 0);
    if (*hinge_tip) {
        ik_quat local = ik_q_normalize(ik_q_mul(ik_q_conj(c->wrot[m - 1]), c->target_rot));
        ik_real about = ik_twist_angle(local, limit->axis);
        if (!(about > limit->min && about < limit->max)) return none;
        return ik_q_rotate(c->wrot[m - 1], limit->axis);
    }
    return ik_v3_len(gap) > GAP_NONE ? ik_v3_normalize_or(gap, none) : none;
}

/* The error of the pose now (rows->e) and its size against the tolerances: 1 when met. */
static int finish_error(const ik_chain *c, ik_vec3 target, int m, ik_rows *rows, ik_real *size)
{
    ik_vec3 e = ik_v3_sub(target, ik_joint_v3(c, m)), gap;
    ik_real d = ik_v3_len(e), tolerance = c->settings.tolerance;
    rows->distance = d;
    rows->e[0] = e.x * rows->unit, rows->e[1] = e.y * rows->unit, rows->e[2] = e.z * rows->unit;
    rows->k = c->dim;
    *size = d * rows->unit;
    rows->gap_axis = ik_v3(0, 0, 0);
    rows->hinge_tip = 0;
    if (!rows->oriented) return d <= tolerance;
    gap = orientation_gap(c, m);
    rows->gap_axis = gap_axis(c, m, gap, &rows->hinge_tip);
    rows->e[c->dim] = rows->scale * gap.x;
    if (c->dim == 3) rows->e[4] = rows->scale * gap.y, rows->e[5] = rows->scale * gap.z;
    rows->k = c->dim == 2 ? 3 : 6;
    *size = d * rows->unit + rows->scale * gap_angle(c, gap);
    /*
     * Met: the point behind and the tip bone's own error (the arc its tip is off by, longer
     * than the chord) within the tolerance together, the angle within its own. (Half the
     * tolerance each, as before, missed 16% of 2D tracking frames by a point behind at
     * 5e-4 to 1.3e-3 with no angle left to take.)
     */
    return gap_angle(c, gap) <= c->settings.angle_tolerance &&
           d + gap_angle(c, gap) * c->length[m] <= tolerance;
}

/*
 * How a turn of bone m - 1 (world rotation vector) changes the orientation gap, to first
 * order: the tip bone's limit takes whatever part of it the tip can turn back. A hinge takes
 * the part about its axis; a cone and twist take the turns within the cone and the twist's
 * range, so only the part along the gap itself (out across the bound) is left; a 2D range
 * takes every turn while the tip's angle is inside it (no gap). Taken whole,
 * as the gap's change, the steps spent their turns where the tip undid them: on 500 3-bone
 * chains with limits and an orientation goal (bench/limits.lua), most misses were crawls,
 * 0.002 to 0.007 short after 64 iterations, and 3.4% more reached with 1000.
 */
static ik_vec3 gap_turn(const ik_rows *rows, ik_vec3 turn)
{
    ik_vec3 along = ik_v3_scale(rows->gap_axis, ik_v3_dot(rows->gap_axis, turn));
    return rows->hinge_tip ? ik_v3_sub(turn, along) : along;
}

/* Joint j's columns of the step (1 to 3), each of rows->k entries; returns how many. */
static int joint_columns(const ik_chain *c, int j, int mode, ik_vec3 r, const ik_rows *rows, ik_real col[3][6])
{
    ik_vec3 axes[3];
    int i, n;
    if (c->dim == 2) {
        /* the orientation row: gap_turn */
        col[0][0] = -r.y, col[0][1] = r.x, col[0][2] = rows->scale * rows->gap_axis.x;
        return 1;
    }
    n = ik_joint_axes(c, j, mode, axes);
    for (i = 0; i < n; i++) {
        ik_vec3 v = ik_v3_cross(axes[i], r), a = gap_turn(rows, axes[i]);
        col[i][0] = v.x, col[i][1] = v.y, col[i][2] = v.z;
        col[i][3] = rows->scale * a.x, col[i][4] = rows->scale * a.y, col[i][5] = rows->scale * a.z;
    }
    return n;
}

/* Joint j's turn for the solution y: 2D and hinges an angle (in .x), else a rotation vector. */
static ik_vec3 joint_turn(const ik_chain *c, int j, int mode, ik_vec3 r, const ik_rows *rows, const ik_real *y)
{
    ik_real col[3][6];
    ik_vec3 axes[3], w = ik_v3(0, 0, 0);
    int n = joint_columns(c, j, mode, r, rows, col), i, k;
    if (c->dim == 3) ik_joint_axes(c, j, mode, axes);
    for (i = 0; i < n; i++) {
        ik_real t = 0;
        for (k = 0; k < rows->k; k++) t += col[i][k] * y[k];
        if (c->dim == 2 || (c->limit[j].flags & IK_LIMIT_HINGE)) return ik_v3(t, 0, 0);
        w = ik_v3_add(w, ik_v3_scale(axes[i], t));
    }
    return w;
}

int ik_solve_spd(ik_real *a, int stride, int k, const ik_real *e, ik_real *y)
{
    int i, j, l;
    for (i = 0; i < k; i++) {
        for (j = 0; j <= i; j++) {
            ik_real sum = a[i * stride + j];
            for (l = 0; l < j; l++) sum -= a[i * stride + l] * a[j * stride + l];
            if (i == j) {
                if (!(sum > 0 && isfinite(sum))) return 0;
                a[i * stride + i] = sqrt(sum);
            } else {
                a[i * stride + j] = sum / a[j * stride + j];
            }
        }
    }
    for (i = 0; i < k; i++) { /* L z = e */
        ik_real sum = e[i];
        for (l = 0; l < i; l++) sum -= a[i * stride + l] * y[l];
        y[i] = sum / a[i * stride + i];
    }
    for (i = k - 1; i >= 0; i--) { /* L^T y = z */
        ik_real sum = y[i];
        for (l = i + 1; l < k; l++) sum -= a[l * stride + i] * y[l];
        y[i] = sum / a[i * stride + i];
    }
    return 1;
}

/*
 * How bone j takes part in a step, given the first solution y0 (drop: there was one): -1
 * left out, else the mode of ik_joint_axes (ik_joint_blocked of its turn in y0).
 */
static int joint_mode(const ik_chain *c, int j, ik_vec3 r, const ik_rows *rows, const ik_real *y0, int drop)
{
    if (!drop || !c->limit[j].flags) return 0;
    return ik_joint_blocked(c, j, joint_turn(c, j, 0, r, rows, y0));
}

/* From joint j to the tip, in reaches. */
static ik_vec3 lever(const ik_chain *c, ik_vec3 tip, int j, const ik_rows *rows)
{
    return ik_v3_scale(ik_v3_sub(tip, ik_joint_v3(c, j)), rows->unit);
}

/*
 * The step below for a 2D chain without limits and orientation rows, in closed form: two
 * rows, every joint free, so J J^T + lambda^2 I is 2 x 2 and solved by its determinant, and
 * no joint is ever left out; the turns taken without trigonometry (below). Tracking takes
 * one a frame, so its cost is a solve's (bench/lua_bench.lua: a 3-bone chain tracking took
 * 2.1 times a hand-written FABRIK's time under LuaJIT through the general step, about 0.75
 * this way). The batch takes the same step, with the forward kinematics after it, for many
 * chains at once in vector lanes (free2 in batch_lanes.h): a change here is a change there.
 */
static int free_step2(ik_chain *c, int m, int first, const ik_rows *rows, ik_real lambda2)
{
    ik_vec2 tip = ik_joint2(c, m), r;
    ik_real a = lambda2, b = 0, d = lambda2, det, y0, y1, t, largest = 0, scale;
    int j;
    for (j = first; j < m; j++) { /* the columns (-r.y, r.x), r the lever in reaches */
        r = ik_v2_scale(ik_v2_sub(tip, ik_joint2(c, j)), rows->unit);
        a += r.y * r.y, b -= r.y * r.x, d += r.x * r.x;
    }
    det = a * d - b * b;
    if (!(det > 0 && isfinite(det))) return 0;
    y0 = (d * rows->e[0] - b * rows->e[1]) / det;
    y1 = (a * rows->e[1] - b * rows->e[0]) / det;
    for (j = first; j < m; j++) {
        r = ik_v2_scale(ik_v2_sub(tip, ik_joint2(c, j)), rows->unit);
        t = fabs(r.x * y1 - r.y * y0);
        if (t > largest) largest = t;
    }
    if (!(largest > 1e-15)) return 0;
    scale = largest > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / largest : 1;
    /*
     * Every turn from the pose the step was taken at, as below, each by the rotation
     * (1 - h^2, 2h) / (1 + h^2), h = t / 2: a turn of 2 atan(t / 2), which is t to third
     * order (t^3 / 12 less: 1.3% at the largest turn a step takes), with no trigonometric
     * call. The step is a linear estimate either way; what it gains is measured after.
     */
    for (j = first; j < m; j++) {
        ik_real h, k;
        r = ik_v2_scale(ik_v2_sub(tip, ik_joint2(c, j)), rows->unit);
        h = (r.x * y1 - r.y * y0) * scale / 2;
        k = 1 / (1 + h * h);
        c->turn[j] = ik_v2_renorm(ik_v2_rotate(c->turn[j], ik_v2((1 - h * h) * k, 2 * h * k)));
        c->angle[j] = IK_ANGLE_UNKNOWN;
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/*
 * The same for a 3D chain without limits: every joint turns about any axis, so its three
 * columns (e_i x r for the world axes e_i) add |r|^2 I - r r^T to J J^T, a 3 x 3 system
 * solved by its cofactors, and its turn, sum_i e_i ((e_i x r) . y), is the rotation vector
 * r x y; each taken as the rotation (1, w / 2) normalised (by 2 atan(|w| / 2)), no
 * trigonometry, as in 2D.
 */
static int free_step3(ik_chain *c, int m, int first, const ik_rows *rows, ik_real lambda2)
{
    ik_vec3 tip = ik_joint3(c, m), r, w, y;
    ik_real a[3][3] = {{lambda2, 0, 0}, {0, lambda2, 0}, {0, 0, lambda2}}, k[3][3], det, rr, size, largest = 0,
            scale;
    int j, i, l;
    for (j = first; j < m; j++) {
        r = ik_v3_scale(ik_v3_sub(tip, ik_joint3(c, j)), rows->unit);
        rr = ik_v3_dot(r, r);
        a[0][0] += rr - r.x * r.x, a[1][1] += rr - r.y * r.y, a[2][2] += rr - r.z * r.z;
        a[0][1] -= r.x * r.y, a[0][2] -= r.x * r.z, a[1][2] -= r.y * r.z;
    }
    a[1][0] = a[0][1], a[2][0] = a[0][2], a[2][1] = a[1][2];
    k[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    k[0][1] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
    k[0][2] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
    k[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
    k[1][2] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
    k[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    k[1][0] = k[0][1], k[2][0] = k[0][2], k[2][1] = k[1][2];
    det = a[0][0] * k[0][0] + a[0][1] * k[1][0] + a[0][2] * k[2][0];
    if (!(det > 0 && isfinite(det))) return 0;
    for (i = 0; i < 3; i++) {
        ik_real sum = 0;
        for (l = 0; l < 3; l++) sum += k[i][l] * rows->e[l];
        (&y.x)[i] = sum / det;
    }
    for (j = first; j < m; j++) {
        r = ik_v3_scale(ik_v3_sub(tip, ik_joint3(c, j)), rows->unit);
        size = ik_v3_len(ik_v3_cross(r, y));
        if (size > largest) largest = size;
    }
    if (!(largest > 1e-15)) return 0;
    scale = largest > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / largest : 1;
    for (j = first; j < m; j++) {
        ik_quat parent = j == 0 ? c->base_rot : c->wrot[j - 1], turn;
        r = ik_v3_scale(ik_v3_sub(tip, ik_joint3(c, j)), rows->unit);
        w = ik_v3_scale(ik_v3_cross(r, y), scale / 2);
        turn = ik_q_normalize(ik_q(1, w.x, w.y, w.z));
        turn = ik_q_mul(ik_q_mul(ik_q_conj(parent), turn), parent); /* in the parent's frame */
        c->rot[j] = ik_q_normalize(ik_q_mul(turn, c->rot[j]));
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/* One damped least-squares step of bones first..m-1; 0 when no joint can move. */
static int finish_step(ik_chain *c, int m, int first, const ik_rows *rows, ik_real lambda2)
{
    ik_vec3 tip = ik_joint_v3(c, m), t;
    ik_real a[6][6], col[3][6], y[6] = {0, 0, 0, 0, 0, 0}, y0[6], largest = 0, scale;
    int i, j, k, l, drop = 0, n, mode;
    if (!c->limited && !rows->oriented)
        return c->dim == 2 ? free_step2(c, m, first, rows, lambda2) : free_step3(c, m, first, rows, lambda2);
    for (;;) {
        int moving = 0, again = 0;
        memcpy(y0, y, sizeof y);
        for (k = 0; k < rows->k; k++)
            for (l = 0; l < rows->k; l++) a[k][l] = k == l ? lambda2 : 0;
        for (j = first; j < m; j++) {
            ik_vec3 r = lever(c, tip, j, rows);
            mode = joint_mode(c, j, r, rows, y0, drop);
            if (mode < 0) continue;
            moving++;
            n = joint_columns(c, j, mode, r, rows, col);
            for (i = 0; i < n; i++)
                for (k = 0; k < rows->k; k++)
                    for (l = 0; l <= k; l++) a[k][l] += col[i][k] * col[i][l];
        }
        if (moving == 0 || !ik_solve_spd(&a[0][0], 6, rows->k, rows->e, y)) return 0;
        if (drop) break;
        for (j = first; j < m && !again; j++)
            again = joint_mode(c, j, lever(c, tip, j, rows), rows, y, 1) != 0;
        if (!again) break;
        drop = 1; /* solve again without the ways out the bounds hold */
    }
    /* No joint turns more than IK_STEP_MAX_TURN: the linearisation holds for small turns. */
    for (j = first; j < m; j++) {
        ik_vec3 r = lever(c, tip, j, rows);
        ik_real size;
        mode = joint_mode(c, j, r, rows, y0, drop);
        if (mode < 0) continue;
        t = joint_turn(c, j, mode, r, rows, y);
        size = c->dim == 2 || (c->limit[j].flags & IK_LIMIT_HINGE) ? fabs(t.x) : ik_v3_len(t);
        if (size > largest) largest = size;
    }
    if (!(largest > 1e-15)) return 0;
    scale = largest > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / largest : 1;
    for (k = 0; k < rows->k; k++) y[k] *= scale;
    /* Every turn from the pose the step was taken at: the world data stays the old one
       until the forward kinematics below, as the linearisation assumes. */
    for (j = first; j < m; j++) {
        ik_vec3 r = lever(c, tip, j, rows);
        mode = joint_mode(c, j, r, rows, y0, drop);
        if (mode >= 0) ik_joint_turn(c, j, joint_turn(c, j, mode, r, rows, y));
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/* Turns each bounded joint towards the middle of its range (see the top of the section). */
static int unbend(ik_chain *c, int m, int first)
{
    int j, moved = 0;
    for (j = first; j < m; j++) {
        ik_real angle, mid, turn;
        if (!ik_joint_has_bounds(c, j)) continue;
        angle = ik_joint_bound_angle(c, j);
        mid = (c->limit[j].min + c->limit[j].max) / 2;
        turn = ik_clamp(mid - angle, -FINISH_UNBEND, FINISH_UNBEND);
        if (fabs(turn) < 1e-3) continue;
        if (c->dim == 2) ik_chain_set_turn_angle(c, j, angle + turn);
        else c->rot[j] = ik_limit_rotation(&c->limit[j], ik_q_normalize(ik_q_mul(ik_q_axis_angle(c->limit[j].axis, turn), c->rot[j])));
        moved = 1;
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return moved;
}

int ik_limits_oriented(const ik_chain *c, int m)
{
    return c->has_orientation && m == c->n - 1 && m > 0 && c->limit[m].flags != 0;
}

/*
 * The steps measure lengths in reaches (the unit), so a chain and its target scaled by a
 * power of two take the same steps, to the bit. They are taken where that unit and every
 * joint and the target, measured from the base in reaches, are finite and within
 * FINISH_RANGE, so no product they form overflows (lambda^2 went to infinity, then
 * inf * 0) or loses all its bits. Beyond that the solver's own answer stands. At the bones'
 * own lengths (scale 1, as every solve that steps has them) and with no joint pinned
 * (first 0), the joints need no look: every one is made from the base by unit turns of the
 * bones (by steps_begin, or before it while the pose was the truth), so none lies farther
 * from it than the reach, or twice that where the base is far from the origin (each sum
 * rounds by at most its step again): 2 in reaches at most; only the target is measured (7%
 * of a tracked solve's instructions in a 10-bone 2D chain went to the joints' look). Pinned
 * joints (relaxation's weight 0) are where the solve found them, so they are measured.
 */
#define FINISH_RANGE 1e100

static int finish_in_range(const ik_chain *c, ik_vec3 target, int m, int first, ik_real unit)
{
    ik_vec3 base = ik_joint_v3(c, 0), v;
    int j = c->scale == 1 && first == 0 ? m + 1 : 0;
    if (!(unit > 0 && unit < INFINITY)) return 0;
    if (c->dim == 2) { /* the joints' z is 0: the target's last */
        ik_vec2 b = ik_v2(base.x, base.y), w;
        for (; j <= m; j++) {
            w = ik_v2_scale(ik_v2_sub(ik_joint2(c, j), b), unit);
            if (!(fabs(w.x) <= FINISH_RANGE && fabs(w.y) <= FINISH_RANGE)) return 0;
        }
    }
    for (; j <= m + 1; j++) {
        v = ik_v3_scale(ik_v3_sub(j > m ? target : ik_joint_v3(c, j), base), unit);
        if (!(fabs(v.x) <= FINISH_RANGE && fabs(v.y) <= FINISH_RANGE && fabs(v.z) <= FINISH_RANGE)) return 0;
    }
    return 1;
}

/*
 * Tracking with limits: the steps take the smallest turns that bring the tip to its goal, so
 * a joint that reached a bound stays on it, and frame by frame the pose drifts into the
 * corners of its ranges until too few joints are left free to follow the goal; then the
 * chain loses it and jumps when the solve finds it again (bench/track_limits.lua: 2 of 8
 * chains of 6 bones stayed within 3 times the animation's own turn a frame). So a tracked
 * solve first turns each joint with bounds (a 2D range, a 3D hinge) towards the middle of
 * its range, by CENTER_RATE times how far it is from the middle in half ranges, with the
 * tip's share of that turn taken out by the other joints (the turns projected on the steps'
 * null space: g - J^T (J J^T + CENTER_DAMPING I)^-1 J g); the steps then take what the
 * projection, linear, left. Only where the joints can move more ways than the rows ask:
 * otherwise no turn leaves the tip where it is. The rate was measured at 0.005 to 0.1 a
 * solve; bench/limits.lua 2D 6 bones tracking, the largest change of a joint between frames
 * 1.355 / 0.505 / 0.845 rad (FABRIK / CCD / relax) -> 0.060 for all three (the animation
 * turns 0.038).
 */
#define CENTER_RATE 0.05
#define CENTER_DAMPING 1e-6

/* Bone j's turn towards the middle of its range, before the projection. */
static ik_real center_pull(const ik_chain *c, int j)
{
    const ik_limit *limit = &c->limit[j];
    ik_real half = (limit->max - limit->min) / 2;
    if (!ik_joint_has_bounds(c, j) || !(half > 0)) return 0;
    return CENTER_RATE * ((limit->min + half - ik_joint_bound_angle(c, j)) / half);
}

/* The turn above, from the rows of the pose as it stands (finish's, goal not met); each
   bone's pull kept in c->work (free until finish's steps). Returns whether it turned. */
static int center(ik_chain *c, int m, int first, const ik_rows *rows)
{
    ik_real a[6][6], col[3][6], b[6] = {0, 0, 0, 0, 0, 0}, y[6], *pull = c->work;
    ik_vec3 tip = ik_joint_v3(c, m);
    int i, j, k, l, n, ways = 0, pulled = 0;
    for (k = 0; k < rows->k; k++)
        for (l = 0; l < rows->k; l++) a[k][l] = k == l ? CENTER_DAMPING : 0;
    for (j = first; j < m; j++) {
        pull[j] = center_pull(c, j);
        if (pull[j] != 0) pulled = 1;
        n = joint_columns(c, j, 0, lever(c, tip, j, rows), rows, col);
        ways += n;
        for (i = 0; i < n; i++)
            for (k = 0; k < rows->k; k++) {
                for (l = 0; l <= k; l++) a[k][l] += col[i][k] * col[i][l];
                b[k] += col[i][k] * pull[j]; /* a joint with bounds has one column */
            }
    }
    if (!pulled || ways <= rows->k || !ik_solve_spd(&a[0][0], 6, rows->k, b, y)) return 0;
    for (j = first; j < m; j++) {
        ik_vec3 t = joint_turn(c, j, 0, lever(c, tip, j, rows), rows, y);
        ik_joint_turn(c, j, ik_v3(pull[j] - t.x, -t.y, -t.z));
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/*
 * Tracking's prediction. A goal that moves smoothly moves the pose smoothly, and where the
 * goal fixes the pose but for a side, only the motion before tells the sides apart: a 2D
 * 3-bone chain with an orientation goal, its middle joint taken through straight by the
 * animation, bent back the side it came from (as good an answer to that frame's goal), and
 * twenty frames on a bound forced it across in one frame (bench/limits.lua: 0.410 rad where
 * the animation turns 0.036). So a tracked solve whose goal the pose does not meet starts
 * from the pose the last two solves' motion continues to: each bone turned again by its turn
 * between the starts of the last tracked solve and this one, within its limits, when that
 * turn is at most PREDICT_CAP (a larger one is a jump, not a motion, and is not repeated).
 * Only when the chain is as the last solve, a tracked one, left it (its pose version: a base
 * that moved keeps it); the start is kept for the next solve either way. The steps then take
 * what the motion did not.
 *
 * Where the bones can turn more ways than the steps' rows ask, a motion the goal does not see
 * would go on frame after frame (at the whole turn, a 3D chain of 7 free bones tracking an
 * animation of 0.0058 rad a frame turned 0.0237, spec/tracking_spec.lua): there the bones
 * turn on by PREDICT_SPARE of it, and such a motion dies out. Chains without limits and with
 * bones to spare do not predict: they did not jump before, and at 0.9 their frames still
 * take a step, so it only cost time (bench/lua_bench.lua, LuaJIT, a 10-bone chain tracking
 * 176 -> 287 ns). With limits, side by side (bench/limits.lua, tracking, 1000 frames): 2D 3
 * bones with an orientation goal met 99.2 -> 100% of frames, iterations a frame 1.8 -> 0.9,
 * largest turn 0.410 -> 0.038 rad; 2D 6 bones 1.7 -> 1.0 iterations, 0.060 -> 0.063 rad; 3D 7
 * bones 1.9 -> 1.2, 0.075 -> 0.068 rad; bench/limits_fresh.lua's 2D chains within 3 times the
 * animation's turn 17 -> 19 of 20 a solver. Rigs have their own stages and do not predict (on
 * their joint-space stage it made the 3D rigs jump more).
 */
#define PREDICT_CAP 0.05
#define PREDICT_COS 0.99875026039496628    /* cos(PREDICT_CAP) */
#define PREDICT_COS_HALF 0.99968751627570263 /* cos(PREDICT_CAP / 2): a quaternion's w */
#define PREDICT_SPARE 0.9

/* How many ways bones first..m-1 can turn (2D and hinges 1 each, other 3D joints 3). */
static int ways_to_turn(const ik_chain *c, int first, int m)
{
    int j, ways = 0;
    if (!c->limited) return (m - first) * (c->dim == 2 ? 1 : 3);
    for (j = first; j < m; j++) ways += c->dim == 2 || (c->limit[j].flags & IK_LIMIT_HINGE) ? 1 : 3;
    return ways;
}

/* Bones first..m-1 continue their motion (a goal not met: apply); every bone's start kept.
   rows: the steps' rows of the pose now. Returns whether a bone turned. */
static int predict(ik_chain *c, int first, int m, int apply, const ik_rows *rows)
{
    int j, from = m, spare;
    ik_real k;
    spare = ways_to_turn(c, first, m) > rows->k;
    if (spare && !c->limited) return 0;
    k = spare ? PREDICT_SPARE : 1;
    apply = apply && c->track_have && c->track_seen == ik_chain_pose_version(c);
    c->track_recorded = 1;
    for (j = 0; j < c->n; j++) {
        int go = apply && j >= first && j < m;
        if (c->dim == 2) {
            ik_vec2 now = c->turn[j], d = ik_v2_unrotate(now, c->track_turn[j]);
            c->track_turn[j] = now;
            if (!go || !(d.x >= PREDICT_COS) || d.y == 0) continue; /* (d.y 0: unturned) */
            if (c->limit[j].flags) {
                ik_real a = ik_wrap_angle(ik_turn_angle(c, j) + k * atan2(d.y, d.x));
                ik_chain_set_turn_angle(c, j, ik_limit_angle(&c->limit[j], a));
            } else {
                if (k != 1) {
                    d = ik_v2(1 + k * (d.x - 1), k * d.y);
                    d = ik_v2_scale(d, 1 / sqrt(ik_v2_dot(d, d)));
                }
                c->turn[j] = ik_v2_renorm(ik_v2_rotate(now, d));
                c->angle[j] = IK_ANGLE_UNKNOWN;
            }
        } else {
            ik_quat now = c->rot[j], d = ik_q_mul(ik_q_conj(c->track_rot[j]), now);
            c->track_rot[j] = now;
            if (d.w < 0) d = ik_q(-d.w, -d.x, -d.y, -d.z);
            if (!go || !(d.w >= PREDICT_COS_HALF) || (d.x == 0 && d.y == 0 && d.z == 0)) continue;
            if (k != 1) d = ik_q(1 + k * (d.w - 1), k * d.x, k * d.y, k * d.z);
            c->rot[j] = ik_q_normalize(ik_q_mul(now, d));
            if (c->limit[j].flags) c->rot[j] = ik_limit_rotation(&c->limit[j], c->rot[j]);
        }
        if (j < from) from = j;
    }
    if (from == m) return 0;
    ik_chain_mark_stale(c, from);
    ik_chain_fk(c);
    return 1;
}

/*
 * A solve in phases (ik_steps in chain.h): steps_begin makes the chain current and measures
 * it (0: out of the steps' range, nothing to do); while ik_steps_going, each iteration keeps
 * the pose (ik_steps_keep), steps, and weighs the step (ik_steps_after). centre: a tracked
 * solve, which turns the bounded joints first (center, above).
 */
static int steps_begin(ik_steps *s, ik_chain *c, ik_vec3 target, int m, int iterations, int first, int centre)
{
    ik_real reach = ik_chain_reach_to(c, m, NULL);
    s->c = c, s->target = target, s->m = m, s->first = first, s->iterations = iterations;
    s->iter = 0, s->unbends = 0, s->stuck = 0, s->done = 0, s->stopped = 0;
    s->rows.oriented = ik_limits_oriented(c, m);
    /*
     * The orientation rows weigh a radian as an eighth of the reach: the bench measured
     * 1 (the reach), 1/4, 1/8, 1/16 and 1/40 and the tip bone's length; 1/8 reached most
     * (orientation first drove the bones into the corners of their cones).
     */
    s->rows.unit = 1 / reach;
    s->rows.scale = 1.0 / 8;
    s->rows.distance = NAN;
    /* The steps turn the local pose: the joints are made from it (only a pose derived from
       the joints just now needs that; otherwise they are). */
    if (c->pose_behind) {
        ik_chain_settle(c);
        ik_chain_mark_stale(c, first);
    }
    ik_chain_fk(c);
    if (!finish_in_range(c, target, m, first, s->rows.unit)) return 0;
    s->lambda2 = FINISH_DAMPING;
    /* The error of the pose as it stands: measured again only when the pose changed. */
    s->done = finish_error(c, target, m, &s->rows, &s->size);
    if (centre && predict(c, first, m, !s->done, &s->rows)) s->done = finish_error(c, target, m, &s->rows, &s->size);
    if (centre && c->limited && !s->done && center(c, m, first, &s->rows))
        s->done = finish_error(c, target, m, &s->rows, &s->size);
    return 1;
}

int ik_steps_going(const ik_steps *s) { return s->iter < s->iterations && !s->done && !s->stopped; }

void ik_steps_keep(ik_steps *s)
{
    keep_pose(s->c, s->first, s->m);
    s->iter++;
}

int ik_steps_free2(const ik_steps *s) { return s->c->dim == 2 && !s->c->limited && !s->rows.oriented; }

/* Whether the bounded joints turned towards the middles of their ranges (at most
   FINISH_UNBENDS times a solve); when not, the steps stop. */
static int unbend_or_stop(ik_steps *s)
{
    if (s->unbends >= FINISH_UNBENDS || !unbend(s->c, s->m, s->first)) {
        s->stopped = 1;
        return 0;
    }
    s->unbends++;
    return 1;
}

/* A step taken, its error now: kept if it gained (the damping lowered), else undone. */
static void weigh(ik_steps *s, const ik_rows *now, ik_real after, int met_now)
{
    ik_chain *c = s->c;
    if (after < s->size) {
        /* a gain of less than a percent twice running: a minimum the limits made */
        s->stuck = after > 0.99 * s->size ? s->stuck + 1 : 0;
        s->lambda2 = s->lambda2 * 0.25;
        if (s->lambda2 < 1e-12) s->lambda2 = 1e-12;
        s->rows = *now, s->size = after, s->done = met_now;
    } else {
        restore_pose(c, s->first, s->m); /* (3D: to rounding, so measured again) */
        s->lambda2 *= 8;
        s->stuck = s->lambda2 > 1 ? s->stuck + 2 : s->stuck;
        s->done = finish_error(c, s->target, s->m, &s->rows, &s->size);
    }
    if (s->stuck >= 2 && unbend_or_stop(s)) {
        s->stuck = 0;
        s->lambda2 = FINISH_DAMPING;
        s->done = finish_error(c, s->target, s->m, &s->rows, &s->size);
    }
}

void ik_steps_after(ik_steps *s, int stepped)
{
    ik_chain *c = s->c;
    ik_real after;
    ik_rows now;
    int met_now;
    if (!stepped) {
        if (unbend_or_stop(s)) s->done = finish_error(c, s->target, s->m, &s->rows, &s->size);
        return;
    }
    now = s->rows;
    met_now = finish_error(c, s->target, s->m, &now, &after);
    weigh(s, &now, after, met_now);
}

int ik_steps_step(ik_steps *s) { return finish_step(s->c, s->m, s->first, &s->rows, s->lambda2); }

void ik_steps_run(ik_steps *s)
{
    while (ik_steps_going(s)) {
        ik_steps_keep(s);
        ik_steps_after(s, ik_steps_step(s));
    }
}

/*
 * A solver on points derives each bone's world rotation from the one before the solve by
 * the smallest turn of its direction (ik_chain_settle), which keeps its twist; the steps turn
 * bones about any axis. So on a 3D chain without limits the world rotations the passes
 * would derive from are kept, the steps taken, and the pose then derived from the joints
 * they leave, as after the passes (with limits, the limits say what the twist is).
 */
static int keeps_twist(const ik_chain *c, int points) { return points && c->dim == 3 && !c->limited; }

static void keep_points_rot(ik_chain *c, int points)
{
    if (keeps_twist(c, points)) memcpy(c->points_rot, c->wrot, (size_t)c->n * sizeof *c->wrot);
}

static void derive_from_points(ik_chain *c, int points)
{
    int i;
    if (!keeps_twist(c, points)) return;
    for (i = 0; i < c->n; i++) {
        c->wrot[i] = c->points_rot[i];
        ik_v3_store(ik_dir(c, i), ik_q_x_axis(c->wrot[i]));
    }
    c->pose_behind = 1;
}

int ik_joint_finish(ik_chain *c, ik_vec3 target, int m, int iterations, int first, int points)
{
    ik_steps s;
    keep_points_rot(c, points);
    if (steps_begin(&s, c, target, m, iterations, first, 0)) ik_steps_run(&s);
    derive_from_points(c, points);
    return s.iter;
}

/*
 * Tracking: a goal that moved a little since the last solve (within IK_TRACK_NEAR of the
 * reach). The passes of FABRIK and relaxation creep against limits and CCD's sweeps turn
 * one joint at a time, so 10 iterations a frame often fell short and the pose jumped when
 * they caught up (bench/limits.lua: 3D FABRIK met 88% of frames, its largest joint change
 * between frames 0.94 rad for an animation that turns 0.04; without limits FABRIK, CCD and
 * relaxation met 83.5, 63.2 and 57.1% of frames in 2D); joint-space steps from where the
 * chain is move every joint a little, as the goal did. A chain without limits leaves a
 * target beyond its reach to the solver (which straightens). With escape off the solvers
 * stay as the textbooks have them, here too.
 */

int ik_steps_track(ik_steps *s, ik_chain *c, ik_vec3 target, int m, int first, int points, ik_real distance)
{
    ik_real reach;
    s->points = points;
    s->iter = 0;
    if (!ik_may_track(c, m)) return 0;
    reach = ik_chain_reach_to(c, m, NULL);
    if (distance != distance) distance = ik_joint_distance(c, m, target);
    if (!(distance < IK_TRACK_NEAR * reach)) return 0;
    if (!c->limited && !(ik_v3_len(ik_v3_sub(target, ik_joint_v3(c, 0))) < reach - c->settings.tolerance))
        return 0;
    keep_points_rot(c, points);
    if (!steps_begin(s, c, target, m, ik_iteration_budget(c->settings.iterations), first, 1)) s->iterations = 0;
    return 1;
}

int ik_steps_end(ik_steps *s, int *used, ik_real *distance)
{
    derive_from_points(s->c, s->points);
    *used = s->iter;
    if (distance) *distance = s->rows.distance;
    return s->done;
}

int ik_joint_track(ik_chain *c, ik_vec3 target, int m, int first, int points, int *used, ik_real *distance)
{
    ik_steps s;
    *used = 0;
    if (!ik_steps_track(&s, c, target, m, first, points, NAN)) return 0;
    ik_steps_run(&s);
    return ik_steps_end(&s, used, distance);
}
