// Kernel side of the round trip: GET_TILING_DATA for JK_OP_TYPE=RoundTrip, fields printed.
#include <cstdio>

#include "kernel_operator.h"

extern "C" void rt_load(GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    std::printf("{\"flag\": %u, \"count\": %u, \"big\": %lld, \"ratio\": %.6f, \"dims\": [%u, %u, %u], "
                "\"tag\": %u, \"width\": %u, \"last\": %d, \"size\": %zu}\n",
                t.flag, t.count, static_cast<long long>(t.big), t.ratio, t.dims[0], t.dims[1], t.dims[2],
                t.inner.tag, t.inner.width, t.last, sizeof(t));
    GET_TILING_DATA_WITH_STRUCT(RtInner, first, tiling);  // a named class at the same bytes
    std::printf("{\"first_tag\": %u}\n", first.tag);
}
