/*
 * edge_scale.c - the C core at the edges of scale, without Lua (run by `make test`):
 *   - ik_chain2d_size / ik_chain3d_size: 0 below 1 bone and above IK_MAX_BONES, and the
 *     constructors refuse those counts before reading any length;
 *   - chains of 100,000 bones (2D and 3D), lengths mixed, 1e300 and 0: every solver leaves
 *     every position finite and every bone its length;
 *   - ik_chain3d_create of IK_MAX_BONES bones (2.5 GB) under a 256 MB address-space limit
 *     fails with IK_ERR_NO_MEMORY, and creating a small chain works afterwards.
 * Prints one line per part and "all edge-scale checks passed"; exits 1 at the first failure.
 * Not for sanitizer builds: ASan reserves far more address space than the limit allows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "ik.h"

#define N 100000

static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void sizes(void)
{
    ik_real one = 1;
    ik_status st = IK_OK;
    int bad[] = {0, -1, IK_MAX_BONES + 1, 2147483647}, k;
    for (k = 0; k < 4; k++) {
        EXPECT(ik_chain2d_size(bad[k]) == 0 && ik_chain3d_size(bad[k]) == 0, "size of %d", bad[k]);
        /* one length given: a constructor that read more would read past it */
        EXPECT(ik_chain2d_create(bad[k], &one, &st) == NULL && st != IK_OK, "create %d", bad[k]);
    }
    EXPECT(ik_chain2d_size(IK_MAX_BONES) > 0 && ik_chain3d_size(IK_MAX_BONES) > 0, "size of the most");
    printf("sizes: 0 outside 1..%d bones; 3D at the most: %zu bytes\n", IK_MAX_BONES,
           ik_chain3d_size(IK_MAX_BONES));
}

/* Every position finite, every bone its length (1e-9, and the coordinates' rounding). */
static void check_chain(ik_chain *c, const ik_real *lengths, const char *what)
{
    const ik_real *p = ik_chain_positions(c);
    int n = ik_chain_count(c), dim = ik_chain_dim(c), i;
    for (i = 0; i < dim * (n + 1); i++) {
        if (!isfinite(p[i])) {
            EXPECT(0, "%s: position value %d is %g", what, i, p[i]);
            return;
        }
    }
    for (i = 0; i < n; i++) {
        const ik_real *a = p + dim * i, *b = a + dim;
        ik_real az = dim == 3 ? a[2] : 0, bz = dim == 3 ? b[2] : 0;
        ik_real half = hypot(hypot((b[0] - a[0]) / 2, (b[1] - a[1]) / 2), (bz - az) / 2);
        ik_real scale = fmax(fmax(fabs(a[0]), fabs(a[1])), fmax(fabs(az), fabs(b[0])));
        if (!(fabs(half - lengths[i] / 2) <= 1e-9 * lengths[i] + 1e-15 * scale)) {
            EXPECT(0, "%s: bone %d is %.17g long, not %.17g", what, i, 2 * half, lengths[i]);
            return;
        }
    }
}

static void long_chains(void)
{
    static ik_real lengths[N];
    static const ik_real fill[] = {-1 /* mixed */, 1e300, 0};
    ik_status (*const solves[])(ik_chain *, const ik_real *, ik_result *) = {
        ik_chain_solve_fabrik, ik_chain_solve_ccd, ik_chain_solve_relax};
    const ik_real target[3] = {-1e300, 1e300, -1e300}, near[3] = {3000, -4000, 5000};
    int dim, f, s, i;
    for (dim = 2; dim <= 3; dim++) {
        for (f = 0; f < 3; f++) {
            ik_status st;
            ik_chain *c;
            ik_settings settings = ik_default_settings();
            for (i = 0; i < N; i++) lengths[i] = fill[f] < 0 ? 0.5 + (i % 7) * 0.25 : fill[f];
            c = dim == 2 ? ik_chain2d_create(N, lengths, &st) : ik_chain3d_create(N, lengths, &st);
            EXPECT(c != NULL, "%dD chain of %d bones: status %d", dim, N, st);
            if (c == NULL) continue;
            settings.iterations = 3;
            settings.tolerance = 0;
            EXPECT(ik_chain_configure(c, &settings) == IK_OK, "configure");
            check_chain(c, lengths, "built");
            for (s = 0; s < 3; s++) {
                ik_result r;
                st = solves[s](c, f == 0 ? near : target, &r);
                EXPECT(st == IK_OK && isfinite(r.distance), "%dD solve %d: status %d, distance %g",
                       dim, s, st, r.distance);
                check_chain(c, lengths, "solved");
            }
            ik_chain_destroy(c);
        }
    }
    printf("long chains: %d bones, 2D and 3D, lengths mixed, 1e300 and 0: every solver sound\n",
           N);
}

static void no_memory(void)
{
    static ik_real lengths[2] = {1, 1};
    ik_real *many = (ik_real *)malloc(sizeof(ik_real) * IK_MAX_BONES);
    struct rlimit limit;
    ik_status st = IK_OK;
    ik_chain *c;
    int i;
    EXPECT(many != NULL, "128 MB for the lengths");
    if (many == NULL) return;
    for (i = 0; i < IK_MAX_BONES; i++) many[i] = 1;
    limit.rlim_cur = limit.rlim_max = 256u << 20;
    EXPECT(setrlimit(RLIMIT_AS, &limit) == 0, "setrlimit");
    c = ik_chain3d_create(IK_MAX_BONES, many, &st);
    EXPECT(c == NULL && st == IK_ERR_NO_MEMORY, "a 2.5 GB chain under 256 MB: %s, status %d",
           c ? "built" : "refused", st);
    ik_chain_destroy(c); /* NULL: nothing */
    c = ik_chain2d_create(2, lengths, &st);
    EXPECT(c != NULL && st == IK_OK, "a small chain afterwards: status %d", st);
    ik_chain_destroy(c);
    free(many);
    printf("no memory: %s for %d 3D bones under a 256 MB limit, then a small chain builds\n",
           ik_status_string(IK_ERR_NO_MEMORY), IK_MAX_BONES);
}

int main(void)
{
    sizes();
    long_chains();
    no_memory(); /* last: the address-space limit stays */
    if (failures) {
        printf("%d edge-scale checks failed\n", failures);
        return 1;
    }
    printf("all edge-scale checks passed\n");
    return 0;
}
