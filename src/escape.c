/*
 * escape.c - the progress of an iterative solve: the escape from lock-ups, and the stop
 * when an iteration no longer gains anything.
 *
 * A solve is stuck when an iteration brings the tip no closer (by a part in a million)
 * while the target is within the chain's reach and the distance is more than rounding:
 * FABRIK and relaxation on a straight chain with the target on its line, CCD when every
 * joint already sees the tip and the target in one direction, or an oscillation. The
 * escape then bends the chain by ESCAPE_ANGLE at its first movable bone, towards the
 * preferred side of the line to the target: that bone turns towards the side and the bones
 * after it keep their world directions, so the next joint, and every one after it, moves
 * to that side. From there every solver converges bending to that side. The side is the
 * one bend (2D: positive joint angles, as in the two-bone solve) or the pole (3D, else a
 * fixed perpendicular of the line) asks for; every other bend tries the other side, in
 * case the limits forbid the first. At most ESCAPE_KICKS bends per solve.
 *
 * Limits make minima of their own, where the position-based solvers creep rather than
 * stop: on a chain with limits an iteration that brings the tip less than STUCK_LIMITED
 * (10%) closer counts as stuck, and FABRIK and relaxation hand the iterations they have
 * left to CCD sweeps (ik_escape_finish), whose every turn stays within the limits and which
 * escape their own lock-ups the same way. On limited chains the bend is a curl (every bone
 * turns, each a little more than its parent), which gets more joints off their limits.
 * The bench (`make bench`) measured the thresholds: 1e-6, 1e-3, 1e-2, 5e-2 and 0.1 for
 * limited chains, the last best for every solver in 2D and 3D.
 *
 * A solve also stops once IK_STALL_ITERATIONS iterations together brought the tip closer by
 * less than a fraction of what was left to gain, its distance less the least any pose can
 * have. Within the reach ring (from the longest bone less the others to the whole length)
 * the least is 0 and the fraction STALL_REACHABLE, a thousandth. Outside it, beyond the
 * whole length or in the hole about the base that a bone longer than all the others
 * together leaves, the least is the distance to the ring, the fraction STALL_OUTSIDE, a
 * hundredth (getting closer to the ring gains nothing a user sees), and the solve also
 * stops as soon as it is within tolerance of the least. Two windows that stall go on all
 * the same:
 * - one whose second half gained more than STALL_ACCELERATING times its first: a chain
 *   leaving a balance it sat on (rounding moved it off) gains 1.15 to 3 times more each
 *   iteration, from 1e-10 of what is left (without this, the bench's spider rig, whose
 *   limbs have no escape, missed 3 goal sets in 1000 more);
 * - on a chain with limits and a target within reach, with bends left: a minimum the
 *   limits made, where FABRIK and relaxation creep; the bend leaves it (the bench reaches
 *   up to 0.4% more goals with it than it did at a hundred-thousandth without it; a
 *   thousandth without it lost 0.9%).
 * Where every solver crawls, at a fold (a target on or about the inner edge of the ring)
 * or just outside the ring, what is left shrinks as 1/iterations: the stall ends the solve
 * after IK_STALL_ITERATIONS / fraction iterations, about 8,000 within the ring and 800
 * outside it (1,400 for relaxation), whatever `iterations` allows; IK_MAX_ITERATIONS
 * bounds everything else (ik.h).
 * So a solve stops short of its tolerance only after IK_STALL_ITERATIONS iterations: at
 * tolerance 0 it goes on until its distance is 0 or has stopped shrinking (or reaches
 * IK_MAX_ITERATIONS).
 * Everything is deterministic.
 */
#include "chain.h"

#define ESCAPE_ANGLE 0.25
#define ESCAPE_KICKS 4
#define STUCK_FREE 1e-6
#define STUCK_LIMITED 0.1
#define STALL_REACHABLE 1e-3
#define STALL_OUTSIDE 1e-2
#define STALL_ACCELERATING 1.5

ik_progress ik_progress_start(const ik_chain *c, ik_vec3 target, int m)
{
    return ik_progress_from(c, m, ik_joint_distance(c, m, target),
                            ik_v3_len(ik_v3_sub(target, ik_joint_v3(c, 0))));
}

ik_progress ik_progress_from(const ik_chain *c, int m, ik_real distance, ik_real d)
{
    ik_progress e;
    ik_real longest, total = ik_chain_reach_to(c, m, &longest), inner;
    e.m = m;
    e.reach = total;
    e.last = distance;
    /* Reach: the ring between the longest bone less the others, and the whole length. */
    inner = 2 * longest - total;
    e.least = d > total ? d - total : d < inner ? inner - d : 0;
    e.stall = e.least > 0 ? STALL_OUTSIDE : STALL_REACHABLE;
    e.mark = e.last;
    e.middle = e.last;
    e.kicks = 0;
    e.since = 0;
    /* A converged solve (tolerance 0, say) also stops improving: that is not a lock-up. */
    e.floor = 1e-9 * total;
    e.limited = c->limited;
    e.slow = c->limited ? STUCK_LIMITED : STUCK_FREE;
    e.reachable = c->settings.escape && d <= total && d >= inner;
    e.crawl = !c->limited;
    return e;
}

ik_progress ik_progress_plain(ik_real error, ik_real scale)
{
    ik_progress e;
    e.m = 0;
    e.reach = scale;
    e.last = error;
    e.least = 0;
    e.stall = STALL_REACHABLE;
    e.mark = error;
    e.middle = error;
    e.kicks = 0;
    e.since = 0;
    e.floor = 0;
    e.slow = 0;
    e.limited = 0;
    e.reachable = 0;
    e.crawl = 0;
    return e;
}

ik_next ik_progress_next(const ik_chain *c, ik_progress *e, ik_real distance)
{
    ik_real last = e->last, from;
    e->last = distance;
    if (e->crawl && e->reachable && distance > e->floor && distance >= last * (1 - STUCK_LIMITED)) {
        e->crawl = 0;
        return IK_CRAWL;
    }
    if (e->reachable && e->kicks < ESCAPE_KICKS && distance > e->floor &&
        distance >= last * (1 - e->slow))
        return IK_KICK;
    if (e->least > 0 && distance - e->least <= c->settings.tolerance) return IK_STOP;
    if (++e->since == IK_STALL_ITERATIONS / 2) e->middle = distance;
    if (e->since < IK_STALL_ITERATIONS) return IK_GO_ON;
    e->since = 0;
    from = e->mark;
    e->mark = distance;
    if (distance - e->least < (1 - e->stall) * (from - e->least)) return IK_GO_ON;
    if (e->middle < from && e->middle - distance > STALL_ACCELERATING * (from - e->middle))
        return IK_GO_ON;
    if (e->limited && e->reachable && e->kicks < ESCAPE_KICKS && distance > e->floor)
        return IK_KICK;
    return IK_STOP;
}

int ik_escape_finish(ik_chain *c, ik_vec3 target, int m, int iterations, int first)
{
    ik_progress e = ik_progress_start(c, target, m);
    int iter = 0;
    e.slow = STUCK_FREE; /* only a real lock-up: slow sweeps are still the way out */
    while (iter < iterations) {
        ik_real distance = ik_joint_distance(c, m, target);
        ik_next next;
        if (distance <= c->settings.tolerance) break;
        ik_ccd_sweep(c, target, m, 1, first);
        iter++;
        /* The sweeps have lock-ups of their own (a chain folded onto the target's line). */
        next = ik_progress_next(c, &e, ik_joint_distance(c, m, target));
        if (next == IK_KICK) ik_escape_kick(c, target, &e, first);
        else if (next == IK_STOP) break;
    }
    return iter;
}

void ik_escape_kick(ik_chain *c, ik_vec3 target, ik_progress *e, int first)
{
    ik_vec3 line, side, axis, dir;
    ik_real angle = ESCAPE_ANGLE * (1 + e->kicks / 2);
    int i, m = e->m;
    if (e->kicks % 2 == 1) angle = -angle; /* every other bend tries the other side */
    e->kicks++;
    c->kicked = 1;

    line = ik_v3_normalize_or(ik_v3_sub(target, ik_joint_v3(c, first)), ik_v3(1, 0, 0));
    side = ik_chain_bend_side(c, line);
    if (c->limited) {
        /*
         * Limits: a curl. Each bone from `first` on turns (i - first + 1) times the angle
         * about line x side, so every joint moves, and some limit has room for it.
         */
        axis = ik_v3_normalize_or(ik_v3_cross(line, side), ik_v3_any_perpendicular(line));
        for (i = first; i < m; i++) {
            dir = ik_dir_v3(c, i);
            ik_pose_bone(c, i, ik_q_rotate(ik_q_axis_angle(axis, angle * (i - first + 1)), dir));
        }
    } else {
        /* Bone `first` turns towards the side; the bones after it keep their directions. */
        dir = ik_dir_v3(c, first);
        axis = ik_v3_normalize_or(ik_v3_cross(dir, side), ik_v3_any_perpendicular(dir));
        ik_pose_bone(c, first, ik_q_rotate(ik_q_axis_angle(axis, angle), dir));
        for (i = first + 1; i < m; i++) {
            dir = ik_dir_v3(c, i);
            ik_pose_bone(c, i, dir);
        }
    }
    c->stale_from = m;
    ik_chain_fk(c);
    e->last = ik_joint_distance(c, m, target);
    e->mark = e->last;
    e->since = 0;
}
