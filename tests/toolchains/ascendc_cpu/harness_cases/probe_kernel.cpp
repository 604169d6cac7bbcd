// Probe kernel: output0 = input0 * input1 row-blocked over the cores, output1 = zeros.
// Variants (-D): PROBE_RAW dereferences a GM pointer directly; PROBE_RACY copies the inputs into
// a TBuf and multiplies with no EnQue/DeQue or flag in between (an MTE2 -> V race); PROBE_CATCH
// swallows a misuse with try/catch and carries on; PROBE_TILING_WRITE writes the tiling bytes;
// PROBE_SYNCALL passes data between cores through GM: every block writes the first 8 products
// of its tile to its 32 bytes of workspace, SyncAll, then block 0 sums the partials of all blocks
// into output1[0..8) (atlasascendc_api_07_0204: writes before SyncAll are seen after it).
// Every variant checks TILING_KEY_IS (the probe host sets key 3).
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void confusion_mul_grad(GM_ADDR input0, GM_ADDR input1, GM_ADDR input2,
                                                         GM_ADDR output0, GM_ADDR output1, GM_ADDR workspace,
                                                         GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
#ifdef PROBE_TILING_WRITE
    tiling[2] = 1;
#endif
#ifdef PROBE_RAW
    volatile float first = *reinterpret_cast<volatile float*>(input1 + 8);
    (void)first;
#endif
    if (!TILING_KEY_IS(3)) {
        return;  // output stays NaN: the test sees it
    }
    const uint32_t n = t.rowsPerBlock * t.cols;
    const uint32_t first_row = GetBlockIdx() * t.rowsPerBlock;
    GlobalTensor<float> a, b, o0, o1;
    a.SetGlobalBuffer((__gm__ float*)input0 + first_row * t.cols, n);
    b.SetGlobalBuffer((__gm__ float*)input1 + first_row * t.cols, n);
    o0.SetGlobalBuffer((__gm__ float*)output0 + first_row * t.cols, n);
    o1.SetGlobalBuffer((__gm__ float*)output1 + first_row, t.rowsPerBlock);
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> qo, qz;
    pipe.InitBuffer(qo, 1, n * sizeof(float));
    pipe.InitBuffer(qz, 1, t.rowsPerBlock * sizeof(float));
#ifdef PROBE_RACY
    TBuf<TPosition::VECCALC> ba, bb;
    pipe.InitBuffer(ba, n * sizeof(float));
    pipe.InitBuffer(bb, n * sizeof(float));
    LocalTensor<float> la = ba.Get<float>();
    LocalTensor<float> lb = bb.Get<float>();
    DataCopy(la, a, n);
    DataCopy(lb, b, n);
#else
    TQue<QuePosition::VECIN, 1> qa, qb;
    pipe.InitBuffer(qa, 1, n * sizeof(float));
    pipe.InitBuffer(qb, 1, n * sizeof(float));
    LocalTensor<float> la = qa.AllocTensor<float>();
    LocalTensor<float> lb = qb.AllocTensor<float>();
#ifdef PROBE_CATCH
    try {
        DataCopy(la, a, 3);  // 12 bytes: not a whole number of 32-byte blocks
    } catch (...) {
    }
#endif
    DataCopy(la, a, n);
    DataCopy(lb, b, n);
    qa.EnQue(la);
    qb.EnQue(lb);
    la = qa.DeQue<float>();
    lb = qb.DeQue<float>();
#endif
    LocalTensor<float> lo = qo.AllocTensor<float>();
    Mul(lo, la, lb, n);
    qo.EnQue(lo);
    LocalTensor<float> lz = qz.AllocTensor<float>();
    Duplicate(lz, 0.0f, static_cast<int32_t>(t.rowsPerBlock));
    qz.EnQue(lz);
#ifndef PROBE_RACY
    qa.FreeTensor(la);
    qb.FreeTensor(lb);
#endif
    lo = qo.DeQue<float>();
    DataCopy(o0, lo, n);
#ifdef PROBE_SYNCALL
    GlobalTensor<float> partials;
    partials.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace), 8 * GetBlockNum());
    DataCopy(partials[8 * GetBlockIdx()], lo, 8);
#endif
    qo.FreeTensor(lo);
    lz = qz.DeQue<float>();
    DataCopy(o1, lz, t.rowsPerBlock);
    qz.FreeTensor(lz);
#ifdef PROBE_SYNCALL
    SyncAll();
    if (GetBlockIdx() == 0) {
        const uint32_t all = 8 * static_cast<uint32_t>(GetBlockNum());
        TQue<QuePosition::VECIN, 1> qp;
        TQue<QuePosition::VECOUT, 1> qs;
        pipe.InitBuffer(qp, 1, all * sizeof(float));
        pipe.InitBuffer(qs, 1, 8 * sizeof(float));
        LocalTensor<float> lp = qp.AllocTensor<float>();
        DataCopy(lp, partials, all);
        qp.EnQue(lp);
        lp = qp.DeQue<float>();
        LocalTensor<float> ls = qs.AllocTensor<float>();
        DataCopy(ls, lp, 8);
        for (uint32_t k = 8; k < all; k += 8) Add(ls, ls, lp[k], 8);
        qs.EnQue(ls);
        qp.FreeTensor(lp);
        ls = qs.DeQue<float>();
        DataCopy(o1, ls, 8);
        qs.FreeTensor(ls);
    }
#endif
}
