// Tiling data of the ConfusionMulGrad baseline: the host merges the broadcast shapes into a few
// dims and hands the kernel two loop nests (TilingData definition: atlasascendc_api_07_1005).
//
// output0 = input0 * input1: the merged output0 space is [mulOuter..., mulRow]; output0 is
// contiguous over it; each operand is either contiguous along the row (rowStride 1) or a
// scalar repeated along it (rowStride 0), and moves by mulOuterStride* between rows.
//
// output1 = reduce_sum(input1 * input2): the merged product space splits into kept dims, reduced
// dims and the innermost dim (sumRow, reduced or kept: sumInnerReduced). Kept and reduced dims
// are enumerated row-major by the kernel; output1 is row-major over the kept dims.
#ifndef CONFUSION_MUL_GRAD_TILING_H
#define CONFUSION_MUL_GRAD_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
constexpr uint32_t CMG_MAX_DIMS = 8;

BEGIN_TILING_DATA_DEF(ConfusionMulGradTilingData)
// 64-bit fields first so that no field needs padding.
TILING_DATA_FIELD_DEF(uint64_t, size0);          // elements of input0
TILING_DATA_FIELD_DEF(uint64_t, size1);          // elements of input1
TILING_DATA_FIELD_DEF(uint64_t, size2);          // elements of input2
TILING_DATA_FIELD_DEF(uint64_t, sizeOut0);       // elements of output0
TILING_DATA_FIELD_DEF(uint64_t, sizeOut1);       // elements of output1
TILING_DATA_FIELD_DEF(uint64_t, mulRowLength);   // innermost merged extent of output0
TILING_DATA_FIELD_DEF(uint64_t, mulRowCount);    // product of mulOuterShape
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, mulOuterShape);
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, mulOuterStride0);  // input0 element strides, 0 = broadcast
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, mulOuterStride1);  // input1 element strides, 0 = broadcast
TILING_DATA_FIELD_DEF(uint64_t, sumRowLength);   // innermost merged extent of the product space
TILING_DATA_FIELD_DEF(uint64_t, keptCount);      // product of keptShape
TILING_DATA_FIELD_DEF(uint64_t, reducedCount);   // product of reducedShape
TILING_DATA_FIELD_DEF(uint64_t, groupLength);    // reduced steps per float32 partial (kept row)
TILING_DATA_FIELD_DEF(uint64_t, mulPerBlock);    // output0 elements per block (flat range)
TILING_DATA_FIELD_DEF(uint64_t, sumPerBlock);    // output1 elements per block (flat range)
TILING_DATA_FIELD_DEF(uint64_t, redPerBlock);    // split reduction: reduced steps / row tiles per block
TILING_DATA_FIELD_DEF(uint64_t, partLength);     // split reduction: partials per block (output1 elements)
TILING_DATA_FIELD_DEF(uint64_t, partStride);     // split reduction: floats between blocks' partial rows
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, keptShape);
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, keptStride1);    // input1 element strides
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, keptStride2);    // input2 element strides
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, keptStrideOut);  // output1 element strides
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, reducedShape);
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, reducedStride1);
TILING_DATA_FIELD_DEF_ARR(uint64_t, 8, reducedStride2);
TILING_DATA_FIELD_DEF(uint32_t, tileLength);      // elements per UB tile (multiple of 64)
TILING_DATA_FIELD_DEF(uint32_t, mulOuterRank);
TILING_DATA_FIELD_DEF(uint32_t, mulRowStride0);   // 1: input0 contiguous along the row, 0: scalar
TILING_DATA_FIELD_DEF(uint32_t, mulRowStride1);
TILING_DATA_FIELD_DEF(uint32_t, sumInnerReduced); // 1: the innermost product dim is reduced
TILING_DATA_FIELD_DEF(uint32_t, sumRowStride1);   // 1: input1 contiguous along the row, 0: scalar
TILING_DATA_FIELD_DEF(uint32_t, sumRowStride2);
TILING_DATA_FIELD_DEF(uint32_t, keptRank);
TILING_DATA_FIELD_DEF(uint32_t, reducedRank);
TILING_DATA_FIELD_DEF(uint32_t, fused);           // 1: no broadcast, output0 written by the output1 pass
TILING_DATA_FIELD_DEF(uint32_t, splitReduce);     // 1: the reduced work is split over the blocks
TILING_DATA_FIELD_DEF(uint32_t, reserved);        // keeps the size a multiple of 8 bytes
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ConfusionMulGrad, ConfusionMulGradTilingData)
}  // namespace optiling
#endif  // CONFUSION_MUL_GRAD_TILING_H
