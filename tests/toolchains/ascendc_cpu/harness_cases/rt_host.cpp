// Host side of the round trip: set every field through set_*, serialise with SaveToBuffer.
#include "rt_tiling.h"
#include "register/op_def_registry.h"

extern "C" size_t rt_save(void* buf, size_t capacity)
{
    optiling::RtTilingData t;
    t.set_flag(0xA5);
    t.set_count(4000000000u);
    t.set_big(-1234567890123LL);
    t.set_ratio(0.375f);
    const uint16_t dims[3] = {7, 65535, 300};
    t.set_dims(dims);
    optiling::RtInner inner;
    inner.set_tag(9);
    inner.set_width(513);
    t.set_inner(inner);
    t.set_last(-3);
    // get_* read back what set_* stored (host-side accessors)
    if (t.get_count() != 4000000000u || t.get_dims()[1] != 65535 || t.get_inner().get_width() != 513) {
        return 0;
    }
    t.SaveToBuffer(buf, capacity);
    return t.GetDataSize();
}
