/*
 * rig_fuzzer.c - libFuzzer harness for the attached chains and rigs of src/ik.h.
 *
 * The input builds up to sixteen chains of one dimension (now and then one of the other),
 * most of them attached into a tree (or two; deep lines of attachments and many children
 * of one chain both come often), then makes rigs of them (ik_rig_create, or
 * ik_rig_init in memory of exactly the size asked for, too little, or none) from lists that
 * form a tree or not, configures rigs and chains, sets goals (positions, orientations) and
 * limits, poses, solves the rig and single chains, detaches and reattaches chains (so a rig
 * made before sees its tree changed), with numbers from the input, valid or not (fuzzer.h).
 * The oracle knows ik.h's rules and gives each call's status. After every call:
 *   - a call that returned an error changed nothing: every chain's memory is byte for byte
 *     what it was, and no output was written (ik_rig_init's *out);
 *   - every chain is sound (chain_checks.h): finite, lengths kept, rotations unit, world
 *     orientations along the joints, each child's base on its parent's joint, and within
 *     its limits once a solve has brought it there (a rig solve does so for all its chains);
 *   - a rig solve's result is consistent: the largest goal distance and orientation error,
 *     reached == both within the rig's tolerances, iterations within the maximum and
 *     IK_MAX_ITERATIONS; a rig with no goal moves nothing; a rig with goals leaves no chain
 *     stretched and no bone turned by more than its chain's max_turn (from a pose within
 *     the limits).
 * And no core call may raise the floating-point invalid flag (see fuzzer.h).
 */
#include "chain_checks.h"

#define MAX_CHAINS 16
#define MAX_RIG_BONES 4
#define MAX_OPS 64

static slot slots[MAX_CHAINS];
static unsigned links[MAX_CHAINS]; /* each slot's attach and detach calls that took effect */
static unsigned holds[MAX_CHAINS]; /* each slot's attach_tip and detach_tip calls that took effect */
static int count_of_slots;
static int trace; /* IK_FUZZ_TRACE=1: each operation on stderr */

/* The rig, if one is made, and the tree it was made from. */
static struct {
    ik_rig *rig;
    void *memory; /* NULL: from ik_rig_create */
    int count;
    ik_chain *chains[MAX_CHAINS + 2];
    ik_chain *parent[MAX_CHAINS + 2];
    int joint[MAX_CHAINS + 2];
    unsigned links[MAX_CHAINS + 2];
    ik_chain *tip[MAX_CHAINS + 2]; /* the chain holding its tip, and the joint */
    int tip_joint[MAX_CHAINS + 2];
    unsigned holds[MAX_CHAINS + 2];
} made;

/* ---- snapshots of every chain ---- */

typedef struct snapshot {
    unsigned char *raw[MAX_CHAINS];
    observed seen[MAX_CHAINS];
} snapshot;

static void take_snapshot(snapshot *sn)
{
    int k;
    for (k = 0; k < count_of_slots; k++) {
        observe(&slots[k], &sn->seen[k]); /* first: reading brings the caches up to date */
        sn->raw[k] = (unsigned char *)malloc(slots[k].size);
        memcpy(sn->raw[k], slots[k].memory, slots[k].size);
    }
}

static void check_untouched(const snapshot *sn, const char *what)
{
    int k;
    for (k = 0; k < count_of_slots; k++) {
        observed now;
        CHECK(memcmp(sn->raw[k], slots[k].memory, slots[k].size) == 0,
              "%s: a rejected call changed chain %d", what, k);
        observe(&slots[k], &now);
        check_kept(&sn->seen[k], &now, P_ALL, what);
    }
}

static void drop_snapshot(snapshot *sn)
{
    int k;
    for (k = 0; k < count_of_slots; k++) free(sn->raw[k]);
}

static void check_all_sound(const char *what)
{
    int k;
    for (k = 0; k < count_of_slots; k++) {
        char where[96];
        snprintf(where, sizeof where, "%s (chain %d)", what, k);
        check_sound(&slots[k], where);
    }
}

static int slot_index(const ik_chain *c)
{
    int k;
    for (k = 0; k < count_of_slots; k++)
        if (c && slots[k].chain == c) return k;
    return -1;
}

/* ---- building ---- */

/* A unit-ish rotation from the input: small turns mostly, any four numbers sometimes. */
static void take_rotation(reader *r, ik_real q[4])
{
    uint8_t how = take_u8(r);
    if (how < 192) {
        ik_real a = take_angle(r) * 0.5;
        int axis = how % 3;
        q[0] = cos(a), q[1] = q[2] = q[3] = 0;
        q[1 + axis] = sin(a);
    } else {
        int k;
        for (k = 0; k < 4; k++) q[k] = take_real(r);
    }
}

static void build(reader *r)
{
    int dim = 2 + (take_u8(r) & 1), k;
    count_of_slots = 1 + take_u8(r) % MAX_CHAINS;
    for (k = 0; k < count_of_slots; k++) {
        slot *s = &slots[k];
        ik_real lengths[MAX_RIG_BONES];
        ik_status st = IK_OK;
        int n = 1 + take_u8(r) % MAX_RIG_BONES, d = take_u8(r) < 6 ? 5 - dim : dim, i;
        for (i = 0; i < n; i++) {
            uint8_t v = take_u8(r);
            lengths[i] = v < 200 ? 0.25 + v / 64.0 : take_length(r);
            if (length_errors(lengths[i])) lengths[i] = 1;
        }
        memset(s, 0, sizeof *s);
        CORE_SET(s->chain,
                 d == 2 ? ik_chain2d_create(n, lengths, &st) : ik_chain3d_create(n, lengths, &st));
        CHECK(s->chain != NULL && st == IK_OK, "create: status %d", st);
        s->memory = s->chain, s->created = 1, s->dim = d, s->n = n;
        s->size = d == 2 ? ik_chain2d_size(n) : ik_chain3d_size(n);
        for (i = 0; i < n; i++) s->lengths[i] = lengths[i] + 0.0;
    }
    /* mostly a tree: chain k on an earlier one */
    for (k = 1; k < count_of_slots; k++) {
        slot *s = &slots[k], *p;
        uint8_t v = take_u8(r);
        ik_real q[4];
        int joint;
        if (v >= 224) continue;
        p = &slots[v < 96 ? k - 1 : v < 160 ? 0 : v % k]; /* a line, a wide root, any */
        if (p->dim != s->dim) continue;
        joint = take_u8(r) % (p->n + 1);
        take_rotation(r, q);
        if (s->dim == 2) {
            ik_real a = take_angle(r);
            if (!isfinite(a)) a = 0;
            CHECK(CORE(ik_chain2d_attach(s->chain, p->chain, joint, a)) == IK_OK, "attach");
            links[s - slots]++;
        } else {
            if (quat_errors(q)) q[0] = 1, q[1] = q[2] = q[3] = 0;
            CHECK(CORE(ik_chain3d_attach(s->chain, p->chain, joint, q)) == IK_OK, "attach");
            links[s - slots]++;
        }
    }
    check_all_sound("a new tree");
}

static void drop_rig(void)
{
    if (made.rig == NULL) return;
    if (made.memory)
        free(made.memory);
    else
        ik_rig_destroy(made.rig);
    memset(&made, 0, sizeof made);
}

static void release_all(void)
{
    int k;
    drop_rig();
    /* children first: detached, then any order */
    for (k = 0; k < count_of_slots; k++) ik_chain_detach(slots[k].chain);
    for (k = 0; k < count_of_slots; k++) {
        ik_chain_destroy(slots[k].chain);
        memset(&slots[k], 0, sizeof slots[k]);
        links[k] = 0;
    }
    count_of_slots = 0;
}

/* ---- making a rig ---- */

/* The status (and culprit) ik_rig_init gives for chains[0..count-1], memory aside. */
/* The index of chain c in the list, or -1. */
static int index_in(ik_chain *const *chains, int count, const ik_chain *c)
{
    int j;
    for (j = 0; c && j < count; j++)
        if (chains[j] == c) return j;
    return -1;
}

static int group_of(int *group, int k)
{
    while (group[k] != k) k = group[k];
    return k;
}

/* One root, or several that the tip holds inside join into one piece, none of them hanging
   below the list through chains outside it. */
static errset tree_errors(ik_chain *const *chains, int count, int *culprit)
{
    int k, j, roots = 0, group[MAX_CHAINS + 2];
    *culprit = -1;
    if (count < 1) return BIT(IK_ERR_COUNT);
    for (k = 0; k < count; k++) {
        *culprit = k;
        if (ik_chain_dim(chains[k]) != ik_chain_dim(chains[0])) return BIT(IK_ERR_DIMENSION);
        for (j = 0; j < k; j++)
            if (chains[j] == chains[k]) return BIT(IK_ERR_NOT_A_TREE);
        roots += index_in(chains, count, ik_chain_parent(chains[k], NULL)) < 0;
    }
    *culprit = -1;
    if (roots == 1) return 0;
    for (k = 0; k < count; k++) group[k] = k;
    for (k = 0; k < count; k++) {
        int p = index_in(chains, count, ik_chain_parent(chains[k], NULL));
        int t = index_in(chains, count, ik_chain_tip_parent(chains[k], NULL, NULL));
        if (p >= 0) group[group_of(group, k)] = group_of(group, p);
        if (t >= 0) group[group_of(group, k)] = group_of(group, t);
    }
    for (k = 1; k < count; k++)
        if (group_of(group, k) != group_of(group, 0)) {
            *culprit = k;
            return BIT(IK_ERR_NOT_A_TREE);
        }
    for (k = 0; k < count; k++) {
        ik_chain *x = ik_chain_parent(chains[k], NULL);
        if (index_in(chains, count, x) >= 0) continue;
        for (; x; x = ik_chain_parent(x, NULL))
            if (index_in(chains, count, x) >= 0) {
                *culprit = k;
                return BIT(IK_ERR_NOT_A_TREE);
            }
    }
    return 0;
}

/* Chain k and every chain below it, into list (breadth first); their number. */
static int subtree(int k, ik_chain **list)
{
    int count = 1, done, j;
    list[0] = slots[k].chain;
    for (done = 0; done < count; done++)
        for (j = 0; j < count_of_slots; j++)
            if (ik_chain_parent(slots[j].chain, NULL) == list[done]) list[count++] = slots[j].chain;
    return count;
}

static void make_rig(reader *r)
{
    ik_chain *chains[MAX_CHAINS + 2];
    int count, k, culprit = -7, want_culprit;
    uint8_t how = take_u8(r), memory_how = take_u8(r);
    errset expect;
    ik_rig *rig = (ik_rig *)&made, *sentinel = rig;
    void *memory = NULL;
    size_t size, given;
    ik_status st = IK_OK;
    snapshot sn;

    drop_rig();
    if (how < 176) { /* a subtree, shuffled */
        count = subtree(take_u8(r) % count_of_slots, chains);
        for (k = count - 1; k > 0; k--) {
            int j = take_u8(r) % (k + 1);
            ik_chain *t = chains[k];
            chains[k] = chains[j], chains[j] = t;
        }
    } else { /* any list, repeats and strangers included */
        count = take_u8(r) % (MAX_CHAINS + 3);
        for (k = 0; k < count; k++) chains[k] = slots[take_u8(r) % count_of_slots].chain;
    }
    expect = tree_errors(chains, count, &want_culprit);
    CORE_SET(size, ik_rig_size(count, count ? chains : NULL));
    CHECK((size == 0) == (count < 1), "rig_size %zu for %d chains", size, count);
    given = size;
    take_snapshot(&sn);
    if (memory_how & 1) {
        CORE_SET(rig, ik_rig_create(count ? chains : NULL, count, (memory_how & 2) ? &st : NULL,
                                    &culprit));
        CHECK((rig == NULL) == (expect != 0), "rig_create: %s, expected %#llx",
              rig ? "made" : "refused", expect);
        CHECK(!(memory_how & 2) || (rig ? st == IK_OK : (BIT(st) & expect) != 0),
              "rig_create: status %d, expected %#llx", st, expect);
    } else {
        if ((memory_how & 6) == 2 && size > 0) given = size - 1;
        if ((memory_how & 6) != 4 && size > 0) memory = malloc(given);
        /* the tree is checked in the memory given: without room, only that is said */
        if (count >= 1 && (memory == NULL || given < size)) expect = BIT(IK_ERR_TOO_LARGE);
        st = CORE(ik_rig_init(memory, given, count ? chains : NULL, count, &rig, &culprit));
        CHECK(expect ? (BIT(st) & expect) != 0 : st == IK_OK, "rig_init: status %d, expected %#llx",
              st, expect);
        CHECK(st == IK_OK ? rig == memory : rig == sentinel, "rig_init: *out");
        if (st != IK_OK) {
            free(memory);
            memory = NULL;
            rig = NULL;
        }
    }
    CHECK(culprit == want_culprit || (expect & BIT(IK_ERR_TOO_LARGE)) != 0,
          "rig: culprit %d, expected %d", culprit, want_culprit);
    /* making a rig changes no chain, whether it is made or not */
    check_untouched(&sn, "making a rig");
    drop_snapshot(&sn);
    if (rig == NULL) return;
    made.rig = rig, made.memory = memory, made.count = count;
    for (k = 0; k < count; k++) {
        made.chains[k] = chains[k];
        made.parent[k] = ik_chain_parent(chains[k], &made.joint[k]);
        made.links[k] = links[slot_index(chains[k])];
        made.tip[k] = ik_chain_tip_parent(chains[k], &made.tip_joint[k], NULL);
        made.holds[k] = holds[slot_index(chains[k])];
    }
    for (k = 0; trace && k < count; k++)
        fprintf(stderr, "  rig chain %d: slot %d on slot %d joint %d\n", k, slot_index(chains[k]),
                slot_index(ik_chain_parent(chains[k], NULL)), made.joint[k]);
    CHECK(ik_rig_count(rig) == count, "rig_count");
    for (k = -1; k <= count; k++)
        CHECK(ik_rig_chain(rig, k) == (k >= 0 && k < count ? chains[k] : NULL), "rig_chain %d", k);
    {
        ik_rig_settings d = ik_rig_default_settings();
        CHECK(memcmp(ik_rig_settings_of(rig), &d, sizeof d) == 0, "a new rig's settings");
    }
}

static void configure_rig(reader *r)
{
    ik_rig_settings want;
    errset expect = 0;
    uint8_t fields = take_u8(r);
    ik_status st;
    if (made.rig == NULL) return;
    want = *ik_rig_settings_of(made.rig);
    if (fields & 1) want.solver = (ik_solver)((int)(take_u8(r) % 7) - 1);
    if (fields & 2) {
        uint8_t v = take_u8(r);
        /* 254: INT_MAX, so a solve meets the bound of its work (IK_MAX_ITERATIONS) */
        want.iterations = v < 240   ? 1 + v % 100
                          : v == 255 ? INT_MIN
                          : v == 254 ? INT_MAX
                                     : -(int)(v % 2);
    }
    if (fields & 4) want.tolerance = take_u8(r) < 128 ? take_u8(r) / 1024.0 : take_real(r);
    if (fields & 8) want.angle_tolerance = take_u8(r) < 128 ? take_u8(r) / 1024.0 : take_real(r);
    if (want.solver != IK_SOLVER_FABRIK && want.solver != IK_SOLVER_RELAX)
        expect = BIT(IK_ERR_RIG_SOLVER);
    else if (want.iterations < 1)
        expect = BIT(IK_ERR_ITERATIONS);
    else if (!(isfinite(want.tolerance) && want.tolerance >= 0))
        expect = BIT(IK_ERR_TOLERANCE);
    else if (!(isfinite(want.angle_tolerance) && want.angle_tolerance >= 0))
        expect = BIT(IK_ERR_ANGLE_TOLERANCE);
    {
        ik_rig_settings before = *ik_rig_settings_of(made.rig);
        st = CORE(ik_rig_configure(made.rig, &want));
        if (expect) {
            CHECK((BIT(st) & expect) != 0, "rig configure: status %d, expected %#llx", st, expect);
            CHECK(memcmp(&before, ik_rig_settings_of(made.rig), sizeof before) == 0,
                  "a rejected rig configure changed the settings");
        } else {
            const ik_rig_settings *got = ik_rig_settings_of(made.rig);
            CHECK(st == IK_OK, "rig configure: status %d", st);
            CHECK(got->solver == want.solver && got->iterations == want.iterations &&
                      got->tolerance == want.tolerance &&
                      got->angle_tolerance == want.angle_tolerance,
                  "rig configure stored other settings");
        }
    }
}

/* ---- solving a rig ---- */

/* Whether chain k of the rig holds its tip on a chain outside the rig. */
static int tip_outside(int k)
{
    ik_chain *tip = ik_chain_tip_parent(made.chains[k], NULL, NULL);
    return tip && index_in(made.chains, made.count, tip) < 0;
}

static void solve_rig(void)
{
    ik_result res;
    errset expect = 0;
    int k, goals = 0, in_rig[MAX_CHAINS], roots;
    ik_real before[MAX_CHAINS][3];
    ik_status st;
    snapshot sn;
    const ik_rig_settings *set;
    ik_real most = 0, scale = 0;
    if (made.rig == NULL) return;
    set = ik_rig_settings_of(made.rig);
    memset(in_rig, 0, sizeof in_rig);
    for (k = 0; k < made.count; k++) {
        int joint, i = slot_index(made.chains[k]);
        ik_chain *p = ik_chain_parent(made.chains[k], &joint);
        ik_real t[3];
        int root = 1, j;
        for (j = 0; j < made.count; j++) root &= made.chains[j] != made.parent[k];
        if (p != made.parent[k] || joint != made.joint[k]) expect = BIT(IK_ERR_RIG_CHANGED);
        /* the root on a chain outside again after an attach or detach: a change */
        if (root && p && links[i] != made.links[k]) expect = BIT(IK_ERR_RIG_CHANGED);
        {
            ik_chain *tip = ik_chain_tip_parent(made.chains[k], &joint, NULL);
            if (tip != made.tip[k] || (tip && joint != made.tip_joint[k])) expect = BIT(IK_ERR_RIG_CHANGED);
            if (tip && index_in(made.chains, made.count, tip) < 0 && holds[i] != made.holds[k])
                expect = BIT(IK_ERR_RIG_CHANGED);
        }
        in_rig[i] = 1;
        goals += has_target(&slots[i], t);
        /* a hold on a chain outside is a goal that does not move during the solve */
        if (tip_outside(k)) has_target(&slots[i], before[i]);
    }
    /* several roots: one hanging, through chains outside, below the rig since */
    for (k = 0, roots = 0; k < made.count; k++)
        roots += index_in(made.chains, made.count, ik_chain_parent(made.chains[k], NULL)) < 0;
    for (k = 0; k < made.count && roots > 1; k++) {
        ik_chain *x = ik_chain_parent(made.chains[k], NULL);
        if (index_in(made.chains, made.count, x) >= 0) continue;
        for (; x; x = ik_chain_parent(x, NULL))
            if (index_in(made.chains, made.count, x) >= 0) expect = BIT(IK_ERR_RIG_CHANGED);
    }
    memset(&res, 0xa5, sizeof res);
    take_snapshot(&sn);
    st = CORE(ik_rig_solve(made.rig, &res));
    if (expect) {
        unsigned char sentinel[sizeof res];
        memset(sentinel, 0xa5, sizeof sentinel);
        CHECK((BIT(st) & expect) != 0, "rig_solve: status %d, expected %#llx", st, expect);
        CHECK(memcmp(&res, sentinel, sizeof res) == 0, "a rejected rig solve wrote its result");
        check_untouched(&sn, "a rejected rig solve");
        drop_snapshot(&sn);
        return;
    }
    CHECK(st == IK_OK, "rig_solve: status %d", st);
    CHECK(isfinite(res.distance) && res.distance >= 0, "rig_solve: distance %g", res.distance);
    CHECK(res.angle_error >= 0 && res.angle_error <= 3.14159265358979323847,
          "rig_solve: angle error %g", res.angle_error);
    CHECK(res.reached ==
              (res.distance <= set->tolerance && res.angle_error <= set->angle_tolerance),
          "rig_solve: reached %d, distance %g, angle error %g", res.reached, res.distance,
          res.angle_error);
    CHECK(res.iterations >= 0 && res.iterations <= set->iterations &&
              res.iterations <= IK_MAX_ITERATIONS,
          "rig_solve: %d iterations", res.iterations);
    for (k = 0; k < count_of_slots; k++) {
        slot *s = &slots[k];
        observed now;
        observe(s, &now);
        if (goals == 0) { /* nothing moves */
            check_kept(&sn.seen[k], &now, P_ALL, "a rig solve without goals");
            continue;
        }
        check_kept(&sn.seen[k], &now, P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT,
                   "a rig solve");
        if (!in_rig[k]) {
            check_kept(&sn.seen[k], &now, P_POSE, "a rig solve (a chain outside)");
            continue;
        }
        CHECK(ik_chain_stretch(s->chain) == 1, "a rig solve left chain %d stretched", k);
        if (s->in_limits && ik_chain_settings(s->chain)->max_turn < INFINITY) {
            ik_real max_turn = ik_chain_settings(s->chain)->max_turn;
            int i;
            for (i = 0; i < s->n; i++) {
                ik_real turn = s->dim == 2 ? fabs(wrap_pi(now.pose[i] - sn.seen[k].pose[i]))
                                           : quat_turn(&sn.seen[k].pose[4 * i], &now.pose[4 * i]);
                CHECK(turn <= max_turn * (1 + 1e-9) + 1e-9,
                      "rig_solve: chain %d bone %d turned by %.17g, max_turn %.17g", k, i, turn,
                      max_turn);
            }
        }
        s->in_limits = 1;
        {
            ik_real t[3], tip[3], half;
            int at = index_in(made.chains, made.count, s->chain);
            if (!has_target(s, t)) continue;
            if (tip_outside(at)) memcpy(t, before[k], sizeof t);
            joint3(s, s->n, tip);
            if (s->dim == 2) t[2] = 0;
            half = half_norm(t[0] - tip[0], t[1] - tip[1], t[2] - tip[2]);
            if (half > most) most = half;
            scale = fmax(scale, fmax(fmax(fabs(t[0]), fabs(t[1])), fabs(t[2])));
            scale = fmax(scale, fmax(fmax(fabs(tip[0]), fabs(tip[1])), fabs(tip[2])));
        }
    }
    if (goals == 0)
        CHECK(res.reached && res.distance == 0 && res.iterations == 0 && res.angle_error == 0,
              "a rig solve without goals: reached %d, distance %g, %d iterations", res.reached,
              res.distance, res.iterations);
    else
        CHECK(fabs(most - res.distance * 0.5) <= 1e-12 * most + 1e-15 * scale + 1e-320,
              "rig_solve: distance %.17g, the farthest goal is %.17g away", res.distance, 2 * most);
    drop_snapshot(&sn);
}

/* ---- chain operations ---- */

enum {
    OP_MAKE_RIG,
    OP_CONFIGURE_RIG,
    OP_SOLVE_RIG,
    OP_SOLVE_RIG_AGAIN,
    OP_DROP_RIG,
    OP_CONFIGURE,
    OP_SET_TARGET,
    OP_SET_ORIENTATION,
    OP_CLEAR_TARGET,
    OP_SET_LIMIT,
    OP_CLEAR_LIMIT,
    OP_SET_POSE,
    OP_SET_BASE,
    OP_SET_LENGTH,
    OP_SET_WEIGHT,
    OP_SOLVE_CHAIN,
    OP_DETACH,
    OP_ATTACH,
    OP_ATTACH_TIP,
    OP_DETACH_TIP,
    OP_COUNT_OF_OPS
};

static void operate(reader *r)
{
    int op = take_u8(r) % OP_COUNT_OF_OPS, i, k, keep = P_ALL & ~P_GOALS;
    slot *s = &slots[take_u8(r) % count_of_slots];
    ik_chain *c = s->chain;
    errset expect = 0;
    ik_status st = IK_OK;
    ik_real v[8];
    observed before, now;
    snapshot sn;
    const char *what = "?";
    int was_in_limits = s->in_limits, solved = 0;

    switch (op) {
    case OP_MAKE_RIG: make_rig(r), what = "making a rig"; break;
    case OP_CONFIGURE_RIG: configure_rig(r), what = "rig configure"; break;
    case OP_SOLVE_RIG:
    case OP_SOLVE_RIG_AGAIN: solve_rig(), what = "rig_solve"; break;
    case OP_DROP_RIG: drop_rig(), what = "rig_destroy"; break;
    default: break;
    }
    if (trace) fprintf(stderr, "op %d on chain %d\n", op, (int)(s - slots));
    if (op <= OP_DROP_RIG) {
        check_all_sound(what);
        return;
    }
    take_snapshot(&sn);
    before = sn.seen[s - slots];
    switch (op) {
    case OP_CONFIGURE: {
        ik_settings want = take_settings(r, ik_chain_settings(c));
        what = "configure";
        expect = settings_errors(&want, s);
        keep = P_ALL & ~P_SETTINGS;
        st = CORE(ik_chain_configure(c, &want));
        break;
    }
    case OP_SET_TARGET:
        what = "set_target";
        take_target(r, s, v);
        expect = ik_chain_tip_parent(c, NULL, NULL) ? BIT(IK_ERR_HELD) : coord_errors(v, s->dim);
        keep = P_ALL & ~P_GOALS;
        st = CORE(ik_chain_set_target(c, v));
        break;
    case OP_SET_ORIENTATION:
        what = "set_orientation";
        keep = P_ALL & ~P_GOALS;
        if (s->dim == 2) {
            v[0] = take_angle(r);
            expect = isfinite(v[0]) ? 0 : BIT(IK_ERR_NOT_FINITE);
            st = CORE(ik_chain2d_set_target_angle(c, v[0]));
        } else {
            take_rotation(r, v);
            expect = quat_errors(v);
            st = CORE(ik_chain3d_set_target_rotation(c, v));
        }
        break;
    case OP_CLEAR_TARGET:
        what = "clear_target";
        keep = P_ALL & ~P_GOALS;
        if (ik_chain_tip_parent(c, NULL, NULL)) holds[s - slots]++;
        CORE_VOID(ik_chain_clear_target(c));
        CHECK(ik_chain_tip_parent(c, NULL, NULL) == NULL, "clear_target: still held");
        break;
    case OP_SET_LIMIT: {
        uint8_t kind = take_u8(r);
        what = "set_limit";
        i = take_u8(r) % s->n;
        v[0] = take_angle(r), v[1] = take_angle(r);
        if (!(kind & 128) && !isnan(v[0]) && !isnan(v[1])) {
            ik_real lo = fmin(v[0], v[1]), hi = fmax(v[0], v[1]);
            v[0] = lo, v[1] = hi;
        }
        keep = P_ALL & ~P_LIMITS;
        if (!isfinite(v[0]) || !isfinite(v[1]))
            expect = BIT(IK_ERR_NOT_FINITE);
        else if (!(-3.14159265358979323847 <= v[0] && v[0] <= v[1] &&
                   v[1] <= 3.14159265358979323847))
            expect = BIT(IK_ERR_LIMIT_RANGE);
        if (s->dim == 2) {
            st = CORE(ik_chain2d_set_limit(c, i, v[0], v[1]));
        } else if (kind % 3 == 0) {
            for (k = 0; k < 3; k++) v[2 + k] = (ik_real)(take_u8(r) % 3) - 1;
            if (v[2] == 0 && v[3] == 0 && v[4] == 0) expect = BIT(IK_ERR_AXIS);
            st = CORE(ik_chain3d_set_hinge(c, i, v + 2, v[0], v[1]));
        } else if (kind % 3 == 1) {
            v[0] = take_u8(r) / 64.0;
            expect = v[0] <= 3.14159265358979323846 ? 0 : BIT(IK_ERR_CONE);
            st = CORE(ik_chain3d_set_cone(c, i, v[0]));
        } else {
            st = CORE(ik_chain3d_set_twist(c, i, v[0], v[1]));
        }
        if (st == IK_OK) s->in_limits = 0;
        break;
    }
    case OP_CLEAR_LIMIT:
        what = "clear_limit";
        keep = P_ALL & ~P_LIMITS;
        st = CORE(ik_chain_clear_limit(c, take_u8(r) % s->n));
        break;
    case OP_SET_POSE:
        what = "set_pose";
        i = take_u8(r) % s->n;
        keep = P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT | P_BASE;
        if (s->dim == 2) {
            v[0] = take_angle(r);
            expect = isfinite(v[0]) ? 0 : BIT(IK_ERR_NOT_FINITE);
            st = CORE(ik_chain2d_set_angle(c, i, v[0]));
        } else {
            take_rotation(r, v);
            expect = quat_errors(v);
            st = CORE(ik_chain3d_set_rotation(c, i, v));
        }
        if (st == IK_OK) s->in_limits = 0;
        break;
    case OP_SET_BASE:
        what = "set_base";
        for (k = 0; k < 3; k++)
            v[k] = take_u8(r) < 192 ? (ik_real)(int8_t)take_u8(r) / 4 : take_real(r);
        take_rotation(r, v + 3);
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
        if (s->dim == 2) {
            expect = coord_errors(v, 2) | (isfinite(v[2]) ? 0 : BIT(IK_ERR_NOT_FINITE));
            if (!expect && before.parent) expect = BIT(IK_ERR_ATTACHED);
            st = CORE(ik_chain2d_set_base(c, v[0], v[1], v[2]));
        } else {
            expect = coord_errors(v, 3);
            if (!expect) expect = quat_errors(v + 3);
            if (!expect && before.parent) expect = BIT(IK_ERR_ATTACHED);
            st = CORE(ik_chain3d_set_base(c, v, v + 3));
        }
        break;
    case OP_SET_LENGTH:
        what = "set_length";
        i = take_u8(r) % s->n;
        v[0] = take_length(r);
        expect = length_errors(v[0]);
        keep = P_BASE | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
        st = CORE(ik_chain_set_length(c, i, v[0]));
        if (st == IK_OK) s->lengths[i] = v[0] + 0.0;
        break;
    case OP_SET_WEIGHT:
        what = "set_weight";
        i = take_u8(r) % (s->n + 1);
        v[0] = take_u8(r) < 128 ? take_u8(r) / 16.0 : take_real(r);
        expect = !isfinite(v[0]) ? BIT(IK_ERR_NOT_FINITE) : v[0] < 0 ? BIT(IK_ERR_NEGATIVE) : 0;
        keep = P_ALL & ~P_WEIGHT;
        st = CORE(ik_chain_set_weight(c, i, v[0]));
        break;
    case OP_SOLVE_CHAIN: {
        ik_result res;
        int kept = take_u8(r) < 64;
        what = "solve";
        take_target(r, s, v);
        expect = solve_errors(s, ik_chain_settings(c)->solver, kept ? NULL : v);
        keep = P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_PARENT | P_BASE | (kept ? P_GOALS : 0);
        if (trace) {
            const ik_settings *set = ik_chain_settings(c);
            fprintf(stderr, "  solver %d, target %.17g %.17g %.17g%s, mix %g, max_turn %g, stretch %d\n",
                    set->solver, v[0], v[1], v[2], kept ? " (kept)" : "", set->mix, set->max_turn,
                    set->stretch);
            for (i = 0; i <= s->n; i++) {
                ik_real j[3];
                joint3(s, i, j);
                fprintf(stderr, "  joint %d: %.17g %.17g %.17g\n", i, j[0], j[1], j[2]);
            }
            for (i = 0; i < s->n && s->dim == 3; i++) {
                ik_real q[4];
                ik_chain3d_rotation(c, i, q);
                fprintf(stderr, "  rotation %d: %.17g %.17g %.17g %.17g\n", i, q[0], q[1], q[2], q[3]);
            }
            for (i = 0; i < s->n; i++) fprintf(stderr, "  length %d: %.17g\n", i, s->lengths[i]);
        }
        st = CORE(ik_chain_solve(c, kept ? NULL : v, &res));
        if (st == IK_OK) {
            CHECK(isfinite(res.distance) && res.distance >= 0, "solve: distance %g", res.distance);
            solved = 1;
        }
        break;
    }
    case OP_DETACH:
        what = "detach";
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS;
        CORE_VOID(ik_chain_detach(c));
        CHECK(ik_chain_parent(c, &k) == NULL && k == 0, "detach: still attached");
        if (before.parent) links[s - slots]++;
        break;
    case OP_ATTACH: {
        slot *p = &slots[take_u8(r) % count_of_slots];
        int joint = take_u8(r) % (p->n + 2); /* now and then one past the tip */
        ik_chain *x;
        what = "attach";
        take_rotation(r, v);
        v[4] = take_angle(r);
        if (s->dim != p->dim)
            expect = BIT(IK_ERR_DIMENSION);
        else if (joint > p->n)
            expect = BIT(IK_ERR_INDEX);
        else if (before.parent)
            expect = BIT(IK_ERR_ATTACHED);
        for (x = p->chain; !expect && x; x = ik_chain_parent(x, NULL))
            if (x == c) expect = BIT(IK_ERR_CYCLE);
        if (!expect && s->dim == 2 && !isfinite(v[4])) expect = BIT(IK_ERR_NOT_FINITE);
        if (!expect && s->dim == 3) expect = quat_errors(v);
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS;
        st = CORE(s->dim == 2 ? ik_chain2d_attach(c, p->chain, joint, v[4])
                              : ik_chain3d_attach(c, p->chain, joint, v));
        if (st == IK_OK) links[s - slots]++;
        break;
    }
    case OP_ATTACH_TIP: {
        slot *p = &slots[take_u8(r) % count_of_slots];
        int joint = take_u8(r) % (p->n + 2), offset = take_u8(r) < 96;
        what = "attach_tip";
        for (k = 0; k < 3; k++) v[k] = take_u8(r) < 192 ? (ik_real)(int8_t)take_u8(r) / 16 : take_real(r);
        if (s->dim != p->dim)
            expect = BIT(IK_ERR_DIMENSION);
        else if (p == s)
            expect = BIT(IK_ERR_SELF);
        else if (joint > p->n)
            expect = BIT(IK_ERR_INDEX);
        else if (ik_chain_tip_parent(c, NULL, NULL))
            expect = BIT(IK_ERR_TIP_HELD);
        else if (offset)
            expect = coord_errors(v, s->dim);
        keep = P_ALL & ~P_GOALS;
        st = CORE(ik_chain_attach_tip(c, p->chain, joint, offset ? v : NULL));
        if (st == IK_OK) {
            ik_real t[3] = {0, 0, 0}, q[3];
            int j;
            holds[s - slots]++;
            CHECK(ik_chain_tip_parent(c, &j, NULL) == p->chain && j == joint, "attach_tip: tip_parent");
            has_target(s, t);
            joint3(p, joint, q);
            if (!offset)
                CHECK(t[0] == q[0] && t[1] == q[1] && (s->dim == 2 || t[2] == q[2]),
                      "attach_tip: the target is not the held joint");
        }
        break;
    }
    case OP_DETACH_TIP:
        what = "detach_tip";
        keep = P_ALL & ~P_GOALS;
        if (ik_chain_tip_parent(c, NULL, NULL)) holds[s - slots]++;
        CORE_VOID(ik_chain_detach_tip(c));
        CHECK(ik_chain_tip_parent(c, NULL, NULL) == NULL, "detach_tip: still held");
        break;
    }
    if (expect) {
        CHECK((BIT(st) & expect) != 0, "%s: status %d, expected %#llx", what, st, expect);
        check_untouched(&sn, what);
        s->in_limits = was_in_limits;
    } else {
        CHECK(st == IK_OK, "%s: status %d, expected IK_OK", what, st);
        observe(s, &now);
        check_kept(&before, &now, keep, what);
        if (solved) s->in_limits = 1;
    }
    drop_snapshot(&sn);
    check_all_sound(what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r;
    int ops;
    r.p = data, r.n = size;
    trace = getenv("IK_FUZZ_TRACE") != NULL;
    build(&r);
    for (ops = 0; ops < MAX_OPS && r.n > 0; ops++) operate(&r);
    release_all();
    return 0;
}
