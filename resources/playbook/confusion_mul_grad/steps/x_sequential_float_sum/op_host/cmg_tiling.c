/*
 * Host tiling for ConfusionMulGrad (editable).
 *
 * Reference version: right-aligns the three input shapes to one rank, derives the broadcast
 * strides of every operand over the output0 space and the product (input1 * input2) space,
 * marks the reduced product dims, and asks for one double accumulator per output1 element.
 * (Unchanged in x_sequential_float_sum: its kernel uses the first half of it as float sums.)
 */
#include "cmg_abi.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Extent of input i along common dim d (rank r), 1 where input i has no such dim. */
static int64_t extent(const CmgShapeInfo* info, int i, int d, int r) {
    int shift = r - info->rank[i];
    return d < shift ? 1 : info->shape[i][d - shift];
}

/* Row-major element strides of input i over the common rank, 0 where it is broadcast. */
static void input_strides(const CmgShapeInfo* info, int i, int r, int64_t* stride) {
    int64_t step = 1;
    for (int d = r - 1; d >= 0; d--) {
        int64_t n = extent(info, i, d, r);
        stride[d] = n == 1 ? 0 : step;
        step *= n;
    }
}

/* Broadcast extent of inputs a and b along dim d, or -1 when they are incompatible. */
static int64_t broadcast(const CmgShapeInfo* info, int a, int b, int d, int r) {
    int64_t x = extent(info, a, d, r);
    int64_t y = extent(info, b, d, r);
    if (x != y && x != 1 && y != 1) {
        return -1;
    }
    return max64(x, y);
}

int cmg_tiling(const CmgShapeInfo* info, CmgTiling* t) {
    if (info->dtype != CMG_DTYPE_FLOAT32 && info->dtype != CMG_DTYPE_FLOAT16) {
        return 1;
    }
    int r = 1;
    for (int i = 0; i < 3; i++) {
        if (info->rank[i] < 0 || info->rank[i] > CMG_MAX_DIMS) {
            return 2;
        }
        r = info->rank[i] > r ? info->rank[i] : r;
    }
    int prod_rank = info->rank[1] > info->rank[2] ? info->rank[1] : info->rank[2];

    /* Reduced dims: axes index broadcast(input1, input2), whose rank is prod_rank. */
    int32_t mask = 0;
    if (info->num_axes == 0) {
        mask = (int32_t)((1u << r) - 1u);
    }
    for (int a = 0; a < info->num_axes; a++) {
        int axis = info->axes[a] < 0 ? info->axes[a] + prod_rank : info->axes[a];
        if (axis < 0 || axis >= prod_rank) {
            return 3;
        }
        int d = axis + (r - prod_rank);
        if (mask & (1 << d)) {
            return 4;
        }
        mask |= 1 << d;
    }

    t->dtype = info->dtype;
    t->reduce_mask = mask;
    t->rank0 = r;
    t->rank1 = r;
    input_strides(info, 0, r, t->in0_stride0);
    input_strides(info, 1, r, t->in1_stride0);
    input_strides(info, 1, r, t->in1_stride1);
    input_strides(info, 2, r, t->in2_stride1);
    t->out0_size = 1;
    t->prod_size = 1;
    t->fused = 1;
    for (int d = 0; d < r; d++) {
        t->shape0[d] = broadcast(info, 0, 1, d, r);
        t->shape1[d] = broadcast(info, 1, 2, d, r);
        if (t->shape0[d] < 0 || t->shape1[d] < 0) {
            return 5;
        }
        t->out0_size *= t->shape0[d];
        t->prod_size *= t->shape1[d];
        t->fused &= t->shape0[d] == t->shape1[d];
    }

    /* output1 is row-major over the kept dims; reduced dims do not move it. */
    int64_t step = 1;
    for (int d = r - 1; d >= 0; d--) {
        int reduced = (mask >> d) & 1;
        t->out1_stride1[d] = reduced || t->shape1[d] == 1 ? 0 : step;
        step *= reduced ? 1 : t->shape1[d];
    }
    t->out1_size = step;

    /* [outer, reduce, inner] when the reduced dims of extent > 1 form one run. */
    int phase = 0; /* 0: before the run, 1: inside it, 2: after it */
    int general = 0;
    t->outer = 1;
    t->reduce_len = 1;
    t->inner = 1;
    for (int d = 0; d < r; d++) {
        int64_t n = t->shape1[d];
        if (n == 1) {
            continue;
        }
        if ((mask >> d) & 1) {
            general |= phase == 2;
            phase = 1;
            t->reduce_len *= n;
        } else if (phase == 0) {
            t->outer *= n;
        } else {
            phase = 2;
            t->inner *= n;
        }
    }
    t->reduce_layout = general ? CMG_LAYOUT_GENERAL : CMG_LAYOUT_ORI;

    t->block_elems = t->prod_size;
    t->block_count = 1;
    t->workspace_size = t->out1_size * (int64_t)sizeof(double);
    return 0;
}
