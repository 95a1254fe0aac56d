/*
 * threads_test.c - what ik.h promises threads, checked (and run under ThreadSanitizer by
 * `make test-tsan`, which CI runs):
 *   1. chains used by one thread each solve independently: every thread's results are
 *      bit for bit those of the same work done alone (the core has no global state);
 *   2. once ik_chain_update() has returned, any number of threads may read a chain at once
 *      (positions, angles, rotations, base, settings, goals): reading writes nothing, even
 *      for a chain left by a position-based solve (its pose derived on the fly) and for a
 *      chain attached to another (its base already brought up to date).
 * Exit status 0 and "threads: ok" when all holds.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ik.h"

#define THREADS 4
#define SOLVES 2000
#define READS 20000

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "threads: %s\n", what);
        failures++;
    }
}

/* ---- 1. a chain per thread ---- */

typedef struct work {
    int dim, seed;
    double checksum; /* of every result and final position */
    int ok;          /* every call returned IK_OK (set by the thread itself: no shared write) */
} work;

static double lcg(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (*state >> 8) / 16777216.0;
}

static void *solve_alone(void *arg)
{
    work *w = (work *)arg;
    const ik_real lengths[5] = {1, 0.8, 0.6, 0.5, 0.4};
    ik_chain *c = w->dim == 2 ? ik_chain2d_create(5, lengths, NULL) : ik_chain3d_create(5, lengths, NULL);
    ik_settings s = ik_default_settings();
    unsigned state = (unsigned)w->seed;
    const ik_real *p;
    int k, i;
    w->checksum = 0;
    w->ok = c != NULL;
    if (c == NULL) return NULL;
    for (k = 0; k < SOLVES; k++) {
        ik_real t[3];
        ik_result r;
        s.solver = (ik_solver)(k % 3); /* fabrik, ccd, relax */
        w->ok &= ik_chain_configure(c, &s) == IK_OK;
        for (i = 0; i < 3; i++) t[i] = 5 * lcg(&state) - 2.5;
        w->ok &= ik_chain_solve(c, t, &r) == IK_OK;
        w->checksum += r.distance + r.iterations;
    }
    p = ik_chain_positions(c);
    for (i = 0; i < w->dim * 6; i++) w->checksum += p[i];
    ik_chain_destroy(c);
    return NULL;
}

static void chains_per_thread(void)
{
    pthread_t threads[THREADS];
    work together[THREADS], alone[THREADS];
    int k;
    for (k = 0; k < THREADS; k++) {
        together[k].dim = alone[k].dim = 2 + k % 2;
        together[k].seed = alone[k].seed = 100 + k;
        pthread_create(&threads[k], NULL, solve_alone, &together[k]);
    }
    for (k = 0; k < THREADS; k++) pthread_join(threads[k], NULL);
    for (k = 0; k < THREADS; k++) {
        solve_alone(&alone[k]);
        expect(together[k].ok && alone[k].ok, "a call of a chain's own thread failed");
        expect(memcmp(&alone[k].checksum, &together[k].checksum, sizeof(double)) == 0,
               "a chain solved beside others differs from the same work alone");
    }
}

/* ---- 2. shared reads ---- */

typedef struct shared {
    ik_chain *chain, *child;
    double sum; /* what this reader read, summed */
} shared;

static void *read_only(void *arg)
{
    shared *sh = (shared *)arg;
    int k, i;
    sh->sum = 0;
    for (k = 0; k < READS; k++) {
        ik_chain *c = k % 2 ? sh->child : sh->chain;
        int n = ik_chain_count(c);
        const ik_real *p = ik_chain_positions(c);
        ik_real v, q[4], pos[3];
        int has;
        sh->sum += p[(k % (n + 1)) * ik_chain_dim(c)];
        if (ik_chain_dim(c) == 2) {
            ik_chain2d_angle(c, k % n, &v);
            sh->sum += v;
            ik_chain2d_world_angle(c, k % n, &v);
            sh->sum += v;
            ik_chain2d_base(c, &pos[0], &pos[1], &v);
            sh->sum += pos[0] + v;
        } else {
            ik_chain3d_rotation(c, k % n, q);
            sh->sum += q[0];
            ik_chain3d_world_rotation(c, k % n, q);
            sh->sum += q[1];
            ik_chain3d_base(c, pos, q);
            sh->sum += pos[2] + q[3];
        }
        ik_chain_target(c, pos, &has);
        for (i = 0; has && i < ik_chain_dim(c); i++) sh->sum += pos[i];
        sh->sum += ik_chain_settings(c)->tolerance + ik_chain_reach(c);
    }
    return NULL;
}

static void shared_reads(int dim)
{
    const ik_real lengths[4] = {1, 1, 0.5, 0.25};
    ik_chain *parent = dim == 2 ? ik_chain2d_create(4, lengths, NULL) : ik_chain3d_create(4, lengths, NULL);
    ik_chain *child = dim == 2 ? ik_chain2d_create(2, lengths, NULL) : ik_chain3d_create(2, lengths, NULL);
    const ik_real target[3] = {1.5, 1.2, 0.4}, other[3] = {-0.5, 1, 1};
    pthread_t threads[THREADS];
    shared readers[THREADS], alone;
    ik_result r;
    int k;
    expect(parent && child, "could not make the chains");
    if (!parent || !child) return;
    expect((dim == 2 ? ik_chain2d_attach(child, parent, 3, 0.5) : ik_chain3d_attach(child, parent, 3, NULL)) == IK_OK,
           "attach failed");
    /* FABRIK leaves the parent's joints as the truth (its angles derived when read), and
       moves the child, whose base is then stale until it is brought up to date. */
    expect(ik_chain_solve(parent, target, &r) == IK_OK, "solve failed");
    expect(ik_chain_solve(child, other, &r) == IK_OK, "solve failed");
    expect(ik_chain_solve(parent, other, &r) == IK_OK, "solve failed");
    ik_chain_update(parent);
    ik_chain_update(child);
    /* What one reader alone reads: the readers together must read the same (and, under
       ThreadSanitizer, make test-tsan, write nothing while they do). */
    alone.chain = parent;
    alone.child = child;
    read_only(&alone);
    for (k = 0; k < THREADS; k++) {
        readers[k].chain = parent;
        readers[k].child = child;
        pthread_create(&threads[k], NULL, read_only, &readers[k]);
    }
    for (k = 0; k < THREADS; k++) pthread_join(threads[k], NULL);
    for (k = 0; k < THREADS; k++)
        expect(memcmp(&readers[k].sum, &alone.sum, sizeof(double)) == 0, "readers together read other values than one alone");
    ik_chain_detach(child);
    ik_chain_destroy(child);
    ik_chain_destroy(parent);
}

int main(void)
{
    chains_per_thread();
    shared_reads(2);
    shared_reads(3);
    if (failures) return 1;
    printf("threads: ok (%d threads: chains of their own, %d solves each; shared reads, %d each)\n",
           THREADS, SOLVES, READS);
    return 0;
}
