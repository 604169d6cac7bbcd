/*
 * ConfusionMulGrad kernel (editable) - naive baseline.
 *
 * Deliberately simple so it is obviously correct: two separate passes, and for every element the
 * flat index is decoded into coordinates with one division per dimension. output1 sums exact
 * products in double accumulators (workspace) and rounds once at the end, so it meets the
 * precision standard on long same-sign reductions. It is slow; that is the point of a baseline.
 */
#include <string.h>

#include "cmg_abi.h"
#include "cmg_half.h"

static double load(const void* p, int64_t i, int32_t dtype) {
    if (dtype == CMG_DTYPE_FLOAT16) {
        return (double)cmg_half_to_float(((const cmg_half*)p)[i]);
    }
    return (double)((const float*)p)[i];
}

static void store(void* p, int64_t i, int32_t dtype, double v) {
    if (dtype == CMG_DTYPE_FLOAT16) {
        ((cmg_half*)p)[i] = cmg_float_to_half((float)v);
    } else {
        ((float*)p)[i] = (float)v;
    }
}

/* Element offset of flat index `flat` of a row-major space, for one operand's strides. */
static int64_t offset_of(int64_t flat, int32_t rank, const int64_t* shape, const int64_t* stride) {
    int64_t off = 0;
    for (int32_t d = rank - 1; d >= 0; d--) {
        off += (flat % shape[d]) * stride[d];
        flat /= shape[d];
    }
    return off;
}

void confusion_mul_grad(const void* in0, const void* in1, const void* in2, void* out0, void* out1,
                        void* workspace, const CmgTiling* t) {
    const int32_t dt = t->dtype;

    /* Pass 1: output0 = input0 * input1 (a product of two binary32 values is exact in double). */
    for (int64_t i = 0; i < t->out0_size; i++) {
        int64_t a = offset_of(i, t->rank0, t->shape0, t->in0_stride0);
        int64_t b = offset_of(i, t->rank0, t->shape0, t->in1_stride0);
        store(out0, i, dt, load(in0, a, dt) * load(in1, b, dt));
    }

    /* Pass 2: output1 = reduce_sum(input1 * input2), accumulated in double. */
    double* acc = (double*)workspace;
    memset(acc, 0, (size_t)t->out1_size * sizeof(double));
    for (int64_t i = 0; i < t->prod_size; i++) {
        int64_t b = offset_of(i, t->rank1, t->shape1, t->in1_stride1);
        int64_t c = offset_of(i, t->rank1, t->shape1, t->in2_stride1);
        int64_t o = offset_of(i, t->rank1, t->shape1, t->out1_stride1);
        acc[o] += load(in1, b, dt) * load(in2, c, dt);
    }
    for (int64_t o = 0; o < t->out1_size; o++) {
        store(out1, o, dt, acc[o]);
    }
}
