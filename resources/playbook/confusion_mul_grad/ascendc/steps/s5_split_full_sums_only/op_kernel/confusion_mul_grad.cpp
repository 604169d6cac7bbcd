// ConfusionMulGrad baseline kernel: straightforward and correct for every valid call, not fast.
//   output0 = input0 * input1, by rows of the merged output0 space (each operand a contiguous row
//             or a scalar broadcast along it);
//   output1 = reduce_sum(input1 * input2): when the innermost product dim is kept, by row tiles of
//             output1, accumulating every reduced step into a float32 UB tile (grouped partial
//             sums); when it is reduced, by output elements, accumulating the product tiles in
//             float32 vector lanes (grouped likewise) and reducing the lanes once per element.
// Playbook steps: s1 the reduced-row path keeps the scalar unit out of its loop, so the
// double-buffered queues overlap MTE2 with V (the template waited V -> S on every tile);
// s2 tiles as large as the UB plan allows (the tiling computes them); s3 output0 computed in
// the output1 pass when nothing broadcasts (input1 read once); s4 every vector core, each on
// its own flat range of output0 and of output1 (the tiling's mulPerBlock / sumPerBlock); s5
// reductions with few outputs split their reduced work over the cores instead (partials in the
// workspace, SyncAll, the last block combines).
// float16 operands are cast to float32 before the products (exact), sums stay in float32,
// and the result is rounded once to float16 (round to nearest even).
// Everything lives in UB; the workspace holds the split reductions' partials.
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
    uint64_t sumRowLength, keptCount, reducedCount, groupLength, mulPerBlock, sumPerBlock;
    uint64_t redPerBlock, partLength, partStride;
    uint64_t keptShape[KERNEL_MAX_DIMS], keptStride1[KERNEL_MAX_DIMS], keptStride2[KERNEL_MAX_DIMS];
    uint64_t keptStrideOut[KERNEL_MAX_DIMS];
    uint64_t reducedShape[KERNEL_MAX_DIMS], reducedStride1[KERNEL_MAX_DIMS], reducedStride2[KERNEL_MAX_DIMS];
    uint32_t tileLength, mulOuterRank, mulRowStride0, mulRowStride1;
    uint32_t sumInnerReduced, sumRowStride1, sumRowStride2, keptRank, reducedRank, fused, splitReduce;
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
    p.mulPerBlock = t.mulPerBlock;
    p.sumPerBlock = t.sumPerBlock;
    p.redPerBlock = t.redPerBlock;
    p.partLength = t.partLength;
    p.partStride = t.partStride;
    p.splitReduce = t.splitReduce;
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
    p.fused = t.fused;
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
    __aicore__ inline void Init(GM_ADDR x0, GM_ADDR x1, GM_ADDR x2, GM_ADDR y0, GM_ADDR y1, GM_ADDR ws,
                                const Params &t)
    {
        td = t;
        tile = t.tileLength;
        block = GetBlockIdx();  // atlasascendc_api_07_0184
        in0.SetGlobalBuffer((__gm__ T *)x0, t.size0);
        in1.SetGlobalBuffer((__gm__ T *)x1, t.size1);
        in2.SetGlobalBuffer((__gm__ T *)x2, t.size2);
        out0.SetGlobalBuffer((__gm__ T *)y0, t.sizeOut0);
        out1.SetGlobalBuffer((__gm__ T *)y1, t.sizeOut1);
        if (t.splitReduce != 0) {  // one float32 row of output1 partials per block
            part.SetGlobalBuffer((__gm__ float *)GetUserWorkspace(ws), GetBlockNum() * t.partStride);
        }
        // UB plan (the tiling sizes `tile` to fill the UB with it: UbBytesPerElement): inQueue
        // 2 x 2 tiles of T (2 x 3 when fused: input0 too), outQueue 2 x 1 tile of T, calcBuf
        // 6 float tiles + ReduceSum work + result block.
        pipe.InitBuffer(inQueue, BUFFER_NUM, (t.fused != 0 ? 3 : 2) * tile * sizeof(T));
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
        if (td.fused == 0) {
            ProcessMul();  // fused: output0 is written by the output1 pass, tile by tile
        }
        if (td.splitReduce != 0) {
            if (td.sumInnerReduced != 0) {
                SplitReducedRow();
            } else {
                SplitKeptRow();
            }
            Combine();
        } else if (td.sumInnerReduced != 0) {
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
    // This block's share [lo, hi) of `total` items, `per` each (the tiling's per-block range).
    __aicore__ inline void Share(uint64_t total, uint64_t per, uint64_t &lo, uint64_t &hi) const
    {
        lo = block * per;
        lo = lo < total ? lo : total;
        hi = lo + per < total ? lo + per : total;
    }

    // output0 = input0 * input1 over this block's flat range of output0, row piece by row piece.
    __aicore__ inline void ProcessMul()
    {
        uint64_t rowLength = td.mulRowLength;
        uint64_t lo = 0;
        uint64_t hi = 0;
        Share(td.sizeOut0, td.mulPerBlock, lo, hi);
        for (uint64_t row = lo / rowLength; row * rowLength < hi; ++row) {
            uint64_t base0 = 0;
            uint64_t base1 = 0;
            Offsets(row, td.mulOuterRank, td.mulOuterShape, td.mulOuterStride0, td.mulOuterStride1, base0,
                    base1);
            uint64_t start = row * rowLength;
            uint64_t begin = start < lo ? lo - start : 0;
            uint64_t end = hi - start < rowLength ? hi - start : rowLength;
            for (uint64_t c = begin; c < end; c += tile) {
                uint32_t count = static_cast<uint32_t>(end - c < tile ? end - c : tile);
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
    // Fused (the tiling found no broadcast: all three inputs and both product spaces have one
    // shape, so input0, input1 and output0 share the offset off1): input0's tile comes in the
    // same queue slot and output0 = input0 * input1 leaves from it, so input1 is read once
    // ("Continuous Vector Computations Through UB Fusion", atlas_ascendc_best_practices_10_0020).
    __aicore__ inline void ProductTile(uint64_t off1, uint64_t off2, uint32_t count)
    {
        LocalTensor<T> in = inQueue.AllocTensor<T>();
        LoadRow(in, in1, off1, td.sumRowStride1, count);
        LoadRow(in[tile], in2, off2, td.sumRowStride2, count);
        if (td.fused != 0) {
            CopyIn(in[2 * tile], in0[off1], count);
        }
        inQueue.EnQue(in);
        in = inQueue.DeQue<T>();
        Fill(in, in1, off1, td.sumRowStride1, count);
        Fill(in[tile], in2, off2, td.sumRowStride2, count);
        LocalTensor<T> y;
        if (td.fused != 0) {
            y = outQueue.AllocTensor<T>();
            Mul(y, in[2 * tile], in, count);
            outQueue.EnQue(y);
        }
        MulAsFloat(in, count);
        inQueue.FreeTensor(in);
        if (td.fused != 0) {
            y = outQueue.DeQue<T>();
            CopyOut(out0[off1], y, count);
            outQueue.FreeTensor(y);
        }
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
    // This block takes the flat range [lo, hi) of output1 (row-major: kept * rowLength + c).
    __aicore__ inline void ProcessSumKeptRow()
    {
        uint64_t rowLength = td.sumRowLength;
        uint64_t lo = 0;
        uint64_t hi = 0;
        Share(td.sizeOut1, td.sumPerBlock, lo, hi);
        for (uint64_t kept = lo / rowLength; kept * rowLength < hi; ++kept) {
            uint64_t kept1 = 0;
            uint64_t kept2 = 0;
            uint64_t keptOut = 0;
            Offsets(kept, td.keptRank, td.keptShape, td.keptStride1, td.keptStride2, kept1, kept2);
            uint64_t unused = 0;
            Offsets(kept, td.keptRank, td.keptShape, td.keptStrideOut, td.keptStrideOut, keptOut, unused);
            uint64_t start = kept * rowLength;
            uint64_t begin = start < lo ? lo - start : 0;
            uint64_t end = hi - start < rowLength ? hi - start : rowLength;
            for (uint64_t c = begin; c < end; c += tile) {
                uint32_t count = static_cast<uint32_t>(end - c < tile ? end - c : tile);
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
        uint64_t lo = 0;
        uint64_t hi = 0;
        Share(td.keptCount, td.sumPerBlock, lo, hi);  // this block's output1 elements
        uint64_t firstOut = lo;
        for (uint64_t kept = lo; kept < hi; ++kept) {
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
            if (staged == tile || kept + 1 == hi) {
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

    // Playbook step s5: reductions with few output elements (columns, a full sum, a few rows)
    // split the reduced work over the cores instead of the outputs: each block sums its share of
    // the reduced steps (kept innermost dim) or of the row tiles (reduced innermost dim) into a
    // float32 row of partials in the workspace, SyncAll (atlasascendc_api_07_0204), and the last
    // block adds every block's row and writes output1.
    __aicore__ inline void SplitKeptRow()
    {
        uint64_t rowLength = td.sumRowLength;
        uint64_t rlo = 0;
        uint64_t rhi = 0;
        Share(td.reducedCount, td.redPerBlock, rlo, rhi);
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
                for (uint64_t red = rlo; red < rhi; ++red) {
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
                WritePartial(acc, keptOut + c, count);
            }
        }
    }

    __aicore__ inline void SplitReducedRow()
    {
        uint64_t rowLength = td.sumRowLength;
        uint64_t tiles = (rowLength + tile - 1) / tile;
        uint32_t lanes = static_cast<uint32_t>(rowLength < tile ? rowLength : tile);
        uint64_t tlo = 0;
        uint64_t thi = 0;
        Share(td.reducedCount * tiles, td.redPerBlock, tlo, thi);
        for (uint64_t kept = 0; kept < td.keptCount; ++kept) {  // keptCount <= tile (the tiling)
            uint64_t kept1 = 0;
            uint64_t kept2 = 0;
            Offsets(kept, td.keptRank, td.keptShape, td.keptStride1, td.keptStride2, kept1, kept2);
            Duplicate(acc, 0.0f, lanes);
            Duplicate(gacc, 0.0f, lanes);
            uint64_t inGroup = 0;
            for (uint64_t t = tlo; t < thi; ++t) {
                uint64_t red = t / tiles;
                uint64_t c = (t - red * tiles) * tile;
                uint32_t count = static_cast<uint32_t>(rowLength - c < tile ? rowLength - c : tile);
                uint64_t red1 = 0;
                uint64_t red2 = 0;
                Offsets(red, td.reducedRank, td.reducedShape, td.reducedStride1, td.reducedStride2, red1, red2);
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
            if (inGroup != 0) {
                Add(acc, acc, gacc, lanes);
            }
            ReduceSum(stage[kept], acc, work, lanes);
        }
        WritePartial(stage, 0, static_cast<uint32_t>(td.keptCount));
    }

    // src[0:count] (float32, V wrote it) -> this block's partials row at `at`. MTE3 reads what V
    // wrote, and V overwrites src next: V -> MTE3 and MTE3 -> V flags (atlasascendc_api_07_0270).
    __aicore__ inline void WritePartial(const LocalTensor<float> &src, uint64_t at, uint32_t count)
    {
        TEventID vToOut = pipe.FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(vToOut);
        WaitFlag<HardEvent::V_MTE3>(vToOut);
        DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(float)), 0, 0, 0};
        DataCopyPad(part[block * td.partStride + at], src, params);
        TEventID outToV = pipe.FetchEventID(HardEvent::MTE3_V);
        SetFlag<HardEvent::MTE3_V>(outToV);
        WaitFlag<HardEvent::MTE3_V>(outToV);
    }

    // After every block wrote its row: the last block adds the rows tile by tile and writes
    // output1 (float32 sums of at most GetBlockNum() partials, rounded once to T).
    __aicore__ inline void Combine()
    {
        SyncAll();
        uint64_t blocks = GetBlockNum();
        if (block + 1 != blocks) {
            return;
        }
        for (uint64_t o = 0; o < td.partLength; o += tile) {
            uint32_t count = static_cast<uint32_t>(td.partLength - o < tile ? td.partLength - o : tile);
            Duplicate(acc, 0.0f, count);
            for (uint64_t b = 0; b < blocks; ++b) {
                LocalTensor<T> in = inQueue.AllocTensor<T>();
                LocalTensor<float> f = in.template ReinterpretCast<float>();
                DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(float)), 0, 0, 0};
                DataCopyPadExtParams<float> pad{false, 0, 0, 0};
                DataCopyPad(f, part[b * td.partStride + o], params, pad);
                inQueue.EnQue(in);
                in = inQueue.DeQue<T>();
                Add(acc, acc, in.template ReinterpretCast<float>(), count);
                inQueue.FreeTensor(in);
            }
            LocalTensor<T> out = outQueue.AllocTensor<T>();
            ToOutput(out, acc, count);
            outQueue.EnQue(out);
            out = outQueue.DeQue<T>();
            CopyOut(out1[o], out, count);
            outQueue.FreeTensor(out);
        }
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue;
    TBuf<TPosition::VECCALC> calcBuf;
    GlobalTensor<T> in0, in1, in2, out0, out1;
    GlobalTensor<float> part;
    LocalTensor<float> x1f, x2f, prod, acc, gacc, stage, work, result;
    Params td;
    uint32_t tile = 0;
    uint64_t block = 0;
};

extern "C" __global__ __aicore__ void confusion_mul_grad(GM_ADDR input0, GM_ADDR input1, GM_ADDR input2,
                                                         GM_ADDR output0, GM_ADDR output1,
                                                         GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelConfusionMulGrad<DTYPE_INPUT0> op;
    op.Init(input0, input1, input2, output0, output1, workspace, ReadParams(tilingData));
    op.Process();
}
