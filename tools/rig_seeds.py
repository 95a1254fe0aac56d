#!/usr/bin/env python3
"""Writes the seed corpus of the rig harness, spec/fuzz/corpus/rig/seed-*: a few inputs in
the byte format spec/fuzz/rig_fuzzer.c reads (figures of attached chains made into rigs,
configured, given goals and limits, solved, detached and reattached), so the fuzzer starts
from deep states. Run from the repository root: python3 tools/rig_seeds.py"""
import os

# operations (the enum in rig_fuzzer.c)
MAKE_RIG, CONFIGURE_RIG, SOLVE_RIG, SOLVE_RIG_AGAIN, DROP_RIG, CONFIGURE, SET_TARGET, \
    SET_ORIENTATION, CLEAR_TARGET, SET_LIMIT, CLEAR_LIMIT, SET_POSE, SET_BASE, SET_LENGTH, \
    SET_WEIGHT, SOLVE_CHAIN, DETACH, ATTACH = range(18)


def real(x):
    """A multiple of 1/8 in [-16, 16): take_real's second form."""
    return [100, int(round(x * 8)) & 0xff]


def angle(a):
    """take_angle's first form: (v / 199 * 2 - 1) * pi, the nearest v."""
    import math
    return [max(0, min(199, int(round((a / math.pi + 1) / 2 * 199))))]


def rotation(axis, a):
    """take_rotation: a turn by a about x, y or z (0, 1, 2)."""
    return [axis] + angle(a)


class Seed:
    def __init__(self, dim, chains):
        """chains: (bones, parent index or None, joint)"""
        self.b = [dim - 2, len(chains) - 1]
        for bones, _, _ in chains:
            self.b += [bones - 1, 255] + [64] * bones  # lengths 1.25
        for bones, parent, joint in chains[1:]:
            if parent is None:
                self.b += [255]
            else:
                self.b += [parent, joint] + rotation(2, 0.3) + (angle(0.5) if dim == 2 else [])

    def op(self, op, slot, *args):
        self.b += [op, slot]
        for a in args:
            self.b += a if isinstance(a, list) else [a]
        return self

    def target(self, slot, x, y, z=0):
        return self.op(SET_TARGET, slot, 200, real(x), real(y), real(z))

    def rig(self, root, shuffle):
        """A rig of chain root's subtree; shuffle: one byte for each chain of it but one."""
        return self.op(MAKE_RIG, 0, 0, 1, root, list(shuffle))

    def write(self, name):
        path = os.path.join("spec", "fuzz", "corpus", "rig", "seed-" + name)
        with open(path, "wb") as f:
            f.write(bytes(self.b))


# a figure: spine 0, arms 1 and 2 on the spine's tip, legs 3 and 4 on its base
FIGURE = [(2, None, 0), (2, 0, 2), (2, 0, 2), (3, 0, 0), (3, 0, 0)]

for dim in (2, 3):
    s = Seed(dim, FIGURE)
    s.target(1, 2, 3).target(2, -2, 3).target(3, 1, -3).target(4, -1, -3)
    s.rig(0, (1, 0, 2, 1)).op(SOLVE_RIG, 0)
    s.op(CONFIGURE_RIG, 0, 1 | 2, 3, 50).op(SOLVE_RIG, 0)  # relax, 50 iterations
    s.op(DETACH, 1).op(SOLVE_RIG, 0)  # the tree changed
    s.op(ATTACH, 1, 0, 2, rotation(0, 0.2), angle(0.2)).op(SOLVE_RIG, 0)
    s.op(SET_LIMIT, 3, 1, 0, angle(-0.5), angle(0.5)).op(SOLVE_RIG, 0)
    s.op(SET_ORIENTATION, 1, rotation(1, 1.0) if dim == 3 else angle(1.0)).op(SOLVE_RIG, 0)
    s.write("figure%dd" % dim)

    # weights, max_turn, stretch, a chain solve between rig solves
    s = Seed(dim, FIGURE)
    s.target(1, 3, 1).target(2, -3, 1)
    # effector_weight (bit 14) and max_turn (bit 13) of chain 1; stretch (bit 12) of chain 0
    s.op(CONFIGURE, 1, 0, 0x40 | 0x20, 150, 0, 4)  # max_turn (150 - 63) / 32, weight 4 / 16
    s.op(CONFIGURE, 0, 0, 0x10, 129)  # stretch on
    s.op(SOLVE_CHAIN, 0, 200, 200, real(9), real(0), real(0))  # stretched far
    s.rig(0, (0, 0, 0, 0)).op(SOLVE_RIG, 0).op(SOLVE_RIG_AGAIN, 0)
    s.op(CLEAR_TARGET, 1).op(CLEAR_TARGET, 2).op(SOLVE_RIG, 0)  # no goal: nothing moves
    s.write("weights%dd" % dim)

    # rigs that are no tree, and a rig in too little memory
    s = Seed(dim, [(1, None, 0), (2, 0, 1), (2, None, 0)])
    s.target(1, 1, 2)
    s.op(MAKE_RIG, 0, 200, 1, 3, 0, 1, 2)  # two roots
    s.op(MAKE_RIG, 0, 200, 1, 2, 1, 1)  # one chain twice
    s.op(MAKE_RIG, 0, 0, 2, 0, 0)  # one byte short
    s.rig(0, (1,)).op(SOLVE_RIG, 0)
    s.write("trees%dd" % dim)
