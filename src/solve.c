/*
 * solve.c - what every solve does around its solver.
 *
 * The order of a solve: check everything (a rejected call changes nothing) and keep the
 * target as the chain's goal; if the goal is already met, stop there. Otherwise remember
 * the pose when mix, max_turn or 3D twist need it; with an orientation goal the solver
 * reaches for the point behind the tip bone with the other bones; stretch (a target out of
 * reach scales the bones and straightens the chain, and no solver runs) or else soften the
 * target; run the solver; pose the tip bone to its orientation goal; bring every bone
 * within its limits; blend with the remembered pose (mix) and hold each bone's turn to
 * max_turn; report the distance to the real goal. The goal's measures and the finish are
 * goal.c's, which the rig shares; each solver is a row of the table below.
 */
#include "chain.h"

#include <string.h>


/* ---- the way in ---- */

ik_real ik_soft_distance(ik_real d, ik_real reach, ik_real softness)
{
    /* The ease begins at reach - softness (or at the base, for a softness beyond reach). */
    ik_real start = reach - softness, span = softness;
    if (!(softness > 0)) return d; /* off */
    if (start < 0) start = 0, span = reach;
    if (!(span > 0)) return d < reach ? d : reach; /* no reach to ease into: never beyond it */
    if (!(d > start)) return d;
    /* Written from the reach down, so rounding can never put the result beyond it. */
    return reach - span * exp(-(d - start) / span);
}

/* ---- the solvers ---- */

/*
 * What a solve needs to know of its solver: how to run it, and what it needs around it.
 * Each solver is its own file; adding one is that file and a row of the table below.
 */
typedef struct solver_desc {
    /* Runs the solver towards aim (joint m; the tip bone for an aim solve, towards the
       goal), returning its iterations; *distance: the tip's from aim when known (else NaN),
       *aim_error: an aim's angle left. */
    int (*run)(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error);
    int on_points;   /* works on the joints alone (FABRIK, relaxation): a 2D chain without
                        limits and the rest around it need no local pose until the end */
    int keeps_twist; /* derives 3D rotations by the smallest turn: after an escape's bend
                        the twist is rebuilt (restore_twist) */
    int aims;        /* turns the tip bone to point at the goal: no point behind, no
                        stretch, met by the angle */
    int closed_form; /* solves in one step: not skipped when the goal looks met */
    int measures;    /* leaves the tip's distance from its aim (FABRIK) */
    int batches;     /* ik_solve_many may run it in lanes (FABRIK) */
    int bones;       /* the bones it needs (with an orientation goal, one more); 0: any */
    /* The whole solve in one pass for a plain 3D chain of lean_bones bones (lean, below);
       NULL: none. */
    int (*lean)(ik_chain *c, ik_vec3 target, ik_result *out);
    int lean_bones;
} solver_desc;

static int run_fabrik(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)aim_error;
    return ik_fabrik(c, aim, m, distance);
}

static int run_ccd(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)distance, (void)aim_error;
    return ik_ccd(c, aim, m);
}

static int run_relax(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)distance, (void)aim_error;
    return ik_relax(c, aim, m);
}

static int run_two_bone(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)m, (void)distance, (void)aim_error;
    return ik_two_bone_chain(c, aim);
}

static int run_aim(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)aim, (void)m, (void)distance;
    return ik_aim(c, c->target, aim_error);
}

/* By ik_solver: run, on_points, keeps_twist, aims, closed_form, measures, batches, bones,
   lean, lean_bones. */
static const solver_desc SOLVERS[] = {
    {run_fabrik, 1, 1, 0, 0, 1, 1, 0, NULL, 0},                /* IK_SOLVER_FABRIK */
    {run_ccd, 0, 0, 0, 0, 0, 0, 0, NULL, 0},                   /* IK_SOLVER_CCD */
    {run_relax, 1, 1, 0, 0, 0, 0, 0, NULL, 0},                 /* IK_SOLVER_RELAX */
    {run_two_bone, 0, 1, 0, 1, 0, 0, 2, ik_two_bone_lean3, 2}, /* IK_SOLVER_TWO_BONE */
    {run_aim, 0, 0, 1, 0, 0, 0, 0, ik_aim_lean3, 1},           /* IK_SOLVER_AIM */
};

/* One solve in progress. */
typedef struct solve {
    const solver_desc *solver;
    int m;          /* the bones the solver moves: n, or n - 1 with an orientation goal */
    int oriented;   /* the tip bone takes the orientation goal */
    ik_vec3 aim;    /* where the solver takes joint m: the goal, or the point behind it,
                       softened */
    int run;        /* the solver runs (not met already, not stretched) */
    int iterations;
    ik_real aim_error;
    ik_real met;    /* the tip's distance when it met the goal already (nothing moved) */
    ik_real distance; /* FABRIK: the tip's from aim, before and after (NaN: not known); the
                         result's distance after, when aim is the goal and nothing moves
                         the tip on the way out */
    int aim_is_goal;  /* aim is the goal itself: no orientation goal, nothing softened */
} solve;


/*
 * The stretch factor that makes bones 0..m-1, straight, reach the point behind the tip
 * bone, whose own length stretches too: s with |g - s L u| = s R (g the goal from the base,
 * u the tip bone's goal direction, L its length, R the others' reach; L = 0 without an
 * orientation goal: s = |g| / R). The stable root, in units of max(L, R) so nothing
 * underflows; DBL_MAX when the factor itself would overflow; 0: no such factor.
 */
static ik_real stretch_factor(ik_vec3 g, ik_vec3 u, ik_real L, ik_real R)
{
    ik_real m = L > R ? L : R, len = ik_v3_len(g), gu, l, r, below, s;
    if (!(len > 0) || !(R > 0)) return 0;
    gu = ik_v3_dot(ik_v3_normalize_or(g, u), u);
    l = L / m, r = R / m;
    below = l * gu + sqrt(fmax(l * l * gu * gu + (r * r - l * l), 0));
    if (!(below > 0)) return 0;
    s = len / m / below;
    return s <= DBL_MAX ? s : DBL_MAX;
}

/* Every bone along the line to the point behind the tip bone, the tip bone along u. */
static void straighten(ik_chain *c, const solve *s, ik_vec3 u)
{
    ik_vec3 behind = ik_v3_sub(c->target, ik_v3_scale(u, c->length[c->n - 1] * c->scale));
    ik_vec3 line = ik_v3_normalize_or(ik_v3_sub(s->oriented ? behind : c->target, ik_joint_v3(c, 0)),
                                      ik_dir_v3(c, 0));
    int i;
    for (i = 0; i < s->m; i++) ik_pose_bone(c, i, c->length[i] > 0 ? line : ik_dir_v3(c, i));
    if (s->oriented) ik_pose_bone(c, c->n - 1, u);
    c->stale_from = c->n;
}

/* *aim eased towards reach from the base (softness > 0); 0 when it stays (on the base). */
static int soften(const ik_chain *c, ik_vec3 *aim, ik_real reach)
{
    ik_vec3 base = ik_joint_v3(c, 0);
    ik_real d = ik_v3_len(ik_v3_sub(*aim, base));
    if (!(d > 0)) return 0;
    *aim = ik_v3_add(base, ik_v3_scale(ik_v3_sub(*aim, base), ik_soft_distance(d, reach, c->settings.softness) / d));
    return 1;
}

/*
 * Prepares a solve of the kept goal with solver: the pose made the truth where the solver
 * or the way out needs it, the goal checked for being met, stretch done, the solver's aim
 * point set. The chain has followed its parent.
 */
static void way_in(ik_chain *c, ik_solver solver, solve *s)
{
    const ik_settings *set = &c->settings;
    const solver_desc *desc = &SOLVERS[solver];
    int aim = desc->aims;
    ik_real reach;
    ik_vec3 u = ik_v3(0, 0, 0), base;
    int measured = 0;
    s->solver = desc;
    s->oriented = c->has_orientation && !aim;
    s->m = s->oriented ? c->n - 1 : c->n;
    s->run = 0;
    s->iterations = 0;
    s->aim_error = 0;
    s->met = 0;
    s->distance = NAN;
    s->aim_is_goal = 0;
    c->kicked = 0;
    /* Only FABRIK and relaxation on a 2D chain without limits work on the joints alone. */
    if (c->limited || c->dim == 3 || !desc->on_points ||
        set->mix < 1 || set->max_turn < INFINITY || s->oriented || c->scale != 1 || set->stretch)
        ik_chain_settle(c);
    ik_chain_fk(c);

    /* The goal met already: nothing moves (limits still have their word on the way out). */
    if (aim) {
        s->aim_error = ik_aim_error(c, c->target);
        if (s->aim_error <= set->angle_tolerance && !c->limited) return;
    } else if (!desc->closed_form && c->scale == 1 && !c->limited) {
        s->met = ik_tip_distance(c);
        measured = 1;
        if (s->met <= set->tolerance && (!s->oriented || ik_orientation_error(c) <= set->angle_tolerance))
            return;
    }
    if (c->dim == 3 || set->mix < 1 || set->max_turn < INFINITY) ik_save_pose(c);
    if (aim) {
        s->run = 1;
        return;
    }

    base = ik_joint_v3(c, 0);
    reach = ik_chain_reach_to(c, s->m, NULL);
    if (s->oriented) u = ik_goal_direction(c);
    if (set->stretch) {
        ik_real factor = stretch_factor(ik_v3_sub(c->target, base), u,
                                        s->oriented ? c->length[c->n - 1] : 0, reach);
        if (factor > 1) {
            /* A stretched bone stays within the range of ik.h (see chain.c). */
            ik_real most = c->longest > 0 ? IK_MAX_COORD / c->longest : DBL_MAX;
            if (!(factor <= most)) factor = most <= DBL_MAX ? most : DBL_MAX;
            c->scale = factor;
            straighten(c, s, u);
            s->iterations = 1;
            return;
        }
    }
    if (c->scale != 1) { /* back to the bones' own lengths */
        c->scale = 1;
        c->stale_from = 0;
        ik_chain_fk(c);
    }
    s->aim = s->oriented ? ik_v3_sub(c->target, ik_v3_scale(u, c->length[c->n - 1])) : c->target;
    s->aim_is_goal = !s->oriented;
    if (!set->stretch && set->softness > 0 && soften(c, &s->aim, reach)) s->aim_is_goal = 0;
    if (measured && s->aim_is_goal) s->distance = s->met; /* at scale 1, as the solver starts */
    s->run = 1;
}

static void run_solver(ik_chain *c, solve *s)
{
    s->iterations = s->solver->run(c, s->aim, s->m, &s->distance, &s->aim_error);
}

/* ---- the way out ---- */

/*
 * 3D position-based solves promise that each bone's new world rotation is the smallest
 * turn from its direction before the call to its new one, applied to its world rotation
 * before the call. An escape bend in between would leave the bend's own turn in the
 * twist, so after one the rotations of bones 0..m-1 are rebuilt from the remembered pose
 * that way (within the limits, which win).
 */
static void restore_twist(ik_chain *c, int m)
{
    ik_quat before_parent = c->base_rot, parent = c->base_rot;
    int i;
    ik_chain_settle(c);
    ik_chain_fk(c);
    for (i = 0; i < m; i++) {
        ik_quat before = ik_q_mul(before_parent, c->prev_rot[i]);
        ik_quat world = ik_q_mul(ik_q_from_to(ik_q_x_axis(before), ik_dir3(c, i)), before);
        ik_quat local = ik_q_normalize(ik_q_mul(ik_q_conj(parent), world));
        c->rot[i] = ik_limit_rotation(&c->limit[i], local);
        parent = ik_q_normalize(ik_q_mul(parent, c->rot[i]));
        before_parent = before;
    }
    c->stale_from = 0;
}

/*
 * Whether the tip's distance FABRIK ended on is the result's: the aim was the goal, and the
 * way out moved no joint (no limits, mix, max_turn, nor a 3D escape's twist rebuilt).
 */
static int tip_known(const ik_chain *c, const solve *s)
{
    const ik_settings *set = &c->settings;
    return s->solver->measures && s->aim_is_goal && s->distance == s->distance && !c->limited &&
           set->mix == 1 &&
           set->max_turn == INFINITY && !(c->kicked && c->dim == 3);
}

static void way_out(ik_chain *c, solve *s, ik_result *out)
{
    const ik_settings *set = &c->settings;
    int moved = s->run || s->iterations > 0;
    if (moved && c->kicked && c->dim == 3 && s->solver->keeps_twist)
        restore_twist(c, s->m);
    if (moved && s->oriented) ik_orient_tip(c);
    if (c->limited) {
        ik_chain_settle(c);
        ik_chain_clamp_limits(c);
    }
    if (moved && (set->mix < 1 || set->max_turn < INFINITY)) {
        ik_chain_settle(c);
        if (set->mix < 1) ik_mix_pose(c, set->mix);
        if (set->max_turn < INFINITY) ik_hold_turns(c, set->max_turn);
        /* The pose before may have been beyond the limits: they win over both. */
        ik_chain_clamp_limits(c);
    }
    ik_chain_fk(c);
    if (moved) ik_chain_changed(c);
    /* What tracking's prediction reads at the next solve (joint_space.c). */
    c->track_have = c->track_recorded;
    c->track_recorded = 0;
    c->track_seen = ik_chain_pose_version(c);

    out->iterations = s->iterations;
    if (s->solver->aims) {
        out->angle_error = moved ? ik_aim_error(c, c->target) : s->aim_error;
        out->distance = out->angle_error;
        out->reached = out->angle_error <= set->angle_tolerance;
        return;
    }
    out->distance = !moved ? s->met : tip_known(c, s) ? s->distance : ik_tip_distance(c);
    out->angle_error = s->oriented ? ik_orientation_error(c) : 0;
    out->reached = out->distance <= set->tolerance &&
                   (!s->oriented || out->angle_error <= set->angle_tolerance);
}

/* ---- other tries ---- */

/*
 * With limits, an iterative solve (not two_bone nor aim) can end in a minimum the limits
 * make, short of a goal its chain can reach. One that ends short with iterations to spare
 * tries again from fixed poses within the limits (their ranges at the fractions below), each
 * with what is left of the budget; a try's pose replaces the best so far only when it
 * reaches or halves its miss (a smaller gain is not worth the jump). bench/limits.lua, 500
 * trials, 64 iterations, 3D 3 bones with limits and an orientation goal, from straight /
 * from random: CCD 95.6 / 93.2% -> 96.0 / 94.6%, FABRIK 94.2 / 92.6 -> 96.8 / 96.2, relax
 * 94.2 / 92.2 -> 96.6 / 96.0. Not after a solver that took no iteration (its goal was met,
 * only the limits moved the tip), nor after a stretch, nor with mix or max_turn (they hold
 * the pose to the one before), nor with escape off (the textbook solvers); while tracking
 * (the tip within IK_TRACK_NEAR of the reach from the goal when the solve began) only when
 * the solve gained nothing (a chain stuck where its goal stays).
 */
#define TRIES 3
static const ik_real TRY_AT[TRIES][3] = {{0.5, 0.7, 0.5}, {0.15, 0.7, 0.15}, {0.85, 0.7, 0.85}};

/* How far a pose is from its goal: a radian weighs an eighth of the reach, as in the
   joint-space steps. */
static ik_real miss_of(const ik_chain *c, ik_real distance, ik_real angle_error)
{
    return distance + angle_error * c->reach / 8;
}

static ik_real miss(const ik_chain *c, const ik_result *r)
{
    return miss_of(c, r->distance, r->angle_error);
}

/* Whether a solve of c with solver may try again at all (what the pose does not decide). */
static int may_try(const ik_chain *c, ik_solver solver)
{
    const ik_settings *set = &c->settings;
    const solver_desc *desc = &SOLVERS[solver];
    return c->limited && set->escape && !desc->closed_form && !desc->aims && set->mix == 1 &&
           set->max_turn == INFINITY;
}

/* The miss before a solve that may try again (may_try), and whether it tracks. */
static ik_real miss_before(ik_chain *c, int *tracking)
{
    ik_real distance;
    ik_chain_settle(c);
    ik_chain_fk(c);
    distance = ik_tip_distance(c);
    *tracking = distance < IK_TRACK_NEAR * c->reach;
    return miss_of(c, distance, c->has_orientation ? ik_orientation_error(c) : 0);
}

/* Whether a solve that may try again (may_try) tries: it fell short with iterations left. */
static int tries_wanted(const ik_chain *c, const ik_result *out, ik_real before, int tracking)
{
    return !out->reached && out->iterations > 0 &&
           out->iterations < ik_iteration_budget(c->settings.iterations) && c->scale == 1 &&
           (!tracking || miss(c, out) >= before);
}

/*
 * A tip bone with an orientation goal and a limit: the solvers reach for the point behind
 * it, blind to whether the tip's limit lets it take its goal from there, so one start can
 * spend the whole budget closing in where the tip cannot be (a 3D 3-bone chain's tip went
 * from 2.3 to 4.3 away over 28 iterations while the point behind closed in; with 200
 * iterations instead of 64, the tries reached 98% of bench/limits.lua's goals, not 95%).
 * Such a solve, when it may try again (may_try) and is not tracking, gives its first start a
 * quarter of the budget and the tries from other poses the rest. Measured with 64
 * iterations, from straight / from random, before -> after: bench/limits.lua 3D CCD 96.4 /
 * 94.8 -> 97.4 / 97.3%, FABRIK 97.2 / 95.8 -> 97.8 / 97.1, relax 97.1 / 95.9 -> 97.8 /
 * 97.0; 2D CCD 95.8 / 95.7 -> 98.0 / 97.8, FABRIK and relax 96.1 -> 96.6 / 97.1; and on
 * bench/limits_fresh.lua's chains (other limits, lengths and poses) every row gained (2D
 * 93.1-93.9 -> 94.4-96.8%, 3D 95.6-97.2 -> 97.4-98.4%). A third of the budget gave about
 * the same; a half lost 2 points on FABRIK and relaxation.
 */
#define FIRST_SHARE 4

static int first_budget(const ik_chain *c, int tracking)
{
    int share = ik_iteration_budget(c->settings.iterations) / FIRST_SHARE;
    if (tracking || !ik_limits_oriented(c, c->n - 1)) return c->settings.iterations;
    return share > 0 ? share : 1;
}

/* The local pose kept as the best so far, and put back from it. */
static void keep_best(ik_chain *c)
{
    size_t n = (size_t)c->n;
    if (c->dim == 2) {
        memcpy(c->best_turn, c->turn, n * sizeof *c->turn);
        memcpy(c->best_angle, c->angle, n * sizeof *c->angle);
    } else {
        memcpy(c->best_rot, c->rot, n * sizeof *c->rot);
    }
}

static void put_back_best(ik_chain *c)
{
    size_t n = (size_t)c->n;
    if (c->dim == 2) {
        memcpy(c->turn, c->best_turn, n * sizeof *c->turn);
        memcpy(c->angle, c->best_angle, n * sizeof *c->angle);
    } else {
        memcpy(c->rot, c->best_rot, n * sizeof *c->rot);
    }
    ik_chain_mark_stale(c, 0);
    ik_chain_fk(c);
    ik_chain_changed(c);
}

static void try_pose(ik_chain *c, int k)
{
    const ik_real *u = TRY_AT[k];
    int i;
    for (i = 0; i < c->n; i++) {
        if (c->dim == 2) ik_chain_set_turn_angle(c, i, ik_limit_sample_angle(&c->limit[i], u[0]));
        else c->rot[i] = ik_limit_sample_rotation(&c->limit[i], u[0], u[1], u[2]);
    }
    ik_chain_mark_stale(c, 0);
    ik_chain_fk(c);
    c->track_have = 0; /* a jump, not a motion: nothing to carry on (joint_space.c, predict) */
}

/*
 * The other tries, after the first ended in *out: each within the budget that is left,
 * which the solvers read from the settings (set for the try, then put back).
 */
static void try_again(ik_chain *c, ik_solver solver, ik_result *out)
{
    int iterations = c->settings.iterations, budget = ik_iteration_budget(iterations);
    int used = out->iterations, k, best_is_last = 1;
    ik_result best = *out, r;
    keep_best(c);
    for (k = 0; k < TRIES && used < budget && !best.reached; k++) {
        solve s;
        try_pose(c, k);
        c->settings.iterations = budget - used;
        way_in(c, solver, &s);
        if (s.run) run_solver(c, &s);
        way_out(c, &s, &r);
        c->settings.iterations = iterations;
        used += r.iterations;
        best_is_last = r.reached || miss(c, &r) < 0.5 * miss(c, &best);
        if (best_is_last) {
            best = r;
            keep_best(c);
        }
    }
    if (!best_is_last) put_back_best(c);
    c->track_have = 0; /* the pose came from a try: its start is no motion to carry on */
    *out = best;
    out->iterations = used;
}

/* ---- the entry points ---- */

/* Whether solver can solve chain c with its goals as they are. */
static ik_status check_solver(const ik_chain *c, ik_solver solver)
{
    int bones = SOLVERS[solver].bones;
    if (bones > 0 && c->n != bones + (c->has_orientation ? 1 : 0)) return IK_ERR_NOT_TWO_BONE;
    return IK_OK;
}

/* The checks of a solve of c towards target (NULL: the kept goal); nothing changes. */
static ik_status check_solve(const ik_chain *c, ik_solver solver, const ik_real *target)
{
    if (target) {
        ik_status st = c->tip_parent ? IK_ERR_HELD : ik_check_coords(target, c->dim);
        if (st != IK_OK) return st;
    } else if (!c->has_target) {
        return IK_ERR_NO_TARGET;
    }
    return check_solver(c, solver);
}

/*
 * Whether the lean solve of solver takes c: a 3D chain of its bones with nothing around the
 * solver (no limits, no orientation goal, mix 1, no max_turn, no stretch) at its own
 * lengths. Way in and way out then have nothing to do but soften the goal, keep it and
 * report.
 */
static int lean(const ik_chain *c, const solver_desc *desc)
{
    const ik_settings *s = &c->settings;
    return desc->lean && c->dim == 3 && c->n == desc->lean_bones && !c->limited && !c->has_orientation &&
           s->mix == 1 && s->max_turn == INFINITY && !s->stretch && c->scale == 1;
}

static void solve_lean(ik_chain *c, const solver_desc *desc, ik_result *out)
{
    ik_vec3 aim = c->target;
    ik_chain_settle(c);
    ik_chain_fk(c);
    c->kicked = 0;
    c->track_have = 0; /* not a tracked solve (joint_space.c, predict) */
    if (!desc->aims && c->settings.softness > 0) soften(c, &aim, ik_chain_reach_to(c, c->n, NULL));
    if (desc->lean(c, aim, out)) ik_chain_changed(c);
}

static ik_status solve_with(ik_chain *c, ik_solver solver, const ik_real *target, ik_result *out)
{
    solve s;
    ik_real before = 0;
    int tracking = 0, iterations, may;
    ik_status st = check_solve(c, solver, target);
    if (st != IK_OK) return st;
    if (target) ik_chain_keep_target(c, target); /* checked above */
    else ik_chain_read_hold(c);
    ik_chain_follow(c);
    if (lean(c, &SOLVERS[solver])) {
        solve_lean(c, &SOLVERS[solver], out);
        return IK_OK;
    }
    /* Whether other tries may follow, asked once: the three steps of the tries (the miss
     * before, the first start's budget, whether to try again) are taken only then. */
    may = may_try(c, solver);
    if (may) before = miss_before(c, &tracking);
    iterations = c->settings.iterations;
    if (may) c->settings.iterations = first_budget(c, tracking); /* read back by the solvers */
    way_in(c, solver, &s);
    if (s.run) run_solver(c, &s);
    way_out(c, &s, out);
    c->settings.iterations = iterations;
    if (may && tries_wanted(c, out, before, tracking)) try_again(c, solver, out);
    return IK_OK;
}

ik_status ik_chain_solve(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, c->settings.solver, target, out);
}

ik_status ik_chain_solve_fabrik(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_FABRIK, target, out);
}

ik_status ik_chain_solve_ccd(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_CCD, target, out);
}

ik_status ik_chain_solve_relax(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_RELAX, target, out);
}

ik_status ik_chain_solve_two_bone(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_TWO_BONE, target, out);
}

ik_status ik_chain_solve_aim(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_AIM, target, out);
}

/* ---- many chains ---- */

/* Whether the batch may take c: FABRIK with nothing around it but the plain passes. */
static int batchable(const ik_chain *c)
{
    const ik_settings *s = &c->settings;
    return SOLVERS[s->solver].batches && !c->limited && !c->has_orientation && s->mix == 1 &&
           s->max_turn == INFINITY;
}

typedef struct batch {
    int count;
    ik_chain *chain[IK_BATCH];
    int index[IK_BATCH];
    solve s[IK_BATCH];
    ik_vec3 aim[IK_BATCH];
    int iterations[IK_BATCH];
    ik_real distance[IK_BATCH];
} batch;

/* Whether c is in the batch, or hangs below a chain that is. */
static int depends(const ik_chain *c)
{
    for (; c; c = c->parent)
        if (c->batched) return 1;
    return 0;
}

static int flush(batch *b, ik_result *results, ik_result *scratch)
{
    int k, reached = 0;
    if (b->count == 0) return 0;
    for (k = 0; k < b->count; k++) b->distance[k] = b->s[k].distance;
    ik_fabrik_batch(b->chain, b->aim, b->count, b->iterations, b->distance);
    for (k = 0; k < b->count; k++) {
        ik_result *r = results ? &results[b->index[k]] : scratch;
        b->chain[k]->batched = 0;
        b->s[k].iterations = b->iterations[k];
        b->s[k].distance = b->distance[k];
        way_out(b->chain[k], &b->s[k], r);
        reached += r->reached;
    }
    b->count = 0;
    return reached;
}

ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, ik_result *results, int *failed)
{
    int k, reached = 0, dim = count > 0 ? chains[0]->dim : 2;
    ik_result scratch;
    batch b;
    for (k = 0; k < count; k++) {
        const ik_chain *c = chains[k];
        ik_status st = c->dim != dim ? IK_ERR_DIMENSION
                                     : check_solve(c, c->settings.solver,
                                                   targets ? targets + (size_t)k * (size_t)dim : NULL);
        if (st != IK_OK) {
            if (failed) *failed = k;
            return st;
        }
    }
    b.count = 0;
    for (k = 0; k < count; k++) {
        ik_chain *c = chains[k];
        ik_result *r = results ? &results[k] : &scratch;
        solve *s = &b.s[b.count];
        if (!batchable(c)) {
            reached += flush(&b, results, &scratch);
            solve_with(c, c->settings.solver, targets ? targets + (size_t)k * (size_t)dim : NULL, r);
            reached += r->reached;
            continue;
        }
        /* In the array's order: a chain waits for its parents (and itself) in the batch, a
           held one for the chain holding its tip. */
        if (depends(c) || (targets == NULL && c->tip_parent && depends(c->tip_parent))) {
            reached += flush(&b, results, &scratch);
            s = &b.s[0];
        }
        if (targets) ik_chain_keep_target(c, targets + (size_t)k * (size_t)dim); /* checked first */
        else ik_chain_read_hold(c);
        ik_chain_follow(c);
        way_in(c, c->settings.solver, s);
        if (!s->run) {
            way_out(c, s, r);
            reached += r->reached;
            continue;
        }
        b.chain[b.count] = c;
        c->batched = 1;
        b.index[b.count] = k;
        b.aim[b.count] = s->aim;
        if (++b.count == IK_BATCH) reached += flush(&b, results, &scratch);
    }
    reached += flush(&b, results, &scratch);
    if (reached_count) *reached_count = reached;
    return IK_OK;
}
