// Tiling data for the round-trip test: every field kind (scalars of several widths, an array,
// a nested struct) in an order that needs padding under the natural-alignment layout rule.
#ifndef RT_TILING_H
#define RT_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(RtInner)
TILING_DATA_FIELD_DEF(uint8_t, tag);
TILING_DATA_FIELD_DEF(uint16_t, width);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(RtInnerOp, RtInner)

BEGIN_TILING_DATA_DEF(RtTilingData)
TILING_DATA_FIELD_DEF(uint8_t, flag);
TILING_DATA_FIELD_DEF(uint32_t, count);
TILING_DATA_FIELD_DEF(int64_t, big);
TILING_DATA_FIELD_DEF(float, ratio);
TILING_DATA_FIELD_DEF_ARR(uint16_t, 3, dims);
TILING_DATA_FIELD_DEF_STRUCT(RtInner, inner);
TILING_DATA_FIELD_DEF(int8_t, last);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(RoundTrip, RtTilingData)
}  // namespace optiling
#endif
