/*
 * make bench-ozz: ik's 3D two-bone and aim chain solves side by side with ozz-animation's
 * IKTwoBoneJob and IKAimJob, in one process, built with the same flags.
 *
 * Nothing of ozz is in this repository: the Makefile builds this file against an
 * ozz-animation checkout named by OZZ (its include/ and the three sources the two jobs
 * need). Same random cases for both (a 2-bone arm posed at random with a bent elbow, a
 * target at 10% to 105% of its reach, a random pole; a 1-bone chain and a random target),
 * and the same work per call as a game does it:
 *   ik:  ik_chain_solve_two_bone (ik_chain_solve_aim) on a chain3d, which leaves every
 *        local and world rotation and every joint position up to date;
 *   ozz: the job, then its corrections applied to the joints' local rotations and the
 *        model matrices of the joints rebuilt from them (as ozz's two-bone sample does
 *        with LocalToModelJob, here for the chain's joints alone).
 * Both warm-start: each case's chain goes on from where its previous solve left it. The
 * two sides take turns in rounds (ik, ozz, ik, ozz, ...); each side's figure is the median
 * of its rounds. ozz works in float (SIMD), ik in double.
 */
#include <ozz/animation/runtime/ik_aim_job.h>
#include <ozz/animation/runtime/ik_two_bone_job.h>
#include <ozz/base/maths/simd_math.h>
#include <ozz/base/maths/simd_quaternion.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

extern "C" {
#include "ik.h"
}

namespace om = ozz::math;

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(double lo, double hi)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static void random_direction(double out[3])
{
    double n;
    do {
        for (int i = 0; i < 3; i++) out[i] = uniform(-1, 1);
        n = std::sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]);
    } while (n < 0.1 || n > 1);
    for (int i = 0; i < 3; i++) out[i] /= n;
}

/* w, x, y, z */
static void random_rotation(double q[4])
{
    double n;
    do {
        for (int i = 0; i < 4; i++) q[i] = uniform(-1, 1);
        n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    } while (n < 0.1 || n > 1);
    for (int i = 0; i < 4; i++) q[i] /= n;
}

static double now(void)
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static om::SimdFloat4 f4(const double v[3], double w = 0)
{
    return om::simd_float4::Load((float)v[0], (float)v[1], (float)v[2], (float)w);
}

static om::SimdQuaternion fq(const double q[4]) /* w, x, y, z in */
{
    return om::SimdQuaternion{om::simd_float4::Load((float)q[1], (float)q[2], (float)q[3], (float)q[0])};
}

enum { CASES = 256, TARGETS = 1024, ROUNDS = 9 };

/* ---- two bones ---- */

struct ozz_arm {
    om::SimdFloat4 base, bone1, bone2; /* translations of the three joints (local) */
    om::SimdQuaternion rot0, rot1;     /* local rotations of the start and mid joints */
    om::Float4x4 model[3];
};

static void ozz_arm_models(ozz_arm *a)
{
    const om::SimdFloat4 one = om::simd_float4::one();
    a->model[0] = om::Float4x4::FromAffine(a->base, a->rot0.xyzw, one);
    a->model[1] = a->model[0] * om::Float4x4::FromAffine(a->bone1, a->rot1.xyzw, one);
    a->model[2] = a->model[1] * om::Float4x4::Translation(a->bone2);
}

struct two_bone_cases {
    std::vector<ik_chain *> chains;
    std::vector<ozz_arm> arms;
    std::vector<double> targets; /* TARGETS x CASES x 3: base + direction * a share of reach */
    std::vector<double> poles;   /* CASES x 3 */
};

static void make_two_bone(two_bone_cases *t)
{
    t->chains.resize(CASES);
    t->arms.resize(CASES);
    t->targets.resize((size_t)CASES * TARGETS * 3);
    t->poles.resize(CASES * 3);
    for (int k = 0; k < CASES; k++) {
        double len[2] = {uniform(0.5, 1.5), uniform(0.5, 1.5)}, base[3], q0[4], bend = uniform(0.2, 2.5);
        double q1[4] = {std::cos(bend / 2), 0, 0, std::sin(bend / 2)}, id[4] = {1, 0, 0, 0};
        double *pole = &t->poles[k * 3];
        for (int i = 0; i < 3; i++) base[i] = uniform(-1, 1);
        random_rotation(q0);
        random_direction(pole);
        ik_status st;
        ik_chain *c = ik_chain3d_create(2, len, &st);
        ik_settings s = ik_default_settings();
        s.use_pole = 1;
        for (int i = 0; i < 3; i++) s.pole[i] = pole[i];
        if (!c || ik_chain3d_set_base(c, base, id) || ik_chain3d_set_rotation(c, 0, q0) ||
            ik_chain3d_set_rotation(c, 1, q1) || ik_chain_configure(c, &s)) {
            std::fprintf(stderr, "bench/ozz: a two-bone chain failed\n");
            std::exit(1);
        }
        t->chains[k] = c;
        ozz_arm *a = &t->arms[k];
        double b1[3] = {len[0], 0, 0}, b2[3] = {len[1], 0, 0};
        a->base = f4(base, 1), a->bone1 = f4(b1, 1), a->bone2 = f4(b2, 1);
        a->rot0 = fq(q0), a->rot1 = fq(q1);
        ozz_arm_models(a);
        for (int j = 0; j < TARGETS; j++) {
            double d[3], r = uniform(0.1, 1.05) * (len[0] + len[1]);
            random_direction(d);
            for (int i = 0; i < 3; i++) t->targets[((size_t)j * CASES + k) * 3 + i] = base[i] + d[i] * r;
        }
    }
}

static double run_ik_two_bone(two_bone_cases *t, int reps, int *reached)
{
    double start = now();
    int hit = 0;
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < CASES; k++) {
            ik_result res;
            ik_chain_solve_two_bone(t->chains[k], &t->targets[((size_t)(r % TARGETS) * CASES + k) * 3], &res);
            hit += res.reached;
        }
    *reached = hit;
    return (now() - start) / ((double)reps * CASES) * 1e9;
}

static double run_ozz_two_bone(two_bone_cases *t, int reps, int *reached)
{
    double start = now();
    int hit = 0;
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < CASES; k++) {
            ozz_arm *a = &t->arms[k];
            const double *target = &t->targets[((size_t)(r % TARGETS) * CASES + k) * 3];
            ozz::animation::IKTwoBoneJob job;
            om::SimdQuaternion c0, c1;
            bool ok = false;
            job.target = f4(target, 1);
            job.pole_vector = f4(&t->poles[k * 3]);
            job.mid_axis = om::simd_float4::z_axis();
            job.start_joint = &a->model[0];
            job.mid_joint = &a->model[1];
            job.end_joint = &a->model[2];
            job.start_joint_correction = &c0;
            job.mid_joint_correction = &c1;
            job.reached = &ok;
            job.Run();
            a->rot0 = a->rot0 * c0;
            a->rot1 = a->rot1 * c1;
            ozz_arm_models(a);
            hit += ok;
        }
    *reached = hit;
    return (now() - start) / ((double)reps * CASES) * 1e9;
}

/* ---- aim ---- */

struct ozz_aimed {
    om::SimdFloat4 base;
    om::SimdQuaternion rot;
    om::Float4x4 model;
};

struct aim_cases {
    std::vector<ik_chain *> chains;
    std::vector<ozz_aimed> joints;
    std::vector<double> targets;
};

static void make_aim(aim_cases *t)
{
    t->chains.resize(CASES);
    t->joints.resize(CASES);
    t->targets.resize((size_t)CASES * TARGETS * 3);
    for (int k = 0; k < CASES; k++) {
        double len = uniform(0.5, 1.5), base[3], q[4], id[4] = {1, 0, 0, 0};
        for (int i = 0; i < 3; i++) base[i] = uniform(-1, 1);
        random_rotation(q);
        ik_status st;
        ik_chain *c = ik_chain3d_create(1, &len, &st);
        if (!c || ik_chain3d_set_base(c, base, id) || ik_chain3d_set_rotation(c, 0, q)) {
            std::fprintf(stderr, "bench/ozz: an aim chain failed\n");
            std::exit(1);
        }
        t->chains[k] = c;
        ozz_aimed *a = &t->joints[k];
        a->base = f4(base, 1), a->rot = fq(q);
        a->model = om::Float4x4::FromAffine(a->base, a->rot.xyzw, om::simd_float4::one());
        for (int j = 0; j < TARGETS; j++) {
            double d[3], r = uniform(0.5, 5);
            random_direction(d);
            for (int i = 0; i < 3; i++) t->targets[((size_t)j * CASES + k) * 3 + i] = base[i] + d[i] * r;
        }
    }
}

static double run_ik_aim(aim_cases *t, int reps, int *reached)
{
    double start = now();
    int hit = 0;
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < CASES; k++) {
            ik_result res;
            ik_chain_solve_aim(t->chains[k], &t->targets[((size_t)(r % TARGETS) * CASES + k) * 3], &res);
            hit += res.reached;
        }
    *reached = hit;
    return (now() - start) / ((double)reps * CASES) * 1e9;
}

static double run_ozz_aim(aim_cases *t, int reps, int *reached)
{
    double start = now();
    int hit = 0;
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < CASES; k++) {
            ozz_aimed *a = &t->joints[k];
            const double *target = &t->targets[((size_t)(r % TARGETS) * CASES + k) * 3];
            ozz::animation::IKAimJob job;
            om::SimdQuaternion c;
            bool ok = false;
            job.target = f4(target, 1);
            job.forward = om::simd_float4::x_axis();
            job.up = om::simd_float4::y_axis();
            job.pole_vector = om::simd_float4::y_axis();
            job.joint = &a->model;
            job.joint_correction = &c;
            job.reached = &ok;
            job.Run();
            a->rot = a->rot * c;
            a->model = om::Float4x4::FromAffine(a->base, a->rot.xyzw, om::simd_float4::one());
            hit += ok;
        }
    *reached = hit;
    return (now() - start) / ((double)reps * CASES) * 1e9;
}

/* ---- the rounds ---- */

template <class T>
static void compare(const char *name, T *cases, double (*ik_run)(T *, int, int *),
                    double (*ozz_run)(T *, int, int *), int reps)
{
    std::vector<double> ik_ns, ozz_ns;
    int ik_hit = 0, ozz_hit = 0;
    ik_run(cases, reps / 4 + 1, &ik_hit); /* warm the caches and branch predictors */
    ozz_run(cases, reps / 4 + 1, &ozz_hit);
    for (int round = 0; round < ROUNDS; round++) {
        ik_ns.push_back(ik_run(cases, reps, &ik_hit));
        ozz_ns.push_back(ozz_run(cases, reps, &ozz_hit));
    }
    std::sort(ik_ns.begin(), ik_ns.end());
    std::sort(ozz_ns.begin(), ozz_ns.end());
    double ik_med = ik_ns[ROUNDS / 2], ozz_med = ozz_ns[ROUNDS / 2], calls = (double)reps * CASES;
    std::printf("%-30s ik %6.1f ns  ozz %6.1f ns  ozz/ik %.2f  (reached: ik %.1f%%, ozz %.1f%%)\n", name,
                ik_med, ozz_med, ozz_med / ik_med, 100 * ik_hit / calls, 100 * ozz_hit / calls);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? std::atoi(argv[1]) : 400;
    two_bone_cases two;
    aim_cases aim;
    make_two_bone(&two);
    make_aim(&aim);
    std::printf("bench/ozz: %d cases x %d solves a round, %d rounds, median (ns per solve)\n", CASES, reps,
                ROUNDS);
    compare("3D two-bone chain", &two, run_ik_two_bone, run_ozz_two_bone, reps);
    compare("3D 1-bone aim", &aim, run_ik_aim, run_ozz_aim, reps);
    return 0;
}
