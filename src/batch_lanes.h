/*
 * batch_lanes.h - the two FABRIK passes of batch.c over a group of chains laid side by side,
 * written once over a vector of LANES_W doubles and included by batch.c once per instruction
 * set, with these defined:
 *
 *   LANES_NAME(f)   the function's name for this instruction set
 *   LANES_TARGET    the function attribute that enables it (or nothing)
 *   LANES_W         doubles in a vector
 *   V               the vector type; V_LOAD, V_STORE (aligned), V_ADD, V_SUB, V_MUL, V_DIV,
 *                   V_SQRT, V_MIN, V_MAX its operations, each exactly rounded as the scalar one;
 *                   V_SET1(x) x in every lane
 *   V_OUT_D(d)      the bits (lane 0 the lowest) of the lanes where d is not in (1e-300,
 *                   1e300); V_OUT_Q(q) where q is not in [1e-150, 1e300]
 *   V_XY_LOAD(p, at, &x, &y)  the pairs (x, y) at p[l] + at, lane l's, into a vector of the
 *                   x and one of the y; V_XY_STORE(p, at, x, y) back
 *
 * The arithmetic is ik_fab_step2 / ik_fab_step3's, in the same order, so each lane computes
 * the bits ik_fabrik computes for its chain; a lane that needs the slow step takes it from
 * the scalar code. The fast step runs in every lane first, so a slow lane's numbers are held
 * within the fast step's range (STEP_D, STEP_Q: the same bits in a fast lane), where no
 * 0 * inf or inf / inf makes a NaN (coinciding joints, d == 0, raised FE_INVALID). The passes end with each lane's tip distance from its target, as
 * ik_joint_distance computes it (ik_v2_len, ik_v3_len: hypot where the square would
 * overflow or underflow).
 */

/* d and q as the fast step has them, a slow lane's held within range (see the top). */
#define STEP_D(d) V_MIN(V_MAX(d, V_SET1(1e-300)), V_SET1(1e300))
#define STEP_Q(len, d) V_MIN(V_DIV(len, STEP_D(d)), V_SET1(1e301)) /* still out if it was */

/* Lanes of the vector at lane `first` that hold a chain (the last vector may be partly empty). */
static inline int LANES_NAME(used)(const group *g, int first)
{
    int left = g->live - first;
    return left >= LANES_W ? (1 << LANES_W) - 1 : (1 << left) - 1;
}

/* The scalar step for the lanes in `slow` (bits) of the vector at lane `first`, patched in;
   a lane without a chain (past live) does not move, so its numbers stay finite (an inf left
   there would make inf - inf in the next pass). */
static void LANES_NAME(patch)(const group *g, int bone, int first, int slow, ik_real *wx, ik_real *wy,
                                           ik_real *wz, ik_real *sx, ik_real *sy, ik_real *sz)
{
    int l, used = LANES_NAME(used)(g, first);
    for (l = 0; l < LANES_W; l++) {
        const ik_chain *c;
        ik_real len;
        if (!(slow >> l & 1)) continue;
        if (!(used >> l & 1)) { /* no chain: the lane stays where it is, finite */
            sx[l] = sy[l] = 0;
            if (sz) sz[l] = 0;
            continue;
        }
        c = g->fab[first + l]->c;
        len = g->len[(size_t)bone * g->cap + first + l];
        if (g->dim == 2) {
            ik_vec2 s = ik_fab_step2_slow(ik_v2(wx[l], wy[l]), len, c->dir + 2 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y;
        } else {
            ik_vec3 s = ik_fab_step3_slow(ik_v3(wx[l], wy[l], wz[l]), len, c->dir + 3 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y, sz[l] = s.z;
        }
    }
}

/* The steps s of the vector at lane `first` (bone `bone`, segments w) with the slow lanes' patched in. */
static LANES_TARGET void LANES_NAME(fix2)(const group *g, int bone, int first, int slow, V wx, V wy, V *sx, V *sy)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], bx[LANES_W], by[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(bx, *sx), V_STORE(by, *sy);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, NULL, bx, by, NULL);
    *sx = V_LOAD(bx), *sy = V_LOAD(by);
}

static LANES_TARGET void LANES_NAME(fix3)(const group *g, int bone, int first, int slow, V wx, V wy, V wz, V *sx,
                                          V *sy, V *sz)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], az[LANES_W], bx[LANES_W], by[LANES_W], bz[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(az, wz), V_STORE(bx, *sx), V_STORE(by, *sy), V_STORE(bz, *sz);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, az, bx, by, bz);
    *sx = V_LOAD(bx), *sy = V_LOAD(by), *sz = V_LOAD(bz);
}

static LANES_TARGET void LANES_NAME(passes2)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y;
    const ik_real *len = g->len;
    int i, k;
    /* Backward: the tip on the target, each joint at its bone's length from the next. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py));
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
        }
    }
    /* Forward: joint 0 back on the base, each joint at its bone's length from the one before. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy);
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V d = V_ADD(V_MUL(dx, dx), V_MUL(dy, dy));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1) g->dist[k + l] = hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]);
    }
}

static LANES_TARGET void LANES_NAME(passes3)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y, *z = g->z;
    const ik_real *len = g->len;
    int i, k;
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
        V_STORE(z + g->n * cap + k, V_LOAD(g->tz + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap), nz = V_LOAD(pz + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py)), wz = V_SUB(nz, V_LOAD(pz));
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
            V_STORE(pz, V_SUB(nz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
        V_STORE(z + k, V_LOAD(g->bz + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py), fz = V_LOAD(pz);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy), wz = V_SUB(V_LOAD(pz + cap), fz);
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
            V_STORE(pz + cap, V_ADD(fz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V dz = V_SUB(V_LOAD(g->tz + k), V_LOAD(z + g->n * cap + k));
        V d = V_ADD(V_ADD(V_MUL(dx, dx), V_MUL(dy, dy)), V_MUL(dz, dz));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1)
                g->dist[k + l] = hypot(hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]),
                                       g->tz[k + l] - z[g->n * cap + k + l]);
    }
}

#undef STEP_D
#undef STEP_Q

/*
 * The closed-form 2D tracking step (joint_space.c's free_step2, then the forward kinematics
 * ik_chain_fk does after it) on `used` chains of n bones at once, all their bones: the same
 * operations in the same order, so each lane ends with the bits the chain's own step leaves.
 * The chains lie side by side in the scratch (STEP_REALS(n, cap) doubles, aligned), joint j
 * of lane l at x[j * cap + l], cap lanes (used rounded up to whole vectors, the rest copies
 * of lane 0: numbers a step made); each loop runs over the bones, and over the vectors within
 * a bone, so the vectors' forward kinematics (each bone waits for the one before it) overlap.
 * A lane whose step would not have been taken (the scalar step returns 0 and touches
 * nothing) is left out: stepped[l] 0; its numbers are held finite (det taken as 1), so no
 * lane makes a NaN.
 */
static LANES_TARGET void LANES_NAME(free2)(ik_steps *const *s, int used, int n, int cap, ik_real *scratch, int *stepped)
{
    const size_t w = (size_t)cap;
    ik_real *jx = scratch, *jy = jx + (n + 1) * w, *ux = jy + (n + 1) * w, *uy = ux + n * w;
    ik_real *len = uy + n * w, *ox = len + n * w, *oy = ox + (n + 1) * w, *dx = oy + (n + 1) * w;
    ik_real *dy = dx + n * w, *lane = dy + n * w; /* lane: STEP_LANE numbers a lane, below */
    /* dx, dy: each bone's lever (made once, read by the three loops over the bones), then,
       in the last loop, its new world direction */
    ik_real *unit = lane, *e0 = unit + w, *e1 = e0 + w, *a = e1 + w, *b = a + w, *d = b + w;
    ik_real *y0 = d + w, *y1 = y0 + w, *big = y1 + w, *scale = big + w, *px = scale + w, *py = px + w;
    const V half = V_SET1(0.5), one = V_SET1(1), zero = V_SET1(0), two = V_SET1(2), three = V_SET1(3);
    int j, l, k;
    for (k = 0; k < cap; k += LANES_W) {
        const ik_real *pj[LANES_W], *pt[LANES_W];
        V x, y;
        for (l = 0; l < LANES_W; l++) {
            const ik_chain *c = s[k + l < used ? k + l : 0]->c;
            pj[l] = c->joint, pt[l] = &c->turn[0].x; /* (x, y) pairs both */
        }
        for (j = 0; j <= n; j++) {
            V_XY_LOAD(pj, 2 * (size_t)j, &x, &y);
            V_STORE(jx + j * w + k, x), V_STORE(jy + j * w + k, y);
        }
        for (j = 0; j < n; j++) {
            V_XY_LOAD(pt, 2 * (size_t)j, &x, &y);
            V_STORE(ux + j * w + k, x), V_STORE(uy + j * w + k, y);
        }
    }
    for (l = 0; l < cap; l++) {
        const ik_steps *t = s[l < used ? l : 0];
        const ik_chain *c = t->c;
        const ik_real *length = c->length, scale_c = c->scale; /* read once (len may alias them) */
        for (j = 0; j < n; j++) len[j * w + l] = length[j] * scale_c;
        unit[l] = t->rows.unit, e0[l] = t->rows.e[0], e1[l] = t->rows.e[1];
        a[l] = d[l] = t->lambda2, b[l] = 0, big[l] = 0;
        px[l] = c->base_turn.x, py[l] = c->base_turn.y, ox[l] = c->base.x, oy[l] = c->base.y;
    }
    for (j = 0; j < n; j++) { /* the columns (-r.y, r.x), r the lever in reaches */
        for (k = 0; k < cap; k += LANES_W) {
            V u = V_LOAD(unit + k);
            V rx = V_MUL(V_SUB(V_LOAD(jx + n * w + k), V_LOAD(jx + j * w + k)), u);
            V ry = V_MUL(V_SUB(V_LOAD(jy + n * w + k), V_LOAD(jy + j * w + k)), u);
            V_STORE(dx + j * w + k, rx), V_STORE(dy + j * w + k, ry); /* kept for the loops below */
            V_STORE(a + k, V_ADD(V_LOAD(a + k), V_MUL(ry, ry)));
            V_STORE(b + k, V_SUB(V_LOAD(b + k), V_MUL(ry, rx)));
            V_STORE(d + k, V_ADD(V_LOAD(d + k), V_MUL(rx, rx)));
        }
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k);
        V_STORE(y0 + k, V_SUB(V_MUL(av, dv), V_MUL(bv, bv))); /* det, for now */
    }
    for (l = 0; l < cap; l++) {
        stepped[l] = y0[l] > 0 && isfinite(y0[l]);
        if (!stepped[l]) y0[l] = 1;
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k), det = V_LOAD(y0 + k);
        V ev = V_LOAD(e0 + k), fv = V_LOAD(e1 + k);
        V_STORE(y0 + k, V_DIV(V_SUB(V_MUL(dv, ev), V_MUL(bv, fv)), det));
        V_STORE(y1 + k, V_DIV(V_SUB(V_MUL(av, fv), V_MUL(bv, ev)), det));
    }
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k);
            V t = V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k)));
            V_STORE(big + k, V_MAX(V_LOAD(big + k), V_MAX(t, V_SUB(zero, t)))); /* |t| */
        }
    }
    for (l = 0; l < cap; l++) {
        if (!(big[l] > 1e-15)) stepped[l] = 0;
        scale[l] = big[l] > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / big[l] : 1;
    }
    /* Each bone's turn from the old joints, then its world data and the joint after it (into
       ox, oy: the next bone's lever still reads the old joint). */
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k); /* then its world turn */
            V h = V_MUL(V_MUL(V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k))), V_LOAD(scale + k)), half);
            V hh = V_MUL(h, h), kk = V_DIV(one, V_ADD(one, hh));
            V cx = V_MUL(V_SUB(one, hh), kk), cy = V_MUL(V_MUL(two, h), kk);
            V tx = V_LOAD(ux + j * w + k), ty = V_LOAD(uy + j * w + k), pxv = V_LOAD(px + k), pyv = V_LOAD(py + k);
            V nx = V_SUB(V_MUL(cx, tx), V_MUL(cy, ty)), ny = V_ADD(V_MUL(cy, tx), V_MUL(cx, ty));
            V q = V_MUL(V_SUB(three, V_ADD(V_MUL(nx, nx), V_MUL(ny, ny))), half), wx, wy, step;
            nx = V_MUL(nx, q), ny = V_MUL(ny, q);
            V_STORE(ux + j * w + k, nx), V_STORE(uy + j * w + k, ny);
            /* the world turn: the parent's rotated by the new local one */
            wx = V_SUB(V_MUL(pxv, nx), V_MUL(pyv, ny)), wy = V_ADD(V_MUL(pyv, nx), V_MUL(pxv, ny));
            q = V_MUL(V_SUB(three, V_ADD(V_MUL(wx, wx), V_MUL(wy, wy))), half);
            wx = V_MUL(wx, q), wy = V_MUL(wy, q);
            step = V_LOAD(len + j * w + k);
            V_STORE(px + k, wx), V_STORE(py + k, wy);
            V_STORE(dx + j * w + k, wx), V_STORE(dy + j * w + k, wy);
            V_STORE(ox + (j + 1) * w + k, V_ADD(V_LOAD(ox + j * w + k), V_MUL(wx, step)));
            V_STORE(oy + (j + 1) * w + k, V_ADD(V_LOAD(oy + j * w + k), V_MUL(wy, step)));
        }
    }
    /* Back into the chains that stepped: a vector at a time where all its lanes did. */
    for (k = 0; k < used; k += LANES_W) {
        int whole = k + LANES_W <= used;
        for (l = 0; l < LANES_W && whole; l++) whole = stepped[k + l];
        if (whole) {
            ik_real *pj[LANES_W], *pt[LANES_W], *pd[LANES_W];
            for (l = 0; l < LANES_W; l++) {
                ik_chain *c = s[k + l]->c;
                pj[l] = c->joint, pt[l] = &c->turn[0].x, pd[l] = c->dir;
                for (j = 0; j < n; j++) c->angle[j] = IK_ANGLE_UNKNOWN;
                c->stale_from = c->n;
            }
            for (j = 0; j < n; j++) {
                V_XY_STORE(pt, 2 * (size_t)j, V_LOAD(ux + j * w + k), V_LOAD(uy + j * w + k));
                V_XY_STORE(pd, 2 * (size_t)j, V_LOAD(dx + j * w + k), V_LOAD(dy + j * w + k));
            }
            for (j = 0; j <= n; j++) V_XY_STORE(pj, 2 * (size_t)j, V_LOAD(ox + j * w + k), V_LOAD(oy + j * w + k));
            continue;
        }
        for (l = k; l < k + LANES_W && l < used; l++) {
            ik_chain *c = s[l]->c;
            if (!stepped[l]) continue;
            for (j = 0; j < n; j++) {
                c->turn[j] = ik_v2(ux[j * w + l], uy[j * w + l]);
                c->angle[j] = IK_ANGLE_UNKNOWN;
                c->dir[2 * j] = dx[j * w + l], c->dir[2 * j + 1] = dy[j * w + l];
            }
            for (j = 0; j <= n; j++) c->joint[2 * j] = ox[j * w + l], c->joint[2 * j + 1] = oy[j * w + l];
            c->stale_from = c->n;
        }
    }
}
