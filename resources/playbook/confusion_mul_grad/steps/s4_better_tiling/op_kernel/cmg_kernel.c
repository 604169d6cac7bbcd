/*
 * ConfusionMulGrad kernel - playbook step s4_better_tiling.
 *
 * s3 handled a column reduction (output1 kept along the row, rows reduced: the LayerNorm-grad
 * dgamma shape) one row at a time: acc[j] += (double)(x1[j] * x2[j]) for the whole C-wide row,
 * i.e. a float->double conversion plus a read-modify-write of a double per element. For a
 * [4096, 1024] input that is 4M double updates on an 8 KiB accumulator row.
 *
 * The tiling (op_host) now plans the column layout [groups, G, C] (see U_* below): rows are summed
 * into a float partial tile of W columns (float multiply and add, 4 lanes per SSE instruction),
 * the tile is folded into the double accumulators every F rows, and W is chosen so the tile and a
 * broadcast input0 row stay in L1 while input1/input2/output0 rows stream past. output0 is
 * written in the same pass. The tile lives in the workspace, sized by the tiling.
 *
 * Precision: each float partial adds at most F products (F = 256: relative error < 1.5e-5 even
 * when all terms share a sign); the folds are double. float16 and every other layout keep s3's
 * row path (VB float lanes per CHUNK, folded into double).
 */
#include <string.h>

#include "cmg_abi.h"
#include "cmg_half.h"

#define VB 16      /* float lanes per block: a multiple of the SSE width (4 floats) */
#define CHUNK 1024 /* elements per float partial sum (a multiple of VB); also the float16 strip */

/* Column-reduction plan written by the tiling into user[] (mirrors op_host/cmg_tiling.c). */
#define U_COLUMN 0     /* 1: run the [groups, G, C] column path */
#define U_TILE_W 1     /* float partial tile width W, in columns */
#define U_FOLD_ROWS 2  /* rows summed in float before a fold into double */
#define U_TILE_OFF 3   /* byte offset of the float tile in the workspace */

/* Helpers called with constant flags are forced inline so each call site gets its own loop. */
#define INLINE static inline __attribute__((always_inline))

/* ---- float32 rows -------------------------------------------------------------------------- */

/* Sum of VB float lanes, pairwise (a tree, not a running sum). */
static float lanes_sum(const float* v) {
    float s[VB / 2];
    for (int k = 0; k < VB / 2; k++) {
        s[k] = v[k] + v[k + VB / 2];
    }
    for (int w = VB / 4; w >= 1; w /= 2) {
        for (int k = 0; k < w; k++) {
            s[k] += s[k + w];
        }
    }
    return s[0];
}

/* o[i] = a[i*sa] * b[i*sb]. */
static void mul_row(float* restrict o, const float* restrict a, int64_t sa,
                    const float* restrict b, int64_t sb, int64_t n) {
    int64_t i = 0;
    if (sa == 1 && sb == 1) {
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = a[i + k] * b[i + k];
            }
        }
        for (; i < n; i++) {
            o[i] = a[i] * b[i];
        }
    } else if ((sa == 0 && sb == 1) || (sa == 1 && sb == 0)) {
        const float* restrict v = sa ? a : b;
        const float x = sa ? b[0] : a[0];
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = v[i + k] * x; /* float multiply is commutative: same bits as a*b */
            }
        }
        for (; i < n; i++) {
            o[i] = v[i] * x;
        }
    } else if (sa == 0 && sb == 0) {
        const float x = a[0] * b[0];
        for (; i < n; i++) {
            o[i] = x;
        }
    } else {
        for (; i < n; i++) {
            o[i] = a[i * sa] * b[i * sb];
        }
    }
}

/* sum(a[i] * b[i]) over a contiguous row: float lanes per CHUNK, double across chunks. */
static double dot_contig(const float* restrict a, const float* restrict b, int64_t n) {
    double total = 0.0;
    int64_t i = 0;
    while (i < n) {
        const int64_t end = n - i > CHUNK ? i + CHUNK : n;
        float acc[VB] = {0};
        for (; i + VB <= end; i += VB) {
            for (int k = 0; k < VB; k++) {
                acc[k] += a[i + k] * b[i + k];
            }
        }
        float tail = 0.0f;
        for (; i < end; i++) {
            tail += a[i] * b[i];
        }
        total += (double)(lanes_sum(acc) + tail);
    }
    return total;
}

/* sum(v[i]) over a contiguous row, same blocking. */
static double sum_contig(const float* restrict v, int64_t n) {
    double total = 0.0;
    int64_t i = 0;
    while (i < n) {
        const int64_t end = n - i > CHUNK ? i + CHUNK : n;
        float acc[VB] = {0};
        for (; i + VB <= end; i += VB) {
            for (int k = 0; k < VB; k++) {
                acc[k] += v[i + k];
            }
        }
        float tail = 0.0f;
        for (; i < end; i++) {
            tail += v[i];
        }
        total += (double)(lanes_sum(acc) + tail);
    }
    return total;
}

/* sum(a[i*sa] * b[i*sb]); a broadcast factor moves out of the sum (exact in double up to one
 * rounding, far inside the tolerance). */
static double dot_row(const float* a, int64_t sa, const float* b, int64_t sb, int64_t n) {
    if (sa == 1 && sb == 1) {
        return dot_contig(a, b, n);
    }
    if ((sa == 0 && sb == 1) || (sa == 1 && sb == 0)) {
        return (double)(sa ? b[0] : a[0]) * sum_contig(sa ? a : b, n);
    }
    if (sa == 0 && sb == 0) {
        return (double)n * ((double)a[0] * (double)b[0]);
    }
    double s = 0.0; /* strided fallback, not a hot path: double running sum */
    for (int64_t i = 0; i < n; i++) {
        s += (double)(a[i * sa] * b[i * sb]);
    }
    return s;
}

/* acc[i*so] += a[i*sa] * b[i*sb] (so != 0). */
static void axpy_row(double* restrict acc, int64_t so, const float* restrict a, int64_t sa,
                     const float* restrict b, int64_t sb, int64_t n) {
    int64_t i = 0;
    if (so == 1 && sa == 1 && sb == 1) {
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                acc[i + k] += (double)(a[i + k] * b[i + k]);
            }
        }
        for (; i < n; i++) {
            acc[i] += (double)(a[i] * b[i]);
        }
    } else if (so == 1 && ((sa == 0 && sb == 1) || (sa == 1 && sb == 0))) {
        const float* restrict v = sa ? a : b;
        const float x = sa ? b[0] : a[0];
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                acc[i + k] += (double)(x * v[i + k]);
            }
        }
        for (; i < n; i++) {
            acc[i] += (double)(x * v[i]);
        }
    } else {
        for (; i < n; i++) {
            acc[i * so] += (double)(a[i * sa] * b[i * sb]);
        }
    }
}

/* Fused row, output1 reduced along it: o = x0*x1, returns sum(x1*x2); x1, x2 contiguous,
 * x0 contiguous (s0 = 1) or broadcast (s0 = 0). */
static double fused_dot(float* restrict o, const float* restrict x0, int64_t s0,
                        const float* restrict x1, const float* restrict x2, int64_t n) {
    double total = 0.0;
    int64_t i = 0;
    while (i < n) {
        const int64_t end = n - i > CHUNK ? i + CHUNK : n;
        float acc[VB] = {0};
        if (s0) {
            for (; i + VB <= end; i += VB) {
                for (int k = 0; k < VB; k++) {
                    o[i + k] = x0[i + k] * x1[i + k];
                    acc[k] += x1[i + k] * x2[i + k];
                }
            }
        } else {
            const float x = x0[0];
            for (; i + VB <= end; i += VB) {
                for (int k = 0; k < VB; k++) {
                    o[i + k] = x * x1[i + k];
                    acc[k] += x1[i + k] * x2[i + k];
                }
            }
        }
        float tail = 0.0f;
        for (; i < end; i++) {
            o[i] = x0[i * s0] * x1[i];
            tail += x1[i] * x2[i];
        }
        total += (double)(lanes_sum(acc) + tail);
    }
    return total;
}

/* Fused row, output1 kept along it (column reduction): o = x0*x1, acc += x1*x2. */
static void fused_axpy(float* restrict o, double* restrict acc, const float* restrict x0,
                       int64_t s0, const float* restrict x1, const float* restrict x2, int64_t n) {
    int64_t i = 0;
    if (s0) {
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = x0[i + k] * x1[i + k];
                acc[i + k] += (double)(x1[i + k] * x2[i + k]);
            }
        }
    } else {
        const float x = x0[0];
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = x * x1[i + k];
                acc[i + k] += (double)(x1[i + k] * x2[i + k]);
            }
        }
    }
    for (; i < n; i++) {
        o[i] = x0[i * s0] * x1[i];
        acc[i] += (double)(x1[i] * x2[i]);
    }
}

/* output1 part of a row: reduced (so == 0: acc[0] += dot) or kept (acc[i*so] += ...). */
static void reduce_row(double* acc, int64_t so, const float* a, int64_t sa, const float* b,
                       int64_t sb, int64_t n) {
    if (so == 0) {
        acc[0] += dot_row(a, sa, b, sb, n);
    } else {
        axpy_row(acc, so, a, sa, b, sb, n);
    }
}

/* One row of the fused space: output0 (contiguous) and output1 together. */
static void fused_row(float* o, double* acc, int64_t so, const float* x0, int64_t s0,
                      const float* x1, int64_t s1, const float* x2, int64_t s2, int64_t n) {
    if (s1 == 1 && s2 == 1 && (s0 == 0 || s0 == 1) && (so == 0 || so == 1)) {
        if (so == 0) {
            acc[0] += fused_dot(o, x0, s0, x1, x2, n);
        } else {
            fused_axpy(o, acc, x0, s0, x1, x2, n);
        }
        return;
    }
    /* Other layouts (input1 or input2 broadcast along the row): strip-mine so the second loop
     * re-reads the strip of x1 from L1. */
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        mul_row(o + i, x0 + i * s0, s0, x1 + i * s1, s1, m);
        reduce_row(acc + i * so, so, x1 + i * s1, s1, x2 + i * s2, s2, m);
    }
}

/* ---- float16: widen a strip to float, reuse the float rows ---------------------------------- */

/* Widen m elements at stride s into buf; returns the float stride (0 keeps a broadcast). */
static int64_t widen(float* buf, const cmg_half* p, int64_t s, int64_t m) {
    if (s == 0) {
        buf[0] = cmg_half_to_float(p[0]);
        return 0;
    }
    for (int64_t i = 0; i < m; i++) {
        buf[i] = cmg_half_to_float(p[i * s]);
    }
    return 1;
}

static void narrow(cmg_half* o, const float* v, int64_t m) {
    for (int64_t i = 0; i < m; i++) {
        o[i] = cmg_float_to_half(v[i]); /* a product of two halves is exact in float */
    }
}

static void mul_row_h(cmg_half* o, const cmg_half* a, int64_t sa, const cmg_half* b, int64_t sb,
                      int64_t n) {
    float fa[CHUNK], fb[CHUNK], fo[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        int64_t ta = widen(fa, a + i * sa, sa, m), tb = widen(fb, b + i * sb, sb, m);
        mul_row(fo, fa, ta, fb, tb, m);
        narrow(o + i, fo, m);
    }
}

static void reduce_row_h(double* acc, int64_t so, const cmg_half* a, int64_t sa,
                         const cmg_half* b, int64_t sb, int64_t n) {
    float fa[CHUNK], fb[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        int64_t ta = widen(fa, a + i * sa, sa, m), tb = widen(fb, b + i * sb, sb, m);
        reduce_row(acc + i * so, so, fa, ta, fb, tb, m);
    }
}

static void fused_row_h(cmg_half* o, double* acc, int64_t so, const cmg_half* x0, int64_t s0,
                        const cmg_half* x1, int64_t s1, const cmg_half* x2, int64_t s2,
                        int64_t n) {
    float f0[CHUNK], f1[CHUNK], f2[CHUNK], fo[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t m = n - i < CHUNK ? n - i : CHUNK;
        int64_t t0 = widen(f0, x0 + i * s0, s0, m), t1 = widen(f1, x1 + i * s1, s1, m);
        int64_t t2 = widen(f2, x2 + i * s2, s2, m);
        fused_row(fo, acc + i * so, so, f0, t0, f1, t1, f2, t2, m);
        narrow(o + i, fo, m);
    }
}

/* ---- row walker ---------------------------------------------------------------------------- */

/* Operand offsets of the current row; dims 0..rank-2 advance like an odometer. */
typedef struct {
    int32_t rank;
    const int64_t* shape;
    int nops;
    const int64_t* stride[4];
    int64_t idx[CMG_MAX_DIMS];
    int64_t off[4];
} RowWalk;

static void walk_init(RowWalk* w, int32_t rank, const int64_t* shape, int nops,
                      const int64_t* const* strides) {
    w->rank = rank;
    w->shape = shape;
    w->nops = nops;
    for (int k = 0; k < nops; k++) {
        w->stride[k] = strides[k];
        w->off[k] = 0;
    }
    memset(w->idx, 0, sizeof w->idx);
}

static void walk_next(RowWalk* w) {
    for (int32_t d = w->rank - 2; d >= 0; d--) {
        for (int k = 0; k < w->nops; k++) {
            w->off[k] += w->stride[k][d];
        }
        if (++w->idx[d] < w->shape[d]) {
            return;
        }
        for (int k = 0; k < w->nops; k++) {
            w->off[k] -= w->stride[k][d] * w->shape[d];
        }
        w->idx[d] = 0;
    }
}

static int64_t rows_of(int32_t rank, const int64_t* shape) {
    int64_t rows = 1;
    for (int32_t d = 0; d + 1 < rank; d++) {
        rows *= shape[d];
    }
    return rows;
}

/* ---- column reductions: float partial tile in L1, folded into double ---------------------- */

/* One row segment into the tile: pt[j] += x1[j] * x2[j] and, when with_out0, o[j] = x0 * x1[j]
 * (x0 contiguous when s0, else one broadcast value). Constant flags at every call site. */
INLINE void col_row(float* restrict o, float* restrict pt, const float* restrict x0, int s0,
                    const float* restrict x1, const float* restrict x2, int64_t m, int with_out0) {
    const float x = x0 ? x0[0] : 0.0f;
    int64_t j = 0;
    for (; j + VB <= m; j += VB) {
        for (int k = 0; k < VB; k++) {
            if (with_out0) {
                o[j + k] = (s0 ? x0[j + k] : x) * x1[j + k];
            }
            pt[j + k] += x1[j + k] * x2[j + k];
        }
    }
    for (; j < m; j++) {
        if (with_out0) {
            o[j] = (s0 ? x0[j] : x) * x1[j];
        }
        pt[j] += x1[j] * x2[j];
    }
}

/* acc[j] += pt[j]: the fold into double. */
static void fold_tile(double* restrict acc, const float* restrict pt, int64_t m) {
    int64_t j = 0;
    for (; j + VB <= m; j += VB) {
        for (int k = 0; k < VB; k++) {
            acc[j + k] += (double)pt[j + k];
        }
    }
    for (; j < m; j++) {
        acc[j] += (double)pt[j];
    }
}

/* Column path: the product space is [groups..., G, C] with C kept and contiguous, G reduced.
 * out0 == NULL when output0 is not fused into this space. */
static void column_pass(const CmgTiling* t, const float* in0, const float* in1, const float* in2,
                        float* out0, double* acc, float* pt) {
    const int32_t r = t->rank1;
    const int64_t cols = t->shape1[r - 1], g_rows = t->shape1[r - 2];
    const int64_t tile_w = t->user[U_TILE_W], fold = t->user[U_FOLD_ROWS];
    const int64_t s0 = out0 ? t->in0_stride0[r - 1] : 0;
    const int64_t step0 = out0 ? t->in0_stride0[r - 2] : 0;
    const int64_t step1 = t->in1_stride1[r - 2], step2 = t->in2_stride1[r - 2];
    /* The walker runs over the group dims 0..r-3; each group is G rows of C columns. Without
     * output0, in0_stride0 describes another space: slot 0 then just repeats input1's strides. */
    const int64_t* strides[4] = {out0 ? t->in0_stride0 : t->in1_stride1, t->in1_stride1,
                                 t->in2_stride1, t->out1_stride1};
    const int64_t groups = rows_of(r - 1, t->shape1);
    RowWalk w;
    walk_init(&w, r - 1, t->shape1, 4, strides);
    for (int64_t g = 0; g < groups; g++) {
        const float* x0g = out0 ? in0 + w.off[0] : NULL;
        const float* x1g = in1 + w.off[1];
        const float* x2g = in2 + w.off[2];
        float* og = out0 ? out0 + g * g_rows * cols : NULL;
        for (int64_t j0 = 0; j0 < cols; j0 += tile_w) {
            const int64_t m = cols - j0 < tile_w ? cols - j0 : tile_w;
            for (int64_t b0 = 0; b0 < g_rows; b0 += fold) {
                const int64_t b1 = g_rows - b0 < fold ? g_rows : b0 + fold;
                memset(pt, 0, (size_t)m * sizeof(float));
                for (int64_t i = b0; i < b1; i++) {
                    const float* x1 = x1g + i * step1 + j0;
                    const float* x2 = x2g + i * step2 + j0;
                    if (!og) {
                        col_row(NULL, pt, NULL, 0, x1, x2, m, 0);
                    } else if (s0) {
                        col_row(og + i * cols + j0, pt, x0g + i * step0 + j0, 1, x1, x2, m, 1);
                    } else {
                        col_row(og + i * cols + j0, pt, x0g + i * step0, 0, x1, x2, m, 1);
                    }
                }
                fold_tile(acc + w.off[3] + j0, pt, m);
            }
        }
        walk_next(&w);
    }
}

/* ---- passes -------------------------------------------------------------------------------- */

static void fused_pass(const CmgTiling* t, const void* in0, const void* in1, const void* in2,
                       void* out0, double* acc) {
    const int32_t r = t->rank1;
    const int64_t n = t->shape1[r - 1];
    const int64_t s0 = t->in0_stride0[r - 1], s1 = t->in1_stride1[r - 1];
    const int64_t s2 = t->in2_stride1[r - 1], so = t->out1_stride1[r - 1];
    const int64_t* strides[4] = {t->in0_stride0, t->in1_stride1, t->in2_stride1, t->out1_stride1};
    const int64_t rows = rows_of(r, t->shape1);
    RowWalk w;
    walk_init(&w, r, t->shape1, 4, strides);
    for (int64_t row = 0; row < rows; row++) {
        if (t->dtype == CMG_DTYPE_FLOAT16) {
            fused_row_h((cmg_half*)out0 + row * n, acc + w.off[3], so,
                        (const cmg_half*)in0 + w.off[0], s0, (const cmg_half*)in1 + w.off[1], s1,
                        (const cmg_half*)in2 + w.off[2], s2, n);
        } else {
            fused_row((float*)out0 + row * n, acc + w.off[3], so, (const float*)in0 + w.off[0],
                      s0, (const float*)in1 + w.off[1], s1, (const float*)in2 + w.off[2], s2, n);
        }
        walk_next(&w);
    }
}

static void out0_pass(const CmgTiling* t, const void* in0, const void* in1, void* out0) {
    const int32_t r = t->rank0;
    const int64_t n = t->shape0[r - 1];
    const int64_t s0 = t->in0_stride0[r - 1], s1 = t->in1_stride0[r - 1];
    const int64_t* strides[2] = {t->in0_stride0, t->in1_stride0};
    const int64_t rows = rows_of(r, t->shape0);
    RowWalk w;
    walk_init(&w, r, t->shape0, 2, strides);
    for (int64_t row = 0; row < rows; row++) {
        if (t->dtype == CMG_DTYPE_FLOAT16) {
            mul_row_h((cmg_half*)out0 + row * n, (const cmg_half*)in0 + w.off[0], s0,
                      (const cmg_half*)in1 + w.off[1], s1, n);
        } else {
            mul_row((float*)out0 + row * n, (const float*)in0 + w.off[0], s0,
                    (const float*)in1 + w.off[1], s1, n);
        }
        walk_next(&w);
    }
}

static void out1_pass(const CmgTiling* t, const void* in1, const void* in2, double* acc) {
    const int32_t r = t->rank1;
    const int64_t n = t->shape1[r - 1];
    const int64_t s1 = t->in1_stride1[r - 1], s2 = t->in2_stride1[r - 1];
    const int64_t so = t->out1_stride1[r - 1];
    const int64_t* strides[3] = {t->in1_stride1, t->in2_stride1, t->out1_stride1};
    const int64_t rows = rows_of(r, t->shape1);
    RowWalk w;
    walk_init(&w, r, t->shape1, 3, strides);
    for (int64_t row = 0; row < rows; row++) {
        if (t->dtype == CMG_DTYPE_FLOAT16) {
            reduce_row_h(acc + w.off[2], so, (const cmg_half*)in1 + w.off[0], s1,
                         (const cmg_half*)in2 + w.off[1], s2, n);
        } else {
            reduce_row(acc + w.off[2], so, (const float*)in1 + w.off[0], s1,
                       (const float*)in2 + w.off[1], s2, n);
        }
        walk_next(&w);
    }
}

void confusion_mul_grad(const void* in0, const void* in1, const void* in2, void* out0, void* out1,
                        void* workspace, const CmgTiling* t) {
    double* acc = (double*)workspace; /* arrives as 0xFF bytes: clear it on every call */
    memset(acc, 0, (size_t)t->out1_size * sizeof(double));
    if (t->user[U_COLUMN]) {
        float* pt = (float*)((char*)workspace + t->user[U_TILE_OFF]);
        if (t->fused) {
            column_pass(t, (const float*)in0, (const float*)in1, (const float*)in2, (float*)out0,
                        acc, pt);
        } else {
            out0_pass(t, in0, in1, out0);
            column_pass(t, NULL, (const float*)in1, (const float*)in2, NULL, acc, pt);
        }
    } else if (t->fused) {
        fused_pass(t, in0, in1, in2, out0, acc);
    } else {
        out0_pass(t, in0, in1, out0);
        out1_pass(t, in1, in2, acc);
    }
    if (t->dtype == CMG_DTYPE_FLOAT16) {
        for (int64_t k = 0; k < t->out1_size; k++) {
            ((cmg_half*)out1)[k] = cmg_float_to_half((float)acc[k]);
        }
    } else {
        for (int64_t k = 0; k < t->out1_size; k++) {
            ((float*)out1)[k] = (float)acc[k];
        }
    }
}
