/*
 * solve.c - the C core on its own (libik.a, no Lua): a 3-bone 2D chain solved towards one
 * target by each iterative solver, and a 2-bone arm solved by the two stateless analytic
 * calls. Prints a table; exits 0 when every call succeeded and every solve reached the
 * target with the base fixed and the bone lengths kept, 1 otherwise.
 *
 *   make build/examples/solve && build/examples/solve
 */
#include <math.h>
#include <stdio.h>

#include "ik.h"

#define BONES 3

static const ik_real lengths[BONES] = {1.0, 0.8, 0.5};
static const ik_real start_angles[BONES] = {0.4, 0.4, 0.4}; /* a gentle curve, radians */
static const ik_real target[2] = {0.9, 1.3};                /* world space, reachable */

static int failures = 0;

/* Counts and reports a condition that is not as expected. */
static void expect(int condition, const char *what) {
    if (!condition) {
        fprintf(stderr, "unexpected: %s\n", what);
        failures++;
    }
}

/* Every call that can fail returns a status: IK_OK, or an error that changed nothing. */
static int check(ik_status status, const char *call) {
    if (status != IK_OK) {
        fprintf(stderr, "%s failed: %s\n", call, ik_status_string(status));
        failures++;
    }
    return status == IK_OK;
}

static void print_row(const char *solver, int reached, ik_real distance, int iterations,
                      ik_real tip_x, ik_real tip_y) {
    char iters[16] = "-"; /* the stateless calls have no iterations */
    if (iterations >= 0) {
        snprintf(iters, sizeof iters, "%d", iterations);
    }
    printf("%-14s %-7s %9.2e %5s  (%.4f, %.4f)\n", solver, reached ? "yes" : "no", distance, iters,
           tip_x, tip_y);
}

/* Puts the chain back in its starting pose, so that every solver starts from the same one. */
static void reset_pose(ik_chain *chain) {
    for (int i = 0; i < BONES; i++) {
        check(ik_chain2d_set_angle(chain, i, start_angles[i]), "ik_chain2d_set_angle");
    }
}

/* Solves with one iterative solver and checks the result against forward kinematics. */
static void solve_chain(ik_chain *chain, ik_solver solver) {
    typedef ik_status (*solve_fn)(ik_chain *, const ik_real *, ik_result *);
    static const solve_fn solve[] = {
        [IK_SOLVER_FABRIK] = ik_chain_solve_fabrik,
        [IK_SOLVER_CCD] = ik_chain_solve_ccd,
        [IK_SOLVER_RELAX] = ik_chain_solve_relax,
    };
    ik_result result;

    reset_pose(chain);
    if (!check(solve[solver](chain, target, &result), ik_solver_name(solver))) {
        return;
    }
    /* Joint positions in world space, x, y per joint (x, y, z in 3D); joint BONES is the tip. */
    const ik_real *p = ik_chain_positions(chain);
    ik_real tip_x = p[2 * BONES], tip_y = p[2 * BONES + 1];
    print_row(ik_solver_name(solver), result.reached, result.distance, result.iterations, tip_x,
              tip_y);

    expect(result.reached, "the target is reachable");
    expect(fabs(hypot(tip_x - target[0], tip_y - target[1]) - result.distance) < 1e-9,
           "the reported distance is the tip's");
    expect(p[0] == 0.0 && p[1] == 0.0, "the base stays at the origin");
    for (int i = 0; i < BONES; i++) {
        ik_real length = hypot(p[2 * i + 2] - p[2 * i], p[2 * i + 3] - p[2 * i + 1]);
        expect(fabs(length - lengths[i]) < 1e-9, "bone lengths are kept");
    }
}

/* The two stateless analytic solves, for an arm of the chain's first two bones. */
static void solve_arm(void) {
    const ik_real l1 = lengths[0], l2 = lengths[1];
    ik_real a1, a2, jx, jy;
    int reached, joint_reached;

    /* Angle form: a1 is bone 1's world angle, a2 bone 2's angle relative to bone 1. */
    if (check(ik_two_bone(l1, l2, target[0], target[1], 1, &a1, &a2, &reached), "ik_two_bone")) {
        ik_real tip_x = l1 * cos(a1) + l2 * cos(a1 + a2);
        ik_real tip_y = l1 * sin(a1) + l2 * sin(a1 + a2);
        ik_real distance = hypot(tip_x - target[0], tip_y - target[1]);
        print_row("two_bone", reached, distance, -1, tip_x, tip_y);
        expect(reached && distance < 1e-9, "two_bone reaches the target");
        expect(a2 >= 0.0, "bend 1 gives a2 >= 0");
    }

    /* Vector form: the middle joint; the tip is l2 further, towards the target. */
    if (check(ik_two_bone_joint(target[0], target[1], l1, l2, 1, &jx, &jy, &joint_reached),
              "ik_two_bone_joint")) {
        ik_real to_target = hypot(target[0] - jx, target[1] - jy);
        ik_real tip_x = jx + l2 * (target[0] - jx) / to_target;
        ik_real tip_y = jy + l2 * (target[1] - jy) / to_target;
        ik_real distance = hypot(tip_x - target[0], tip_y - target[1]);
        print_row("two_bone_joint", joint_reached, distance, -1, tip_x, tip_y);
        expect(joint_reached && distance < 1e-9, "two_bone_joint reaches the target");
        expect(hypot(jx - l1 * cos(a1), jy - l1 * sin(a1)) < 1e-9,
               "both forms give the same middle joint");
    }
}

int main(void) {
    ik_status status;
    ik_chain *chain = ik_chain2d_create(BONES, lengths, &status);
    if (chain == NULL) {
        fprintf(stderr, "ik_chain2d_create failed: %s\n", ik_status_string(status));
        return 1;
    }

    /* Settings start from the documented defaults; allow more iterations than those. */
    ik_settings settings = *ik_chain_settings(chain);
    settings.iterations = 100;
    check(ik_chain_configure(chain, &settings), "ik_chain_configure");

    printf("ik %s: chain of lengths %.1f, %.1f, %.1f towards (%.1f, %.1f), tolerance %g\n\n",
           IK_VERSION, lengths[0], lengths[1], lengths[2], target[0], target[1],
           settings.tolerance);
    printf("%-14s %-7s %9s %5s  %s\n", "solver", "reached", "distance", "iters", "tip");
    solve_chain(chain, IK_SOLVER_FABRIK);
    solve_chain(chain, IK_SOLVER_CCD);
    solve_chain(chain, IK_SOLVER_RELAX);
    solve_arm();

    /* Misuse is a status, not a crash: the two-bone solver refuses a 3-bone chain. */
    ik_result result;
    status = ik_chain_solve_two_bone(chain, target, &result);
    printf("\nik_chain_solve_two_bone on 3 bones: %s\n", ik_status_string(status));
    expect(status == IK_ERR_NOT_TWO_BONE, "the two-bone solver refuses 3 bones");

    ik_chain_destroy(chain);
    if (failures > 0) {
        printf("%d unexpected results\n", failures);
        return 1;
    }
    printf("all results as expected\n");
    return 0;
}
