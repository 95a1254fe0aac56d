/*
 * batch_test.c - ik_solve_many gives every chain the bits ik_chain_solve gives it (joints,
 * local poses and results).
 *
 * Two copies of a crowd of chains: one solved chain by chain, the other in ik_solve_many
 * calls of up to 64 chains, round after round from where the last round left them. The
 * crowd mixes what sends the batch down each of its paths: many chains of one bone count
 * (lanes, full vectors and a partly empty last one, more than a group holds, lanes refilled
 * and compacted as chains finish), bone counts held by one chain only and chains too long for the lanes' scratch
 * (interleaved), targets on the line of a straight chain (the escape bends it mid-batch),
 * bones of 0, 1e-200 and 1e200 (the step that normalises first), tolerance 0, few and many
 * iterations, targets out of reach, already met, a step too small to take, and tracked (near
 * the tip: the joint-space steps, whose first the batch takes side by side on 2D chains of
 * one bone count); 2D and 3D.
 *
 * make test builds it three times: as is (AVX2 where the processor has it, else SSE2),
 * with -DIK_NO_AVX2 (SSE2), and with -DIK_NO_LANES (no vector path): all three must agree
 * with the single solves. Prints "batch: ..." and exits 0 when every bit matches.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ik.h"

#define CHAINS 150
#define ROUNDS 24
#define MAX_BONES 400

static unsigned state = 12345u;

static double random01(void)
{
    state = state * 1664525u + 1013904223u;
    return (state >> 8) / 16777216.0;
}

static int failures;

typedef struct crowd {
    ik_chain *one[CHAINS], *many[CHAINS];
    void *block[CHAINS]; /* many[k]'s memory */
    int n[CHAINS];
    double scale[CHAINS];
} crowd;

static int bones_for(int k)
{
    static const int common[] = {10, 10, 10, 3, 120, 7}; /* 120: more than a group holds */
    if (k % 37 == 5) return 1;
    if (k % 41 == 7) return 150 + k % 3;  /* alone in its count */
    if (k % 53 == 11) return MAX_BONES;  /* too long for the lanes' scratch (2D and 3D) */
    return common[k % 6];
}

static double scale_for(int k)
{
    switch (k % 19) {
    case 3: return 1e-200;
    case 8: return 1e200;
    case 13: return 1e-9;
    default: return 1;
    }
}

static void build(crowd *w, int dim)
{
    ik_real lengths[MAX_BONES];
    int k, i;
    for (k = 0; k < CHAINS; k++) {
        ik_settings s = ik_default_settings();
        ik_status st;
        size_t size;
        void *memory;
        w->n[k] = bones_for(k);
        w->scale[k] = scale_for(k);
        for (i = 0; i < w->n[k]; i++)
            lengths[i] = (k % 23 == 4 && i == 1) ? 0 : w->scale[k] * (0.3 + random01());
        w->one[k] = dim == 2 ? ik_chain2d_create(w->n[k], lengths, &st) : ik_chain3d_create(w->n[k], lengths, &st);
        if (!w->one[k]) {
            fprintf(stderr, "batch: chain %d: %s\n", k, ik_status_string(st));
            exit(1);
        }
        s.iterations = k % 5 == 0 ? 3 : k % 7 == 0 ? 500 : 64;
        s.tolerance = k % 4 == 0 ? 0 : 1e-3 * w->scale[k];
        s.escape = k % 11 != 0;
        s.bend = k % 2 ? 1 : -1;
        if (dim == 3 && k % 3 == 0) {
            s.use_pole = 1;
            s.pole[0] = 0, s.pole[1] = 1, s.pole[2] = 0;
        }
        if (ik_chain_configure(w->one[k], &s) != IK_OK) {
            fprintf(stderr, "batch: configure failed\n");
            exit(1);
        }
        size = ik_chain_dim(w->one[k]) == 2 ? ik_chain2d_size(w->n[k]) : ik_chain3d_size(w->n[k]);
        memory = w->block[k] = malloc(size);
        if (!memory || ik_chain_copy(memory, size, w->one[k], &w->many[k]) != IK_OK) {
            fprintf(stderr, "batch: copy failed\n");
            exit(1);
        }
    }
}

/* Round r's target for chain k (dim numbers). */
static void target_for(const crowd *w, int k, int r, int dim, ik_real *t)
{
    double reach = ik_chain_reach(w->one[k]), u = random01();
    int a;
    if ((k + r) % 9 == 0) { /* on the line of the straight chain: the lock-up the escape is for */
        t[0] = 0.5 * reach, t[1] = 0;
        if (dim == 3) t[2] = 0;
        return;
    }
    if ((k + r) % 13 == 0) { /* out of reach */
        u = 1.5;
    }
    for (a = 0; a < dim; a++) t[a] = (2 * random01() - 1);
    {
        double len = sqrt(t[0] * t[0] + t[1] * t[1] + (dim == 3 ? t[2] * t[2] : 0));
        for (a = 0; a < dim; a++) t[a] = len > 0 ? t[a] / len * u * reach : 0;
    }
}

/* Chains straight again, on rounds where r says so (the line targets need it). */
static void straighten(crowd *w, int k, int dim)
{
    int i;
    for (i = 0; i < w->n[k]; i++) {
        if (dim == 2) {
            ik_chain2d_set_angle(w->one[k], i, 0);
            ik_chain2d_set_angle(w->many[k], i, 0);
        } else {
            const ik_real id[4] = {1, 0, 0, 0};
            ik_chain3d_set_rotation(w->one[k], i, id);
            ik_chain3d_set_rotation(w->many[k], i, id);
        }
    }
}

/* Whether the local poses (2D angles, 3D rotations, as the getters give them) are the same bits. */
static int same_pose(ik_chain *one, ik_chain *many, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        ik_real a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
        if (ik_chain_dim(one) == 2) ik_chain2d_angle(one, i, a), ik_chain2d_angle(many, i, b);
        else ik_chain3d_rotation(one, i, a), ik_chain3d_rotation(many, i, b);
        if (memcmp(a, b, sizeof a) != 0) return 0;
    }
    return 1;
}

static void compare(crowd *w, int k, int r, const ik_result *a, const ik_result *b)
{
    const ik_real *p = ik_chain_positions(w->one[k]), *q = ik_chain_positions(w->many[k]);
    size_t bytes = (size_t)(w->n[k] + 1) * (size_t)ik_chain_dim(w->one[k]) * sizeof(ik_real);
    int pose = same_pose(w->one[k], w->many[k], w->n[k]);
    if (memcmp(p, q, bytes) != 0 || !pose || a->reached != b->reached || a->iterations != b->iterations ||
        memcmp(&a->distance, &b->distance, sizeof a->distance) != 0) {
        if (failures < 10)
            fprintf(stderr, "batch: %dD chain %d (%d bones) round %d: single %d/%g/%d, many %d/%g/%d%s%s\n",
                    ik_chain_dim(w->one[k]), k, w->n[k], r, a->reached, a->distance, a->iterations,
                    b->reached, b->distance, b->iterations, memcmp(p, q, bytes) ? ", joints differ" : "",
                    pose ? "" : ", local poses differ");
        failures++;
    }
}

static long run(int dim, long *iterations)
{
    crowd w;
    ik_real targets[CHAINS * 3];
    ik_result single[CHAINS], many[CHAINS];
    long compared = 0;
    int k, r;
    build(&w, dim);
    for (r = 0; r < ROUNDS; r++) {
        int start, failed = -1, reached = 0;
        for (k = 0; k < CHAINS; k++) {
            if ((k + r) % 9 == 0) straighten(&w, k, dim);
            target_for(&w, k, r, dim, targets + (size_t)k * dim);
            if (r % 6 == 5 && k % 2 == 0) { /* already met: the tip itself */
                memcpy(targets + (size_t)k * dim, ik_chain_positions(w.one[k]) + (size_t)w.n[k] * dim,
                       (size_t)dim * sizeof(ik_real));
                /* or, at tolerance 0, a step too small to take (the steps stop) */
                if (k % 8 == 0) targets[(size_t)k * dim] = nextafter(targets[(size_t)k * dim], INFINITY);
            } else if (r % 3 != 0 && k % 4 != 1) { /* tracked: near the tip (the joint-space steps) */
                const ik_real *tip = ik_chain_positions(w.one[k]) + (size_t)w.n[k] * dim;
                if (dim == 2 && k % 5 == 2) { /* angles given, so a getter has them to hand: a
                                                 step must forget them */
                    int i;
                    for (i = 0; i < w.n[k]; i++) {
                        ik_real angle;
                        ik_chain2d_angle(w.one[k], i, &angle);
                        ik_chain2d_set_angle(w.one[k], i, angle);
                        ik_chain2d_set_angle(w.many[k], i, angle);
                    }
                    tip = ik_chain_positions(w.one[k]) + (size_t)w.n[k] * dim;
                }
                double reach = ik_chain_reach(w.one[k]), near = (r % 3 == 1 ? 0.02 : 0.1) * reach;
                int a;
                for (a = 0; a < dim; a++) targets[(size_t)k * dim + a] = tip[a] + near * (2 * random01() - 1);
            }
            ik_chain_solve(w.one[k], targets + (size_t)k * dim, &single[k]);
            *iterations += single[k].iterations;
        }
        for (start = 0; start < CHAINS; start += 64) {
            int count = CHAINS - start < 64 ? CHAINS - start : 64;
            if (ik_solve_many(w.many + start, count, targets + (size_t)start * dim, &reached,
                              many + start, &failed) != IK_OK) {
                fprintf(stderr, "batch: ik_solve_many refused chain %d\n", start + failed);
                failures++;
            }
        }
        for (k = 0; k < CHAINS; k++) {
            compare(&w, k, r, &single[k], &many[k]);
            compared++;
        }
    }
    for (k = 0; k < CHAINS; k++) {
        ik_chain_destroy(w.one[k]);
        free(w.block[k]);
    }
    return compared;
}

int main(void)
{
    long iterations = 0, compared = run(2, &iterations);
    compared += run(3, &iterations);
    if (failures) {
        fprintf(stderr, "batch: %d of %ld solves differ\n", failures, compared);
        return 1;
    }
    printf("batch: %ld solves through ik_solve_many, %ld iterations, bit for bit the single solves (%s)\n",
           compared, iterations,
#if defined(IK_NO_LANES)
           "no vector path"
#elif defined(IK_NO_AVX2)
           "SSE2 or NEON lanes"
#else
           "AVX2 lanes where the processor has them, else SSE2 or NEON"
#endif
    );
    return 0;
}
