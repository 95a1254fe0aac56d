/*
 * batch.c - FABRIK on many chains at once: the chains without limits that ik_solve_many is
 * given. Every chain takes exactly the steps ik_fabrik would, with the same arithmetic in
 * the same order, so it ends bit for bit as its own solve leaves it; only the chains' steps
 * run side by side. One chain's step waits on its division and square root (the step
 * before gives the next its point); independent chains fill that wait.
 *
 * A chain whose goal is tracked (near its tip) takes joint-space steps first, as its own
 * solve does (ik_steps in chain.h); the first step of the 2D chains, the one a tracked frame
 * usually needs, runs side by side in lanes too (free2 in batch_lanes.h).
 *
 * Chains of one bone count go in lanes (batch_lanes.h): their joints laid out side by side,
 * coordinate by coordinate, so one vector instruction takes one step of 2 or 4 chains
 * (SSE2 on every x86-64, AVX2 where the processor has it, chosen at run time; NEON on
 * arm64). A chain that is done leaves its lane to the next chain waiting; when none waits,
 * the chains still going move to the front after the iteration, so the vectors stay full. Chains that are alone in their bone count, or too
 * long for the scratch space (GROUP_REALS on the stack), and builds without vector
 * extensions are interleaved one step of each chain after the other.
 */
#include "chain.h"

/*
 * GCC for 64-bit Windows cannot align the stack to 32 bytes, yet spills 256-bit registers
 * with aligned moves (GCC bug 54412): AVX2 stays off there, SSE2 does the lanes.
 */
#if defined(_WIN32) && !defined(IK_NO_AVX2)
#define IK_NO_AVX2
#endif

#if defined(IK_NO_LANES) || !(defined(__GNUC__) || defined(__clang__))
#define IK_LANES 0
#elif defined(__x86_64__)
#define IK_LANES 1
#include <immintrin.h>
#elif defined(__aarch64__)
#define IK_LANES 2
#include <arm_neon.h>
#else
#define IK_LANES 0
#endif

/* ---- interleaved, one step of each chain after the other ---- */

/* What the passes read of each chain, gathered once so the inner loops only compute. */
typedef struct lanes {
    ik_real *joint[IK_BATCH];
    const ik_real *length[IK_BATCH], *dir[IK_BATCH];
    int n[IK_BATCH];
} lanes;

static int gather(ik_fab *const *f, int count, lanes *ln, int dim)
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

static void batch_passes2(ik_fab *const *f, int count)
{
    lanes ln;
    int k, s, longest = gather(f, count, &ln, 2);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            int i = ln.n[k] - 1 - s;
            if (i >= 0) {
                ik_real *p = ln.joint[k] + 2 * (size_t)i;
                ik_vec2 next = ik_v2_load(p + 2);
                next = ik_v2_sub(next, ik_fab_step2(ik_v2_sub(next, ik_v2_load(p)), ln.length[k][i], ln.dir[k] + 2 * (size_t)i));
                ik_v2_store(p, next);
            }
        }
    }
    for (k = 0; k < count; k++) ik_fabrik_put_base(f[k]->c);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            if (s < ln.n[k]) {
                ik_real *p = ln.joint[k] + 2 * (size_t)s;
                ik_vec2 from = ik_v2_load(p);
                from = ik_v2_add(from, ik_fab_step2(ik_v2_sub(ik_v2_load(p + 2), from), ln.length[k][s], ln.dir[k] + 2 * (size_t)s));
                ik_v2_store(p + 2, from);
            }
        }
    }
}

static void batch_passes3(ik_fab *const *f, int count)
{
    lanes ln;
    int k, s, longest = gather(f, count, &ln, 3);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            int i = ln.n[k] - 1 - s;
            if (i >= 0) {
                ik_real *p = ln.joint[k] + 3 * (size_t)i;
                ik_vec3 next = ik_v3_load(p + 3);
                next = ik_v3_sub(next, ik_fab_step3(ik_v3_sub(next, ik_v3_load(p)), ln.length[k][i], ln.dir[k] + 3 * (size_t)i));
                ik_v3_store(p, next);
            }
        }
    }
    for (k = 0; k < count; k++) ik_fabrik_put_base(f[k]->c);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            if (s < ln.n[k]) {
                ik_real *p = ln.joint[k] + 3 * (size_t)s;
                ik_vec3 from = ik_v3_load(p);
                from = ik_v3_add(from, ik_fab_step3(ik_v3_sub(ik_v3_load(p + 3), from), ln.length[k][s], ln.dir[k] + 3 * (size_t)s));
                ik_v3_store(p + 3, from);
            }
        }
    }
}


static void interleave(ik_fab **live, int n)
{
    while (n > 0) {
        int k, kept = 0;
        if (live[0]->c->dim == 2) batch_passes2(live, n);
        else batch_passes3(live, n);
        for (k = 0; k < n; k++) {
            ik_fab *f = live[k];
            int next = ik_fab_next(f, ik_joint_distance(f->c, f->m, f->target));
            if (next == IK_FAB_KICK && f->crawl) { /* joint-space steps: alone from here */
                if (ik_fab_kick(f)) ik_fab_finish(f);
                next = 0;
            } else if (next == IK_FAB_KICK) {
                next = ik_fab_kick(f);
            }
            if (next) live[kept++] = f;
        }
        n = kept;
    }
}

#if IK_LANES

/* ---- in lanes ---- */

#define GROUP_REALS 4096 /* the scratch of a group: 32 KB */
#define WIDEST 4         /* doubles in the widest vector */

/*
 * Chains of n bones side by side: joint j of lane k at x[j * cap + k] (y, z alike), bone i's
 * length at len[i * cap + k]; lanes 0..live-1 hold a chain (fab[k]), and the rest of the
 * last vector a copy of some chain, so every number a vector holds is one a solve made.
 */
typedef struct group {
    int n, dim, cap, live;
    ik_real *x, *y, *z, *len;
    ik_fab *fab[IK_BATCH];
    ik_real tx[IK_BATCH], ty[IK_BATCH], tz[IK_BATCH], bx[IK_BATCH], by[IK_BATCH], bz[IK_BATCH];
    ik_real dist[IK_BATCH]; /* each lane's tip from its target after the passes */
} group;

typedef void (*passes_fn)(group *g);
typedef void (*free2_fn)(ik_steps *const *s, int used, int n, int cap, ik_real *scratch, int *stepped);

/* The scratch free2 (batch_lanes.h) takes for cap chains of n bones. */
#define STEP_LANE 12
#define STEP_REALS(n, cap) ((9 * (size_t)(n) + 4 + STEP_LANE) * (size_t)(cap))

/* Chain f into lane k. */
static void take(group *g, int k, ik_fab *f)
{
    const ik_chain *c = f->c;
    const size_t cap = (size_t)g->cap;
    int j;
    for (j = 0; j <= g->n; j++) {
        const ik_real *p = c->joint + (size_t)g->dim * (size_t)j;
        g->x[j * cap + k] = p[0], g->y[j * cap + k] = p[1];
        if (g->dim == 3) g->z[j * cap + k] = p[2];
    }
    for (j = 0; j < g->n; j++) g->len[j * cap + k] = c->length[j];
    g->tx[k] = f->end[0], g->ty[k] = f->end[1], g->tz[k] = f->end[2];
    g->bx[k] = c->base.x, g->by[k] = c->base.y, g->bz[k] = c->base.z;
    g->fab[k] = f;
    f->c->pose_behind = 1; /* the joints are the truth */
}

/* Lane k's joints back into its chain. */
static void put(const group *g, int k)
{
    ik_chain *c = g->fab[k]->c;
    const size_t cap = (size_t)g->cap;
    int j;
    for (j = 0; j <= g->n; j++) {
        ik_real *p = c->joint + (size_t)g->dim * (size_t)j;
        p[0] = g->x[j * cap + k], p[1] = g->y[j * cap + k];
        if (g->dim == 3) p[2] = g->z[j * cap + k];
    }
}

/* Lane `from` copied into lane `to`. */
static void move(group *g, int from, int to)
{
    const size_t cap = (size_t)g->cap;
    int j;
    for (j = 0; j <= g->n; j++) {
        g->x[j * cap + to] = g->x[j * cap + from], g->y[j * cap + to] = g->y[j * cap + from];
        if (g->dim == 3) g->z[j * cap + to] = g->z[j * cap + from];
    }
    for (j = 0; j < g->n; j++) g->len[j * cap + to] = g->len[j * cap + from];
    g->tx[to] = g->tx[from], g->ty[to] = g->ty[from], g->tz[to] = g->tz[from];
    g->bx[to] = g->bx[from], g->by[to] = g->by[from], g->bz[to] = g->bz[from];
    g->dist[to] = g->dist[from];
    g->fab[to] = g->fab[from];
}

/*
 * Solves the count chains of queue (n bones each) in lanes; cap lanes at a time, a lane that
 * is done taken by the next chain waiting.
 */
static void run_group(ik_fab *const *queue, int count, int cap, passes_fn passes)
{
    ik_real scratch[GROUP_REALS] __attribute__((aligned(32)));
    const ik_chain *first = queue[0]->c;
    group g;
    int k, next = 0, rows;
    g.n = first->n, g.dim = first->dim, g.cap = cap, g.live = 0;
    rows = (g.n + 1) * cap;
    g.x = scratch, g.y = g.x + rows;
    g.z = g.dim == 3 ? g.y + rows : NULL;
    g.len = (g.dim == 3 ? g.z : g.y) + rows;
    while (g.live < cap && next < count) take(&g, g.live++, queue[next++]);
    for (k = g.live; k % WIDEST; k++) move(&g, 0, k); /* the rest of the last vector */
    while (g.live > 0) {
        int holes = 0;
        passes(&g);
        for (k = 0; k < g.live; k++) {
            ik_fab *f = g.fab[k];
            int step = ik_fab_next(f, g.dist[k]), alone = 0;
            if (step == IK_FAB_KICK) { /* the kick works on the chain itself */
                put(&g, k);
                if (f->crawl) { /* joint-space steps: alone from here (ik_fab_finish) */
                    if (ik_fab_kick(f)) ik_fab_finish(f);
                    step = IK_FAB_DONE, alone = 1;
                } else {
                    step = ik_fab_kick(f);
                    take(&g, k, f);
                }
            }
            if (step != IK_FAB_DONE) continue;
            if (!alone) put(&g, k);
            if (next < count) {
                take(&g, k, queue[next++]);
            } else {
                g.fab[k] = NULL;
                holes++;
            }
        }
        /* The lanes still going to the front: the last lanes' chains into the holes. */
        if (holes > 0) {
            int hole = 0, last = g.live - 1;
            for (;;) {
                while (hole < last && g.fab[hole] != NULL) hole++;
                while (last > hole && g.fab[last] == NULL) last--;
                if (hole >= last) break;
                move(&g, last, hole);
                g.fab[last] = NULL;
            }
            g.live -= holes;
        }
    }
}

#if IK_LANES == 1
#define LANES_ALIGNED __attribute__((aligned(32)))

#define LANES_NAME(f) f##_sse2
#define LANES_TARGET
#define LANES_W 2
#define V __m128d
#define V_LOAD _mm_loadu_pd
#define V_STORE _mm_storeu_pd
#define V_ADD _mm_add_pd
#define V_SUB _mm_sub_pd
#define V_MUL _mm_mul_pd
#define V_DIV _mm_div_pd
#define V_SQRT _mm_sqrt_pd
#define V_MIN _mm_min_pd
#define V_MAX _mm_max_pd
#define V_SET1 _mm_set1_pd
/* The lanes (bits) where d is not in (1e-300, 1e300); where q is not in [1e-150, 1e300]. */
#define V_OUT_D(d) (3 & ~_mm_movemask_pd(_mm_and_pd(_mm_cmpgt_pd(d, _mm_set1_pd(1e-300)), \
                                                       _mm_cmplt_pd(d, _mm_set1_pd(1e300)))))
#define V_OUT_Q(q) (3 & ~_mm_movemask_pd(_mm_and_pd(_mm_cmpge_pd(q, _mm_set1_pd(1e-150)), \
                                                       _mm_cmple_pd(q, _mm_set1_pd(1e300)))))
/* Pairs (x, y) at p[l] + at, lane l's, as a vector of the x and one of the y; and back. */
static inline void xy_load_sse2(const ik_real *const *p, size_t at, __m128d *x, __m128d *y)
{
    __m128d a = _mm_loadu_pd(p[0] + at), b = _mm_loadu_pd(p[1] + at);
    *x = _mm_unpacklo_pd(a, b), *y = _mm_unpackhi_pd(a, b);
}
static inline void xy_store_sse2(ik_real *const *p, size_t at, __m128d x, __m128d y)
{
    _mm_storeu_pd(p[0] + at, _mm_unpacklo_pd(x, y)), _mm_storeu_pd(p[1] + at, _mm_unpackhi_pd(x, y));
}
#define V_XY_LOAD xy_load_sse2
#define V_XY_STORE xy_store_sse2
#include "batch_lanes.h"
#undef LANES_NAME
#undef LANES_TARGET
#undef LANES_W
#undef V
#undef V_LOAD
#undef V_STORE
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_SQRT
#undef V_MIN
#undef V_MAX
#undef V_SET1
#undef V_OUT_D
#undef V_OUT_Q
#undef V_XY_LOAD
#undef V_XY_STORE

#ifndef IK_NO_AVX2
#define LANES_NAME(f) f##_avx2
#define LANES_TARGET __attribute__((target("avx2")))
#define LANES_W 4
#define V __m256d
#define V_LOAD _mm256_loadu_pd
#define V_STORE _mm256_storeu_pd
#define V_ADD _mm256_add_pd
#define V_SUB _mm256_sub_pd
#define V_MUL _mm256_mul_pd
#define V_DIV _mm256_div_pd
#define V_SQRT _mm256_sqrt_pd
#define V_MIN _mm256_min_pd
#define V_MAX _mm256_max_pd
#define V_SET1 _mm256_set1_pd
#define V_OUT_D(d) (15 & ~_mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(d, _mm256_set1_pd(1e-300), _CMP_GT_OQ), \
                                                             _mm256_cmp_pd(d, _mm256_set1_pd(1e300), _CMP_LT_OQ))))
#define V_OUT_Q(q) (15 & ~_mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(q, _mm256_set1_pd(1e-150), _CMP_GE_OQ), \
                                                             _mm256_cmp_pd(q, _mm256_set1_pd(1e300), _CMP_LE_OQ))))
static inline __attribute__((target("avx2"))) void xy_load_avx2(const ik_real *const *p, size_t at, __m256d *x,
                                                                __m256d *y)
{
    __m128d a = _mm_loadu_pd(p[0] + at), b = _mm_loadu_pd(p[1] + at);
    __m128d c = _mm_loadu_pd(p[2] + at), d = _mm_loadu_pd(p[3] + at);
    *x = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpacklo_pd(a, b)), _mm_unpacklo_pd(c, d), 1);
    *y = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpackhi_pd(a, b)), _mm_unpackhi_pd(c, d), 1);
}
static inline __attribute__((target("avx2"))) void xy_store_avx2(ik_real *const *p, size_t at, __m256d x, __m256d y)
{
    __m128d xl = _mm256_castpd256_pd128(x), xh = _mm256_extractf128_pd(x, 1);
    __m128d yl = _mm256_castpd256_pd128(y), yh = _mm256_extractf128_pd(y, 1);
    _mm_storeu_pd(p[0] + at, _mm_unpacklo_pd(xl, yl)), _mm_storeu_pd(p[1] + at, _mm_unpackhi_pd(xl, yl));
    _mm_storeu_pd(p[2] + at, _mm_unpacklo_pd(xh, yh)), _mm_storeu_pd(p[3] + at, _mm_unpackhi_pd(xh, yh));
}
#define V_XY_LOAD xy_load_avx2
#define V_XY_STORE xy_store_avx2
#include "batch_lanes.h"
#endif

static passes_fn lanes_passes(int dim)
{
#ifndef IK_NO_AVX2
    if (__builtin_cpu_supports("avx2")) return dim == 2 ? passes2_avx2 : passes3_avx2;
#endif
    return dim == 2 ? passes2_sse2 : passes3_sse2;
}

static free2_fn lanes_free2(int *width)
{
#ifndef IK_NO_AVX2
    if (__builtin_cpu_supports("avx2")) return *width = 4, free2_avx2;
#endif
    return *width = 2, free2_sse2;
}

#else /* NEON */
#define LANES_ALIGNED __attribute__((aligned(16)))
#define LANES_NAME(f) f##_neon
#define LANES_TARGET
#define LANES_W 2
#define V float64x2_t
#define V_LOAD vld1q_f64
#define V_STORE vst1q_f64
#define V_ADD vaddq_f64
#define V_SUB vsubq_f64
#define V_MUL vmulq_f64
#define V_DIV vdivq_f64
#define V_SQRT vsqrtq_f64
#define V_MIN vminq_f64
#define V_MAX vmaxq_f64
#define V_SET1 vdupq_n_f64
static inline int neon_out(uint64x2_t ok)
{
    return (vgetq_lane_u64(ok, 0) ? 0 : 1) | (vgetq_lane_u64(ok, 1) ? 0 : 2);
}
#define V_OUT_D(d) neon_out(vandq_u64(vcgtq_f64(d, vdupq_n_f64(1e-300)), vcltq_f64(d, vdupq_n_f64(1e300))))
#define V_OUT_Q(q) neon_out(vandq_u64(vcgeq_f64(q, vdupq_n_f64(1e-150)), vcleq_f64(q, vdupq_n_f64(1e300))))
static inline void xy_load_neon(const ik_real *const *p, size_t at, float64x2_t *x, float64x2_t *y)
{
    float64x2_t a = vld1q_f64(p[0] + at), b = vld1q_f64(p[1] + at);
    *x = vzip1q_f64(a, b), *y = vzip2q_f64(a, b);
}
static inline void xy_store_neon(ik_real *const *p, size_t at, float64x2_t x, float64x2_t y)
{
    vst1q_f64(p[0] + at, vzip1q_f64(x, y)), vst1q_f64(p[1] + at, vzip2q_f64(x, y));
}
#define V_XY_LOAD xy_load_neon
#define V_XY_STORE xy_store_neon
#include "batch_lanes.h"

static passes_fn lanes_passes(int dim)
{
    return dim == 2 ? passes2_neon : passes3_neon;
}

static free2_fn lanes_free2(int *width)
{
    return *width = 2, free2_neon;
}
#endif

/* Lanes a group of count chains of n bones has: up to count, in whole vectors, within the scratch. */
static int group_cap(int count, int n, int dim)
{
    int per = (n + 1) * dim + n, cap = (count + WIDEST - 1) / WIDEST * WIDEST;
    while (cap > 0 && cap * per > GROUP_REALS) cap -= WIDEST;
    return cap;
}

/*
 * The chains that share their bone count with another go in lanes, each count its group;
 * the rest are left at the front of live, and their number returned.
 */
static int in_lanes(ik_fab **live, int n)
{
    passes_fn passes = lanes_passes(live[0]->c->dim);
    int k, j, left = 0;
    /* By bone count, stably (insertion: the chains usually come in runs). */
    for (k = 1; k < n; k++) {
        ik_fab *f = live[k];
        for (j = k; j > 0 && live[j - 1]->c->n > f->c->n; j--) live[j] = live[j - 1];
        live[j] = f;
    }
    for (k = 0; k < n; k = j) {
        int cap;
        for (j = k + 1; j < n && live[j]->c->n == live[k]->c->n; j++) {}
        cap = j - k >= 2 ? group_cap(j - k, live[k]->c->n, live[k]->c->dim) : 0;
        if (cap > 0) {
            run_group(live + k, j - k, cap, passes);
        } else {
            int i;
            for (i = k; i < j; i++) live[left++] = live[i];
        }
    }
    return left;
}
#endif /* IK_LANES */

/*
 * The tracking steps (ik_steps in chain.h) of the chains that take them, each as its own
 * solve would; the first step of the 2D chains without limits (the closed form, the one
 * tracking takes a frame) side by side in lanes, a group of chains of one bone count at a
 * time. Chains alone in their bone count, too long for the scratch, or in builds without
 * vector extensions take it alone.
 */
static void track(ik_steps *steps, const int *opened, int count)
{
    int k;
#if IK_LANES
    ik_real scratch[GROUP_REALS] __attribute__((aligned(32)));
    ik_steps *side[IK_BATCH];
    int j, n = 0, width, stepped[IK_BATCH];
    free2_fn free2 = lanes_free2(&width);
    for (k = 0; k < count; k++) {
        ik_steps *s = &steps[k];
        if (opened[k] == IK_FAB_STEPS && ik_steps_going(s) && ik_steps_free2(s) && s->first == 0 &&
            s->m == s->c->n) { /* (the steps start on a settled, current chain) */
            for (j = n++; j > 0 && side[j - 1]->c->n > s->c->n; j--) side[j] = side[j - 1];
            side[j] = s;
        }
    }
    for (k = 0; k < n; k = j) {
        int used, cap, l, bones = side[k]->c->n;
        for (j = k + 1; j < n && side[j]->c->n == bones; j++) {}
        /* as many as the scratch holds, in whole vectors; alone: its own step, below */
        cap = (j - k + width - 1) / width * width;
        while (cap > 0 && STEP_REALS(bones, cap) > GROUP_REALS) cap -= width;
        used = j - k < cap ? j - k : cap;
        if (used < 2) continue;
        j = k + used;
        for (l = 0; l < used; l++) ik_steps_keep(side[k + l]);
        free2(side + k, used, bones, cap, scratch, stepped);
        for (l = 0; l < used; l++) ik_steps_after(side[k + l], stepped[l]);
    }
#endif
    for (k = 0; k < count; k++)
        if (opened[k] == IK_FAB_STEPS) ik_steps_run(&steps[k]);
}

void ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, int *iterations,
                     ik_real *distances)
{
    ik_fab run[IK_BATCH], *live[IK_BATCH];
    ik_steps steps[IK_BATCH];
    int k, n = 0, opened[IK_BATCH];
    for (k = 0; k < count; k++)
        opened[k] = ik_fab_open(&run[k], &steps[k], chains[k], targets[k], chains[k]->n, &distances[k]);
    track(steps, opened, count);
    for (k = 0; k < count; k++) {
        iterations[k] = ik_fab_close(&run[k], &steps[k], opened[k], distances[k]);
        if (iterations[k] < 0) live[n++] = &run[k];
    }
#if IK_LANES
    if (n > 1) n = in_lanes(live, n);
#endif
    interleave(live, n);
    for (k = 0; k < count; k++) {
        distances[k] = run[k].distance;
        if (iterations[k] < 0) iterations[k] = run[k].iter;
    }
}
