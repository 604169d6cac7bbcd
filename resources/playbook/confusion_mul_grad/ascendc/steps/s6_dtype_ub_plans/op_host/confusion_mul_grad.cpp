// ConfusionMulGrad host side: tiling, shape inference and the op definition.
//   output0 = input0 * input1                              (numpy broadcasting)
//   output1 = reduce_sum(input1 * input2, axes, keep_dims)  (axes index broadcast(input1, input2))
// The tiling right-aligns the shapes, derives broadcast strides, drops extent-1 dims, merges
// adjacent dims that stay contiguous (or stay broadcast) for every operand, and hands the kernel
// two small loop nests. Invalid calls (rank > 8, non-broadcastable shapes, bad or repeated axes,
// mixed or unsupported dtypes) are rejected with GRAPH_FAILED.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "confusion_mul_grad_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace {
constexpr int kMaxDims = 8;
constexpr uint32_t kTileAlign = 64;           // tiles are whole 256-byte float32 repeats
constexpr uint32_t kReduceWorkFloats = 256;    // the kernel's REDUCE_WORK_FLOATS
constexpr uint32_t kStageFloats = 1024;        // the kernel's STAGE_FLOATS
constexpr uint32_t kMaxTile = kReduceWorkFloats * 64;  // ReduceSum's work buffer covers this

// UB bytes per tile element in the kernel's plan (keep in step with KernelConfusionMulGrad::Init):
// input queue 2 x 2 tiles of T (2 x 3 fused), output queue 2 x 1 tile of T, 3 float32 work tiles
// and, for float16, 2 float32 cast tiles (playbook step s6: the plan per dtype).
uint64_t UbBytesPerElement(uint64_t dtypeSize, bool fused)
{
    uint64_t floatTiles = dtypeSize == 2 ? 5 : 3;
    return 2 * (fused ? 3 : 2) * dtypeSize + 2 * dtypeSize + floatTiles * 4;
}

// Playbook step s2: the largest tile the UB holds (PlatformAscendC::GetCoreMemSize, member list
// atlasascendc_api_07_1026) instead of a fixed 2048: fewer, larger copies pay MTE2's
// per-transfer latency less often ("Transferring a Large Data Block at a Time",
// atlas_ascendc_best_practices_10_0013).
uint32_t UbTile(gert::TilingContext *context, uint64_t dtypeSize, bool fused)
{
    uint64_t ub = 0;
    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t fixed = (kStageFloats + kReduceWorkFloats + 8) * 4;
    uint64_t tile = ub > fixed ? (ub - fixed) / UbBytesPerElement(dtypeSize, fused) : 0;
    tile = tile / kTileAlign * kTileAlign;
    return static_cast<uint32_t>(tile > kMaxTile ? kMaxTile : tile);
}

struct Dims {
    int rank = 0;
    int64_t n[kMaxDims] = {};
};

// One merged dim of a loop nest: extent, per-operand element strides (0 = broadcast), reduced.
struct Merged {
    int rank = 0;
    uint64_t n[kMaxDims] = {};
    uint64_t s[2][kMaxDims] = {};
    bool reduced[kMaxDims] = {};
};

Dims ToDims(const gert::Shape &shape)
{
    Dims d;
    d.rank = static_cast<int>(shape.GetDimNum());
    for (int i = 0; i < d.rank && i < kMaxDims; ++i) {
        d.n[i] = shape.GetDim(i);
    }
    return d;
}

// Extent of `d` along dim `i` of a rank-`r` right-aligned space (1 where `d` has no such dim).
int64_t ExtentAt(const Dims &d, int i, int r)
{
    int shift = r - d.rank;
    return i < shift ? 1 : d.n[i - shift];
}

bool ValidDims(const Dims &d)
{
    if (d.rank < 0 || d.rank > kMaxDims) {
        return false;
    }
    for (int i = 0; i < d.rank; ++i) {
        if (d.n[i] < 1) {
            return false;
        }
    }
    return true;
}

// numpy broadcast of a and b; false when an extent pair is neither equal nor has a 1.
bool Broadcast(const Dims &a, const Dims &b, Dims &out)
{
    out.rank = a.rank > b.rank ? a.rank : b.rank;
    for (int i = 0; i < out.rank; ++i) {
        int64_t x = ExtentAt(a, i, out.rank);
        int64_t y = ExtentAt(b, i, out.rank);
        if (x != y && x != 1 && y != 1) {
            return false;
        }
        out.n[i] = x > y ? x : y;
    }
    return true;
}

// Row-major element strides of `d` over the rank-`r` space, 0 on dims where `d` has extent 1.
void BroadcastStrides(const Dims &d, int r, uint64_t *stride)
{
    uint64_t step = 1;
    for (int i = r - 1; i >= 0; --i) {
        int64_t n = ExtentAt(d, i, r);
        stride[i] = n == 1 ? 0 : step;
        step *= static_cast<uint64_t>(n);
    }
}

// Reduced-dim mask over the product space (rank pr): axes may be negative, may not repeat;
// empty axes reduce everything. False for an axis out of range or repeated.
bool ReduceMask(const int64_t *axes, size_t count, int pr, bool *reduced)
{
    for (int i = 0; i < kMaxDims; ++i) {
        reduced[i] = count == 0;
    }
    for (size_t k = 0; k < count; ++k) {
        int64_t a = axes[k] < 0 ? axes[k] + pr : axes[k];
        if (a < 0 || a >= pr || reduced[a]) {
            return false;
        }
        reduced[a] = true;
    }
    return true;
}

// Drop extent-1 dims and merge neighbours (same reduced flag; for each operand both strides 0,
// or outer stride == inner stride * inner extent). Always leaves at least one dim.
Merged Merge(const Dims &space, const uint64_t *sa, const uint64_t *sb, const bool *reduced)
{
    Merged m;
    for (int i = 0; i < space.rank; ++i) {
        if (space.n[i] == 1) {
            continue;
        }
        uint64_t n = static_cast<uint64_t>(space.n[i]);
        bool red = reduced != nullptr && reduced[i];
        if (m.rank > 0) {
            int j = m.rank - 1;
            bool ok = m.reduced[j] == red;
            const uint64_t *s[2] = {sa, sb};
            for (int o = 0; o < 2 && ok; ++o) {
                ok = (m.s[o][j] == 0 && s[o][i] == 0) || (s[o][i] != 0 && m.s[o][j] == s[o][i] * n);
            }
            if (ok) {
                m.n[j] *= n;
                m.s[0][j] = sa[i];
                m.s[1][j] = sb[i];
                continue;
            }
        }
        m.n[m.rank] = n;
        m.s[0][m.rank] = sa[i];
        m.s[1][m.rank] = sb[i];
        m.reduced[m.rank] = red;
        ++m.rank;
    }
    if (m.rank == 0) {  // every extent is 1: one element, one kept step
        m.rank = 1;
        m.n[0] = 1;
        m.s[0][0] = 1;
        m.s[1][0] = 1;
        m.reduced[0] = false;
    }
    return m;
}

constexpr uint64_t kBlockElems = 16;  // a 32-byte GM block of float16; whole blocks per core
constexpr uint64_t kMinColumnsPerBlock = 1024;      // below: split the reduction instead
constexpr uint64_t kMaxPartialBytes = 64ull << 20;  // workspace cap for the partials

// Items per block: an even share over `cores`, rounded up to whole 32-byte blocks.
uint64_t PerBlock(uint64_t items, uint64_t cores)
{
    uint64_t per = (items + cores - 1) / cores;
    per = (per + kBlockElems - 1) / kBlockElems * kBlockElems;
    return per == 0 ? kBlockElems : per;
}

uint64_t Blocks(uint64_t items, uint64_t per) { return items == 0 ? 1 : (items + per - 1) / per; }

uint64_t Elements(const Dims &d)
{
    uint64_t n = 1;
    for (int i = 0; i < d.rank; ++i) {
        n *= static_cast<uint64_t>(d.n[i]);
    }
    return n;
}

// Shapes, axes and keep_dims of one call, validated; the product space and its reduced mask.
struct Problem {
    Dims in[3];
    Dims out0;
    Dims prod;
    bool reduced[kMaxDims] = {};
    bool keepDims = false;
};

bool MakeProblem(const gert::Shape *const shapes[3], const gert::RuntimeAttrs *attrs, Problem &p)
{
    for (int i = 0; i < 3; ++i) {
        if (shapes[i] == nullptr || shapes[i]->GetDimNum() > static_cast<size_t>(kMaxDims)) {
            return false;
        }
        p.in[i] = ToDims(*shapes[i]);
        if (!ValidDims(p.in[i])) {
            return false;
        }
    }
    if (!Broadcast(p.in[0], p.in[1], p.out0) || !Broadcast(p.in[1], p.in[2], p.prod)) {
        return false;
    }
    const int64_t *axes = nullptr;
    size_t count = 0;
    if (attrs != nullptr) {
        const gert::TypedContinuousVector<int64_t> *list = attrs->GetListInt(0);
        if (list != nullptr) {
            axes = list->GetData();
            count = list->GetSize();
        }
        const bool *keep = attrs->GetBool(1);
        p.keepDims = keep != nullptr && *keep;
    }
    return ReduceMask(axes, count, p.prod.rank, p.reduced);
}

// output1's shape: the product space without its reduced dims, or with them set to 1.
Dims Output1Dims(const Problem &p)
{
    Dims d;
    for (int i = 0; i < p.prod.rank; ++i) {
        if (!p.reduced[i]) {
            d.n[d.rank++] = p.prod.n[i];
        } else if (p.keepDims) {
            d.n[d.rank++] = 1;
        }
    }
    return d;
}

bool ReadProblem(gert::TilingContext *context, Problem &p)
{
    const gert::Shape *shapes[3] = {};
    for (int i = 0; i < 3; ++i) {
        const gert::StorageShape *s = context->GetInputShape(i);
        shapes[i] = s == nullptr ? nullptr : &s->GetStorageShape();
    }
    return MakeProblem(shapes, context->GetAttrs(), p);
}

bool SupportedDtypes(gert::TilingContext *context)
{
    auto desc = context->GetInputDesc(0);
    if (desc == nullptr) {
        return false;
    }
    ge::DataType dt = desc->GetDataType();
    if (dt != ge::DT_FLOAT && dt != ge::DT_FLOAT16) {
        return false;
    }
    for (int i = 1; i < 3; ++i) {
        auto other = context->GetInputDesc(i);
        if (other == nullptr || other->GetDataType() != dt) {
            return false;
        }
    }
    return true;
}
}  // namespace

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext *context)
{
    Problem p;
    if (!SupportedDtypes(context) || !ReadProblem(context, p)) {
        return ge::GRAPH_FAILED;
    }
    ConfusionMulGradTilingData tiling;
    tiling.set_size0(Elements(p.in[0]));
    tiling.set_size1(Elements(p.in[1]));
    tiling.set_size2(Elements(p.in[2]));
    tiling.set_sizeOut0(Elements(p.out0));
    tiling.set_sizeOut1(Elements(Output1Dims(p)));
    uint64_t dtypeSize = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT16 ? 2 : 4;
    // Playbook step s3: one pass for both outputs when nothing broadcasts. Equal element counts
    // of the three inputs, output0 and the product space mean equal extents on every dim (a
    // broadcast only ever grows one), so all five share one flat index.
    uint64_t n1 = Elements(p.in[1]);
    bool fused = Elements(p.in[0]) == n1 && Elements(p.in[2]) == n1 && Elements(p.out0) == n1 &&
                 Elements(p.prod) == n1;
    uint32_t tileLength = UbTile(context, dtypeSize, fused);
    if (tileLength < kTileAlign) {
        return ge::GRAPH_FAILED;  // no UB plan fits
    }
    tiling.set_tileLength(tileLength);

    // output0 = input0 * input1 over the merged output0 space.
    uint64_t s0[kMaxDims] = {};
    uint64_t s1[kMaxDims] = {};
    BroadcastStrides(p.in[0], p.out0.rank, s0);
    BroadcastStrides(p.in[1], p.out0.rank, s1);
    Merged mul = Merge(p.out0, s0, s1, nullptr);
    uint64_t mulShape[kMaxDims] = {};
    uint64_t mulStride0[kMaxDims] = {};
    uint64_t mulStride1[kMaxDims] = {};
    uint64_t rows = 1;
    for (int i = 0; i + 1 < mul.rank; ++i) {
        mulShape[i] = mul.n[i];
        mulStride0[i] = mul.s[0][i];
        mulStride1[i] = mul.s[1][i];
        rows *= mul.n[i];
    }
    int last = mul.rank - 1;
    tiling.set_mulOuterRank(static_cast<uint32_t>(mul.rank - 1));
    tiling.set_mulRowLength(mul.n[last]);
    tiling.set_mulRowCount(rows);
    tiling.set_mulRowStride0(mul.s[0][last] != 0 ? 1 : 0);
    tiling.set_mulRowStride1(mul.s[1][last] != 0 ? 1 : 0);
    tiling.set_mulOuterShape(mulShape);
    tiling.set_mulOuterStride0(mulStride0);
    tiling.set_mulOuterStride1(mulStride1);

    // output1 = reduce_sum(input1 * input2) over the merged product space.
    uint64_t t1[kMaxDims] = {};
    uint64_t t2[kMaxDims] = {};
    BroadcastStrides(p.in[1], p.prod.rank, t1);
    BroadcastStrides(p.in[2], p.prod.rank, t2);
    Merged sum = Merge(p.prod, t1, t2, p.reduced);
    uint64_t keptShape[kMaxDims] = {};
    uint64_t keptStride1[kMaxDims] = {};
    uint64_t keptStride2[kMaxDims] = {};
    uint64_t keptStrideOut[kMaxDims] = {};
    uint64_t redShape[kMaxDims] = {};
    uint64_t redStride1[kMaxDims] = {};
    uint64_t redStride2[kMaxDims] = {};
    uint32_t keptRank = 0;
    uint32_t redRank = 0;
    uint64_t keptCount = 1;
    uint64_t redCount = 1;
    last = sum.rank - 1;
    for (int i = 0; i < last; ++i) {
        if (sum.reduced[i]) {
            redShape[redRank] = sum.n[i];
            redStride1[redRank] = sum.s[0][i];
            redStride2[redRank] = sum.s[1][i];
            ++redRank;
            redCount *= sum.n[i];
        } else {
            keptShape[keptRank] = sum.n[i];
            keptStride1[keptRank] = sum.s[0][i];
            keptStride2[keptRank] = sum.s[1][i];
            ++keptRank;
            keptCount *= sum.n[i];
        }
    }
    // output1 is row-major over the kept dims (the innermost one too when it is kept).
    uint64_t step = sum.reduced[last] ? 1 : sum.n[last];
    for (int k = static_cast<int>(keptRank) - 1; k >= 0; --k) {
        keptStrideOut[k] = step;
        step *= keptShape[k];
    }
    tiling.set_sumInnerReduced(sum.reduced[last] ? 1 : 0);
    tiling.set_sumRowLength(sum.n[last]);
    tiling.set_sumRowStride1(sum.s[0][last] != 0 ? 1 : 0);
    tiling.set_sumRowStride2(sum.s[1][last] != 0 ? 1 : 0);
    tiling.set_keptRank(keptRank);
    tiling.set_keptCount(keptCount);
    tiling.set_keptShape(keptShape);
    tiling.set_keptStride1(keptStride1);
    tiling.set_keptStride2(keptStride2);
    tiling.set_keptStrideOut(keptStrideOut);
    tiling.set_reducedRank(redRank);
    tiling.set_reducedCount(redCount);
    tiling.set_reducedShape(redShape);
    tiling.set_reducedStride1(redStride1);
    tiling.set_reducedStride2(redStride2);
    // Kept innermost dim: sum groups of ~sqrt(R) reduced steps in float32, then add the groups:
    // the error grows like 2*sqrt(R) roundings instead of R.
    // Reduced innermost dim: the kernel adds every product tile of an output element into the
    // same lanes, so a group counts tiles: reduced steps x tiles per row.
    uint64_t steps = redCount;
    if (sum.reduced[last]) {
        steps *= (sum.n[last] + tileLength - 1) / tileLength;
    }
    uint64_t group = static_cast<uint64_t>(std::ceil(std::sqrt(static_cast<double>(steps))));
    tiling.set_groupLength(group < 1 ? 1 : group);
    tiling.set_fused(fused ? 1 : 0);
    tiling.set_reserved(0);

    // Playbook step s4: every vector core (GetCoreNumAiv, atlasascendc_api_07_1031; SetBlockDim
    // "set it to the number of physical cores", atlasopapi_07_00236), each on a flat range of
    // output0 and of output1 in whole 32-byte blocks of float16 (16 elements).
    uint32_t cores = platform_ascendc::PlatformAscendC(context->GetPlatformInfo()).GetCoreNumAiv();
    cores = cores == 0 ? 1 : cores;
    uint64_t sumItems = sum.reduced[last] ? keptCount : Elements(Output1Dims(p));
    uint64_t mulPer = PerBlock(Elements(p.out0), cores);
    uint64_t sumPer = PerBlock(sumItems, cores);
    uint64_t blocks = Blocks(Elements(p.out0), mulPer);
    uint64_t sumBlocks = Blocks(sumItems, sumPer);
    // Playbook step s5: the layout picks the split. Few output1 elements (a full sum, a few
    // rows, or columns so few per core that each core's copies would be a few hundred bytes)
    // split the reduced work over the cores: reduced steps (kept innermost dim) or row tiles
    // (reduced innermost dim), one float32 row of partials per block in the workspace.
    uint64_t redWork = redCount;
    bool split = false;
    if (sum.reduced[last]) {
        redWork *= (sum.n[last] + tileLength - 1) / tileLength;
        split = sumBlocks * 2 < cores && keptCount <= kStageFloats && redWork >= 2 * cores;
    } else {
        split = sumPer < kMinColumnsPerBlock && redCount >= cores;
    }
    uint64_t partLength = sum.reduced[last] ? keptCount : sumItems;
    uint64_t partStride = (partLength + 7) / 8 * 8;  // whole 32-byte blocks of float32
    uint64_t redPer = (redWork + cores - 1) / cores;
    if (split && cores * partStride * sizeof(float) > kMaxPartialBytes) {
        split = false;
    }
    if (split) {
        sumBlocks = Blocks(redWork, redPer);
    }
    blocks = blocks > sumBlocks ? blocks : sumBlocks;
    tiling.set_mulPerBlock(mulPer);
    tiling.set_sumPerBlock(sumPer);
    tiling.set_splitReduce(split ? 1 : 0);
    tiling.set_redPerBlock(redPer);
    tiling.set_partLength(partLength);
    tiling.set_partStride(partStride);
    context->SetBlockDim(static_cast<uint32_t>(blocks));
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t *workspace = context->GetWorkspaceSizes(1);
    // The system part the library needs (GetLibApiWorkSpaceSize) comes first; the kernel skips
    // it with GetUserWorkspace.
    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    uint64_t sysWorkspace = platform.GetLibApiWorkSpaceSize();
    workspace[0] = sysWorkspace + (split ? blocks * partStride * sizeof(float) : 0);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static void SetShape(gert::Shape *out, const Dims &d)
{
    out->SetDimNum(static_cast<size_t>(d.rank));
    for (int i = 0; i < d.rank; ++i) {
        out->SetDim(static_cast<size_t>(i), d.n[i]);
    }
}

static ge::graphStatus InferShape(gert::InferShapeContext *context)
{
    const gert::Shape *shapes[3] = {context->GetInputShape(0), context->GetInputShape(1),
                                    context->GetInputShape(2)};
    Problem p;
    if (!MakeProblem(shapes, context->GetAttrs(), p)) {
        return GRAPH_FAILED;
    }
    SetShape(context->GetOutputShape(0), p.out0);
    SetShape(context->GetOutputShape(1), Output1Dims(p));
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ConfusionMulGrad : public OpDef {
public:
    explicit ConfusionMulGrad(const char *name) : OpDef(name)
    {
        for (const char *input : {"input0", "input1", "input2"}) {
            this->Input(input).ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
                .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        }
        for (const char *output : {"output0", "output1"}) {
            this->Output(output).ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
                .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        }
        this->Attr("axes").AttrType(OPTIONAL).ListInt({});
        this->Attr("keep_dims").AttrType(OPTIONAL).Bool(false);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ConfusionMulGrad);
}  // namespace ops
