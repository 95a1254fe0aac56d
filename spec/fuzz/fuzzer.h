/*
 * fuzzer.h - what the libFuzzer harnesses share: turning the fuzzer's bytes into numbers, and
 * the checks. Header-only, included by one harness per binary.
 *
 * Numbers come from the bytes in a few forms, so that a mutation of one byte tends to give
 * another meaningful value: an interesting value (0, -0, tiny, subnormal, 1e-160 whose
 * square is subnormal, 1e300 and just above it, DBL_MAX, NaN, the infinities, pi), a small
 * multiple of 1/8 (exact, so targets land exactly on joints and on lines), a scaled 16-bit
 * fraction, or 8 raw bytes (any double, signalling NaNs included).
 *
 * A failed check prints what and where, then aborts: libFuzzer saves the input as a crash.
 *
 * Every core call goes through CORE(), which also fails when the call raised the
 * floating-point invalid flag: the core computes no NaN from numbers, not even one it then
 * discards. (So input NaNs are made quiet: isfinite() raises the flag for a signalling
 * one.) IK_FUZZ_FE_INVALID=0 in the environment turns this off; IK_FUZZ_FE_INVALID=trap
 * traps (SIGFPE) where the NaN is made, for the stack trace.
 */
#ifndef IK_FUZZ_H
#define IK_FUZZ_H

#define _GNU_SOURCE /* feenableexcept; this header comes before any other */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ik.h"

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static inline uint8_t take_u8(reader *r)
{
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static inline uint32_t take_u32(reader *r)
{
    uint32_t v = 0;
    int k;
    for (k = 0; k < 4; k++) v = v << 8 | take_u8(r);
    return v;
}

static const ik_real interesting[] = {
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    3.0,
    1e-300,
    -1e-300,
    4.9406564584124654e-324,
    2.2250738585072014e-308,
    1e-160,
    -1e-160,
    1e160,
    1e150,
    1e300,
    -1e300,
    1.0000000000000002e300,
    DBL_MAX,
    -DBL_MAX,
    INFINITY,
    -INFINITY,
    NAN,
    3.14159265358979323846,
    -3.14159265358979323846,
    6.28318530717958647692,
    1e-9,
    1e9,
    1.0000001,
    1e-10,
    9007199254740992.0,
    0.1,
};
#define INTERESTING_COUNT ((int)(sizeof interesting / sizeof interesting[0]))

static const ik_real scales[] = {1.0, 10.0, 1e-3, 1e6};

/* 1: the invalid flag is checked after each core call (the default), 2: it traps, 0: off.
   With the check, raw bytes that make a signalling NaN give a quiet one. */
static int check_fe_invalid = 1;

static inline ik_real take_real(reader *r)
{
    uint8_t form = take_u8(r);
    if (form < 64) return interesting[form % INTERESTING_COUNT];
    if (form < 144) return (ik_real)(int8_t)take_u8(r) / 8.0;
    if (form < 224) {
        uint32_t v = take_u32(r);
        return ((ik_real)(v & 0xffff) / 65535.0 * 2 - 1) * scales[(v >> 16) % 4];
    } else {
        uint64_t bits = (uint64_t)take_u32(r) << 32 | take_u32(r);
        ik_real d;
        if (check_fe_invalid && (bits & 0x7ff0000000000000u) == 0x7ff0000000000000u &&
            (bits << 12) != 0)
            bits |= 0x0008000000000000u;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
}

/* A length: mostly a plain positive number, else any number. */
static inline ik_real take_length(reader *r)
{
    uint8_t form = take_u8(r);
    if (form < 160) return 0.1 + (ik_real)form / 40.0;
    return take_real(r);
}

/* ---- checks ---- */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n  ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* |(x, y, z)| without overflow: halved first (exact above the subnormals), doubled back. */
static inline ik_real half_norm(ik_real x, ik_real y, ik_real z)
{
    x *= 0.5, y *= 0.5, z *= 0.5;
    return hypot(hypot(x, y), z);
}

/*
 * A distance d that should be len: 1e-9 relative, plus the rounding of the coordinates it
 * was measured from (1e-15 of scale) and of subnormal products.
 */
static inline int near_length(ik_real d, ik_real len, ik_real scale)
{
    return fabs(d - len) <= 1e-9 * len + 1e-15 * scale + 1e-320;
}

static inline int is_unit(const ik_real q[4])
{
    ik_real s = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    return isfinite(s) && fabs(s - 1) <= 2e-9;
}

/* ---- rotations, for the checks (the harness uses ik.h alone, not the core's math) ---- */

/* v rotated by the unit quaternion q (w, x, y, z). */
static inline void quat_rotate(const ik_real q[4], const ik_real v[3], ik_real out[3])
{
    ik_real tx = 2 * (q[2] * v[2] - q[3] * v[1]), ty = 2 * (q[3] * v[0] - q[1] * v[2]),
            tz = 2 * (q[1] * v[1] - q[2] * v[0]);
    out[0] = v[0] + q[0] * tx + (q[2] * tz - q[3] * ty);
    out[1] = v[1] + q[0] * ty + (q[3] * tx - q[1] * tz);
    out[2] = v[2] + q[0] * tz + (q[1] * ty - q[2] * tx);
}

/* The angle from a to b (unit quaternions), in [0, pi]. */
static inline ik_real quat_turn(const ik_real a[4], const ik_real b[4])
{
    /* conj(a) * b */
    ik_real w = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    ik_real x = a[0] * b[1] - a[1] * b[0] - a[2] * b[3] + a[3] * b[2];
    ik_real y = a[0] * b[2] + a[1] * b[3] - a[2] * b[0] - a[3] * b[1];
    ik_real z = a[0] * b[3] - a[1] * b[2] + a[2] * b[1] - a[3] * b[0];
    return 2 * atan2(sqrt(x * x + y * y + z * z), fabs(w));
}

static inline ik_real wrap_pi(ik_real a)
{
    a = remainder(a, 6.28318530717958647692);
    return a;
}

/* How far angle a (wrapped) lies outside [min, max], around the circle; 0 inside. */
static inline ik_real outside_range(ik_real a, ik_real min, ik_real max)
{
    ik_real below, above;
    if (a >= min && a <= max) return 0;
    below = fabs(wrap_pi(a - min)), above = fabs(wrap_pi(a - max));
    return below < above ? below : above;
}

/* ---- calling the core ---- */

static inline void before_core(void)
{
    if (check_fe_invalid) feclearexcept(FE_ALL_EXCEPT);
    if (check_fe_invalid == 2) feenableexcept(FE_INVALID);
}

static inline void after_core(const char *what)
{
    if (check_fe_invalid == 2) fedisableexcept(FE_INVALID);
    if (check_fe_invalid)
        CHECK(!fetestexcept(FE_INVALID), "%s raised FE_INVALID (made a NaN)", what);
}

static ik_status core_result;
#define CORE(expr) (before_core(), core_result = (expr), after_core(#expr), core_result)
/* The same for a core call that returns nothing. */
#define CORE_VOID(expr) (before_core(), (expr), after_core(#expr))
/* The same for one that returns something else: lhs = expr. */
#define CORE_SET(lhs, expr) (before_core(), (lhs) = (expr), after_core(#expr))

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *fe = getenv("IK_FUZZ_FE_INVALID");
    (void)argc, (void)argv;
    if (fe) check_fe_invalid = strcmp(fe, "trap") == 0 ? 2 : fe[0] != '0';
    return 0;
}

#endif /* IK_FUZZ_H */
