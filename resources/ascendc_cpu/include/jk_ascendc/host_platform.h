// fe::PlatFormInfos: the opaque platform handle a tiling function receives from
// TilingContext::GetPlatformInfo() (atlasopapi_07_00555) and hands to
// platform_ascendc::PlatformAscendC (atlasascendc_api_07_1025). The vendor's type is opaque to
// user code; ours is a plain struct the harness fills from the SoC parameter file
// (soc/<name>.toml via the generated jk_soc_params.h), so tiling sees the modelled chip.
#ifndef JK_ASCENDC_HOST_PLATFORM_H
#define JK_ASCENDC_HOST_PLATFORM_H

#include <cstdint>

namespace fe {
struct PlatFormInfos {
    const char* soc_name = "";
    uint32_t core_num_aiv = 0;
    uint32_t core_num_aic = 0;
    uint64_t ub_bytes = 0;
    uint64_t l1_bytes = 0;
    uint64_t l0a_bytes = 0;
    uint64_t l0b_bytes = 0;
    uint64_t l0c_bytes = 0;
    uint64_t l2_bytes = 0;
    uint64_t hbm_bytes = 0;
};
}  // namespace fe

namespace jk {
// The harness's platform record, for PlatformAscendCManager::GetInstance() (no context there).
inline fe::PlatFormInfos* g_platform_infos = nullptr;
}  // namespace jk

#endif  // JK_ASCENDC_HOST_PLATFORM_H
