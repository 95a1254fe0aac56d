/*
 * bench.c - the C half of `make bench`: what a solve costs in the core (libik.a), against a
 * textbook FABRIK on plain arrays and an estimate of the machine's limit.
 *
 *   build/bench/bench                 every table (make bench)
 *   build/bench/bench --binding       ns (and spread) per 2D FABRIK solve of 10 bones, 10
 *                                     iterations, tolerance 0, then per solve with nothing
 *                                     to do; bench/lua_bench.lua prints them next to the
 *                                     same calls from Lua
 *   build/bench/bench --instr CASE [N]  N solves of one case (fabrik2d, ccd2d, relax2d,
 *                                     two_bone2d, fabrik3d, ccd3d, relax3d, textbook2d,
 *                                     textbook3d) and nothing else timed: the callgrind
 *                                     driver of `make bench-instr` (bench/instr.sh)
 *   build/bench/bench --tables LIST   only the tables listed, comma-separated: equal (and
 *                                     the limit, which needs it), tolerance, batch, rigs,
 *                                     memory
 *
 * A benchmark, not a test: it prints figures and never fails on a time. Every figure is the
 * median of REPS runs, each of at least MIN_NS of solves; "spread" is (max - min) / median
 * of those runs. The machine is shared and noisy: compare figures of one run with each other.
 *
 * Targets: tips of random poses (so reachable), from the Park-Miller generator that
 * bench/rates.lua and bench/lua_bench.lua use, drawn in the same order as lua_bench.lua
 * draws its 10-bone 2D ones. Every run of a measurement solves the same targets in the same order,
 * each solve from the previous one's result and every SEGMENT-th from the same start pose (another
 * random pose): the runs do identical work.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ik.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

#define PI 3.14159265358979323846
#define REPS 5
#define MIN_NS 25e6 /* each timed run lasts at least this long */
#define MIN_SOLVES 64 /* and covers at least this many solves */
#define TARGETS 1000 /* distinct targets per case */
#define SEED 12345
#define EQUAL_ITERATIONS 10
#define SEGMENT 8 /* solves between resets to the start pose */
#define INSTR_TARGETS 64 /* --instr: targets, solved in turn */
#define BATCH 64 /* chains per ik_solve_many call */
#define BATCH_BONES 10

/* ---- time and statistics ---- */

/*
 * The clock the figures use: CLOCK_MONOTONIC (wall time), except for --binding, which
 * uses the process's CPU time like os.clock in bench/lua_bench.lua, so the two compare.
 */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void) { return clock_ns(bench_clock); }
static double cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/*
 * ns per unit: the median and (max - min) / median of the runs; cpu: 1 when every run had
 * the CPU, else the process's CPU time over the wall time of all runs. On a shared machine a
 * run that was descheduled counts the wait: its figure is inflated, and the tables mark it.
 */
typedef struct stats {
    double median, spread, cpu;
} stats;

#define PREEMPTED 0.9 /* cpu below this: the tables print '!' */

static stats summarise(double *v, int count)
{
    stats s;
    qsort(v, (size_t)count, sizeof *v, compare_doubles);
    s.median = v[count / 2];
    s.spread = (v[count - 1] - v[0]) / s.median;
    s.cpu = 1;
    return s;
}

/* The spread column: "12.3%", and '!' when the runs were preempted. */
static const char *spread(stats st)
{
    static char text[4][16];
    static int k;
    k = (k + 1) % 4;
    sprintf(text[k], "%5.1f%%%c", 100 * st.spread, st.cpu < PREEMPTED ? '!' : ' ');
    return text[k];
}

/*
 * Times run(ctx, count) for REPS runs of one count, calling reset(ctx) before each (untimed),
 * and returns ns per unit of work. The count doubles from 1 until one run lasts MIN_NS. A
 * run that got under PREEMPTED of a CPU (descheduled: the wall time includes the wait) is
 * run again, up to RETRIES times in all; if runs are still missing, the preempted ones fill
 * in and stats.cpu tells (the tables print '!').
 */
typedef void (*run_fn)(void *ctx, long count);
typedef void (*reset_fn)(void *ctx);

#define RETRIES (4 * REPS)

static stats measure(void *ctx, run_fn run, reset_fn reset, long min_count)
{
    double clean[REPS], preempted[REPS], t = 0, wall = 0, cpu = 0;
    long count = 1;
    int r, n_clean = 0, n_preempted = 0, tries;
    stats st;
    for (;;) {
        reset(ctx);
        t = now_ns();
        run(ctx, count);
        t = now_ns() - t;
        if (t >= MIN_NS && count >= min_count) break;
        count *= 2;
    }
    for (tries = 0; n_clean < REPS && tries < RETRIES; tries++) {
        double w, c, per;
        reset(ctx);
        w = clock_ns(CLOCK_MONOTONIC), c = cpu_ns(), t = now_ns();
        run(ctx, count);
        per = (now_ns() - t) / (double)count;
        w = clock_ns(CLOCK_MONOTONIC) - w, c = cpu_ns() - c;
        wall += w, cpu += c;
        if (c >= PREEMPTED * w)
            clean[n_clean++] = per;
        else if (n_preempted < REPS)
            preempted[n_preempted++] = per;
    }
    /* Too few clean runs: the fastest preempted ones fill in. */
    qsort(preempted, (size_t)n_preempted, sizeof *preempted, compare_doubles);
    for (r = 0; n_clean < REPS && r < n_preempted; r++) clean[n_clean++] = preempted[r];
    st = summarise(clean, n_clean);
    st.cpu = n_clean == REPS && r == 0 ? 1 : cpu / wall;
    return st;
}

static void print_load(void)
{
    char line[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(line, sizeof line, f)) line[strcspn(line, "\n")] = 0;
        fclose(f);
    }
    printf("load average (/proc/loadavg): %s\n", line);
}

/* ---- deterministic random poses (the same numbers as the Lua benches) ---- */

static long long seed;

static double random01(void) /* uniform in [0, 1) */
{
    seed = (16807 * seed) % 2147483647;
    return (double)seed / 2147483647;
}

static double uniform(double a, double b) { return a + (b - a) * random01(); }

/* pose: n angles (2D) or 4n quaternion numbers w, x, y, z (3D), uniformly random. */
static void random_pose(int dim, int n, double *pose)
{
    int i;
    for (i = 0; i < n; i++) {
        if (dim == 2) {
            pose[i] = uniform(-PI, PI);
        } else { /* Shoemake's uniform unit quaternion, as bench/rates.lua */
            double u1 = random01(), u2 = random01() * 2 * PI, u3 = random01() * 2 * PI;
            double a = sqrt(1 - u1), b = sqrt(u1);
            pose[4 * i] = a * sin(u2);
            pose[4 * i + 1] = a * cos(u2);
            pose[4 * i + 2] = b * sin(u3);
            pose[4 * i + 3] = b * cos(u3);
        }
    }
}

static void set_pose(ik_chain *c, const double *pose)
{
    int i, n = ik_chain_count(c);
    for (i = 0; i < n; i++) {
        if (ik_chain_dim(c) == 2)
            ik_chain2d_set_angle(c, i, pose[i]);
        else
            ik_chain3d_set_rotation(c, i, pose + 4 * i);
    }
}

static void *checked_malloc(size_t size)
{
    void *p = malloc(size);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- the textbook FABRIK: what a good C programmer writes on plain arrays ---- */

/*
 * Aristidou and Lasenby's algorithm as printed: joints x, y [0..n], the base x[0], y[0]
 * fixed; stops when the tip is within tol or after iterations. Returns the iterations run.
 */
NOINLINE int textbook_fabrik2d(int n, double *x, double *y, const double *len, double tx, double ty,
                               int iterations, double tol);
NOINLINE int textbook_fabrik2d(int n, double *x, double *y, const double *len, double tx, double ty,
                               int iterations, double tol)
{
    double bx = x[0], by = y[0], dx, dy, r, total = 0;
    int i, it;
    for (i = 0; i < n; i++) total += len[i];
    dx = tx - bx, dy = ty - by;
    if (sqrt(dx * dx + dy * dy) >= total) { /* out of reach: straight at the target */
        r = 1 / sqrt(dx * dx + dy * dy);
        for (i = 0; i < n; i++) {
            x[i + 1] = x[i] + dx * r * len[i];
            y[i + 1] = y[i] + dy * r * len[i];
        }
        return 1;
    }
    for (it = 0; it < iterations; it++) {
        dx = x[n] - tx, dy = y[n] - ty;
        if (sqrt(dx * dx + dy * dy) <= tol) break;
        x[n] = tx, y[n] = ty;
        for (i = n - 1; i >= 0; i--) {
            dx = x[i] - x[i + 1], dy = y[i] - y[i + 1];
            r = len[i] / sqrt(dx * dx + dy * dy);
            x[i] = x[i + 1] + dx * r, y[i] = y[i + 1] + dy * r;
        }
        x[0] = bx, y[0] = by;
        for (i = 0; i < n; i++) {
            dx = x[i + 1] - x[i], dy = y[i + 1] - y[i];
            r = len[i] / sqrt(dx * dx + dy * dy);
            x[i + 1] = x[i] + dx * r, y[i + 1] = y[i] + dy * r;
        }
    }
    return it;
}

NOINLINE int textbook_fabrik3d(int n, double *x, double *y, double *z, const double *len,
                               const double *t, int iterations, double tol);
NOINLINE int textbook_fabrik3d(int n, double *x, double *y, double *z, const double *len,
                               const double *t, int iterations, double tol)
{
    double bx = x[0], by = y[0], bz = z[0], dx, dy, dz, r, total = 0;
    int i, it;
    for (i = 0; i < n; i++) total += len[i];
    dx = t[0] - bx, dy = t[1] - by, dz = t[2] - bz;
    if (sqrt(dx * dx + dy * dy + dz * dz) >= total) {
        r = 1 / sqrt(dx * dx + dy * dy + dz * dz);
        for (i = 0; i < n; i++) {
            x[i + 1] = x[i] + dx * r * len[i];
            y[i + 1] = y[i] + dy * r * len[i];
            z[i + 1] = z[i] + dz * r * len[i];
        }
        return 1;
    }
    for (it = 0; it < iterations; it++) {
        dx = x[n] - t[0], dy = y[n] - t[1], dz = z[n] - t[2];
        if (sqrt(dx * dx + dy * dy + dz * dz) <= tol) break;
        x[n] = t[0], y[n] = t[1], z[n] = t[2];
        for (i = n - 1; i >= 0; i--) {
            dx = x[i] - x[i + 1], dy = y[i] - y[i + 1], dz = z[i] - z[i + 1];
            r = len[i] / sqrt(dx * dx + dy * dy + dz * dz);
            x[i] = x[i + 1] + dx * r, y[i] = y[i + 1] + dy * r, z[i] = z[i + 1] + dz * r;
        }
        x[0] = bx, y[0] = by, z[0] = bz;
        for (i = 0; i < n; i++) {
            dx = x[i + 1] - x[i], dy = y[i + 1] - y[i], dz = z[i + 1] - z[i];
            r = len[i] / sqrt(dx * dx + dy * dy + dz * dz);
            x[i + 1] = x[i] + dx * r, y[i + 1] = y[i] + dy * r, z[i + 1] = z[i] + dz * r;
        }
    }
    return it;
}

/* ---- a case: one chain, its start pose, its targets ---- */

typedef struct bench_case {
    int dim, n;
    ik_chain *chain;
    double *lengths; /* [n] */
    double *start; /* the start pose */
    double *targets; /* ntargets * 3, z = 0 in 2D */
    int ntargets, tried;
    int next; /* the next target; back to the start pose after the last */
    long solves, iterations, reached;
    /* the textbook FABRIK's own joints (and where the start pose puts them), settings */
    double *x, *y, *z, *start_points;
    int tb_iterations;
    double tb_tolerance;
} bench_case;

static void configure(ik_chain *c, ik_solver solver, int iterations, double tolerance, int escape)
{
    ik_settings s = ik_default_settings();
    ik_status st;
    s.solver = solver;
    if (iterations > 0) s.iterations = iterations;
    if (tolerance >= 0) s.tolerance = tolerance;
    s.escape = escape;
    st = ik_chain_configure(c, &s);
    if (st != IK_OK) {
        fprintf(stderr, "bench: configure: %s\n", ik_status_string(st));
        exit(1);
    }
}

/* Equal work: every solve runs all its iterations (checked: the mean is printed). */
static void configure_equal(ik_chain *c, ik_solver solver)
{
    configure(c, solver, EQUAL_ITERATIONS, 0, 0);
}

/* To a tolerance: the defaults (64 iterations, tolerance 1e-3, escape on). */
static void configure_default(ik_chain *c, ik_solver solver) { configure(c, solver, 0, -1, 1); }

/* Joints first..last of chain c, 3 numbers each (z = 0 in 2D; the core keeps dim). */
static void points3(ik_chain *c, int first, int last, double *out)
{
    const ik_real *p = ik_chain_positions(c);
    int dim = ik_chain_dim(c), i;
    for (i = first; i <= last; i++, out += 3) {
        out[0] = p[dim * i], out[1] = p[dim * i + 1], out[2] = dim == 3 ? p[dim * i + 2] : 0;
    }
}

/* The tip of a random pose of chain c (its pose is left changed). */
static void random_tip(ik_chain *c, double *pose, double *tip)
{
    random_pose(ik_chain_dim(c), ik_chain_count(c), pose);
    set_pose(c, pose);
    points3(c, ik_chain_count(c), ik_chain_count(c), tip);
}

/*
 * Equal work needs every solve to run all its iterations, but with tolerance 0 a solve
 * still stops when the tip lands exactly on the target, and FABRIK gets there within 10
 * iterations on most tips of random poses (the more bones, the sooner). So the equal-work
 * targets are the tips of random poses on which every solver here (FABRIK, CCD,
 * relaxation and the textbook FABRIK, each on its own copy of the chain) runs all
 * EQUAL_ITERATIONS, solved in order in segments of SEGMENT targets, each segment from the
 * start pose (as the timed runs do: a reset per SEGMENT solves costs well under 1%). A
 * candidate on which one stops early is dropped, and the copies replay the segment so far,
 * which puts them back bit for bit (setting a 3D pose back would renormalise it).
 */
static void replay(bench_case *b, ik_chain *const *copy, int copies)
{
    int s, k;
    ik_result r;
    for (s = 0; s < copies; s++) {
        set_pose(copy[s], b->start);
        for (k = b->ntargets - b->ntargets % SEGMENT; k < b->ntargets; k++)
            ik_chain_solve(copy[s], b->targets + 3 * k, &r);
    }
}

static void textbook_to_start(bench_case *b)
{
    int i;
    for (i = 0; i <= b->n; i++)
        b->x[i] = b->start_points[3 * i], b->y[i] = b->start_points[3 * i + 1],
        b->z[i] = b->start_points[3 * i + 2];
}

static void equal_targets(bench_case *b, int wanted, double *pose)
{
    static const ik_solver iterative[] = {IK_SOLVER_FABRIK, IK_SOLVER_CCD, IK_SOLVER_RELAX};
    ik_chain *copy[3];
    double *saved = (double *)checked_malloc(3 * (size_t)(b->n + 1) * sizeof(double));
    int s, i, max_tries = 200 * wanted;
    for (s = 0; s < 3; s++) {
        copy[s] = b->dim == 2 ? ik_chain2d_create(b->n, b->lengths, NULL)
                              : ik_chain3d_create(b->n, b->lengths, NULL);
        if (!copy[s]) exit(1);
        configure_equal(copy[s], iterative[s]);
    }
    b->ntargets = 0;
    for (b->tried = 0; b->ntargets < wanted && b->tried < max_tries; b->tried++) {
        double *t = b->targets + 3 * b->ntargets;
        int ok = 1, it;
        ik_result r;
        if (b->ntargets % SEGMENT == 0) {
            replay(b, copy, 3);
            textbook_to_start(b);
        }
        random_tip(b->chain, pose, t);
        for (s = 0; s < 3; s++) {
            ik_chain_solve(copy[s], t, &r);
            ok = ok && r.iterations == EQUAL_ITERATIONS;
        }
        for (i = 0; i <= b->n; i++)
            saved[3 * i] = b->x[i], saved[3 * i + 1] = b->y[i], saved[3 * i + 2] = b->z[i];
        it = b->dim == 2
                 ? textbook_fabrik2d(b->n, b->x, b->y, b->lengths, t[0], t[1], EQUAL_ITERATIONS, 0)
                 : textbook_fabrik3d(b->n, b->x, b->y, b->z, b->lengths, t, EQUAL_ITERATIONS, 0);
        if (ok && it == EQUAL_ITERATIONS) {
            b->ntargets++;
            continue;
        }
        replay(b, copy, 3);
        for (i = 0; i <= b->n; i++)
            b->x[i] = saved[3 * i], b->y[i] = saved[3 * i + 1], b->z[i] = saved[3 * i + 2];
    }
    for (s = 0; s < 3; s++) ik_chain_destroy(copy[s]);
    free(saved);
}

/*
 * Equal-work targets per chain size: fewer for long chains, where fewer candidates pass;
 * equal_wanted, when set, for every size (--instr: fewer, as valgrind is slow).
 */
static int equal_wanted = 0;
static int equal_count(int n)
{
    if (equal_wanted > 0) return equal_wanted;
    return n <= 10 ? TARGETS : n <= 50 ? 300 : 100;
}

/*
 * Draws, in the order bench/lua_bench.lua does: lengths in [0.5, 1.5), the start pose,
 * then the candidate poses whose tips are the targets (all of them unless equal).
 */
static void case_init(bench_case *b, int dim, int n, int equal)
{
    size_t pose_size = (size_t)(dim == 2 ? n : 4 * n) * sizeof(double);
    double *pose = (double *)checked_malloc(pose_size);
    ik_status st;
    int i, k;
    memset(b, 0, sizeof *b);
    b->dim = dim;
    b->n = n;
    b->lengths = (double *)checked_malloc((size_t)n * sizeof(double));
    b->start = (double *)checked_malloc(pose_size);
    b->targets = (double *)checked_malloc(TARGETS * 3 * sizeof(double));
    b->x = (double *)checked_malloc((size_t)(n + 1) * sizeof(double));
    b->y = (double *)checked_malloc((size_t)(n + 1) * sizeof(double));
    b->z = (double *)checked_malloc((size_t)(n + 1) * sizeof(double));
    b->start_points = (double *)checked_malloc(3 * (size_t)(n + 1) * sizeof(double));
    seed = SEED;
    for (i = 0; i < n; i++) b->lengths[i] = 0.5 + random01();
    b->chain =
        dim == 2 ? ik_chain2d_create(n, b->lengths, &st) : ik_chain3d_create(n, b->lengths, &st);
    if (!b->chain) {
        fprintf(stderr, "bench: chain: %s\n", ik_status_string(st));
        exit(1);
    }
    random_pose(dim, n, b->start);
    set_pose(b->chain, b->start);
    points3(b->chain, 0, n, b->start_points);
    if (equal) {
        equal_targets(b, equal_count(n), pose);
    } else {
        for (k = 0; k < TARGETS; k++) random_tip(b->chain, pose, b->targets + 3 * k);
        b->ntargets = b->tried = TARGETS;
    }
    free(pose);
}

static void case_free(bench_case *b)
{
    ik_chain_destroy(b->chain);
    free(b->lengths);
    free(b->start);
    free(b->targets);
    free(b->x);
    free(b->y);
    free(b->z);
    free(b->start_points);
}

static void reset_library(void *ctx)
{
    bench_case *b = (bench_case *)ctx;
    set_pose(b->chain, b->start);
    b->next = 0;
    b->solves = b->iterations = b->reached = 0;
}

static void run_library(void *ctx, long count)
{
    bench_case *b = (bench_case *)ctx;
    ik_result r;
    long k;
    for (k = 0; k < count; k++) {
        if (b->next % SEGMENT == 0) set_pose(b->chain, b->start);
        ik_chain_solve(b->chain, b->targets + 3 * b->next, &r);
        if (++b->next == b->ntargets) b->next = 0;
        b->iterations += r.iterations;
        b->reached += r.reached;
    }
    b->solves += count;
}

/* The textbook's joints start where the library's start pose puts them. */
static void reset_textbook(void *ctx)
{
    bench_case *b = (bench_case *)ctx;
    textbook_to_start(b);
    b->next = 0;
    b->solves = b->iterations = b->reached = 0;
}

static void run_textbook(void *ctx, long count)
{
    bench_case *b = (bench_case *)ctx;
    long k;
    for (k = 0; k < count; k++) {
        const double *t = b->targets + 3 * b->next;
        double dx, dy, dz;
        int it;
        if (b->next % SEGMENT == 0) textbook_to_start(b);
        if (b->dim == 2)
            it = textbook_fabrik2d(b->n, b->x, b->y, b->lengths, t[0], t[1], b->tb_iterations,
                                   b->tb_tolerance);
        else
            it = textbook_fabrik3d(b->n, b->x, b->y, b->z, b->lengths, t, b->tb_iterations,
                                   b->tb_tolerance);
        dx = b->x[b->n] - t[0], dy = b->y[b->n] - t[1], dz = b->dim == 2 ? 0 : b->z[b->n] - t[2];
        b->iterations += it;
        b->reached += sqrt(dx * dx + dy * dy + dz * dz) <= b->tb_tolerance;
        if (++b->next == b->ntargets) b->next = 0;
    }
    b->solves += count;
}

/* ---- the limit: latency of the dependent work per bone ---- */

/*
 * One FABRIK bone update, each feeding the next as along a pass: the new joint is placed
 * at length len from the one just placed, towards the old position (independent loads):
 * sub, mul, add, sqrt, divide, mul, add on the dependent path.
 */
typedef struct latency_ctx {
    double px[64], py[64], pz[64]; /* old positions */
    double sink; /* the results, so the loops cannot be optimised away */
} latency_ctx;

static volatile double latency_sink;

static void reset_latency(void *ctx) { (void)ctx; }

static void run_fabrik_latency2d(void *ctx, long count)
{
    latency_ctx *l = (latency_ctx *)ctx;
    double x = 0.1, y = 0.2;
    long k;
    for (k = 0; k < count; k++) {
        double dx = l->px[k & 63] - x, dy = l->py[k & 63] - y;
        double r = 1.0 / sqrt(dx * dx + dy * dy);
        x = x + dx * r, y = y + dy * r;
    }
    l->sink += x + y;
}

static void run_fabrik_latency3d(void *ctx, long count)
{
    latency_ctx *l = (latency_ctx *)ctx;
    double x = 0.1, y = 0.2, z = 0.3;
    long k;
    for (k = 0; k < count; k++) {
        double dx = l->px[k & 63] - x, dy = l->py[k & 63] - y, dz = l->pz[k & 63] - z;
        double r = 1.0 / sqrt(dx * dx + dy * dy + dz * dz);
        x = x + dx * r, y = y + dy * r, z = z + dz * r;
    }
    l->sink += x + y + z;
}

/* Four independent 2D chains interleaved: what a batch over chains could reach per update. */
static void run_fabrik_throughput2d(void *ctx, long count)
{
    latency_ctx *l = (latency_ctx *)ctx;
    double x[4] = {0.1, 0.2, 0.3, 0.4}, y[4] = {0.5, 0.6, 0.7, 0.8};
    long k;
    int s;
    for (k = 0; k < count / 4; k++) {
        for (s = 0; s < 4; s++) {
            double dx = l->px[(k + 16 * s) & 63] - x[s], dy = l->py[(k + 16 * s) & 63] - y[s];
            double r = 1.0 / sqrt(dx * dx + dy * dy);
            x[s] = x[s] + dx * r, y[s] = y[s] + dy * r;
        }
    }
    l->sink += x[0] + y[0] + x[1] + y[1] + x[2] + y[2] + x[3] + y[3];
}

/*
 * One 2D CCD joint: the angle between joint->tip and joint->target (atan2 of a cross and a
 * dot product), its cos and sin, and the tip turned about the joint, which the next joint
 * starts from.
 */
static void run_ccd_latency2d(void *ctx, long count)
{
    latency_ctx *l = (latency_ctx *)ctx;
    double tipx = 3.0, tipy = 0.5;
    long k;
    for (k = 0; k < count; k++) {
        /* The target changes every step (independent loads), so every turn is a real one. */
        double jx = l->px[k & 63] * 0.1, jy = l->py[k & 63] * 0.1;
        double ux = tipx - jx, uy = tipy - jy;
        double vx = l->px[(k + 32) & 63] - jx, vy = l->py[(k + 32) & 63] - jy;
        double a = atan2(ux * vy - uy * vx, ux * vx + uy * vy);
        double c = cos(a), s = sin(a);
        tipx = jx + c * ux - s * uy, tipy = jy + s * ux + c * uy;
    }
    l->sink += tipx + tipy;
}

static stats latency(run_fn run)
{
    latency_ctx l;
    stats st;
    int i;
    seed = SEED;
    for (i = 0; i < 64; i++)
        l.px[i] = uniform(-2, 2), l.py[i] = uniform(-2, 2), l.pz[i] = uniform(-2, 2);
    l.sink = 0;
    st = measure(&l, run, reset_latency, 1 << 16);
    latency_sink = l.sink;
    return st;
}

/* ---- batches: ik_solve_many over BATCH chains against BATCH single solves ---- */

/* Tracking: chain k follows bench/lua_bench.lua's Lissajous curve (TRACK_PERIOD frames a
   period, within 0.8 of its reach), k / BATCH of a period ahead of chain 0, TRACK_FRAMES
   frames a window, each window from the pose the TRACK_FRAMES frames before it left. */
#define TRACK_PERIOD 2000
#define TRACK_FRAMES 250

typedef struct batch_ctx {
    ik_chain *chains[BATCH];
    double lengths[BATCH_BONES];
    double *start; /* BATCH start poses */
    double *track_start; /* BATCH poses: where tracking's warm-up window left them */
    double *targets[3]; /* defaults, equal work, tracking: rounds of BATCH 2D targets each */
    int set; /* which set the runs use */
    int rounds[3], next;
    long reached, solves, iterations; /* solves and iterations: single calls only */
} batch_ctx;

/*
 * Round by round, each chain's target is the tip of a random pose (drawn on a scratch chain
 * of the same lengths); for equal work, one on which that chain's FABRIK runs all
 * EQUAL_ITERATIONS from where the last round left it (as equal_targets does for one chain).
 * A candidate that stops early is dropped, and the chain replays its rounds so far from its
 * start pose: that puts it back bit for bit, where setting its angles back would not (a
 * solve leaves the joints as the truth; angles read back and set again rebuild them a few
 * ulps apart, and the timed solves would then not run all their iterations).
 */
static void batch_targets(batch_ctx *b, int equal)
{
    double pose[BATCH_BONES], tip[3];
    int k, r, q;
    ik_chain *scratch = ik_chain2d_create(BATCH_BONES, b->lengths, NULL);
    if (!scratch) exit(1);
    for (k = 0; k < BATCH; k++) {
        if (equal) configure_equal(b->chains[k], IK_SOLVER_FABRIK);
        set_pose(b->chains[k], b->start + k * BATCH_BONES);
    }
    for (r = 0; r < b->rounds[equal]; r++) {
        for (k = 0; k < BATCH; k++) {
            double *t = b->targets[equal] + 2 * ((size_t)r * BATCH + (size_t)k);
            for (;;) {
                ik_result res;
                random_tip(scratch, pose, tip);
                t[0] = tip[0], t[1] = tip[1];
                if (!equal) break;
                ik_chain_solve(b->chains[k], t, &res);
                if (res.iterations == EQUAL_ITERATIONS) break;
                set_pose(b->chains[k], b->start + k * BATCH_BONES);
                for (q = 0; q < r; q++)
                    ik_chain_solve(b->chains[k],
                                   b->targets[equal] + 2 * ((size_t)q * BATCH + (size_t)k), &res);
            }
        }
    }
    ik_chain_destroy(scratch);
}

/* Frame f's target (f from -TRACK_FRAMES) for chain k, on the curve. */
static void track_target(const batch_ctx *b, int f, int k, double *t)
{
    double reach = 0, a;
    int i, g = ((f + k * TRACK_PERIOD / BATCH) % TRACK_PERIOD + TRACK_PERIOD) % TRACK_PERIOD;
    for (i = 0; i < BATCH_BONES; i++) reach += b->lengths[i];
    a = 2 * PI * g / TRACK_PERIOD;
    t[0] = reach * (0.35 + 0.3 * cos(3 * a)), t[1] = reach * 0.45 * sin(2 * a);
}

/* The tracking window's targets, and the poses the window before it leaves (from straight). */
static void track_targets(batch_ctx *b)
{
    double t[2];
    int f, k, i;
    for (k = 0; k < BATCH; k++) {
        ik_result r;
        configure_default(b->chains[k], IK_SOLVER_FABRIK);
        for (i = 0; i < BATCH_BONES; i++) ik_chain2d_set_angle(b->chains[k], i, 0);
        for (f = -TRACK_FRAMES; f < 0; f++) {
            track_target(b, f, k, t);
            ik_chain_solve(b->chains[k], t, &r);
        }
        for (i = 0; i < BATCH_BONES; i++) ik_chain2d_angle(b->chains[k], i, b->track_start + k * BATCH_BONES + i);
        for (f = 0; f < TRACK_FRAMES; f++) track_target(b, f, k, b->targets[2] + 2 * ((size_t)f * BATCH + (size_t)k));
    }
}

static void batch_init(batch_ctx *b)
{
    double *lengths = b->lengths;
    int k, i;
    ik_status st;
    seed = SEED;
    for (i = 0; i < BATCH_BONES; i++) lengths[i] = 0.5 + random01();
    b->rounds[0] = b->rounds[1] = TARGETS / BATCH;
    b->rounds[2] = TRACK_FRAMES;
    b->start = (double *)checked_malloc(BATCH * BATCH_BONES * sizeof(double));
    b->track_start = (double *)checked_malloc(BATCH * BATCH_BONES * sizeof(double));
    for (i = 0; i < 3; i++)
        b->targets[i] = (double *)checked_malloc((size_t)b->rounds[i] * BATCH * 2 * sizeof(double));
    for (k = 0; k < BATCH; k++) {
        b->chains[k] = ik_chain2d_create(BATCH_BONES, lengths, &st);
        if (!b->chains[k]) exit(1);
        random_pose(2, BATCH_BONES, b->start + k * BATCH_BONES);
    }
    batch_targets(b, 0);
    batch_targets(b, 1);
    track_targets(b);
}

static void batch_free(batch_ctx *b)
{
    int k;
    for (k = 0; k < BATCH; k++) ik_chain_destroy(b->chains[k]);
    free(b->start);
    free(b->track_start);
    free(b->targets[0]);
    free(b->targets[1]);
    free(b->targets[2]);
}

static void batch_to_start(batch_ctx *b)
{
    int k;
    for (k = 0; k < BATCH; k++) set_pose(b->chains[k], (b->set == 2 ? b->track_start : b->start) + k * BATCH_BONES);
    b->next = 0;
}

static void reset_batch(void *ctx)
{
    batch_ctx *b = (batch_ctx *)ctx;
    batch_to_start(b);
    b->reached = b->solves = b->iterations = 0;
}

/* count: rounds; each solves every chain once. */
static void run_batch_single(void *ctx, long count)
{
    batch_ctx *b = (batch_ctx *)ctx;
    ik_result r;
    long j;
    int k;
    for (j = 0; j < count; j++) {
        const double *t = b->targets[b->set] + (size_t)b->next * BATCH * 2;
        for (k = 0; k < BATCH; k++) {
            ik_chain_solve(b->chains[k], t + 2 * k, &r);
            b->reached += r.reached;
            b->iterations += r.iterations;
        }
        b->solves += BATCH;
        if (++b->next == b->rounds[b->set]) batch_to_start(b);
    }
}

static void run_batch_many(void *ctx, long count)
{
    batch_ctx *b = (batch_ctx *)ctx;
    long j;
    int reached = 0, failed = 0;
    for (j = 0; j < count; j++) {
        ik_solve_many(b->chains, BATCH, b->targets[b->set] + (size_t)b->next * BATCH * 2,
                      &reached, NULL, &failed);
        b->reached += reached;
        if (++b->next == b->rounds[b->set]) batch_to_start(b);
    }
}

/* ---- rigs: the humanoid and the spider of spec/rigs_spec.lua ---- */

/*
 * Built as bench/rigs.lua builds them, with the same numbers drawn in the same order, so
 * the rig rows of bench/lua_bench.lua time the same solves from Lua (their reached and
 * iterations columns agree with these). Tracking: every bone swings smoothly (an animation
 * drawn once), the limbs' tips along that motion are the goals, one frame after another,
 * each solve from the last frame's pose. Straight: goals from random poses of the whole
 * tree, each solved from the straight pose. The unit of work is a window: RIG_WINDOW frames
 * from the animation's first pose, or the RIG_TRIALS straight starts; a run does whole
 * windows, so every run does the same solves, however many it takes to last MIN_NS.
 */
#define RIG_CHAINS 9 /* at most: the spider's body and legs */
#define RIG_PERIOD 1000 /* frames per period of the tracking animation */
#define RIG_WINDOW 250 /* the frames of a tracking window: a quarter period */
#define RIG_TRIALS 50 /* goal sets from random poses, for the straight starts */
#define RIG_STRAIGHT_ITERATIONS 100

typedef struct rig_ctx {
    int dim, count; /* chains: the root first, then the limbs, which have the goals */
    ik_chain *chains[RIG_CHAINS];
    ik_rig *rig;
    int straight; /* each solve from the straight pose (else from the last frame's) */
    int sets; /* goal sets in a window: RIG_WINDOW or RIG_TRIALS */
    double *goals[2]; /* tracking, straight: sets * (count - 1) * dim */
    double (*anim)[6]; /* per bone, in chain order: axis x, y, z, amplitude, frequency, phase */
    long solves, iterations, reached;
} rig_ctx;

static void axis_angle(double x, double y, double z, double a, double q[4])
{
    double s = sin(a / 2), l = sqrt(x * x + y * y + z * z);
    q[0] = cos(a / 2), q[1] = s * x / l, q[2] = s * y / l, q[3] = s * z / l;
}

static ik_chain *rig_new_chain(rig_ctx *r, int n, const double *lengths)
{
    ik_status st;
    ik_chain *c =
        r->dim == 2 ? ik_chain2d_create(n, lengths, &st) : ik_chain3d_create(n, lengths, &st);
    if (!c) {
        fprintf(stderr, "bench: rig chain: %s\n", ik_status_string(st));
        exit(1);
    }
    r->chains[r->count++] = c;
    return c;
}

/* Hangs chain k on joint j (1-based, as in Lua) of the root, turned by a (3D: about the axis). */
static void rig_attach(rig_ctx *r, int k, int j, double a, double ax, double ay, double az)
{
    ik_status st;
    if (r->dim == 2) {
        st = ik_chain2d_attach(r->chains[k], r->chains[0], j - 1, a);
    } else {
        double q[4];
        axis_angle(ax, ay, az, a, q);
        st = ik_chain3d_attach(r->chains[k], r->chains[0], j - 1, q);
    }
    if (st != IK_OK) {
        fprintf(stderr, "bench: attach: %s\n", ik_status_string(st));
        exit(1);
    }
}

/* A 3-bone spine (the root, up from the hips), two 2-bone arms and a 2-bone neck on its top,
   two 2-bone legs on its base: about 10 units tall. */
static void make_humanoid(rig_ctx *r)
{
    static const double spine[] = {1.2, 1.2, 1.2}, arms[] = {1.5, 1.4}, legs[] = {2.2, 2.1},
                        neck[] = {0.5, 0.6};
    static const double offsets[] = {1.2, -1.2, 3.0, -3.0, 0};
    static const int joints[] = {4, 4, 1, 1, 4};
    int k;
    rig_new_chain(r, 3, spine);
    rig_new_chain(r, 2, arms), rig_new_chain(r, 2, arms);
    rig_new_chain(r, 2, legs), rig_new_chain(r, 2, legs);
    rig_new_chain(r, 2, neck);
    if (r->dim == 2) {
        ik_chain2d_set_base(r->chains[0], 0, 0, PI / 2);
    } else {
        double q[4], p[3] = {0, 0, 0};
        axis_angle(0, 0, 1, PI / 2, q);
        ik_chain3d_set_base(r->chains[0], p, q);
    }
    for (k = 1; k < 6; k++) /* Lua's k = 2..6: k % 2 there is (k + 1) % 2 here */
        rig_attach(r, k, joints[k - 1], offsets[k - 1], 0, 0.3 * ((k + 1) % 2) + 0.1, 1);
}

/* A 2-bone body (the root) and eight 3-bone legs, four on each body joint. */
static void make_spider(rig_ctx *r)
{
    static const double body[] = {1, 1}, leg[] = {1.2, 1.5, 1.8};
    int k;
    rig_new_chain(r, 2, body);
    for (k = 1; k <= 8; k++) {
        double a = (k % 2 == 1 ? 1 : -1) * (0.5 + 0.3 * ((k - 1) % 4));
        rig_new_chain(r, 3, leg);
        rig_attach(r, k, k <= 4 ? 2 : 3, a, 0.2, 0.1, 1);
    }
}

/* 2D local angles in [-1.2, 1.2]; 3D turns by [0, 1.2] about random axes (bench/rigs.lua). */
static void rig_random_pose(rig_ctx *r)
{
    int k, i;
    for (k = 0; k < r->count; k++) {
        for (i = 0; i < ik_chain_count(r->chains[k]); i++) {
            if (r->dim == 2) {
                ik_chain2d_set_angle(r->chains[k], i, uniform(-1.2, 1.2));
            } else {
                double x = uniform(-1, 1), y = uniform(-1, 1), z = uniform(-1, 1), q[4];
                axis_angle(x, y, z, uniform(0, 1.2), q);
                ik_chain3d_set_rotation(r->chains[k], i, q);
            }
        }
    }
}

static void rig_straighten(rig_ctx *r)
{
    static const double identity[4] = {1, 0, 0, 0};
    int k, i;
    for (k = 0; k < r->count; k++) {
        for (i = 0; i < ik_chain_count(r->chains[k]); i++) {
            if (r->dim == 2)
                ik_chain2d_set_angle(r->chains[k], i, 0);
            else
                ik_chain3d_set_rotation(r->chains[k], i, identity);
        }
    }
}

/* The limbs' tips, dim numbers each. */
static void rig_goals(rig_ctx *r, double *out)
{
    int k, d;
    for (k = 1; k < r->count; k++) {
        const ik_real *p = ik_chain_positions(r->chains[k]);
        int n = ik_chain_count(r->chains[k]);
        for (d = 0; d < r->dim; d++) *out++ = p[r->dim * n + d];
    }
}

static void rig_set_goals(rig_ctx *r, const double *goals)
{
    int k;
    for (k = 1; k < r->count; k++)
        ik_chain_set_target(r->chains[k], goals + (size_t)(k - 1) * r->dim);
}

static int rig_bones(const rig_ctx *r)
{
    int k, bones = 0;
    for (k = 0; k < r->count; k++) bones += ik_chain_count(r->chains[k]);
    return bones;
}

/* Every bone swings by amp * sin(2 pi * freq * t + phase) about its straight pose, t in
   periods: 2D its local angle, 3D a turn about an axis of its own. */
static void rig_animation(rig_ctx *r)
{
    int b, bones = rig_bones(r);
    r->anim = (double(*)[6])checked_malloc((size_t)bones * sizeof *r->anim);
    for (b = 0; b < bones; b++) {
        double *a = r->anim[b];
        if (r->dim == 3) {
            a[0] = uniform(-1, 1);
            a[1] = uniform(-1, 1);
            a[2] = uniform(-1, 1);
        }
        a[3] = uniform(0.2, 0.8);
        a[4] = 1 + floor(uniform(0, 3));
        a[5] = uniform(0, 2 * PI);
    }
}

static void rig_animate(rig_ctx *r, double t)
{
    int k, i, b = 0;
    for (k = 0; k < r->count; k++) {
        for (i = 0; i < ik_chain_count(r->chains[k]); i++, b++) {
            const double *a = r->anim[b];
            double angle = a[3] * sin(2 * PI * a[4] * t + a[5]);
            if (r->dim == 2) {
                ik_chain2d_set_angle(r->chains[k], i, angle);
            } else {
                double q[4];
                axis_angle(a[0], a[1], a[2], angle, q);
                ik_chain3d_set_rotation(r->chains[k], i, q);
            }
        }
    }
}

/* shape 0: the humanoid, 1: the spider. Draws the tracking goals, then the straight ones,
   each from SEED. */
static void rig_init(rig_ctx *r, int shape, int dim)
{
    size_t per;
    int f, culprit;
    ik_status st;
    memset(r, 0, sizeof *r);
    r->dim = dim;
    if (shape == 0)
        make_humanoid(r);
    else
        make_spider(r);
    r->rig = ik_rig_create(r->chains, r->count, &st, &culprit);
    if (!r->rig) {
        fprintf(stderr, "bench: rig: %s (chain %d)\n", ik_status_string(st), culprit);
        exit(1);
    }
    per = (size_t)(r->count - 1) * (size_t)dim;
    r->goals[0] = (double *)checked_malloc(RIG_WINDOW * per * sizeof(double));
    r->goals[1] = (double *)checked_malloc(RIG_TRIALS * per * sizeof(double));
    seed = SEED;
    rig_animation(r);
    for (f = 0; f < RIG_WINDOW; f++) {
        rig_animate(r, (double)f / RIG_PERIOD);
        rig_goals(r, r->goals[0] + (size_t)f * per);
    }
    seed = SEED;
    for (f = 0; f < RIG_TRIALS; f++) {
        rig_random_pose(r);
        rig_goals(r, r->goals[1] + (size_t)f * per);
    }
}

static void rig_free(rig_ctx *r)
{
    int k;
    ik_rig_destroy(r->rig);
    for (k = r->count - 1; k >= 0; k--) ik_chain_detach(r->chains[k]);
    for (k = 0; k < r->count; k++) ik_chain_destroy(r->chains[k]);
    free(r->goals[0]);
    free(r->goals[1]);
    free(r->anim);
}

static void rig_configure(rig_ctx *r, ik_solver solver)
{
    ik_rig_settings s = ik_rig_default_settings();
    s.solver = solver;
    if (r->straight) s.iterations = RIG_STRAIGHT_ITERATIONS;
    if (ik_rig_configure(r->rig, &s) != IK_OK) exit(1);
}

static void reset_rig(void *ctx)
{
    rig_ctx *r = (rig_ctx *)ctx;
    r->solves = r->iterations = r->reached = 0;
}

/* count: windows, each from its start (the animation's first pose); per frame or trial the
   goals set (after straightening every bone for straight), then the rig solved. */
static void run_rig(void *ctx, long count)
{
    rig_ctx *r = (rig_ctx *)ctx;
    size_t per = (size_t)(r->count - 1) * (size_t)r->dim;
    ik_result res;
    long j;
    int k;
    for (j = 0; j < count; j++) {
        if (!r->straight) rig_animate(r, 0);
        for (k = 0; k < r->sets; k++) {
            if (r->straight) rig_straighten(r);
            rig_set_goals(r, r->goals[r->straight] + (size_t)k * per);
            ik_rig_solve(r->rig, &res);
            r->iterations += res.iterations;
            r->reached += res.reached;
        }
    }
    r->solves += count * r->sets;
}

/* The same without the solves: the set-up run_rig's figure includes. */
static void run_rig_setup(void *ctx, long count)
{
    rig_ctx *r = (rig_ctx *)ctx;
    size_t per = (size_t)(r->count - 1) * (size_t)r->dim;
    long j;
    int k;
    for (j = 0; j < count; j++) {
        if (!r->straight) rig_animate(r, 0);
        for (k = 0; k < r->sets; k++) {
            if (r->straight) rig_straighten(r);
            rig_set_goals(r, r->goals[r->straight] + (size_t)k * per);
        }
    }
    r->solves += count * r->sets;
}

/* ---- the tables ---- */

static const int sizes[] = {2, 10, 50, 200};
#define SIZES (int)(sizeof sizes / sizeof sizes[0])
static const ik_solver solvers[] = {IK_SOLVER_FABRIK, IK_SOLVER_CCD, IK_SOLVER_RELAX,
                                    IK_SOLVER_TWO_BONE};

/* What the limit tables need from the equal-work table. */
static double fabrik_ns[2][SIZES], ccd2d_ns[SIZES], textbook_ns[2][SIZES];

static void print_cpu(void)
{
    char line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    const char *model = "unknown";
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon[strcspn(colon, "\n")] = 0;
            model = colon + 2;
            break;
        }
    }
    printf("CPU: %s (/proc/cpuinfo)", model);
    if (f) fclose(f);
}

static void equal_work_table(void)
{
    int dim, s, v;
    printf("\n== C: ns per solve, equal work ==\n"
           "%d iterations, tolerance 0, escape off, else the defaults (CCD: greed 0.5, ramp).\n"
           "Targets: tips of random poses on which every solver runs all %d iterations (at\n"
           "tolerance 0 a solve still stops when the tip lands exactly on the target, and FABRIK\n"
           "does within 10 iterations on most tips: \"kept\" counts the targets kept of those\n"
           "drawn); \"iterations\" is the mean the timed solves reported. Each solve starts from\n"
           "the last one's pose, every 8th from the start pose. textbook: FABRIK on plain arrays\n"
           "(bench.c), the same targets.\n"
           "ns/update: ns per solve / (iterations * bones * 2 passes).\n\n",
           EQUAL_ITERATIONS, EQUAL_ITERATIONS);
    printf("%-4s %-10s %5s %10s %7s %10s %10s %11s\n", "dim", "solver", "bones", "ns/solve",
           "spread ", "iterations", "ns/update", "kept");
    for (dim = 2; dim <= 3; dim++) {
        for (v = 0; v < 5; v++) {
            for (s = 0; s < SIZES; s++) {
                bench_case b;
                stats st;
                int textbook = v == 4;
                ik_solver solver = textbook ? IK_SOLVER_FABRIK : solvers[v];
                double mean;
                char kept[32];
                if (solver == IK_SOLVER_TWO_BONE && sizes[s] != 2) continue;
                case_init(&b, dim, sizes[s], 1);
                if (textbook) {
                    b.tb_iterations = EQUAL_ITERATIONS;
                    b.tb_tolerance = 0;
                    st = measure(&b, run_textbook, reset_textbook, MIN_SOLVES);
                } else {
                    configure_equal(b.chain, solver);
                    st = measure(&b, run_library, reset_library, MIN_SOLVES);
                }
                mean = (double)b.iterations / (double)b.solves;
                sprintf(kept, "%d/%d", b.ntargets, b.tried);
                printf("%-4s %-10s %5d %10.0f %7s %10.2f ", dim == 2 ? "2D" : "3D",
                       textbook ? "textbook" : ik_solver_name(solver), sizes[s], st.median,
                       spread(st), mean);
                if (solver == IK_SOLVER_FABRIK)
                    printf("%10.2f", st.median / (mean * sizes[s] * 2));
                else
                    printf("%10s", "-");
                printf(" %11s\n", kept);
                if (textbook)
                    textbook_ns[dim - 2][s] = st.median;
                else if (solver == IK_SOLVER_FABRIK)
                    fabrik_ns[dim - 2][s] = st.median;
                else if (solver == IK_SOLVER_CCD && dim == 2)
                    ccd2d_ns[s] = st.median;
                case_free(&b);
            }
        }
    }
}

static void tolerance_table(void)
{
    int dim, s, v;
    printf("\n== C: ns per solve, to a tolerance ==\n"
           "The defaults: tolerance 1e-3, at most 64 iterations, escape on (CCD: greed 0.5,\n"
           "ramp). Tips of random poses (all of them), started as above.\n\n");
    printf("%-4s %-10s %5s %10s %7s %8s %10s %12s\n", "dim", "solver", "bones", "ns/solve",
           "spread ", "reached", "iterations", "ns/iteration");
    for (dim = 2; dim <= 3; dim++) {
        for (v = 0; v < 4; v++) {
            for (s = 0; s < SIZES; s++) {
                bench_case b;
                stats st;
                double mean;
                if (solvers[v] == IK_SOLVER_TWO_BONE && sizes[s] != 2) continue;
                case_init(&b, dim, sizes[s], 0);
                configure_default(b.chain, solvers[v]);
                st = measure(&b, run_library, reset_library, MIN_SOLVES);
                mean = (double)b.iterations / (double)b.solves;
                printf("%-4s %-10s %5d %10.0f %7s %7.1f%% %10.2f %12.0f\n", dim == 2 ? "2D" : "3D",
                       ik_solver_name(solvers[v]), sizes[s], st.median, spread(st),
                       100.0 * (double)b.reached / (double)b.solves, mean,
                       mean > 0 ? st.median / mean : 0);
                case_free(&b);
            }
        }
    }
}

/*
 * The latencies, measured before the equal-work table and again after it, so a change of
 * load in between shows; the limits use the mean of the two.
 */
typedef struct latencies {
    stats fabrik2d, fabrik3d, ccd2d, batch2d;
} latencies;

static latencies measure_latencies(void)
{
    latencies l;
    l.fabrik2d = latency(run_fabrik_latency2d);
    l.fabrik3d = latency(run_fabrik_latency3d);
    l.ccd2d = latency(run_ccd_latency2d);
    l.batch2d = latency(run_fabrik_throughput2d);
    return l;
}

static void latency_row(const char *what, stats a, stats b)
{
    printf("  %-62s %6.2f %6.2f %7s %7s\n", what, a.median, b.median, spread(a), spread(b));
}

static void limit_table(latencies before, latencies after)
{
    double f2 = (before.fabrik2d.median + after.fabrik2d.median) / 2;
    double f3 = (before.fabrik3d.median + after.fabrik3d.median) / 2;
    double c2 = (before.ccd2d.median + after.ccd2d.median) / 2;
    int s, dim;
    printf("\n== C: the limit ==\n"
           "Latency of the dependent work per bone, each step feeding the next: ns, measured\n"
           "before and after the equal-work table:\n");
    printf("  %-62s %6s %6s %7s %7s\n", "", "before", "after", "spread ", "spread ");
    latency_row("FABRIK 2D bone update (sub, mul, add, sqrt, divide, mul, add)", before.fabrik2d,
                after.fabrik2d);
    latency_row("FABRIK 3D bone update", before.fabrik3d, after.fabrik3d);
    latency_row("CCD 2D joint (atan2 of cross and dot, cos, sin, turn the tip)", before.ccd2d,
                after.ccd2d);
    latency_row("FABRIK 2D, 4 chains interleaved: per update (a batch's limit)", before.batch2d,
                after.batch2d);
    printf("limit = latency (the mean) * bones * passes * %d iterations (FABRIK 2 passes, CCD 1);\n"
           "measured: the equal-work table.\n\n",
           EQUAL_ITERATIONS);
    printf("%-4s %-10s %5s %12s %12s %14s %14s\n", "dim", "solver", "bones", "limit ns",
           "measured ns", "measured/limit", "textbook/limit");
    for (dim = 2; dim <= 3; dim++) {
        for (s = 0; s < SIZES; s++) {
            double limit = (dim == 2 ? f2 : f3) * sizes[s] * 2 * EQUAL_ITERATIONS;
            printf("%-4s %-10s %5d %12.0f %12.0f %14.2f %14.2f\n", dim == 2 ? "2D" : "3D", "fabrik",
                   sizes[s], limit, fabrik_ns[dim - 2][s], fabrik_ns[dim - 2][s] / limit,
                   textbook_ns[dim - 2][s] / limit);
        }
    }
    for (s = 0; s < SIZES; s++) {
        double limit = c2 * sizes[s] * EQUAL_ITERATIONS;
        printf("%-4s %-10s %5d %12.0f %12.0f %14.2f %14s\n", "2D", "ccd", sizes[s], limit,
               ccd2d_ns[s], ccd2d_ns[s] / limit, "-");
    }
}

static void batch_table(void)
{
    batch_ctx b;
    int mode;
    printf("\n== C: batches ==\n"
           "%d 2D chains of %d bones: ik_solve_many(chains, %d, targets) against %d\n"
           "ik_chain_solve calls, the same targets; ns per chain solve; single/many > 1: the\n"
           "batch is faster. Equal work: targets on which every solve runs all %d iterations.\n"
           "Tracking: chain k follows a Lissajous curve, k/%d of a period ahead of chain 0, each\n"
           "frame from the last (windows of %d frames, as bench/lua_bench.lua's (c)).\n\n",
           BATCH, BATCH_BONES, BATCH, BATCH, EQUAL_ITERATIONS, BATCH, TRACK_FRAMES);
    printf("%-36s %10s %7s %10s %7s %11s %10s\n", "settings", "single ns", "spread ", "many ns",
           "spread ", "single/many", "iterations");
    batch_init(&b);
    for (mode = 0; mode < 3; mode++) {
        static const char *names[] = {"fabrik, 10 iterations, tolerance 0", "fabrik, defaults (tolerance 1e-3)",
                                      "fabrik, defaults, tracking"};
        stats single, many;
        double mean;
        int k;
        b.set = mode == 0 ? 1 : mode == 1 ? 0 : 2; /* the equal-work targets are set 1 */
        for (k = 0; k < BATCH; k++) {
            if (b.set == 1)
                configure_equal(b.chains[k], IK_SOLVER_FABRIK);
            else
                configure_default(b.chains[k], IK_SOLVER_FABRIK);
        }
        single = measure(&b, run_batch_single, reset_batch, 4);
        mean = (double)b.iterations / (double)b.solves;
        many = measure(&b, run_batch_many, reset_batch, 4);
        printf("%-36s %10.0f %7s %10.0f %7s %11.2f %10.2f\n", names[mode], single.median / BATCH, spread(single),
               many.median / BATCH, spread(many), single.median / many.median, mean);
    }
    batch_free(&b);
}

static void rig_table(void)
{
    static const char *shapes[] = {"humanoid", "spider"};
    static const ik_solver rig_solvers[] = {IK_SOLVER_FABRIK, IK_SOLVER_RELAX};
    int shape, dim, straight, v;
    printf("\n== C: rigs ==\n"
           "ik_rig_solve on the humanoid (6 chains, 13 bones: a 3-bone spine, two 2-bone arms\n"
           "and a 2-bone neck on its top, two 2-bone legs on its base; about 10 units tall) and\n"
           "the spider (9 chains, 26 bones: a 2-bone body, eight 3-bone legs on its two joints),\n"
           "the rigs of spec/rigs_spec.lua. tracking: every bone swings smoothly (%d frames a\n"
           "period), the limbs' tips are the goals, each frame from the last frame's pose, %d\n"
           "frames from the first pose, the rig's defaults (tolerance 1e-3, at most 64\n"
           "iterations). straight: goals from %d random poses of the whole tree, each solved from\n"
           "the straight pose, at most %d iterations. ns/solve: per frame or trial, without the\n"
           "set-up (the goals set; for straight every bone straightened), which is timed alone\n"
           "and taken off: set-up ns. reached: solves with every goal met; iterations: the\n"
           "mean. bench/lua_bench.lua times the same solves from Lua.\n\n",
           RIG_PERIOD, RIG_WINDOW, RIG_TRIALS, RIG_STRAIGHT_ITERATIONS);
    printf("%-9s %-4s %-7s %-9s %10s %7s %9s %8s %10s\n", "rig", "dim", "solver", "start",
           "ns/solve", "spread ", "set-up ns", "reached", "iterations");
    for (shape = 0; shape < 2; shape++) {
        for (dim = 2; dim <= 3; dim++) {
            rig_ctx r;
            rig_init(&r, shape, dim);
            for (straight = 0; straight < 2; straight++) {
                stats setup;
                r.straight = straight;
                r.sets = straight ? RIG_TRIALS : RIG_WINDOW;
                setup = measure(&r, run_rig_setup, reset_rig, 1);
                for (v = 0; v < 2; v++) {
                    stats st;
                    rig_configure(&r, rig_solvers[v]);
                    st = measure(&r, run_rig, reset_rig, 1);
                    printf("%-9s %-4s %-7s %-9s %10.0f %7s %9.0f %7.1f%% %10.2f\n", shapes[shape],
                           dim == 2 ? "2D" : "3D", ik_solver_name(rig_solvers[v]),
                           straight ? "straight" : "tracking", (st.median - setup.median) / r.sets,
                           spread(st), setup.median / r.sets,
                           100.0 * (double)r.reached / (double)r.solves,
                           (double)r.iterations / (double)r.solves);
                }
            }
            rig_free(&r);
        }
    }
}

static void memory_table(void)
{
    printf("\n== C: memory ==\n"
           "Bytes per chain (one block, allocated once; solves allocate nothing):\n");
    printf("%-6s %10s %10s\n", "bones", "2D", "3D");
    printf("%-6d %10zu %10zu\n", 10, ik_chain2d_size(10), ik_chain3d_size(10));
    printf("%-6d %10zu %10zu\n", 100, ik_chain2d_size(100), ik_chain3d_size(100));
}

/*
 * What bench/lua_bench.lua compares with the same calls through the binding: the
 * equal-work FABRIK solve, and a solve with nothing to do (the defaults, the target on the
 * tip: the checks, one distance, zero iterations), where the binding's cost stands out.
 */
static void run_reached(void *ctx, long count)
{
    bench_case *b = (bench_case *)ctx;
    ik_result r;
    long k;
    for (k = 0; k < count; k++) {
        ik_chain_solve(b->chain, b->targets, &r);
        b->iterations += r.iterations;
    }
    b->solves += count;
}

static void binding_figures(stats *solve, stats *reached)
{
    bench_case b;
    case_init(&b, 2, 10, 1);
    configure_equal(b.chain, IK_SOLVER_FABRIK);
    *solve = measure(&b, run_library, reset_library, MIN_SOLVES);
    configure_default(b.chain, IK_SOLVER_FABRIK);
    set_pose(b.chain, b.start);
    points3(b.chain, b.n, b.n, b.targets);
    *reached = measure(&b, run_reached, reset_library, MIN_SOLVES);
    if (b.iterations != 0) fprintf(stderr, "bench: the reached solve iterated\n");
    case_free(&b);
}

/* ---- callgrind driver ---- */

/*
 * The measured part of --instr: bench/instr.sh counts instructions only inside this
 * function (callgrind --toggle-collect=instr_run), so drawing and filtering the targets
 * are left out and the loop adds a few instructions per solve.
 */
NOINLINE void instr_run(bench_case *b, long count, int textbook);
NOINLINE void instr_run(bench_case *b, long count, int textbook)
{
    if (textbook)
        run_textbook(b, count);
    else
        run_library(b, count);
}

static int instr(const char *name, long count)
{
    static const struct {
        const char *name;
        int dim, textbook;
        ik_solver solver;
    } cases[] = {
        {"fabrik2d", 2, 0, IK_SOLVER_FABRIK},   {"ccd2d", 2, 0, IK_SOLVER_CCD},
        {"relax2d", 2, 0, IK_SOLVER_RELAX},     {"two_bone2d", 2, 0, IK_SOLVER_TWO_BONE},
        {"fabrik3d", 3, 0, IK_SOLVER_FABRIK},   {"ccd3d", 3, 0, IK_SOLVER_CCD},
        {"relax3d", 3, 0, IK_SOLVER_RELAX},     {"textbook2d", 2, 1, IK_SOLVER_FABRIK},
        {"textbook3d", 3, 1, IK_SOLVER_FABRIK},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench_case b;
        if (strcmp(name, cases[i].name) != 0) continue;
        equal_wanted = INSTR_TARGETS;
        case_init(&b, cases[i].dim, cases[i].solver == IK_SOLVER_TWO_BONE ? 2 : 10, 1);
        if (cases[i].textbook) {
            b.tb_iterations = EQUAL_ITERATIONS;
            b.tb_tolerance = 0;
            reset_textbook(&b);
        } else {
            configure_equal(b.chain, cases[i].solver);
            reset_library(&b);
        }
        instr_run(&b, count, cases[i].textbook);
        printf("%s %ld %ld\n", name, b.solves, b.iterations);
        case_free(&b);
        return 0;
    }
    fprintf(stderr, "bench: unknown case '%s'\n", name);
    return 1;
}

/* Whether table `name` is wanted: every table without --tables, else those listed. */
static const char *wanted_tables;
static int want(const char *name)
{
    const char *p = wanted_tables;
    size_t len = strlen(name);
    if (!p) return 1;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == wanted_tables || p[-1] == ',') && (p[len] == ',' || p[len] == 0)) return 1;
        p += len;
    }
    return 0;
}

int main(int argc, char **argv)
{
    double t0 = now_ns();
    latencies before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    if (argc >= 2 && strcmp(argv[1], "--binding") == 0) {
        stats solve, reached;
        bench_clock = CLOCK_PROCESS_CPUTIME_ID;
        binding_figures(&solve, &reached);
        printf("%.1f %.4f %.1f %.4f\n", solve.median, solve.spread, reached.median, reached.spread);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--instr") == 0)
        return instr(argv[2], argc >= 4 ? atol(argv[3]) : 1000);
    if (argc == 3 && strcmp(argv[1], "--tables") == 0) {
        wanted_tables = argv[2];
    } else if (argc >= 2) {
        fprintf(stderr, "usage: bench [--binding | --instr CASE [N] | --tables LIST]\n"
                        "  LIST: comma-separated, of equal (with the limit), tolerance, batch,\n"
                        "  rigs, memory\n");
        return 1;
    }
    printf("ik %s, C level (libik.a, the project's flags). ", IK_VERSION);
    print_cpu();
    printf("\nMedians of %d runs of >= %.0f ms (CLOCK_MONOTONIC); spread = (max - min) / median.\n"
           "The machine is shared: a run that got under %.0f%% of a CPU (CPU time / wall time) is\n"
           "run again, up to %d runs in all; '!' marks a figure that still includes preempted\n"
           "runs (inflated by the wait).\n",
           REPS, MIN_NS / 1e6, 100 * PREEMPTED, RETRIES);
    print_load();
    if (want("equal")) {
        before = measure_latencies();
        equal_work_table();
        after = measure_latencies();
    }
    if (want("tolerance")) tolerance_table();
    if (want("equal")) limit_table(before, after);
    if (want("batch")) batch_table();
    if (want("rigs")) rig_table();
    if (want("memory")) memory_table();
    print_load();
    printf("\n(C bench: %.0f s)\n", (now_ns() - t0) / 1e9);
    return 0;
}
