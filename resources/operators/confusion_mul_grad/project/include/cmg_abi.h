/*
 * ConfusionMulGrad CPU-port ABI (fixed: do not edit).
 *
 *   output0 = input0 * input1                        (numpy broadcasting)
 *   output1 = reduce_sum(input1 * input2, axes, keep_dims)
 *
 * The harness fills a CmgShapeInfo, calls the host tiling `cmg_tiling` (op_host/), allocates the
 * workspace the tiling asks for, then calls the kernel `confusion_mul_grad` (op_kernel/). Only
 * `CmgTiling.workspace_size` is read by the harness; every other tiling field is a contract between
 * your own tiling and your own kernel, so you may repurpose them (the `user` array is free space).
 *
 * Layout conventions used by the reference tiling: dimension 0 is the outermost, row-major, all
 * shapes right-aligned to a common rank with leading 1s, strides in elements, stride 0 = broadcast.
 */
#ifndef CMG_ABI_H
#define CMG_ABI_H

#include <stddef.h>
#include <stdint.h>

#define CMG_ABI_VERSION 1
#define CMG_MAX_DIMS 8

/* Element type codes (CmgShapeInfo.dtype, CmgTiling.dtype). All inputs and outputs share it. */
#define CMG_DTYPE_FLOAT32 0
#define CMG_DTYPE_FLOAT16 1

/* IEEE 754 binary16 storage; convert with the helpers in cmg_half.h. */
typedef uint16_t cmg_half;

/* Reduce layouts the reference tiling recognises (CmgTiling.reduce_layout). */
#define CMG_LAYOUT_GENERAL 0 /* anything else: walk the product space dimension by dimension */
#define CMG_LAYOUT_ORI 1     /* product = [outer, reduce, inner], reduced dims one contiguous run */

/* What the harness knows about the call: shapes and attributes exactly as the operator gets them. */
typedef struct CmgShapeInfo {
    int32_t dtype;                    /* CMG_DTYPE_* */
    int32_t rank[3];                  /* ranks of input0, input1, input2 (0..CMG_MAX_DIMS) */
    int64_t shape[3][CMG_MAX_DIMS];   /* shape[i][0..rank[i]-1], every extent >= 1 */
    int32_t num_axes;                 /* 0 = reduce over all axes */
    int32_t axes[CMG_MAX_DIMS];       /* axes of broadcast(input1, input2); may be negative */
    int32_t keep_dims;                /* nonzero: reduced axes stay as extent 1 */
} CmgShapeInfo;

/* Filled by cmg_tiling, read by confusion_mul_grad. Lives in read-only memory during the kernel. */
typedef struct CmgTiling {
    int32_t dtype;                        /* CMG_DTYPE_* */
    int32_t reduce_mask;                  /* bit d set: dim d of the product space is reduced */
    int32_t rank0;                        /* dims of the output0 space */
    int32_t rank1;                        /* dims of the product (input1 * input2) space */
    /* output0 space: out0 is contiguous over shape0 */
    int64_t shape0[CMG_MAX_DIMS];
    int64_t in0_stride0[CMG_MAX_DIMS];    /* input0 element stride per output0 dim (0 = broadcast) */
    int64_t in1_stride0[CMG_MAX_DIMS];    /* input1 element stride per output0 dim */
    int64_t out0_size;                    /* elements of output0 */
    /* product space: output1 accumulates input1 * input2 over it */
    int64_t shape1[CMG_MAX_DIMS];
    int64_t in1_stride1[CMG_MAX_DIMS];    /* input1 element stride per product dim */
    int64_t in2_stride1[CMG_MAX_DIMS];    /* input2 element stride per product dim */
    int64_t out1_stride1[CMG_MAX_DIMS];   /* output1 element stride per product dim (0 = reduced) */
    int64_t prod_size;                    /* elements of the product space */
    int64_t out1_size;                    /* elements of output1 */
    /* reduce layout summary */
    int32_t reduce_layout;                /* CMG_LAYOUT_* */
    int32_t fused;                        /* nonzero: output0 and product spaces can share one pass */
    int64_t outer;                        /* CMG_LAYOUT_ORI: product viewed as [outer, reduce, inner] */
    int64_t reduce_len;
    int64_t inner;
    /* blocking */
    int64_t block_elems;                  /* elements per block (the kernel's choice of unit) */
    int64_t block_count;
    int64_t workspace_size;               /* bytes of workspace the kernel needs (harness caps it) */
    int64_t user[16];                     /* free for your own tiling data */
} CmgTiling;

#ifdef __cplusplus
extern "C" {
#endif

/* Host tiling (op_host/cmg_tiling.c). Return 0 on success, nonzero for shapes it rejects. */
int cmg_tiling(const CmgShapeInfo* info, CmgTiling* tiling);

/*
 * Kernel (op_kernel/cmg_kernel.c). Element types follow tiling->dtype: float for float32, cmg_half
 * (uint16_t) for float16. Inputs are read-only; out0/out1 arrive filled with NaN markers; the
 * workspace arrives filled with 0xFF bytes (never assume zeros). Every buffer is fenced by guard
 * zones: writing outside out0, out1 or workspace ends the run as a sandbox violation.
 */
void confusion_mul_grad(const void* in0, const void* in1, const void* in2, void* out0, void* out1,
                        void* workspace, const CmgTiling* tiling);

#ifdef __cplusplus
}
#endif

#endif /* CMG_ABI_H */
