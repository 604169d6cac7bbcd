// Probe operator host side: prints what its TilingContext holds (one JSON line on stderr, for
// the tests to compare with the case), then tiles [rows, cols] inputs row-wise over the cores.
// JK_PROBE_MODE (environment) makes it misbehave on purpose: reject, block_dim=N, workspace=N.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "probe_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static std::string DtypeName(ge::DataType dt)
{
    return dt == ge::DT_FLOAT ? "float32" : dt == ge::DT_FLOAT16 ? "float16" : "other";
}

static std::string ShapeJson(const gert::Shape& s)
{
    std::string out = "[";
    for (size_t i = 0; i < s.GetDimNum(); ++i) {
        out += (i ? "," : "") + std::to_string(s.GetDim(i));
    }
    return out + "]";
}

static ge::graphStatus ProbeTiling(gert::TilingContext* context)
{
    std::string j = "{\"node\": \"" + std::string(context->GetNodeName()) + "\", \"inputs\": [";
    for (size_t i = 0; i < 3; ++i) {
        const gert::StorageShape* s = context->GetInputShape(i);
        j += (i ? "," : "") + ShapeJson(s->GetStorageShape());
    }
    j += "], \"origin0\": " + ShapeJson(context->GetInputShape(0)->GetOriginShape());
    j += ", \"outputs\": [" + ShapeJson(context->GetOutputShape(0)->GetStorageShape()) + "," +
         ShapeJson(context->GetOutputShape(1)->GetStorageShape()) + "]";
    j += ", \"dtype_tensor\": \"" + DtypeName(context->GetInputTensor(1)->GetDataType()) + "\"";
    j += ", \"dtype_desc\": \"" + DtypeName(context->GetInputDesc(2)->GetDataType()) + "\"";
    j += ", \"size0\": " + std::to_string(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    j += ", \"attr_num\": " + std::to_string(attrs->GetAttrNum()) + ", \"axes\": [";
    const gert::TypedContinuousVector<int64_t>* axes = attrs->GetListInt(0);
    for (size_t i = 0; i < axes->GetSize(); ++i) {
        j += (i ? "," : "") + std::to_string(axes->GetData()[i]);
    }
    const gert::ContinuousVector* raw = attrs->GetAttrPointer<gert::ContinuousVector>(0);
    j += "], \"axes_raw_size\": " + std::to_string(raw->GetSize());
    j += ", \"keep_dims\": " + std::string(*attrs->GetBool(1) ? "true" : "false");
    j += ", \"keep_dims_ptr\": " + std::string(*attrs->GetAttrPointer<bool>(1) ? "true" : "false");
    j += ", \"scale\": " + std::to_string(*attrs->GetFloat(2));
    j += ", \"missing_attr_is_null\": " + std::string(attrs->GetBool(9) == nullptr ? "true" : "false");
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t ub_manager = 0;
    platform_ascendc::PlatformAscendCManager::GetInstance()->GetCoreMemSize(platform_ascendc::CoreMemType::UB,
                                                                           ub_manager);
    j += ", \"aiv\": " + std::to_string(platform.GetCoreNumAiv()) + ", \"aic\": " +
         std::to_string(platform.GetCoreNumAic()) + ", \"core_num\": " + std::to_string(platform.GetCoreNum()) +
         ", \"ub\": " + std::to_string(ub) + ", \"ub_manager\": " + std::to_string(ub_manager) + "}";
    std::fprintf(stderr, "PROBE %s\n", j.c_str());

    const char* mode = std::getenv("JK_PROBE_MODE");
    mode = mode != nullptr ? mode : "";
    if (std::strcmp(mode, "reject") == 0) {
        return ge::GRAPH_FAILED;
    }
    uint32_t blocks = 2;
    if (std::strncmp(mode, "block_dim=", 10) == 0) {
        blocks = static_cast<uint32_t>(std::atoi(mode + 10));
    }
    const gert::Shape& in = context->GetInputShape(0)->GetStorageShape();
    ProbeTilingData tiling;
    tiling.set_cols(static_cast<uint32_t>(in.GetDim(1)));
    tiling.set_rowsPerBlock(blocks ? static_cast<uint32_t>(in.GetDim(0)) / blocks : 0);
    context->SetBlockDim(blocks);
    context->SetTilingKey(3);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = std::strncmp(mode, "workspace=", 10) == 0 ? std::strtoull(mode + 10, nullptr, 10) : 64;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class ConfusionMulGrad : public OpDef {
public:
    explicit ConfusionMulGrad(const char* name) : OpDef(name)
    {
        for (const char* input : {"input0", "input1", "input2"}) {
            this->Input(input).ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        }
        for (const char* output : {"output0", "output1"}) {
            this->Output(output).ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        }
        this->Attr("axes").AttrType(OPTIONAL).ListInt({});
        this->Attr("keep_dims").AttrType(OPTIONAL).Bool(false);
        this->Attr("scale").AttrType(OPTIONAL).Float(1.5f);  // not in the case: its default
        this->AICore().SetTiling(optiling::ProbeTiling);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ConfusionMulGrad);
}  // namespace ops
