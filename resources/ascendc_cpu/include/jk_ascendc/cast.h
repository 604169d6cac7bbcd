// Clean-room ascendc-cpu library: Cast (precision conversion between LocalTensors, V pipe).
//
// Ref: Cast, atlasascendc_api_07_0073 (07_0072 in CANN 8.0/8.5): rounding rules per RoundMode
//   CAST_RINT  first dropped bit 0 -> keep; 1 and rest non-zero -> up; exact tie -> to even.
//   CAST_FLOOR toward -inf; CAST_CEIL toward +inf; CAST_TRUNC toward zero;
//   CAST_ROUND first dropped bit 1 -> up (ties away from zero);
//   CAST_ODD   inexact -> the neighbour whose last mantissa bit is 1 (Von Neumann rounding).
//   CAST_NONE  "CAST_RINT when the conversion loses precision, no rounding otherwise" (RoundMode
//              definition, atlasascendc_api_07_0018).
// CAST_ODD exists only for float -> half (07_0018: "f322f16: CAST_ODD"); elsewhere it is
// `unsupported_argument`. Conversions: float<->half, float->int32_t, half->int32_t,
// int32_t->float, float->float (round to an integral value, 07_0073 table 1).
// Overflow: float results follow IEEE 754 for the rounding direction (Atlas A2 default Inf/NaN
// mode, aclcppdevg_03_1389: RINT/ROUND overflow to inf, TRUNC/ODD to the largest finite value,
// FLOOR/CEIL by sign); integer results saturate (07_0073: "溢出默认按照饱和处理"), NaN -> 0.
// The mask/repeat form uses the wider element type for the lanes of one repeat (64 for a
// float<->half pair) and each operand's own element size for its block/repeat strides.
#pragma once

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "jk_ascendc/erased.h"
#include "jk_ascendc/repeat.h"

namespace jk {
namespace cast {

using Mode = AscendC::RoundMode;

inline bool odd(double v) { return std::fmod(v, 2.0) != 0.0; }

// Round the integral-or-not non-negative quotient q per mode (sign of the value in `neg`).
inline double round_q(double q, bool neg, Mode mode) {
  const double fl = std::floor(q);
  const double frac = q - fl;
  switch (mode) {
    case Mode::CAST_ROUND:
      return frac >= 0.5 ? fl + 1 : fl;
    case Mode::CAST_TRUNC:
      return fl;
    case Mode::CAST_FLOOR:
      return (neg && frac > 0) ? fl + 1 : fl;
    case Mode::CAST_CEIL:
      return (!neg && frac > 0) ? fl + 1 : fl;
    case Mode::CAST_ODD:
      return frac == 0 ? fl : (odd(fl) ? fl : fl + 1);
    default:  // CAST_NONE with precision loss, CAST_RINT
      return frac > 0.5 ? fl + 1 : (frac < 0.5 ? fl : (odd(fl) ? fl + 1 : fl));
  }
}

// Round x (exact in double) to a binary format with p significand bits, minimum normal exponent
// emin and largest finite value maxf; IEEE overflow per rounding direction.
inline double round_format(double x, int p, int emin, double maxf, Mode mode) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  const bool neg = x < 0;
  const double a = std::fabs(x);
  int e = std::ilogb(a);
  if (e < emin) e = emin;
  const double ulp = std::ldexp(1.0, e - (p - 1));
  double res = round_q(a / ulp, neg, mode) * ulp;
  if (res > maxf) {
    const bool to_inf = mode == Mode::CAST_NONE || mode == Mode::CAST_RINT ||
                        mode == Mode::CAST_ROUND || (mode == Mode::CAST_CEIL && !neg) ||
                        (mode == Mode::CAST_FLOOR && neg);
    res = to_inf ? INFINITY : maxf;
  }
  return neg ? -res : res;
}

// Round x to an integral value per mode (signed: FLOOR/CEIL act on the value, not |x|).
inline double round_integral(double x, Mode mode) {
  if (std::isnan(x) || std::isinf(x)) return x;
  const bool neg = x < 0;
  const double r = round_q(std::fabs(x), neg, mode);
  return neg ? -r : r;
}

inline int32_t saturate_i32(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(v);
}

template <typename D, typename S>
constexpr bool supported_v =
    (std::is_same_v<S, float> && (rep::is_half_v<D> || std::is_same_v<D, int32_t> ||
                                  std::is_same_v<D, float>)) ||
    (rep::is_half_v<S> && (std::is_same_v<D, float> || std::is_same_v<D, int32_t>)) ||
    (std::is_same_v<S, int32_t> && std::is_same_v<D, float>);

template <typename D, typename S>
inline D convert(S v, Mode mode) {
  if constexpr (std::is_same_v<D, int32_t>) {
    const Mode m = mode == Mode::CAST_NONE ? Mode::CAST_RINT : mode;
    return saturate_i32(round_integral(static_cast<double>(static_cast<float>(v)), m));
  } else if constexpr (rep::is_half_v<D>) {  // float -> half
    return static_cast<D>(static_cast<float>(round_format(double(v), 11, -14, 65504.0, mode)));
  } else if constexpr (std::is_same_v<S, int32_t>) {  // int32 -> float
    return static_cast<float>(round_format(double(v), 24, -126, double(FLT_MAX), mode));
  } else if constexpr (std::is_same_v<S, float>) {  // float -> float: integral rounding
    return mode == Mode::CAST_NONE ? v : static_cast<float>(round_integral(double(v), mode));
  } else {  // half -> float: exact
    return static_cast<float>(v);
  }
}

template <typename D, typename S>
inline void check_mode(Mode mode, Site site) {
  if (mode == Mode::CAST_ODD && !(rep::is_half_v<D> && std::is_same_v<S, float>)) {
    misuse("unsupported_argument", site, "Cast: CAST_ODD is documented for float -> half only");
  }
  const int m = static_cast<int>(mode);
  if (m < static_cast<int>(Mode::CAST_NONE) || m > static_cast<int>(Mode::CAST_ODD)) {
    misuse("unsupported_argument", site, "Cast: unknown RoundMode " + std::to_string(m));
  }
}

template <typename D, typename S>
constexpr uint32_t lanes() {
  return rep::kRepeatBytes / (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S));
}

template <typename D, typename S>
inline void cast_repeat(const rep::Operand& d, const rep::Operand& s, const rep::Walk& wd,
                        const rep::Walk& ws, uint64_t r, Mode mode, Site site) {
  constexpr uint32_t L = lanes<D, S>();
  S vs[L];
  ws.run(s, r, false, "Cast", site, [&](uint32_t i, uint64_t o) { vs[i] = rep::load<S>(s, o); });
  wd.run(d, r, true, "Cast", site,
         [&](uint32_t i, uint64_t o) { rep::store<D>(d, o, convert<D, S>(vs[i], mode)); });
}

template <typename D, typename S>
inline void cast_mask(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src,
                      Mode mode, const rep::MaskPlan& mp, const AscendC::UnaryRepeatParams& rp,
                      Site site) {
  const rep::Operand d = rep::operand(dst, "dst", rp.dstBlkStride, rp.dstRepStride, "Cast", site);
  const rep::Operand s = rep::operand(src, "src", rp.srcBlkStride, rp.srcRepStride, "Cast", site);
  rep::issue_v("Cast", sizeof(S), mp.total(), site);  // cost table keyed by source dtype
  const rep::Walk wd(d, mp.body, lanes<D, S>()), ws(s, mp.body, lanes<D, S>());
  for (uint64_t r = 0; r < mp.repeats; ++r) cast_repeat<D, S>(d, s, wd, ws, r, mode, site);
  if (mp.has_tail) {
    const rep::Walk td(d, mp.tail, lanes<D, S>()), ts(s, mp.tail, lanes<D, S>());
    cast_repeat<D, S>(d, s, td, ts, mp.repeats, mode, site);
  }
}

// Count form: `count` contiguous elements of each operand.
template <typename D, typename S>
inline void cast_count(const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& src,
                       Mode mode, uint32_t count, Site site) {
  constexpr uint32_t L = lanes<D, S>();
  check_mode<D, S>(mode, site);
  const rep::CountPlan p = rep::plan_count(count, L, "Cast", site);
  const rep::Operand d = rep::operand(dst, "dst", 1, L * sizeof(D) / rep::kBlockBytes, "Cast", site);
  const rep::Operand s = rep::operand(src, "src", 1, L * sizeof(S) / rep::kBlockBytes, "Cast", site);
  if (p.repeats() == 0) return;
  rep::issue_v("Cast", sizeof(S), p.repeats(), site);  // cost table keyed by source dtype
  rep::declare_count(s, count, false, "Cast", site);
  rep::declare_count(d, count, true, "Cast", site);
  for (uint64_t i = 0; i < count; ++i) {
    const S v = rep::load<S>(s, i * sizeof(S));
    rep::store<D>(d, i * sizeof(D), convert<D, S>(v, mode));
  }
}

}  // namespace cast

// ---- the compiled-once entry points (erased.h; defined in cast_impl.h) ------------------------
namespace ops {

// The conversions of supported_v, one tag each.
enum class CastPair : uint8_t { F32_F16, F32_I32, F32_F32, F16_F32, F16_I32, I32_F32, None };

template <typename D, typename S>
constexpr CastPair cast_pair() {
  if constexpr (std::is_same_v<S, float> && std::is_same_v<D, half>) return CastPair::F32_F16;
  else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, int32_t>) return CastPair::F32_I32;
  else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float>) return CastPair::F32_F32;
  else if constexpr (std::is_same_v<S, half> && std::is_same_v<D, float>) return CastPair::F16_F32;
  else if constexpr (std::is_same_v<S, half> && std::is_same_v<D, int32_t>) return CastPair::F16_I32;
  else if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, float>) return CastPair::I32_F32;
  else return CastPair::None;
}

// The RoundMode checks of one conversion (cast::check_mode).
JK_ENGINE_FN void cast_check_mode(CastPair pair, cast::Mode mode, Site site);
JK_ENGINE_FN void cast_count(CastPair pair, const TRef& d, const TRef& s, cast::Mode mode,
                             uint32_t count, Site site);
JK_ENGINE_FN void cast_mask(CastPair pair, const TRef& d, const TRef& s, cast::Mode mode,
                            const rep::MaskPlan& mp, const AscendC::UnaryRepeatParams& rp,
                            Site site);

}  // namespace ops
}  // namespace jk

namespace AscendC {

#define JK_CAST_CHECK()                                                                        \
  static_assert(jk::cast::supported_v<T1, T2>,                                                 \
                "ascendc-cpu: AscendC::Cast supports float<->half, float->int32_t, "           \
                "half->int32_t, int32_t->float and float->float")

// A conversion with a tag goes to the compiled body, any other to the same template inline.
#define JK_CAST_PAIR jk::ops::cast_pair<T1, T2>()
#define JK_CAST_ERASED (JK_CAST_PAIR != jk::ops::CastPair::None)

// Count form: `count` contiguous elements of each operand.
template <typename T1, typename T2>
inline void Cast(const LocalTensor<T1>& dst, const LocalTensor<T2>& src, const RoundMode& roundMode,
                 const uint32_t count, jk::Site site = jk::here()) {
  JK_CAST_CHECK();
  if constexpr (JK_CAST_ERASED) {
    jk::ops::cast_count(JK_CAST_PAIR, jk::ops::ref(dst), jk::ops::ref(src), roundMode, count, site);
  } else {
    jk::cast::cast_count(dst, src, roundMode, count, site);
  }
}

template <typename T1, typename T2, bool isSetMask = true>
inline void Cast(const LocalTensor<T1>& dst, const LocalTensor<T2>& src, const RoundMode& roundMode,
                 const uint64_t mask, const int32_t repeatTimes,
                 const UnaryRepeatParams& repeatParams, jk::Site site = jk::here()) {
  JK_CAST_CHECK();
  if constexpr (JK_CAST_ERASED) {
    jk::ops::cast_check_mode(JK_CAST_PAIR, roundMode, site);
  } else {
    jk::cast::check_mode<T1, T2>(roundMode, site);
  }
  const jk::rep::MaskPlan mp =
      jk::rep::plan_mask<isSetMask>(mask, jk::cast::lanes<T1, T2>(), repeatTimes, "Cast", site);
  if constexpr (JK_CAST_ERASED) {
    jk::ops::cast_mask(JK_CAST_PAIR, jk::ops::ref(dst), jk::ops::ref(src), roundMode, mp,
                       repeatParams, site);
  } else {
    jk::cast::cast_mask(dst, src, roundMode, mp, repeatParams, site);
  }
}

template <typename T1, typename T2, bool isSetMask = true>
inline void Cast(const LocalTensor<T1>& dst, const LocalTensor<T2>& src, const RoundMode& roundMode,
                 const uint64_t mask[], const int32_t repeatTimes,
                 const UnaryRepeatParams& repeatParams, jk::Site site = jk::here()) {
  JK_CAST_CHECK();
  if constexpr (JK_CAST_ERASED) {
    jk::ops::cast_check_mode(JK_CAST_PAIR, roundMode, site);
  } else {
    jk::cast::check_mode<T1, T2>(roundMode, site);
  }
  const jk::rep::MaskPlan mp =
      jk::rep::plan_mask<isSetMask>(mask, jk::cast::lanes<T1, T2>(), repeatTimes, "Cast", site);
  if constexpr (JK_CAST_ERASED) {
    jk::ops::cast_mask(JK_CAST_PAIR, jk::ops::ref(dst), jk::ops::ref(src), roundMode, mp,
                       repeatParams, site);
  } else {
    jk::cast::cast_mask(dst, src, roundMode, mp, repeatParams, site);
  }
}

#undef JK_CAST_ERASED
#undef JK_CAST_PAIR
#undef JK_CAST_CHECK

}  // namespace AscendC

#if JK_ENGINE_DEFS
#include "jk_ascendc/cast_impl.h"
#endif
