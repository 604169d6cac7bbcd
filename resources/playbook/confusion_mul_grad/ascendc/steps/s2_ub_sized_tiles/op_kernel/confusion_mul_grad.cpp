// ConfusionMulGrad baseline kernel: straightforward and correct for every valid call, not fast.
//   output0 = input0 * input1, by rows of the merged output0 space (each operand a contiguous row
//             or a scalar broadcast along it);
//   output1 = reduce_sum(input1 * input2): when the innermost product dim is kept, by row tiles of
//             output1, accumulating every reduced step into a float32 UB tile (grouped partial
//             sums); when it is reduced, by output elements, accumulating the product tiles in
//             float32 vector lanes (grouped likewise) and reducing the lanes once per element.
// Playbook steps: s1 the reduced-row path keeps the scalar unit out of its loop, so the
// double-buffered queues overlap MTE2 with V (the template waited V -> S on every tile);
// s2 tiles as large as the UB plan allows (the tiling computes them).
// float16 operands are cast to float32 before the products (exact), sums stay in float32,
// and the result is rounded once to float16 (round to nearest even).
// One core (the tiling sets block_dim 1); everything lives in UB, no workspace.
#include "kernel_operator.h"
using namespace AscendC;

namespace {
constexpr int32_t BUFFER_NUM = 2;        // double-buffered input and output queues
constexpr uint32_t KERNEL_MAX_DIMS = 8;  // matches the tiling arrays
constexpr uint32_t REDUCE_WORK_FLOATS = 256;  // ReduceSum work: >= ceil(tile / 64) rounded to 8

// The tiling fields the kernel uses, copied out of the registered tiling structure (the kernel
// never names that structure's type, so it reads the same on the CPU library and under CANN).
struct Params {
    uint64_t size0, size1, size2, sizeOut0, sizeOut1;
    uint64_t mulRowLength, mulRowCount;
    uint64_t mulOuterShape[KERNEL_MAX_DIMS], mulOuterStride0[KERNEL_MAX_DIMS], mulOuterStride1[KERNEL_MAX_DIMS];
    uint64_t sumRowLength, keptCount, reducedCount, groupLength;
    uint64_t keptShape[KERNEL_MAX_DIMS], keptStride1[KERNEL_MAX_DIMS], keptStride2[KERNEL_MAX_DIMS];
    uint64_t keptStrideOut[KERNEL_MAX_DIMS];
    uint64_t reducedShape[KERNEL_MAX_DIMS], reducedStride1[KERNEL_MAX_DIMS], reducedStride2[KERNEL_MAX_DIMS];
    uint32_t tileLength, mulOuterRank, mulRowStride0, mulRowStride1;
    uint32_t sumInnerReduced, sumRowStride1, sumRowStride2, keptRank, reducedRank;
};

template <typename Tiling>
__aicore__ inline Params ReadParams(const Tiling &t)
{
    Params p;
    p.size0 = t.size0;
    p.size1 = t.size1;
    p.size2 = t.size2;
    p.sizeOut0 = t.sizeOut0;
    p.sizeOut1 = t.sizeOut1;
    p.mulRowLength = t.mulRowLength;
    p.mulRowCount = t.mulRowCount;
    p.sumRowLength = t.sumRowLength;
    p.keptCount = t.keptCount;
    p.reducedCount = t.reducedCount;
    p.groupLength = t.groupLength;
    for (uint32_t d = 0; d < KERNEL_MAX_DIMS; ++d) {
        p.mulOuterShape[d] = t.mulOuterShape[d];
        p.mulOuterStride0[d] = t.mulOuterStride0[d];
        p.mulOuterStride1[d] = t.mulOuterStride1[d];
        p.keptShape[d] = t.keptShape[d];
        p.keptStride1[d] = t.keptStride1[d];
        p.keptStride2[d] = t.keptStride2[d];
        p.keptStrideOut[d] = t.keptStrideOut[d];
        p.reducedShape[d] = t.reducedShape[d];
        p.reducedStride1[d] = t.reducedStride1[d];
        p.reducedStride2[d] = t.reducedStride2[d];
    }
    p.tileLength = t.tileLength;
    p.mulOuterRank = t.mulOuterRank;
    p.mulRowStride0 = t.mulRowStride0;
    p.mulRowStride1 = t.mulRowStride1;
    p.sumInnerReduced = t.sumInnerReduced;
    p.sumRowStride1 = t.sumRowStride1;
    p.sumRowStride2 = t.sumRowStride2;
    p.keptRank = t.keptRank;
    p.reducedRank = t.reducedRank;
    return p;
}

// Element offsets of one multi-index over `rank` dims (row-major decomposition of `linear`).
__aicore__ inline void Offsets(uint64_t linear, uint32_t rank, const uint64_t *shape, const uint64_t *sa,
                               const uint64_t *sb, uint64_t &offA, uint64_t &offB)
{
    offA = 0;
    offB = 0;
    for (int32_t d = static_cast<int32_t>(rank) - 1; d >= 0; --d) {
        uint64_t i = linear % shape[d];
        linear /= shape[d];
        offA += i * sa[d];
        offB += i * sb[d];
    }
}
}  // namespace

template <typename T>
class KernelConfusionMulGrad {
public:
    __aicore__ inline void Init(GM_ADDR x0, GM_ADDR x1, GM_ADDR x2, GM_ADDR y0, GM_ADDR y1,
                                const Params &t)
    {
        td = t;
        tile = t.tileLength;
        in0.SetGlobalBuffer((__gm__ T *)x0, t.size0);
        in1.SetGlobalBuffer((__gm__ T *)x1, t.size1);
        in2.SetGlobalBuffer((__gm__ T *)x2, t.size2);
        out0.SetGlobalBuffer((__gm__ T *)y0, t.sizeOut0);
        out1.SetGlobalBuffer((__gm__ T *)y1, t.sizeOut1);
        // UB plan (the tiling sizes `tile` to fill the UB with it: UbBytesPerElement): inQueue
        // 2 x 2 tiles of T, outQueue 2 x 1 tile of T, calcBuf 6 float tiles + ReduceSum work +
        // result block.
        pipe.InitBuffer(inQueue, BUFFER_NUM, 2 * tile * sizeof(T));
        pipe.InitBuffer(outQueue, BUFFER_NUM, tile * sizeof(T));
        pipe.InitBuffer(calcBuf, (6 * tile + REDUCE_WORK_FLOATS + 8) * sizeof(float));
        LocalTensor<float> calc = calcBuf.Get<float>();
        x1f = calc;                      // input1 tile as float32 (float16 inputs)
        x2f = calc[tile];                // input2 tile as float32 (float16 inputs)
        prod = calc[2 * tile];           // input1 * input2
        acc = calc[3 * tile];            // running sum of the groups (kept innermost dim)
        gacc = calc[4 * tile];           // running sum inside one group
        stage = calc[5 * tile];          // output1 values staged by the scalar unit
        work = calc[6 * tile];           // ReduceSum shared tmp buffer
        result = calc[6 * tile + REDUCE_WORK_FLOATS];  // ReduceSum destination (one block)
    }

    __aicore__ inline void Process()
    {
        ProcessMul();
        if (td.sumInnerReduced != 0) {
            ProcessSumReducedRow();
        } else {
            ProcessSumKeptRow();
        }
    }

private:
    // GM -> UB for `count` elements: DataCopy moves whole 32-byte blocks only
    // (atlasascendc_api_07_0103), DataCopyPad any byte length (atlasascendc_api_07_0265).
    __aicore__ inline void CopyIn(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t count)
    {
        uint32_t bytes = count * sizeof(T);
        if (bytes % 32 == 0) {
            DataCopy(dst, src, count);
        } else {
            DataCopyExtParams params{1, bytes, 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(dst, src, params, pad);
        }
    }

    // UB -> GM for `count` elements; DataCopyPad writes exactly `bytes`, never past the tensor.
    __aicore__ inline void CopyOut(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count)
    {
        uint32_t bytes = count * sizeof(T);
        if (bytes % 32 == 0) {
            DataCopy(dst, src, count);
        } else {
            DataCopyExtParams params{1, bytes, 0, 0, 0};
            DataCopyPad(dst, src, params);
        }
    }

    // Loads one operand's slice of a row into `dst`: a contiguous run, or (stride 0) nothing yet:
    // the scalar is broadcast by Fill after the tile is dequeued.
    __aicore__ inline void LoadRow(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint64_t offset,
                                   uint32_t contiguous, uint32_t count)
    {
        if (contiguous != 0) {
            CopyIn(dst, src[offset], count);
        }
    }

    // Broadcast of a scalar operand along the row: read it on the scalar unit, Duplicate on V
    // (Duplicate, atlasascendc_api_07_0088).
    __aicore__ inline void Fill(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint64_t offset,
                                uint32_t contiguous, uint32_t count)
    {
        if (contiguous == 0) {
            T value = src.GetValue(offset);
            Duplicate(dst, value, count);
        }
    }

    // output0 = input0 * input1, row by row, tile by tile.
    __aicore__ inline void ProcessMul()
    {
        uint64_t rowLength = td.mulRowLength;
        for (uint64_t row = 0; row < td.mulRowCount; ++row) {
            uint64_t base0 = 0;
            uint64_t base1 = 0;
            Offsets(row, td.mulOuterRank, td.mulOuterShape, td.mulOuterStride0, td.mulOuterStride1, base0,
                    base1);
            for (uint64_t c = 0; c < rowLength; c += tile) {
                uint32_t count = static_cast<uint32_t>(rowLength - c < tile ? rowLength - c : tile);
                uint64_t off0 = base0 + (td.mulRowStride0 != 0 ? c : 0);
                uint64_t off1 = base1 + (td.mulRowStride1 != 0 ? c : 0);
                LocalTensor<T> in = inQueue.AllocTensor<T>();
                LoadRow(in, in0, off0, td.mulRowStride0, count);
                LoadRow(in[tile], in1, off1, td.mulRowStride1, count);
                inQueue.EnQue(in);
                in = inQueue.DeQue<T>();
                Fill(in, in0, off0, td.mulRowStride0, count);
                Fill(in[tile], in1, off1, td.mulRowStride1, count);
                LocalTensor<T> out = outQueue.AllocTensor<T>();
                Mul(out, in, in[tile], count);  // Mul, atlasascendc_api_07_0037
                outQueue.EnQue(out);
                inQueue.FreeTensor(in);
                out = outQueue.DeQue<T>();
                CopyOut(out0[row * rowLength + c], out, count);
                outQueue.FreeTensor(out);
            }
        }
    }

    // Loads input1/input2 for one product tile and leaves prod = input1 * input2 in float32.
    __aicore__ inline void ProductTile(uint64_t off1, uint64_t off2, uint32_t count)
    {
        LocalTensor<T> in = inQueue.AllocTensor<T>();
        LoadRow(in, in1, off1, td.sumRowStride1, count);
        LoadRow(in[tile], in2, off2, td.sumRowStride2, count);
        inQueue.EnQue(in);
        in = inQueue.DeQue<T>();
        Fill(in, in1, off1, td.sumRowStride1, count);
        Fill(in[tile], in2, off2, td.sumRowStride2, count);
        MulAsFloat(in, count);
        inQueue.FreeTensor(in);
    }

    // prod = float(in[0:count]) * float(in[tile:tile+count]); half -> float is exact (CAST_NONE,
    // Cast atlasascendc_api_07_0073), and so is the product of two float16 values in float32.
    __aicore__ inline void MulAsFloat(const LocalTensor<half> &in, uint32_t count)
    {
        Cast(x1f, in, RoundMode::CAST_NONE, count);
        Cast(x2f, in[tile], RoundMode::CAST_NONE, count);
        Mul(prod, x1f, x2f, count);
    }

    __aicore__ inline void MulAsFloat(const LocalTensor<float> &in, uint32_t count)
    {
        Mul(prod, in, in[tile], count);
    }

    // float32 result tile -> output type in a VECOUT tensor: float16 rounds to nearest even
    // (CAST_RINT, atlasascendc_api_07_0073); float32 is copied exactly (Muls by 1).
    __aicore__ inline void ToOutput(const LocalTensor<half> &dst, const LocalTensor<float> &src, uint32_t count)
    {
        Cast(dst, src, RoundMode::CAST_RINT, count);
    }

    __aicore__ inline void ToOutput(const LocalTensor<float> &dst, const LocalTensor<float> &src, uint32_t count)
    {
        Muls(dst, src, 1.0f, count);
    }

    // Innermost product dim kept: for each tile of output1's innermost dim, loop over every
    // reduced index; groups of groupLength products are summed in gacc, the groups in acc.
    __aicore__ inline void ProcessSumKeptRow()
    {
        uint64_t rowLength = td.sumRowLength;
        for (uint64_t kept = 0; kept < td.keptCount; ++kept) {
            uint64_t kept1 = 0;
            uint64_t kept2 = 0;
            uint64_t keptOut = 0;
            Offsets(kept, td.keptRank, td.keptShape, td.keptStride1, td.keptStride2, kept1, kept2);
            uint64_t unused = 0;
            Offsets(kept, td.keptRank, td.keptShape, td.keptStrideOut, td.keptStrideOut, keptOut, unused);
            for (uint64_t c = 0; c < rowLength; c += tile) {
                uint32_t count = static_cast<uint32_t>(rowLength - c < tile ? rowLength - c : tile);
                Duplicate(acc, 0.0f, count);
                Duplicate(gacc, 0.0f, count);
                uint64_t inGroup = 0;
                for (uint64_t red = 0; red < td.reducedCount; ++red) {
                    uint64_t red1 = 0;
                    uint64_t red2 = 0;
                    Offsets(red, td.reducedRank, td.reducedShape, td.reducedStride1, td.reducedStride2, red1,
                            red2);
                    uint64_t off1 = kept1 + red1 + (td.sumRowStride1 != 0 ? c : 0);
                    uint64_t off2 = kept2 + red2 + (td.sumRowStride2 != 0 ? c : 0);
                    ProductTile(off1, off2, count);
                    Add(gacc, gacc, prod, count);
                    if (++inGroup == td.groupLength) {
                        Add(acc, acc, gacc, count);
                        Duplicate(gacc, 0.0f, count);
                        inGroup = 0;
                    }
                }
                if (inGroup != 0) {
                    Add(acc, acc, gacc, count);
                }
                LocalTensor<T> out = outQueue.AllocTensor<T>();
                ToOutput(out, acc, count);
                outQueue.EnQue(out);
                out = outQueue.DeQue<T>();
                CopyOut(out1[keptOut + c], out, count);
                outQueue.FreeTensor(out);
            }
        }
    }

    // Innermost product dim reduced: each output1 element accumulates its product tiles in
    // float32 vector lanes (groups of groupLength tiles in gacc, the groups in acc, as the kept
    // path does), then one ReduceSum (atlasascendc_api_07_0078; dst needs element alignment
    // only) writes the element straight into the staging tile. Nothing on the scalar unit waits
    // for V inside the loop, so the depth-2 input queue really overlaps the next tile's MTE2
    // copy with this tile's vector work (the template waited V -> S after every tile).
    __aicore__ inline void ProcessSumReducedRow()
    {
        uint64_t rowLength = td.sumRowLength;
        uint32_t lanes = static_cast<uint32_t>(rowLength < tile ? rowLength : tile);
        uint32_t staged = 0;
        uint64_t firstOut = 0;
        for (uint64_t kept = 0; kept < td.keptCount; ++kept) {
            uint64_t kept1 = 0;
            uint64_t kept2 = 0;
            Offsets(kept, td.keptRank, td.keptShape, td.keptStride1, td.keptStride2, kept1, kept2);
            Duplicate(acc, 0.0f, lanes);
            Duplicate(gacc, 0.0f, lanes);
            uint64_t inGroup = 0;
            for (uint64_t red = 0; red < td.reducedCount; ++red) {
                uint64_t red1 = 0;
                uint64_t red2 = 0;
                Offsets(red, td.reducedRank, td.reducedShape, td.reducedStride1, td.reducedStride2, red1, red2);
                for (uint64_t c = 0; c < rowLength; c += tile) {
                    uint32_t count = static_cast<uint32_t>(rowLength - c < tile ? rowLength - c : tile);
                    uint64_t off1 = kept1 + red1 + (td.sumRowStride1 != 0 ? c : 0);
                    uint64_t off2 = kept2 + red2 + (td.sumRowStride2 != 0 ? c : 0);
                    ProductTile(off1, off2, count);
                    Add(gacc, gacc, prod, count);
                    if (++inGroup == td.groupLength) {
                        Add(acc, acc, gacc, lanes);
                        Duplicate(gacc, 0.0f, lanes);
                        inGroup = 0;
                    }
                }
            }
            if (inGroup != 0) {
                Add(acc, acc, gacc, lanes);
            }
            ReduceSum(stage[staged], acc, work, lanes);
            ++staged;
            if (staged == tile || kept + 1 == td.keptCount) {
                FlushStage(firstOut, staged);
                firstOut += staged;
                staged = 0;
            }
        }
    }

    // Writes the `count` staged output1 values to out1[first...]. V wrote them and V converts
    // them, so program order on V is the only ordering needed; the queue orders V -> MTE3.
    __aicore__ inline void FlushStage(uint64_t first, uint32_t count)
    {
        LocalTensor<T> out = outQueue.AllocTensor<T>();
        ToOutput(out, stage, count);
        outQueue.EnQue(out);
        out = outQueue.DeQue<T>();
        CopyOut(out1[first], out, count);
        outQueue.FreeTensor(out);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> calcBuf;
    GlobalTensor<T> in0, in1, in2, out0, out1;
    LocalTensor<float> x1f, x2f, prod, acc, gacc, stage, work, result;
    Params td;
    uint32_t tile = 0;
};

extern "C" __global__ __aicore__ void confusion_mul_grad(GM_ADDR input0, GM_ADDR input1, GM_ADDR input2,
                                                         GM_ADDR output0, GM_ADDR output1,
                                                         GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    KernelConfusionMulGrad<DTYPE_INPUT0> op;
    op.Init(input0, input1, input2, output0, output1, ReadParams(tilingData));
    op.Process();
}
