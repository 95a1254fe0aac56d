/*
 * two_bone_fuzzer.c - libFuzzer harness for the stateless entry points of src/ik.h: the three
 * two-bone solves, the status strings, solver names, settings validation and chain sizes.
 *
 * Each input is a sequence of calls with numbers from the bytes (see fuzz.h); two-bone calls
 * are often reshaped into the hard cases: nearly equal lengths, targets near the root or on
 * the edges of the reachable ring |r1 - r2| <= |p| <= r1 + r2. An oracle gives the statuses a
 * call may return; on an error the outputs are untouched; after IK_OK:
 *   - every output is finite; the angle form's angles are in [-pi, pi], a2's sign is bend's,
 *     and out of reach the pose is straight or folded (a2 is 0 or +-pi);
 *   - the vector forms keep |joint| = r1 (1e-9); all three agree on `reached`; reached, the
 *     angle form's tip is on the target and the vector forms' |joint - target| = r2 (up to
 *     the ring's slack: 1e-6 of the largest input); out of reach the 2D joint is on the
 *     root->target line.
 * And no core call may raise the floating-point invalid flag (see fuzz.h).
 */
#include "chain_checks.h" /* the settings oracle */

#define PI 3.14159265358979323846
/* A joint's coordinates are rounded to the doubles: below 2.2e-308 that is an absolute error
   of up to 2^-1075 each, however short the bones. */
#define SUBNORMAL_SLACK 1e-323

static errset number_errors(const ik_real *v, int count)
{
    int k;
    for (k = 0; k < count; k++)
        if (!isfinite(v[k])) return BIT(IK_ERR_NOT_FINITE);
    return 0;
}

/* The inputs of a two-bone solve: r1, r2, target (3), pole (3), bend. */
typedef struct two_bone_args {
    ik_real r1, r2, p[3], pole[3];
    int bend;
} two_bone_args;

static void take_two_bone(reader *r, two_bone_args *a)
{
    uint8_t shape = take_u8(r);
    int k;
    a->r1 = take_length(r), a->r2 = take_length(r);
    for (k = 0; k < 3; k++) a->p[k] = take_real(r);
    for (k = 0; k < 3; k++) a->pole[k] = take_real(r);
    a->bend = take_u8(r) < 224 ? (take_u8(r) & 1 ? 1 : -1) : (int)(take_u8(r) % 5) - 2;
    /* the hard cases: r2 = r1 (1 + tiny), the target at a chosen distance on the ring */
    if (shape < 128 && isfinite(a->r1) && a->r1 >= 0 && a->r1 <= 1e300) {
        static const ik_real nudge[] = {0, 1e-7, -1e-7, 1e-9, -1e-9, 1e-12, 0.5, 2};
        ik_real inner, outer, d, len;
        a->r2 = a->r1 * (1 + nudge[shape % 8]);
        inner = fabs(a->r1 - a->r2), outer = a->r1 + a->r2;
        switch ((shape >> 3) % 8) {
        case 0: d = 0; break;
        case 1: d = 1e-10 * a->r1; break;
        case 2: d = 1e-160; break;
        case 3: d = inner; break;
        case 4: d = inner * (1 + 1e-9); break;
        case 5: d = inner * (1 - 1e-9); break;
        case 6: d = outer; break;
        default: d = outer * (1 - 1e-12); break;
        }
        /* the direction from the target's bytes, made unit (any nonzero finite one) */
        len = isfinite(a->p[0]) && isfinite(a->p[1]) && isfinite(a->p[2])
                  ? half_norm(a->p[0], a->p[1], a->p[2])
                  : 0;
        if (!(len > 0) || !isfinite(len)) a->p[0] = 1, a->p[1] = a->p[2] = 0, len = 0.5;
        for (k = 0; k < 3; k++) a->p[k] = a->p[k] * 0.5 / len * d;
    }
}

static ik_real max4(ik_real a, ik_real b, ik_real c, ik_real d)
{
    return fmax(fmax(a, b), fmax(c, d));
}

static void two_bone_2d(reader *r)
{
    two_bone_args a;
    ik_real in[4], a1 = 7, a2 = 7, jx = 7, jy = 7, m;
    int reached = 7, reached_joint = 7;
    errset expect;
    ik_status st;
    take_two_bone(r, &a);
    in[0] = a.r1, in[1] = a.r2, in[2] = a.p[0], in[3] = a.p[1];
    expect = number_errors(in, 4);
    if (!expect && (a.r1 < 0 || a.r2 < 0)) expect = BIT(IK_ERR_NEGATIVE);
    if (a.bend != 1 && a.bend != -1) expect |= BIT(IK_ERR_BEND);

    st = CORE(ik_two_bone(a.r1, a.r2, a.p[0], a.p[1], a.bend, &a1, &a2, &reached));
    CHECK(expect ? (BIT(st) & expect) != 0 : st == IK_OK, "two_bone: status %d, expected %#llx", st,
          expect);
    st = CORE(ik_two_bone_joint(a.p[0], a.p[1], a.r1, a.r2, a.bend, &jx, &jy, &reached_joint));
    CHECK(expect ? (BIT(st) & expect) != 0 : st == IK_OK, "two_bone_joint: status %d, expected %#llx",
          st, expect);
    if (expect) {
        CHECK(a1 == 7 && a2 == 7 && reached == 7 && jx == 7 && jy == 7 && reached_joint == 7,
              "an error wrote an output");
        return;
    }
    CHECK(isfinite(a1) && isfinite(a2) && fabs(a1) <= PI && fabs(a2) <= PI,
          "two_bone: angles %g %g", a1, a2);
    CHECK(a.bend == 1 ? a2 >= 0 : a2 <= 0, "two_bone: a2 %g for bend %d", a2, a.bend);
    CHECK(reached == 0 || reached == 1, "two_bone: reached %d", reached);
    CHECK(reached == reached_joint, "two_bone says reached %d, two_bone_joint %d", reached,
          reached_joint);
    CHECK(isfinite(jx) && isfinite(jy), "two_bone_joint: %g %g", jx, jy);
    m = max4(a.r1, a.r2, fabs(a.p[0]), fabs(a.p[1]));
    CHECK(near_length(half_norm(jx, jy, 0), a.r1 * 0.5, m * 0.5),
          "two_bone_joint(%.17g, %.17g, %.17g, %.17g, %d): |j| %.17g", a.p[0], a.p[1], a.r1, a.r2,
          a.bend, 2 * half_norm(jx, jy, 0));
    if (m > 0) {
        /* in units of m, where nothing overflows */
        ik_real l1 = a.r1 / m, l2 = a.r2 / m, x = a.p[0] / m, y = a.p[1] / m;
        if (reached) {
            ik_real tx = l1 * cos(a1) + l2 * cos(a1 + a2), ty = l1 * sin(a1) + l2 * sin(a1 + a2);
            CHECK(hypot(tx - x, ty - y) <= 1e-6, "two_bone: reached, the tip misses by %g of m",
                  hypot(tx - x, ty - y));
            CHECK(fabs(hypot(jx / m - x, jy / m - y) - l2) <= 1e-6 + SUBNORMAL_SLACK / m,
                  "two_bone_joint: reached, |j - p| %.17g, r2 %.17g", hypot(jx / m - x, jy / m - y),
                  l2);
        } else {
            CHECK(a2 == 0 || fabs(a2) == PI, "two_bone: out of reach, a2 %.17g", a2);
            CHECK(fabs(jx / m * y - jy / m * x) <=
                      (1e-9 + SUBNORMAL_SLACK / m) * hypot(x, y) + 1e-300,
                  "two_bone_joint(%.17g, %.17g, %.17g, %.17g, %d): out of reach, the joint (%.17g, "
                  "%.17g) is off the line",
                  a.p[0], a.p[1], a.r1, a.r2, a.bend, jx, jy);
        }
    }
}

static void two_bone_3d(reader *r)
{
    two_bone_args a;
    ik_real in[8], j[3] = {7, 7, 7}, m;
    int reached = 7, k;
    errset expect;
    ik_status st;
    take_two_bone(r, &a);
    for (k = 0; k < 3; k++) in[k] = a.p[k], in[3 + k] = a.pole[k];
    in[6] = a.r1, in[7] = a.r2;
    expect = number_errors(in, 8);
    if (!expect && (a.r1 < 0 || a.r2 < 0)) expect = BIT(IK_ERR_NEGATIVE);
    st = CORE(ik_two_bone_joint3(a.p, a.r1, a.r2, a.pole, j, &reached));
    CHECK(expect ? (BIT(st) & expect) != 0 : st == IK_OK,
          "two_bone_joint3: status %d, expected %#llx", st, expect);
    if (expect) {
        CHECK(j[0] == 7 && j[1] == 7 && j[2] == 7 && reached == 7, "an error wrote an output");
        return;
    }
    CHECK(isfinite(j[0]) && isfinite(j[1]) && isfinite(j[2]), "two_bone_joint3: %g %g %g", j[0],
          j[1], j[2]);
    CHECK(reached == 0 || reached == 1, "two_bone_joint3: reached %d", reached);
    m = max4(a.r1, a.r2, fmax(fabs(a.p[0]), fabs(a.p[1])), fabs(a.p[2]));
    CHECK(near_length(half_norm(j[0], j[1], j[2]), a.r1 * 0.5, m * 0.5),
          "two_bone_joint3((%.17g, %.17g, %.17g), %.17g, %.17g, (%.17g, %.17g, %.17g)): |j| %.17g",
          a.p[0], a.p[1], a.p[2], a.r1, a.r2, a.pole[0], a.pole[1], a.pole[2],
          2 * half_norm(j[0], j[1], j[2]));
    if (m > 0 && reached) {
        ik_real d =
            hypot(hypot(j[0] / m - a.p[0] / m, j[1] / m - a.p[1] / m), j[2] / m - a.p[2] / m);
        CHECK(fabs(d - a.r2 / m) <= 1e-6 + SUBNORMAL_SLACK / m,
              "two_bone_joint3((%.17g, %.17g, %.17g), %.17g, %.17g, (%.17g, %.17g, %.17g)): "
              "reached, joint (%.17g, "
              "%.17g, %.17g), |j - p| %.17g of m, r2 %.17g",
              a.p[0], a.p[1], a.p[2], a.r1, a.r2, a.pole[0], a.pole[1], a.pole[2], j[0], j[1], j[2],
              d, a.r2 / m);
    }
}

static void names_and_settings(reader *r)
{
    int k = (int)take_u32(r);
    ik_solver solver;
    char name[16];
    size_t len = take_u8(r) % sizeof name, i;
    ik_settings s = ik_default_settings();
    errset expect = 0;
    size_t size2, size3;

    /* every status has a message, the known ones a real one */
    CHECK(ik_status_string((ik_status)k) != NULL, "no message for status %d", k);
    if (k >= 0 && k <= (int)IK_ERR_RANGE)
        CHECK(strcmp(ik_status_string((ik_status)k), "unknown status") != 0, "status %d unknown",
              k);
    /* solver names: exactly the five, and they parse back */
    CHECK((ik_solver_name((ik_solver)k) == NULL) == (k < 0 || k > (int)IK_SOLVER_AIM),
          "solver name %d", k);
    if (ik_solver_name((ik_solver)k))
        CHECK(ik_solver_parse(ik_solver_name((ik_solver)k), &solver) == IK_OK && (int)solver == k,
              "parse %d", k);
    for (i = 0; i < len; i++) name[i] = (char)take_u8(r);
    name[len] = 0;
    solver = (ik_solver)99;
    if (ik_solver_parse(name, &solver) == IK_OK)
        CHECK(strcmp(ik_solver_name(solver), name) == 0, "'%s' parsed as %d", name, solver);
    else
        CHECK((int)solver == 99, "a refused name wrote the solver");
    CHECK(ik_solver_parse(NULL, &solver) == IK_ERR_SOLVER, "a NULL name parsed");

    /* sizes: 0 exactly outside 1..IK_MAX_BONES, else growing with n */
    size2 = ik_chain2d_size(k), size3 = ik_chain3d_size(k);
    CHECK((size2 == 0) == (k < 1 || k > IK_MAX_BONES) && (size3 == 0) == (size2 == 0),
          "sizes for %d bones", k);
    if (k >= 1 && k < IK_MAX_BONES)
        CHECK(ik_chain2d_size(k + 1) > size2 && ik_chain3d_size(k + 1) > size3, "sizes grow");

    /* settings validation: every field, the core's order */
    CHECK(ik_settings_validate(&s) == IK_OK, "the default settings are invalid");
    s = take_settings(r, &s);
    if (take_u8(r) < 32) s.iterations = (int)take_u32(r);
    expect = validate_errors(&s);
    k = (int)CORE(ik_settings_validate(&s));
    CHECK(expect ? (BIT(k) & expect) != 0 : k == IK_OK, "validate: status %d, expected %#llx", k,
          expect);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r;
    int calls;
    r.p = data, r.n = size;
    for (calls = 0; calls < 64 && r.n > 0; calls++) {
        switch (take_u8(&r) % 3) {
        case 0: two_bone_2d(&r); break;
        case 1: two_bone_3d(&r); break;
        default: names_and_settings(&r); break;
        }
    }
    return 0;
}
