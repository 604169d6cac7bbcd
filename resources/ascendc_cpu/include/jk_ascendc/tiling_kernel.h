// Kernel-side tiling access: GET_TILING_DATA and friends (Kernel Tiling, atlasascendc_api_07_0213).
//
// GET_TILING_DATA(var, tiling) (listed in atlasascendc_api_07_0213): declares `var` of the
// structure registered for this operator and fills it from the tiling argument. Here the
// registered structure is the class REGISTER_TILING_DATA_CLASS(<op>, <class>) named for the
// operator the kernel is compiled for (-DJK_OP_TYPE=<op>), looked up in namespace optiling where
// the docs' examples register it. The bytes are those SaveToBuffer wrote: the class's own layout
// (see register/tilingdata_base.h), so the copy is a plain memcpy of sizeof(class) bytes from the
// tiling pointer (a real, read-only pointer the harness passes; it zero-fills the capacity, so a
// short host write reads zeros).
//
// GET_TILING_DATA_WITH_STRUCT(struct, var, tiling) (atlasascendc_api_07_0215): the same with a named
// class. TILING_KEY_IS(k) (atlasascendc_api_07_0213 list): true when the host's SetTilingKey(k).
#ifndef JK_ASCENDC_TILING_KERNEL_H
#define JK_ASCENDC_TILING_KERNEL_H

#include <cstdint>
#include <cstring>

namespace jk {
// Set by the harness before the first block; constant-initialised (no start-up code).
inline uint64_t g_tiling_key = 0;

template <typename T>
inline T load_tiling(const void* tiling)
{
    T value;
    std::memcpy(static_cast<void*>(&value), tiling, sizeof(T));
    return value;
}
}  // namespace jk

#define JK_TILING_CAT2(a, b) a##b
#define JK_TILING_CAT(a, b) JK_TILING_CAT2(a, b)

#ifdef JK_OP_TYPE
#define JK_TILING_DATA_TYPE ::optiling::JK_TILING_CAT(JkTilingDataOf_, JK_OP_TYPE)
#define GET_TILING_DATA(tiling_data, tiling_arg) \
    JK_TILING_DATA_TYPE tiling_data = ::jk::load_tiling<JK_TILING_DATA_TYPE>(tiling_arg)
#else
#define GET_TILING_DATA(tiling_data, tiling_arg) \
    static_assert(false, "GET_TILING_DATA needs -DJK_OP_TYPE=<op type> (the toolchain sets it)")
#endif

#define GET_TILING_DATA_WITH_STRUCT(struct_name, tiling_data, tiling_arg) \
    ::optiling::struct_name tiling_data = ::jk::load_tiling<::optiling::struct_name>(tiling_arg)

#define TILING_KEY_IS(key) (::jk::g_tiling_key == static_cast<uint64_t>(key))

#endif  // JK_ASCENDC_TILING_KERNEL_H
