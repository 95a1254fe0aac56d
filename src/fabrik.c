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
 * which is most of a step's latency.
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
 * stops making progress escapes or stops (escape.c).
 */
#include "chain.h"

/*
 * FABRIK's step: w scaled to length len, or fallback (unit) scaled to it when w has no
 * direction. The fast path needs |w|^2 in (1e-300, 1e300) and q = len / |w|^2 in [1e-150,
 * 1e300], which keeps |w q| = len / |w| within [1e-300, 1e300]: no product overflows or
 * underflows (a bone of 1e-246 next to joints near 1e150 lost its length to an underflow).
 * Anything else, zero-length bones included, normalises first.
 */
static IK_NOINLINE ik_vec2 along2_slow(ik_vec2 w, ik_real len, const ik_real *fallback)
{
    return ik_v2_scale(ik_v2_normalize_or(w, ik_v2_load(fallback)), len);
}

static IK_NOINLINE ik_vec3 along3_slow(ik_vec3 w, ik_real len, const ik_real *fallback)
{
    return ik_v3_scale(ik_v3_normalize_or(w, ik_v3_load(fallback)), len);
}

static IK_ALWAYS_INLINE ik_vec2 along2(ik_vec2 w, ik_real len, const ik_real *fallback)
{
    ik_real d = w.x * w.x + w.y * w.y;
    if (d > 1e-300 && d < 1e300) {
        ik_real q = len / d;
        if (q >= 1e-150 && q <= 1e300) {
            ik_real s = sqrt(d);
            return ik_v2(w.x * q * s, w.y * q * s);
        }
    }
    return along2_slow(w, len, fallback);
}

static IK_ALWAYS_INLINE ik_vec3 along3(ik_vec3 w, ik_real len, const ik_real *fallback)
{
    ik_real d = w.x * w.x + w.y * w.y + w.z * w.z;
    if (d > 1e-300 && d < 1e300) {
        ik_real q = len / d;
        if (q >= 1e-150 && q <= 1e300) {
            ik_real s = sqrt(d);
            return ik_v3(w.x * q * s, w.y * q * s, w.z * q * s);
        }
    }
    return along3_slow(w, len, fallback);
}

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
        next = ik_v2_sub(next, along2(ik_v2_sub(next, ik_v2_load(p)), length[i], dir + 2 * (size_t)i));
        ik_v2_store(p, next);
    }
}

static void forward2(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec2 from = ik_v2_load(joint + 2 * (size_t)lo);
    int i;
    for (i = lo; i < hi; i++) {
        ik_real *p = joint + 2 * (size_t)(i + 1);
        from = ik_v2_add(from, along2(ik_v2_sub(ik_v2_load(p), from), length[i], dir + 2 * (size_t)i));
        ik_v2_store(p, from);
    }
}

static void backward3(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec3 next = ik_v3_load(joint + 3 * (size_t)hi);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_real *p = joint + 3 * (size_t)i;
        next = ik_v3_sub(next, along3(ik_v3_sub(next, ik_v3_load(p)), length[i], dir + 3 * (size_t)i));
        ik_v3_store(p, next);
    }
}

static void forward3(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec3 from = ik_v3_load(joint + 3 * (size_t)lo);
    int i;
    for (i = lo; i < hi; i++) {
        ik_real *p = joint + 3 * (size_t)(i + 1);
        from = ik_v3_add(from, along3(ik_v3_sub(ik_v3_load(p), from), length[i], dir + 3 * (size_t)i));
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
static void put_base(ik_chain *c)
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

/* One solve in progress: what the single and the batched solve share. */
typedef struct fab {
    ik_chain *c;
    ik_vec3 target;
    ik_real end[3];
    int m, iter;
    ik_progress progress;
} fab;

/*
 * Starts a solve: the iterations it is done with (0: within tolerance already; 1: out of
 * reach, or one bone, straightened), or -1 when it is to iterate.
 */
static int fab_start(fab *f, ik_chain *c, ik_vec3 target, int m)
{
    const ik_settings *s = &c->settings;
    ik_real distance = ik_joint_distance(c, m, target), from_base;
    if (distance <= s->tolerance) return 0;
    from_base = c->dim == 2 ? ik_v2_len(ik_v2_sub(ik_v2(target.x, target.y), ik_joint2(c, 0)))
                            : ik_v3_len(ik_v3_sub(target, ik_joint3(c, 0)));
    /*
     * Out of reach, or within tolerance of full reach (where FABRIK crawls): straight. One
     * bone: its first iteration points it at the target, and every later one would repeat it.
     */
    if (m == 1 || from_base >= ik_chain_reach_to(c, m, NULL) - s->tolerance) {
        ik_fabrik_straighten(c, target, m);
        return 1;
    }
    f->c = c;
    f->target = target;
    f->end[0] = target.x, f->end[1] = target.y, f->end[2] = target.z;
    f->m = m;
    f->iter = 0;
    f->progress = ik_progress_from(c, m, distance, from_base);
    return -1;
}

/* After an iteration's passes: whether the solve goes on (escaping a lock-up if it must). */
static int fab_after(fab *f)
{
    ik_chain *c = f->c;
    const ik_settings *s = &c->settings;
    ik_real distance = ik_joint_distance(c, f->m, f->target);
    f->iter++;
    if (distance <= s->tolerance || f->iter >= s->iterations) return 0;
    switch (ik_progress_next(c, &f->progress, distance)) {
    case IK_GO_ON: return 1;
    case IK_STOP: return 0;
    case IK_KICK: break;
    }
    ik_chain_settle(c);
    if (c->limited) {
        f->iter += ik_escape_finish(c, f->target, f->m, s->iterations - f->iter, 0);
        return 0;
    }
    ik_escape_kick(c, f->target, &f->progress, 0);
    return 1;
}

int ik_fabrik(ik_chain *c, ik_vec3 target, int m)
{
    fab f;
    int done = fab_start(&f, c, target, m);
    if (done >= 0) return done;
    do {
        ik_fabrik_backward(c, 0, m, f.end);
        put_base(c);
        ik_fabrik_forward(c, 0, m);
    } while (fab_after(&f));
    return f.iter;
}

/*
 * The batch: chains without limits, solved side by side. Every chain takes exactly the
 * steps ik_fabrik would, with the same arithmetic in the same order; only the chains'
 * steps are interleaved, bone s of every chain still iterating before bone s + 1 of any, so
 * the processor overlaps the independent chains' square roots and divisions, which one
 * chain must wait for one after the other.
 */
/* What the passes read of each chain, gathered once so the inner loops only compute. */
typedef struct lanes {
    ik_real *joint[IK_BATCH];
    const ik_real *length[IK_BATCH], *dir[IK_BATCH];
    int n[IK_BATCH];
} lanes;

static int gather(fab *const *f, int count, lanes *ln, int dim)
{
    int k, longest = 0;
    for (k = 0; k < count; k++) {
        ik_chain *c = f[k]->c;
        ln->joint[k] = c->joint, ln->length[k] = c->length, ln->dir[k] = c->dir, ln->n[k] = c->n;
        if (c->n > longest) longest = c->n;
        if (dim == 2) ik_v2_store(ik_joint(c, c->n), ik_v2(f[k]->end[0], f[k]->end[1]));
        else ik_v3_store(ik_joint(c, c->n), ik_v3_load(f[k]->end));
        c->pose_behind = 1;
    }
    return longest;
}

static void batch_passes2(fab *const *f, int count)
{
    lanes ln;
    int k, s, longest = gather(f, count, &ln, 2);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            int i = ln.n[k] - 1 - s;
            if (i >= 0) {
                ik_real *p = ln.joint[k] + 2 * (size_t)i;
                ik_vec2 next = ik_v2_load(p + 2);
                next = ik_v2_sub(next, along2(ik_v2_sub(next, ik_v2_load(p)), ln.length[k][i], ln.dir[k] + 2 * (size_t)i));
                ik_v2_store(p, next);
            }
        }
    }
    for (k = 0; k < count; k++) put_base(f[k]->c);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            if (s < ln.n[k]) {
                ik_real *p = ln.joint[k] + 2 * (size_t)s;
                ik_vec2 from = ik_v2_load(p);
                from = ik_v2_add(from, along2(ik_v2_sub(ik_v2_load(p + 2), from), ln.length[k][s], ln.dir[k] + 2 * (size_t)s));
                ik_v2_store(p + 2, from);
            }
        }
    }
}

static void batch_passes3(fab *const *f, int count)
{
    lanes ln;
    int k, s, longest = gather(f, count, &ln, 3);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            int i = ln.n[k] - 1 - s;
            if (i >= 0) {
                ik_real *p = ln.joint[k] + 3 * (size_t)i;
                ik_vec3 next = ik_v3_load(p + 3);
                next = ik_v3_sub(next, along3(ik_v3_sub(next, ik_v3_load(p)), ln.length[k][i], ln.dir[k] + 3 * (size_t)i));
                ik_v3_store(p, next);
            }
        }
    }
    for (k = 0; k < count; k++) put_base(f[k]->c);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            if (s < ln.n[k]) {
                ik_real *p = ln.joint[k] + 3 * (size_t)s;
                ik_vec3 from = ik_v3_load(p);
                from = ik_v3_add(from, along3(ik_v3_sub(ik_v3_load(p + 3), from), ln.length[k][s], ln.dir[k] + 3 * (size_t)s));
                ik_v3_store(p + 3, from);
            }
        }
    }
}

int ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, int *iterations)
{
    fab run[IK_BATCH], *live[IK_BATCH];
    int k, n = 0;
    for (k = 0; k < count; k++) {
        iterations[k] = fab_start(&run[k], chains[k], targets[k], chains[k]->n);
        if (iterations[k] < 0) live[n++] = &run[k];
    }
    while (n > 0) {
        int kept = 0;
        if (chains[0]->dim == 2) batch_passes2(live, n);
        else batch_passes3(live, n);
        for (k = 0; k < n; k++) {
            if (fab_after(live[k])) live[kept++] = live[k];
            else iterations[live[k] - run] = live[k]->iter;
        }
        n = kept;
    }
    return 1;
}
