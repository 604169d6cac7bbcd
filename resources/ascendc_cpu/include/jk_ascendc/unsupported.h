// Clean-room ascendc-cpu library: documented Ascend C APIs this library does NOT implement.
//
// Why: a kernel that calls one should fail at COMPILE time with a message that names the API,
// not with a wrong result or a vague "not declared". Each name below is a documented Ascend C API
// (basic vector instructions, mask registers, cube/matmul and high-level math/NN APIs of the
// atlasascendc_api_07_* reference). Every other unknown name already fails with g++'s
// "was not declared in this scope".
// The declarations are variadic templates taking `const A&...`, so they never win overload
// resolution against a kernel's own non-template function of the same name.
#pragma once

namespace jk {
template <typename... A>
inline constexpr bool unsupported_v = false;
}  // namespace jk

#define JK_UNSUPPORTED_FN(NAME)                                                               \
  template <typename... A>                                                                    \
  inline void NAME(const A&...) {                                                             \
    static_assert(jk::unsupported_v<A...>, "ascendc-cpu does not implement AscendC::" #NAME); \
  }

#define JK_UNSUPPORTED_CLASS(NAME)                                                            \
  template <typename... A>                                                                    \
  struct NAME {                                                                               \
    static_assert(jk::unsupported_v<A...>, "ascendc-cpu does not implement AscendC::" #NAME); \
  };

namespace AscendC {

// Selection, comparison, gather/scatter, sorting, layout.
JK_UNSUPPORTED_FN(Select)
JK_UNSUPPORTED_FN(Compare)
JK_UNSUPPORTED_FN(CompareScalar)
JK_UNSUPPORTED_FN(Gather)
JK_UNSUPPORTED_FN(GatherMask)
JK_UNSUPPORTED_FN(Scatter)
JK_UNSUPPORTED_FN(Sort)
JK_UNSUPPORTED_FN(Sort32)
JK_UNSUPPORTED_FN(MrgSort)
JK_UNSUPPORTED_FN(Transpose)
JK_UNSUPPORTED_FN(TransDataTo5HD)
JK_UNSUPPORTED_FN(Pad)
JK_UNSUPPORTED_FN(UnPad)
JK_UNSUPPORTED_FN(Brcb)
JK_UNSUPPORTED_FN(Broadcast)
// Vector instructions outside the implemented set.
JK_UNSUPPORTED_FN(Axpy)
JK_UNSUPPORTED_FN(LeakyRelu)
JK_UNSUPPORTED_FN(Rsqrt)
JK_UNSUPPORTED_FN(Not)
JK_UNSUPPORTED_FN(And)
JK_UNSUPPORTED_FN(Or)
JK_UNSUPPORTED_FN(ShiftLeft)
JK_UNSUPPORTED_FN(ShiftRight)
JK_UNSUPPORTED_FN(BlockReduceMax)
JK_UNSUPPORTED_FN(BlockReduceMin)
JK_UNSUPPORTED_FN(PairReduceSum)
JK_UNSUPPORTED_FN(RepeatReduceSum)
// Cube unit.
JK_UNSUPPORTED_FN(Mmad)
JK_UNSUPPORTED_FN(LoadData)
JK_UNSUPPORTED_CLASS(Matmul)
// High-level math and NN APIs.
JK_UNSUPPORTED_FN(SoftMax)
JK_UNSUPPORTED_FN(SimpleSoftMax)
JK_UNSUPPORTED_FN(LayerNorm)
JK_UNSUPPORTED_FN(RmsNorm)
JK_UNSUPPORTED_FN(Tanh)
JK_UNSUPPORTED_FN(Sigmoid)
JK_UNSUPPORTED_FN(Gelu)
JK_UNSUPPORTED_FN(Silu)
JK_UNSUPPORTED_FN(Erf)
JK_UNSUPPORTED_FN(Sin)
JK_UNSUPPORTED_FN(Cos)
JK_UNSUPPORTED_FN(Power)
JK_UNSUPPORTED_FN(CumSum)
JK_UNSUPPORTED_FN(Sum)
JK_UNSUPPORTED_FN(Mean)

}  // namespace AscendC

#undef JK_UNSUPPORTED_FN
#undef JK_UNSUPPORTED_CLASS
