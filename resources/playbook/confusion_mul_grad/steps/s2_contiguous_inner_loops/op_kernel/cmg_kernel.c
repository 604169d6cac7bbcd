/*
 * ConfusionMulGrad kernel - playbook step s2_contiguous_inner_loops.
 *
 * s1 walked every row with a generic strided loop: one scalar element per iteration, a
 * float->double conversion per operand, and (for reductions) a load and a store of the
 * accumulator per element because gcc cannot prove it does not alias the outputs.
 *
 * The tiling now coalesces the space (op_host), so the innermost dim of every operand has stride
 * 0 (broadcast) or 1 (contiguous). Each row is dispatched by layout class to a specialised loop:
 *
 *   mul_row    output0 row: a*b, a*x, x*b, fill                       (x = broadcast value)
 *   dot_row    output1 reduced along the row: sum(a*b), x*sum(b), n*x*y
 *   axpy_row   output1 kept along the row (column reduction): acc[i] += a*b, acc[i] += x*b
 *   fused_*    output0 and output1 in one loop over a fused row (x1 read once)
 *   scalar fallbacks for any other stride.
 *
 * The contiguous loops run in blocks of VB lanes with restrict pointers: gcc 12 at -O2 only
 * vectorizes loops whose trip count is a known multiple of the vector width ("very cheap" cost
 * model), so the fixed-size inner block is what becomes SSE code; the unknown-length outer loop
 * just steps blocks. Accumulation is still double (VB double lanes, exact products), so output1 is
 * as accurate as the baseline's. float16 rows are widened to float in CHUNK-element strips and go
 * through the same float loops.
 */
#include <string.h>

#include "cmg_abi.h"
#include "cmg_half.h"

#define VB 16      /* lanes per block: a multiple of the SSE width (4 floats, 2 doubles) */
#define CHUNK 1024 /* strip length for float16 widening and for composite rows */

/* ---- float32 rows -------------------------------------------------------------------------- */

/* Sum of VB double lanes, pairwise. */
static double lanes_sum_d(const double* v) {
    double s[VB / 2];
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

/* sum(a[i] * b[i]) over a contiguous row: VB double lanes, exact products. */
static double dot_contig(const float* restrict a, const float* restrict b, int64_t n) {
    double acc[VB] = {0};
    int64_t i = 0;
    for (; i + VB <= n; i += VB) {
        for (int k = 0; k < VB; k++) {
            acc[k] += (double)a[i + k] * (double)b[i + k];
        }
    }
    double tail = 0.0;
    for (; i < n; i++) {
        tail += (double)a[i] * (double)b[i];
    }
    return lanes_sum_d(acc) + tail;
}

/* sum(v[i]) over a contiguous row. */
static double sum_contig(const float* restrict v, int64_t n) {
    double acc[VB] = {0};
    int64_t i = 0;
    for (; i + VB <= n; i += VB) {
        for (int k = 0; k < VB; k++) {
            acc[k] += (double)v[i + k];
        }
    }
    double tail = 0.0;
    for (; i < n; i++) {
        tail += (double)v[i];
    }
    return lanes_sum_d(acc) + tail;
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
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += (double)a[i * sa] * (double)b[i * sb];
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
                acc[i + k] += (double)a[i + k] * (double)b[i + k];
            }
        }
        for (; i < n; i++) {
            acc[i] += (double)a[i] * (double)b[i];
        }
    } else if (so == 1 && ((sa == 0 && sb == 1) || (sa == 1 && sb == 0))) {
        const float* restrict v = sa ? a : b;
        const double x = (double)(sa ? b[0] : a[0]);
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                acc[i + k] += x * (double)v[i + k];
            }
        }
        for (; i < n; i++) {
            acc[i] += x * (double)v[i];
        }
    } else {
        for (; i < n; i++) {
            acc[i * so] += (double)a[i * sa] * (double)b[i * sb];
        }
    }
}

/* Fused row, output1 reduced along it: o = x0*x1, returns sum(x1*x2); x1, x2 contiguous,
 * x0 contiguous (s0 = 1) or broadcast (s0 = 0). */
static double fused_dot(float* restrict o, const float* restrict x0, int64_t s0,
                        const float* restrict x1, const float* restrict x2, int64_t n) {
    double acc[VB] = {0};
    int64_t i = 0;
    if (s0) {
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = x0[i + k] * x1[i + k];
                acc[k] += (double)x1[i + k] * (double)x2[i + k];
            }
        }
    } else {
        const float x = x0[0];
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = x * x1[i + k];
                acc[k] += (double)x1[i + k] * (double)x2[i + k];
            }
        }
    }
    double tail = 0.0;
    for (; i < n; i++) {
        o[i] = x0[i * s0] * x1[i];
        tail += (double)x1[i] * (double)x2[i];
    }
    return lanes_sum_d(acc) + tail;
}

/* Fused row, output1 kept along it (column reduction): o = x0*x1, acc += x1*x2. */
static void fused_axpy(float* restrict o, double* restrict acc, const float* restrict x0,
                       int64_t s0, const float* restrict x1, const float* restrict x2, int64_t n) {
    int64_t i = 0;
    if (s0) {
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = x0[i + k] * x1[i + k];
                acc[i + k] += (double)x1[i + k] * (double)x2[i + k];
            }
        }
    } else {
        const float x = x0[0];
        for (; i + VB <= n; i += VB) {
            for (int k = 0; k < VB; k++) {
                o[i + k] = x * x1[i + k];
                acc[i + k] += (double)x1[i + k] * (double)x2[i + k];
            }
        }
    }
    for (; i < n; i++) {
        o[i] = x0[i * s0] * x1[i];
        acc[i] += (double)x1[i] * (double)x2[i];
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
    if (t->fused) {
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
