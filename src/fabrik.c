/*
 * fabrik.c - Forward And Backward Reaching Inverse Kinematics, 2D and 3D.
 *
 * A. Aristidou and J. Lasenby, "FABRIK: A fast, iterative solver for the Inverse
 * Kinematics problem", Graphical Models 73(5), 2011. On world-space joint points: the
 * backward pass puts the tip on the target and walks to the base, placing each joint at
 * its bone's length from the child along the line to its old position; the forward pass
 * puts joint 0 back on the base and walks out again. After a forward pass every bone has
 * its length (to rounding), so the tip's distance is the real one.
 *
 * A chain without limits is solved on its joints alone: they become the truth
 * (pose_behind), and angles or rotations are derived from them only when read (chain.c).
 * 2D chains carry no z. Each step computes len / |w| as (len / |w|^2) * sqrt(|w|^2): the
 * division and the square root then run side by side instead of one after the other,
 * which is most of a step's latency (ik_fab_step2 in chain.h). Many chains at once are
 * batch.c's.
 *
 * Joint limits act inside both passes, as the paper suggests. Backward, a bone's direction
 * is held within what its child's limit allows relative to the child's new direction (the
 * child's 2D range, or its 3D cone). Forward, each bone is posed along its new segment
 * within its own limits (ik_pose_bone) before the next joint is placed, so every forward
 * pass ends on a pose the limits allow.
 *
 * Unreachable (|target - base| >= total length): the chain straightens towards the target
 * in one step, as in the paper; so does a target within tolerance of full reach, which
 * the straight chain reaches and FABRIK's passes approach only very slowly. A solve that
 * stops making progress escapes or stops (escape.c); on a chain with limits it first takes
 * joint-space steps (ik_joint_finish, joint_space.c), which do not crawl where the passes and
 * the limits fight, and an orientation goal's tip bone is made able to take its goal the
 * same way.
 */
#include "chain.h"

/*
 * The passes without limits. Backward over bones hi-1..lo, joint hi already placed: joint i
 * at length[i] from joint i + 1. Forward over bones lo..hi-1 from joint lo: joint i + 1 at
 * length[i] from joint i. The same in both dimensions, but 2D carries no z.
 */
static void backward2(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec2 next = ik_v2_load(joint + 2 * (size_t)hi);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_real *p = joint + 2 * (size_t)i;
        next = ik_v2_sub(next, ik_fab_step2(ik_v2_sub(next, ik_v2_load(p)), length[i], dir + 2 * (size_t)i));
        ik_v2_store(p, next);
    }
}

static void forward2(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec2 from = ik_v2_load(joint + 2 * (size_t)lo);
    int i;
    for (i = lo; i < hi; i++) {
        ik_real *p = joint + 2 * (size_t)(i + 1);
        from = ik_v2_add(from, ik_fab_step2(ik_v2_sub(ik_v2_load(p), from), length[i], dir + 2 * (size_t)i));
        ik_v2_store(p, from);
    }
}

static void backward3(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec3 next = ik_v3_load(joint + 3 * (size_t)hi);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_real *p = joint + 3 * (size_t)i;
        next = ik_v3_sub(next, ik_fab_step3(ik_v3_sub(next, ik_v3_load(p)), length[i], dir + 3 * (size_t)i));
        ik_v3_store(p, next);
    }
}

static void forward3(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec3 from = ik_v3_load(joint + 3 * (size_t)lo);
    int i;
    for (i = lo; i < hi; i++) {
        ik_real *p = joint + 3 * (size_t)(i + 1);
        from = ik_v3_add(from, ik_fab_step3(ik_v3_sub(ik_v3_load(p), from), length[i], dir + 3 * (size_t)i));
        ik_v3_store(p, from);
    }
}

static void backward_limited(ik_chain *c, int lo, int hi)
{
    ik_vec3 child = ik_v3(0, 0, 0);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_vec3 next = ik_joint_v3(c, i + 1);
        ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(next, ik_joint_v3(c, i)), ik_dir_v3(c, i));
        ik_real *p = ik_joint(c, i);
        if (i + 1 < hi && c->length[i + 1] > 0) dir = ik_limit_backward(c, i, dir, child);
        next = ik_v3_sub(next, ik_v3_scale(dir, c->length[i]));
        p[0] = next.x, p[1] = next.y;
        if (c->dim == 3) p[2] = next.z;
        if (c->length[i] > 0) child = dir;
    }
}

void ik_fabrik_backward(ik_chain *c, int lo, int hi, const ik_real *end)
{
    int a;
    for (a = 0; a < c->dim; a++) ik_joint(c, hi)[a] = end[a];
    if (c->limited) {
        backward_limited(c, lo, hi);
        return;
    }
    c->pose_behind = 1; /* the joints are the truth from now on */
    if (c->dim == 2) backward2(c->joint, c->length, c->dir, lo, hi);
    else backward3(c->joint, c->length, c->dir, lo, hi);
}

void ik_fabrik_forward(ik_chain *c, int lo, int hi)
{
    if (c->limited) {
        /* The forward pass within limits: each bone posed as it goes (ik_pose_points). */
        ik_pose_points(c, c->joint, lo, hi);
        return;
    }
    if (c->dim == 2) forward2(c->joint, c->length, c->dir, lo, hi);
    else forward3(c->joint, c->length, c->dir, lo, hi);
}

/* Joint 0 back on the base, which the backward pass moved. */
void ik_fabrik_put_base(ik_chain *c)
{
    ik_real *p = c->joint;
    p[0] = c->base.x, p[1] = c->base.y;
    if (c->dim == 3) p[2] = c->base.z;
}


void ik_fabrik_straighten(ik_chain *c, ik_vec3 target, int m)
{
    ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, ik_joint_v3(c, 0)), ik_dir_v3(c, 0));
    int i, a;
    if (c->limited) {
        for (i = 0; i < m; i++) ik_pose_bone(c, i, c->length[i] > 0 ? u : ik_dir_v3(c, i));
        ik_chain_mark_stale(c, m);
        return;
    }
    c->pose_behind = 1;
    for (i = 0; i < m; i++) {
        ik_real *p = ik_joint(c, i), uv[3];
        uv[0] = u.x, uv[1] = u.y, uv[2] = u.z;
        for (a = 0; a < c->dim; a++) p[c->dim + a] = p[a] + uv[a] * c->length[i];
    }
}


/*
 * FABRIK's step when it must normalise first (ik_fab_step2, ik_fab_step3 in chain.h): w
 * scaled to len, or the fallback direction when w has none.
 */
IK_NOINLINE ik_vec2 ik_fab_step2_slow(ik_vec2 w, ik_real len, const ik_real *fallback)
{
    return ik_v2_scale(ik_v2_normalize_or(w, ik_v2_load(fallback)), len);
}

IK_NOINLINE ik_vec3 ik_fab_step3_slow(ik_vec3 w, ik_real len, const ik_real *fallback)
{
    return ik_v3_scale(ik_v3_normalize_or(w, ik_v3_load(fallback)), len);
}

/* ---- one solve in progress: what the single solve and the batch (batch.c) share ---- */

/* The start after the tracking steps: used of them taken (none met the goal). */
static int fab_rest(ik_fab *f, ik_chain *c, ik_vec3 target, int m, ik_real distance, int used)
{
    const ik_settings *s = &c->settings;
    ik_real from_base;
    if (used > 0) { /* they fell short: the passes go on from where they left the chain */
        distance = ik_joint_distance(c, m, target);
        f->distance = NAN;
        if (used >= ik_iteration_budget(s->iterations)) return used;
    }
    from_base = c->dim == 2 ? ik_v2_len(ik_v2_sub(ik_v2(target.x, target.y), ik_joint2(c, 0)))
                            : ik_v3_len(ik_v3_sub(target, ik_joint3(c, 0)));
    /*
     * Out of reach, or within tolerance of full reach (where FABRIK crawls): straight. One
     * bone: its first iteration points it at the target, and every later one would repeat it.
     */
    if (m == 1 || from_base >= ik_chain_reach_to(c, m, NULL) - s->tolerance) {
        ik_fabrik_straighten(c, target, m);
        f->distance = NAN;
        return used + 1;
    }
    f->c = c;
    f->target = target;
    f->end[0] = target.x, f->end[1] = target.y, f->end[2] = target.z;
    f->m = m;
    f->iter = used;
    f->crawl = 0;
    f->progress = ik_progress_from(c, m, distance, from_base);
    return -1;
}

/* Joint m's distance from target, measured when NaN, kept in f: whether it is within tolerance. */
static int fab_met(ik_fab *f, const ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    if (*distance != *distance) *distance = ik_joint_distance(c, m, target);
    f->distance = *distance;
    return *distance <= c->settings.tolerance;
}

/*
 * As ik_fab_open, the steps and ik_fab_close would do it, written out: a short chain's solve
 * feels every call and store (one bone through open and close took 3 to 5 ns more, 46 ns).
 */
int ik_fab_start(ik_fab *f, ik_chain *c, ik_vec3 target, int m, ik_real distance)
{
    int used = 0;
    if (fab_met(f, c, target, m, &distance)) return 0;
    /* A goal tracked frame by frame: joint-space steps first (joint_space.c). */
    if (ik_may_track(c, m) && ik_joint_track(c, target, m, 0, 1, &used, &f->distance)) return used; /* met */
    return fab_rest(f, c, target, m, distance, used);
}

int ik_fab_open(ik_fab *f, ik_steps *steps, ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    f->c = c;
    f->target = target;
    f->m = m;
    if (fab_met(f, c, target, m, distance)) return IK_FAB_DONE;
    /* A goal tracked frame by frame: joint-space steps first (joint_space.c). */
    return ik_steps_track(steps, c, target, m, 0, 1, *distance) ? IK_FAB_STEPS : IK_FAB_PASSES;
}

int ik_fab_close(ik_fab *f, ik_steps *steps, int opened, ik_real distance)
{
    int used = 0;
    if (opened == IK_FAB_DONE) return 0;
    if (opened == IK_FAB_STEPS && ik_steps_end(steps, &used, &f->distance)) return used; /* met */
    return fab_rest(f, f->c, f->target, f->m, distance, used);
}

int ik_fab_next(ik_fab *f, ik_real distance)
{
    const ik_settings *s = &f->c->settings;
    f->iter++;
    f->distance = distance;
    if (distance <= s->tolerance || f->iter >= ik_iteration_budget(s->iterations))
        return IK_FAB_DONE;
    switch (ik_progress_next(f->c, &f->progress, distance)) {
    case IK_GO_ON: return IK_FAB_GO_ON;
    case IK_STOP: return IK_FAB_DONE;
    case IK_KICK: break;
    case IK_CRAWL: f->crawl = 1; break;
    }
    return IK_FAB_KICK;
}

int ik_fab_kick(ik_fab *f)
{
    ik_chain *c = f->c;
    const ik_settings *s = &c->settings;
    if (f->crawl) {
        /* Creeping without limits: joint-space steps (joint_space.c), then passes again
           if they leave anything. */
        int budget = ik_iteration_budget(s->iterations);
        f->crawl = 0;
        f->iter += ik_joint_finish(c, f->target, f->m, budget - f->iter, 0, 1);
        f->distance = ik_joint_distance(c, f->m, f->target);
        return f->distance > s->tolerance && f->iter < budget;
    }
    ik_chain_settle(c);
    if (c->limited) {
        /* Joint-space steps first (joint_space.c); what they leave, the CCD sweeps. */
        int budget = ik_iteration_budget(s->iterations);
        f->iter += ik_joint_finish(c, f->target, f->m, budget - f->iter, 0, 1);
        f->iter += ik_escape_finish(c, f->target, f->m, budget - f->iter, 0);
        f->distance = NAN;
        return 0;
    }
    ik_escape_kick(c, f->target, &f->progress, 0);
    return 1;
}

void ik_fab_finish(ik_fab *f)
{
    ik_chain *c = f->c;
    int m = f->m, next;
    do {
        if (c->limited) {
            ik_fabrik_backward(c, 0, m, f->end);
            ik_fabrik_put_base(c);
            ik_fabrik_forward(c, 0, m);
        } else if (c->dim == 2) { /* the passes themselves: a short chain feels every call */
            c->pose_behind = 1;
            ik_v2_store(ik_joint(c, m), ik_v2(f->end[0], f->end[1]));
            backward2(c->joint, c->length, c->dir, 0, m);
            ik_v2_store(c->joint, ik_v2(c->base.x, c->base.y));
            forward2(c->joint, c->length, c->dir, 0, m);
        } else {
            c->pose_behind = 1;
            ik_v3_store(ik_joint(c, m), ik_v3_load(f->end));
            backward3(c->joint, c->length, c->dir, 0, m);
            ik_v3_store(c->joint, c->base);
            forward3(c->joint, c->length, c->dir, 0, m);
        }
        next = ik_fab_next(f, ik_joint_distance(c, m, f->target));
        if (next == IK_FAB_KICK) next = ik_fab_kick(f);
    } while (next);
}

static int fabrik_run(ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    ik_fab f;
    int done = ik_fab_start(&f, c, target, m, *distance);
    *distance = f.distance;
    if (done >= 0) return done;
    ik_fab_finish(&f);
    *distance = f.distance;
    return f.iter;
}

int ik_fabrik(ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    int iter = fabrik_run(c, target, m, distance);
    /* The point behind an oriented tip bone reached: its parent turned so the tip bone's
       limit lets it take its goal (joint_space.c). */
    if (c->limited && ik_limits_oriented(c, m) && iter < ik_iteration_budget(c->settings.iterations)) {
        iter += ik_joint_finish(c, target, m, ik_iteration_budget(c->settings.iterations) - iter, 0, 1);
        *distance = NAN;
    }
    return iter;
}
