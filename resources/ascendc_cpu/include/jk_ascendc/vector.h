// Clean-room ascendc-cpu library: element-wise vector instructions (V pipe).
//
// Each call is ONE V instruction (engine issue + the exact UB bytes it reads and writes).
// Arithmetic: half results are the IEEE binary16 rounding of the float result (exact for
// + - * / sqrt of halves, since float carries more than 2p+2 bits); Exp/Ln/Reciprocal in half
// are computed in float and rounded once to half. Overflow follows IEEE (Inf/NaN mode, the
// Atlas A2 default: aclcppdevg_03_1389 aclrtFloatOverflowMode). Integer + - * wrap modulo 2^n.
// Forms (atlasascendc_api_07_0047): count form `Op(dst, src0, src1, count)` and the
// high-dimension forms with a continuous `uint64_t mask` or a bitwise `uint64_t mask[]`,
// `repeatTimes` and BinaryRepeatParams / UnaryRepeatParams (atlasascendc_api_07_0013).
// Operand start addresses must be 32-byte aligned (general address constraint, 07_0047).
// The 07_0047 example Add(dst, src0, src1, 64, 1, {1, 1, 1, 8, 8, 8}) on 16-bit data writes
// dst elements 0..63 only ("undefined" after); binary sample template: atlasascendc_api_07_0052.
// In-place dst == src is allowed (same element positions are read before they are written).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "jk_ascendc/erased.h"
#include "jk_ascendc/repeat.h"

namespace jk {
namespace vops {

template <typename T>
inline float tf(T v) {
  return static_cast<float>(v);
}
template <typename T>
inline T ft(float v) {
  return static_cast<T>(v);
}

template <typename T>
constexpr bool is_int_v = std::is_same_v<T, int32_t> || std::is_same_v<T, int16_t>;
template <typename T>
constexpr bool arith_ok_v = rep::is_float_like_v<T> || is_int_v<T>;
template <typename T>
constexpr bool dup_ok_v = rep::is_float_like_v<T> || is_int_v<T> || std::is_same_v<T, uint16_t> ||
                          std::is_same_v<T, uint32_t>;

// Integer wrap-around arithmetic without signed-overflow UB.
template <typename T, typename F>
inline T wrap(T a, T b, F f) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(f(static_cast<U>(a), static_cast<U>(b))));
}

struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return wrap(a, b, [](auto x, auto y) { return x + y; });
    else return ft<T>(tf(a) + tf(b));
  }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return wrap(a, b, [](auto x, auto y) { return x - y; });
    else return ft<T>(tf(a) - tf(b));
  }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return wrap(a, b, [](auto x, auto y) { return x * y; });
    else return ft<T>(tf(a) * tf(b));
  }
};
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    return ft<T>(tf(a) / tf(b));
  }
};
struct MaxOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return a > b ? a : b;
    else return tf(a) > tf(b) ? a : b;
  }
};
struct MinOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (is_int_v<T>) return a < b ? a : b;
    else return tf(a) < tf(b) ? a : b;
  }
};

struct AbsOp {
  template <typename T>
  T operator()(T a) const {
    return ft<T>(std::fabs(tf(a)));
  }
};
struct ExpOp {
  template <typename T>
  T operator()(T a) const {
    return ft<T>(std::exp(tf(a)));
  }
};
struct LnOp {
  template <typename T>
  T operator()(T a) const {
    return ft<T>(std::log(tf(a)));
  }
};
struct SqrtOp {
  template <typename T>
  T operator()(T a) const {
    return ft<T>(std::sqrt(tf(a)));
  }
};
struct ReciprocalOp {
  template <typename T>
  T operator()(T a) const {
    return ft<T>(1.0f / tf(a));
  }
};
struct ReluOp {
  template <typename T>
  T operator()(T a) const {
    if constexpr (is_int_v<T>) return a > 0 ? a : T(0);
    else return tf(a) > 0.0f ? a : ft<T>(0.0f);
  }
};

// ---- binary: dst[i] = op(src0[i], src1[i]) ----------------------------------------------------
template <typename T, typename Op>
inline void binary_repeat(const char* api, const rep::Operand& d, const rep::Operand& a,
                          const rep::Operand& b, const rep::Walk& wd, const rep::Walk& wa,
                          const rep::Walk& wb, uint64_t r, Site site, Op op) {
  constexpr uint32_t L = rep::per_repeat<T>();
  T va[L], vb[L];
  wa.run(a, r, false, api, site, [&](uint32_t i, uint64_t o) { va[i] = rep::load<T>(a, o); });
  wb.run(b, r, false, api, site, [&](uint32_t i, uint64_t o) { vb[i] = rep::load<T>(b, o); });
  wd.run(d, r, true, api, site,
         [&](uint32_t i, uint64_t o) { rep::store<T>(d, o, op(va[i], vb[i])); });
}

template <typename T, typename Op>
inline void binary_count(const char* api, const AscendC::LocalTensor<T>& dst,
                         const AscendC::LocalTensor<T>& s0, const AscendC::LocalTensor<T>& s1,
                         int64_t count, Site site, Op op) {
  constexpr uint32_t L = rep::per_repeat<T>();
  const rep::CountPlan p = rep::plan_count(count, L, api, site);
  const rep::Operand d = rep::operand(dst, "dst", 1, 8, api, site);
  const rep::Operand a = rep::operand(s0, "src0", 1, 8, api, site);
  const rep::Operand b = rep::operand(s1, "src1", 1, 8, api, site);
  if (p.repeats() == 0) return;
  rep::issue_v(api, sizeof(T), p.repeats(), site);
  const uint64_t n = uint64_t(count);
  rep::declare_count(a, n, false, api, site);
  rep::declare_count(b, n, false, api, site);
  rep::declare_count(d, n, true, api, site);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t o = i * sizeof(T);
    rep::store<T>(d, o, op(rep::load<T>(a, o), rep::load<T>(b, o)));
  }
}

template <typename T, typename Op>
inline void binary_mask(const char* api, const AscendC::LocalTensor<T>& dst,
                        const AscendC::LocalTensor<T>& s0, const AscendC::LocalTensor<T>& s1,
                        const rep::MaskPlan& mp, const AscendC::BinaryRepeatParams& rp, Site site,
                        Op op) {
  const rep::Operand d = rep::operand(dst, "dst", rp.dstBlkStride, rp.dstRepStride, api, site);
  const rep::Operand a = rep::operand(s0, "src0", rp.src0BlkStride, rp.src0RepStride, api, site);
  const rep::Operand b = rep::operand(s1, "src1", rp.src1BlkStride, rp.src1RepStride, api, site);
  rep::issue_v(api, sizeof(T), mp.total(), site);
  constexpr uint32_t L = rep::per_repeat<T>();
  const rep::Walk wd(d, mp.body, L), wa(a, mp.body, L), wb(b, mp.body, L);
  for (uint64_t r = 0; r < mp.repeats; ++r) binary_repeat<T>(api, d, a, b, wd, wa, wb, r, site, op);
  if (mp.has_tail) {
    const rep::Walk td(d, mp.tail, L), ta(a, mp.tail, L), tb(b, mp.tail, L);
    binary_repeat<T>(api, d, a, b, td, ta, tb, mp.repeats, site, op);
  }
}

// ---- unary (and tensor-scalar): dst[i] = f(src[i]) ---------------------------------------------
template <typename T, typename F>
inline void unary_repeat(const char* api, const rep::Operand& d, const rep::Operand& s,
                         const rep::Walk& wd, const rep::Walk& ws, uint64_t r, Site site, F f) {
  constexpr uint32_t L = rep::per_repeat<T>();
  T vs[L];
  ws.run(s, r, false, api, site, [&](uint32_t i, uint64_t o) { vs[i] = rep::load<T>(s, o); });
  wd.run(d, r, true, api, site, [&](uint32_t i, uint64_t o) { rep::store<T>(d, o, f(vs[i])); });
}

template <typename T, typename F>
inline void unary_count(const char* api, const AscendC::LocalTensor<T>& dst,
                        const AscendC::LocalTensor<T>& src, int64_t count, Site site, F f) {
  constexpr uint32_t L = rep::per_repeat<T>();
  const rep::CountPlan p = rep::plan_count(count, L, api, site);
  const rep::Operand d = rep::operand(dst, "dst", 1, 8, api, site);
  const rep::Operand s = rep::operand(src, "src", 1, 8, api, site);
  if (p.repeats() == 0) return;
  rep::issue_v(api, sizeof(T), p.repeats(), site);
  const uint64_t n = uint64_t(count);
  rep::declare_count(s, n, false, api, site);
  rep::declare_count(d, n, true, api, site);
  for (uint64_t i = 0; i < n; ++i) rep::store<T>(d, i * sizeof(T), f(rep::load<T>(s, i * sizeof(T))));
}

template <typename T, typename F>
inline void unary_mask(const char* api, const AscendC::LocalTensor<T>& dst,
                       const AscendC::LocalTensor<T>& src, const rep::MaskPlan& mp,
                       const AscendC::UnaryRepeatParams& rp, Site site, F f) {
  const rep::Operand d = rep::operand(dst, "dst", rp.dstBlkStride, rp.dstRepStride, api, site);
  const rep::Operand s = rep::operand(src, "src", rp.srcBlkStride, rp.srcRepStride, api, site);
  rep::issue_v(api, sizeof(T), mp.total(), site);
  constexpr uint32_t L = rep::per_repeat<T>();
  const rep::Walk wd(d, mp.body, L), ws(s, mp.body, L);
  for (uint64_t r = 0; r < mp.repeats; ++r) unary_repeat<T>(api, d, s, wd, ws, r, site, f);
  if (mp.has_tail) {
    const rep::Walk td(d, mp.tail, L), ts(s, mp.tail, L);
    unary_repeat<T>(api, d, s, td, ts, mp.repeats, site, f);
  }
}
// ---- Duplicate: dst[i] = scalar --------------------------------------------------------------
template <typename T>
inline void dup_repeat(const char* api, const rep::Operand& d, const rep::Walk& wd, uint64_t r,
                       T v, Site site) {
  wd.run(d, r, true, api, site, [&](uint32_t, uint64_t o) { rep::store<T>(d, o, v); });
}

template <typename T>
inline void dup_count(const AscendC::LocalTensor<T>& dst, T v, int64_t count, Site site) {
  constexpr uint32_t L = rep::per_repeat<T>();
  const rep::CountPlan p = rep::plan_count(count, L, "Duplicate", site);
  const rep::Operand d = rep::operand(dst, "dst", 1, 8, "Duplicate", site);
  if (p.repeats() == 0) return;
  rep::issue_v("Duplicate", sizeof(T), p.repeats(), site);
  rep::declare_count(d, uint64_t(count), true, "Duplicate", site);
  for (uint64_t i = 0; i < uint64_t(count); ++i) rep::store<T>(d, i * sizeof(T), v);
}

template <typename T>
inline void dup_mask(const AscendC::LocalTensor<T>& dst, T v, const rep::MaskPlan& mp, uint16_t blk,
                     uint16_t rep, Site site) {
  const rep::Operand d = rep::operand(dst, "dst", blk, rep, "Duplicate", site);
  rep::issue_v("Duplicate", sizeof(T), mp.total(), site);
  const rep::Walk wd(d, mp.body, rep::per_repeat<T>());
  for (uint64_t r = 0; r < mp.repeats; ++r) dup_repeat<T>("Duplicate", d, wd, r, v, site);
  if (mp.has_tail) {
    const rep::Walk td(d, mp.tail, rep::per_repeat<T>());
    dup_repeat<T>("Duplicate", d, td, mp.repeats, v, site);
  }
}

}  // namespace vops

// ---- the compiled-once entry points (erased.h; defined in vector_impl.h) ----------------------
namespace ops {

enum class VOp : uint8_t {
  Add, Sub, Mul, Div, Max, Min,                 // binary
  Abs, Exp, Ln, Sqrt, Reciprocal, Relu,         // unary
  Adds, Muls, Maxs, Mins,                       // tensor-scalar
};

JK_ENGINE_FN void vec_binary_count(VOp op, Dt dt, const TRef& d, const TRef& a, const TRef& b,
                                   int64_t count, Site site);
JK_ENGINE_FN void vec_binary_mask(VOp op, Dt dt, const TRef& d, const TRef& a, const TRef& b,
                                  const rep::MaskPlan& mp, const AscendC::BinaryRepeatParams& rp,
                                  Site site);
// Unary and tensor-scalar ops (`v`: the scalar operand, unused by unary ops).
JK_ENGINE_FN void vec_unary_count(VOp op, Dt dt, const TRef& d, const TRef& s, Scalar v,
                                  int64_t count, Site site);
JK_ENGINE_FN void vec_unary_mask(VOp op, Dt dt, const TRef& d, const TRef& s, Scalar v,
                                 const rep::MaskPlan& mp, const AscendC::UnaryRepeatParams& rp,
                                 Site site);
JK_ENGINE_FN void vec_dup_count(Dt dt, const TRef& d, Scalar v, int64_t count, Site site);
JK_ENGINE_FN void vec_dup_mask(Dt dt, const TRef& d, Scalar v, const rep::MaskPlan& mp,
                               uint16_t blk, uint16_t rep, Site site);

}  // namespace ops
}  // namespace jk

namespace AscendC {

#define JK_VEC_STATIC_CHECK(COND, NAME, WHAT)                                                      \
  static_assert(COND, "ascendc-cpu: AscendC::" NAME " supports " WHAT)

// Binary instructions: count form, continuous-mask form, bitwise-mask form. A tagged element
// type goes to the compiled entry point, any other to the same template inline.
#define JK_VEC_BINARY_BODY(NAME, OP, MASK)                                                         \
  const jk::rep::MaskPlan mp =                                                                     \
      jk::rep::plan_mask<isSetMask>(MASK, jk::rep::per_repeat<T>(), repeatTimes, #NAME, site);     \
  if constexpr (jk::ops::erased_v<T>) {                                                            \
    jk::ops::vec_binary_mask(jk::ops::VOp::NAME, jk::ops::dt_of<T>(), jk::ops::ref(dst),           \
                             jk::ops::ref(src0), jk::ops::ref(src1), mp, repeatParams, site);      \
  } else {                                                                                         \
    jk::vops::binary_mask(#NAME, dst, src0, src1, mp, repeatParams, site, OP{});                   \
  }
#define JK_VEC_BINARY(NAME, OP, COND, WHAT)                                                        \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                          \
                   const LocalTensor<T>& src1, const int32_t& count, jk::Site site = jk::here()) { \
    JK_VEC_STATIC_CHECK(COND, #NAME, WHAT);                                                        \
    if constexpr (jk::ops::erased_v<T>) {                                                          \
      jk::ops::vec_binary_count(jk::ops::VOp::NAME, jk::ops::dt_of<T>(), jk::ops::ref(dst),        \
                                jk::ops::ref(src0), jk::ops::ref(src1), count, site);              \
    } else {                                                                                       \
      jk::vops::binary_count(#NAME, dst, src0, src1, count, site, OP{});                           \
    }                                                                                              \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                          \
                   const LocalTensor<T>& src1, uint64_t mask, const int32_t repeatTimes,           \
                   const BinaryRepeatParams& repeatParams, jk::Site site = jk::here()) {           \
    JK_VEC_STATIC_CHECK(COND, #NAME, WHAT);                                                        \
    JK_VEC_BINARY_BODY(NAME, OP, mask)                                                             \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                          \
                   const LocalTensor<T>& src1, const uint64_t mask[], const int32_t repeatTimes,   \
                   const BinaryRepeatParams& repeatParams, jk::Site site = jk::here()) {           \
    JK_VEC_STATIC_CHECK(COND, #NAME, WHAT);                                                        \
    JK_VEC_BINARY_BODY(NAME, OP, mask)                                                             \
  }

JK_VEC_BINARY(Add, jk::vops::AddOp, jk::vops::arith_ok_v<T>, "half, float, int16_t and int32_t")
JK_VEC_BINARY(Sub, jk::vops::SubOp, jk::vops::arith_ok_v<T>, "half, float, int16_t and int32_t")
JK_VEC_BINARY(Mul, jk::vops::MulOp, jk::vops::arith_ok_v<T>, "half, float, int16_t and int32_t")
JK_VEC_BINARY(Div, jk::vops::DivOp, jk::rep::is_float_like_v<T>, "half and float")
JK_VEC_BINARY(Max, jk::vops::MaxOp, jk::vops::arith_ok_v<T>, "half, float, int16_t and int32_t")
JK_VEC_BINARY(Min, jk::vops::MinOp, jk::vops::arith_ok_v<T>, "half, float, int16_t and int32_t")
#undef JK_VEC_BINARY
#undef JK_VEC_BINARY_BODY

// Unary instructions (FN: the element function of the inline path).
#define JK_VEC_UNARY_COUNT(NAME, FN)                                                               \
  if constexpr (jk::ops::erased_v<T>) {                                                            \
    jk::ops::vec_unary_count(jk::ops::VOp::NAME, jk::ops::dt_of<T>(), jk::ops::ref(dst),           \
                             jk::ops::ref(src), JK_VEC_SV, count, site);                           \
  } else {                                                                                         \
    jk::vops::unary_count(#NAME, dst, src, count, site, FN);                                       \
  }
#define JK_VEC_UNARY_MASK(NAME, FN, MASK)                                                          \
  const jk::rep::MaskPlan mp =                                                                     \
      jk::rep::plan_mask<isSetMask>(MASK, jk::rep::per_repeat<T>(), repeatTimes, #NAME, site);     \
  if constexpr (jk::ops::erased_v<T>) {                                                            \
    jk::ops::vec_unary_mask(jk::ops::VOp::NAME, jk::ops::dt_of<T>(), jk::ops::ref(dst),            \
                            jk::ops::ref(src), JK_VEC_SV, mp, repeatParams, site);                 \
  } else {                                                                                         \
    jk::vops::unary_mask(#NAME, dst, src, mp, repeatParams, site, FN);                             \
  }

#define JK_VEC_SV jk::ops::Scalar{}
#define JK_VEC_UNARY(NAME, OP, COND, WHAT)                                                         \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count,     \
                   jk::Site site = jk::here()) {                                                   \
    JK_VEC_STATIC_CHECK(COND, #NAME, WHAT);                                                        \
    JK_VEC_UNARY_COUNT(NAME, [](T x) { return OP{}(x); })                                          \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,            \
                   const int32_t repeatTimes, const UnaryRepeatParams& repeatParams,               \
                   jk::Site site = jk::here()) {                                                   \
    JK_VEC_STATIC_CHECK(COND, #NAME, WHAT);                                                        \
    JK_VEC_UNARY_MASK(NAME, [](T x) { return OP{}(x); }, mask)                                     \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],    \
                   const int32_t repeatTimes, const UnaryRepeatParams& repeatParams,               \
                   jk::Site site = jk::here()) {                                                   \
    JK_VEC_STATIC_CHECK(COND, #NAME, WHAT);                                                        \
    JK_VEC_UNARY_MASK(NAME, [](T x) { return OP{}(x); }, mask)                                     \
  }

JK_VEC_UNARY(Abs, jk::vops::AbsOp, jk::rep::is_float_like_v<T>, "half and float")
JK_VEC_UNARY(Exp, jk::vops::ExpOp, jk::rep::is_float_like_v<T>, "half and float")
JK_VEC_UNARY(Ln, jk::vops::LnOp, jk::rep::is_float_like_v<T>, "half and float")
JK_VEC_UNARY(Sqrt, jk::vops::SqrtOp, jk::rep::is_float_like_v<T>, "half and float")
JK_VEC_UNARY(Reciprocal, jk::vops::ReciprocalOp, jk::rep::is_float_like_v<T>, "half and float")
JK_VEC_UNARY(Relu, jk::vops::ReluOp, (jk::rep::is_float_like_v<T> || std::is_same_v<T, int32_t>),
             "half, float and int32_t")
#undef JK_VEC_UNARY
#undef JK_VEC_SV

// Tensor-scalar instructions: dst[i] = op(src[i], scalarValue).
#define JK_VEC_SV jk::ops::scalar<T>(s)
#define JK_VEC_SCALAR(NAME, OP)                                                                    \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,     \
                   const int32_t& count, jk::Site site = jk::here()) {                             \
    JK_VEC_STATIC_CHECK(jk::vops::arith_ok_v<T>, #NAME, "half, float, int16_t and int32_t");       \
    const T s = scalarValue;                                                                       \
    JK_VEC_UNARY_COUNT(NAME, [s](T x) { return OP{}(x, s); })                                      \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,     \
                   uint64_t mask, const int32_t repeatTimes, const UnaryRepeatParams& repeatParams, \
                   jk::Site site = jk::here()) {                                                   \
    JK_VEC_STATIC_CHECK(jk::vops::arith_ok_v<T>, #NAME, "half, float, int16_t and int32_t");       \
    const T s = scalarValue;                                                                       \
    JK_VEC_UNARY_MASK(NAME, [s](T x) { return OP{}(x, s); }, mask)                                 \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,     \
                   const uint64_t mask[], const int32_t repeatTimes,                               \
                   const UnaryRepeatParams& repeatParams, jk::Site site = jk::here()) {            \
    JK_VEC_STATIC_CHECK(jk::vops::arith_ok_v<T>, #NAME, "half, float, int16_t and int32_t");       \
    const T s = scalarValue;                                                                       \
    JK_VEC_UNARY_MASK(NAME, [s](T x) { return OP{}(x, s); }, mask)                                 \
  }

JK_VEC_SCALAR(Adds, jk::vops::AddOp)
JK_VEC_SCALAR(Muls, jk::vops::MulOp)
JK_VEC_SCALAR(Maxs, jk::vops::MaxOp)
JK_VEC_SCALAR(Mins, jk::vops::MinOp)
#undef JK_VEC_SCALAR
#undef JK_VEC_SV
#undef JK_VEC_UNARY_COUNT
#undef JK_VEC_UNARY_MASK

// Duplicate: count form and mask forms with (dstBlockStride, dstRepeatStride).
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count,
                      jk::Site site = jk::here()) {
  JK_VEC_STATIC_CHECK(jk::vops::dup_ok_v<T>, "Duplicate", "16-bit and 32-bit element types");
  const T v = scalarValue;
  if constexpr (jk::ops::erased_v<T>) {
    jk::ops::vec_dup_count(jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::scalar<T>(v), count,
                           site);
  } else {
    jk::vops::dup_count<T>(dst, v, count, site);
  }
}

namespace jkdetail {
template <typename T>
inline void dup_mask(const LocalTensor<T>& dst, T v, const jk::rep::MaskPlan& mp, uint16_t blk,
                     uint16_t rep, jk::Site site) {
  if constexpr (jk::ops::erased_v<T>) {
    jk::ops::vec_dup_mask(jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::scalar<T>(v), mp, blk,
                          rep, site);
  } else {
    jk::vops::dup_mask<T>(dst, v, mp, blk, rep, site);
  }
}
}  // namespace jkdetail

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,
                      const int32_t repeatTimes, const uint16_t dstBlockStride,
                      const uint16_t dstRepeatStride, jk::Site site = jk::here()) {
  JK_VEC_STATIC_CHECK(jk::vops::dup_ok_v<T>, "Duplicate", "16-bit and 32-bit element types");
  const jk::rep::MaskPlan mp =
      jk::rep::plan_mask<isSetMask>(mask, jk::rep::per_repeat<T>(), repeatTimes, "Duplicate", site);
  jkdetail::dup_mask(dst, scalarValue, mp, dstBlockStride, dstRepeatStride, site);
}

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                      const int32_t repeatTimes, const uint16_t dstBlockStride,
                      const uint16_t dstRepeatStride, jk::Site site = jk::here()) {
  JK_VEC_STATIC_CHECK(jk::vops::dup_ok_v<T>, "Duplicate", "16-bit and 32-bit element types");
  const jk::rep::MaskPlan mp =
      jk::rep::plan_mask<isSetMask>(mask, jk::rep::per_repeat<T>(), repeatTimes, "Duplicate", site);
  jkdetail::dup_mask(dst, scalarValue, mp, dstBlockStride, dstRepeatStride, site);
}

}  // namespace AscendC

#if JK_ENGINE_DEFS
#include "jk_ascendc/vector_impl.h"
#endif
