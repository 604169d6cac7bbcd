// Probe kernel: output0 = input0 * input1 row-blocked over the cores, output1 = zeros.
// Variants (-D): PROBE_RAW dereferences a GM pointer directly; PROBE_RACY copies the inputs into
// a TBuf and multiplies with no EnQue/DeQue or flag in between (an MTE2 -> V race); PROBE_CATCH
// swallows a misuse with try/catch and carries on; PROBE_TILING_WRITE writes the tiling bytes.
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
    qo.FreeTensor(lo);
    lz = qz.DeQue<float>();
    DataCopy(o1, lz, t.rowsPerBlock);
    qz.FreeTensor(lz);
}
