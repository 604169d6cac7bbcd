// platform_ascendc::PlatformAscendC, clean room (PlatformAscendC简介 atlasascendc_api_07_1025 /
// 07_00059; member list atlasascendc_api_07_1026). Every figure comes from the PlatFormInfos the
// harness filled from the SoC parameter file, so a tiling function sees the modelled chip.
#ifndef JK_TILING_PLATFORM_PLATFORM_ASCENDC_H
#define JK_TILING_PLATFORM_PLATFORM_ASCENDC_H

#include <cstdint>
#include <cstring>

#include "jk_ascendc/host_platform.h"

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };

enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND910_93, ASCEND310P, ASCEND310B, RESERVED_VERSION };

class PlatformAscendC {
public:
    PlatformAscendC() = delete;
    ~PlatformAscendC() = default;
    explicit constexpr PlatformAscendC(fe::PlatFormInfos* platformInfo) : platformInfo_(platformInfo) {}

    // GetCoreNum (atlasophostapi_07_0516): on the separated (A2) architecture, the Vector core count.
    uint32_t GetCoreNum(void) const { return info().core_num_aiv; }
    // GetCoreNumAic / GetCoreNumAiv (atlasascendc_api_07_1031): Cube cores / Vector cores on A2.
    uint32_t GetCoreNumAic(void) const { return info().core_num_aic; }
    uint32_t GetCoreNumAiv(void) const { return info().core_num_aiv; }
    // GetCoreNumVector: the documented constraint says Ascend 910B returns 0 (no separate Vector Core).
    uint32_t GetCoreNumVector(void) const { return 0; }

    SocVersion GetSocVersion(void) const
    {
        const char* name = info().soc_name;
        return (name != nullptr && std::strncmp(name, "ascend910b", 10) == 0) ? SocVersion::ASCEND910B
                                                                              : SocVersion::RESERVED_VERSION;
    }

    // GetCoreMemSize: capacity of one core's memory of that type, in bytes.
    void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const
    {
        const fe::PlatFormInfos& p = info();
        switch (memType) {
            case CoreMemType::UB: size = p.ub_bytes; break;
            case CoreMemType::L1: size = p.l1_bytes; break;
            case CoreMemType::L0_A: size = p.l0a_bytes; break;
            case CoreMemType::L0_B: size = p.l0b_bytes; break;
            case CoreMemType::L0_C: size = p.l0c_bytes; break;
            case CoreMemType::L2: size = p.l2_bytes; break;
            case CoreMemType::HBM: size = p.hbm_bytes; break;
            default: size = 0; break;
        }
    }

    // GetCoreMemBw: not modelled (no bandwidth table is exposed to tiling); 0.
    void GetCoreMemBw(const CoreMemType&, uint64_t& bwSize) const { bwSize = 0; }

    // CalcTschBlockDim / CalcTschNumBlocks: for a vector-only kernel on A2 the block dim is the
    // number of slices (each block one AIV core), bounded by nothing here: the harness checks it.
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aivCoreNum <= aicCoreNum) {
            return sliceNum;
        }
        uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }
    uint32_t CalcTschNumBlocks(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        return CalcTschBlockDim(sliceNum, aicCoreNum, aivCoreNum);
    }

    // Workspace the vendor's libraries reserve: no library API is modelled, so none (assumption).
    uint32_t GetLibApiWorkSpaceSize(void) const { return 0; }
    uint32_t GetResGroupBarrierWorkSpaceSize(void) const { return 0; }
    uint32_t GetResCubeGroupWorkSpaceSize(void) const { return 0; }
    int64_t ReserveLocalMemory(uint64_t) { return 0; }

private:
    const fe::PlatFormInfos& info() const
    {
        static const fe::PlatFormInfos empty{};
        return platformInfo_ != nullptr ? *platformInfo_ : empty;
    }
    fe::PlatFormInfos* platformInfo_;
};

// PlatformAscendCManager::GetInstance(): the process's platform, for code without a context.
class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance()
    {
        static PlatformAscendC instance(nullptr);
        instance = PlatformAscendC(::jk::g_platform_infos);
        return &instance;
    }
};

}  // namespace platform_ascendc

#endif  // JK_TILING_PLATFORM_PLATFORM_ASCENDC_H
