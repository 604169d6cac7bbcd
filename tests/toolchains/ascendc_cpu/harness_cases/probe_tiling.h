// Tiling data of the harness tests' probe operator (tests/toolchains/ascendc_cpu/test_harness_*.py).
#ifndef PROBE_TILING_H
#define PROBE_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ProbeTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rowsPerBlock);  // rows of the [rows, cols] inputs per core
TILING_DATA_FIELD_DEF(uint32_t, cols);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ConfusionMulGrad, ProbeTilingData)
}  // namespace optiling
#endif
