// Clean-room ascendc-cpu library: reduction instructions (V pipe).
//
// ReduceSum, atlasascendc_api_07_0078:
//   method 1 = binary tree inside each repeat (adjacent pairs: d0+d1, d2+d3, ...), then a binary
//              tree over the repeat results; method 2 = tree inside each repeat, then the repeat
//              results added IN ORDER. Atlas A2: the count form ("tensor前n个数据") uses method 2,
//              the mask/repeat form ("tensor高维切分") method 1. Inactive lanes count as 0.
//   half: every pairwise sum above 65504 is stored as 65504 ([60000, 60000, -30000, 100] ->
//              "35604" on the page, in real numbers; 35584 once each step rounds to binary16);
//              we saturate symmetrically at +-65504 (finite sums only).
//   dst: dst[0] only; dst needs element alignment, src and sharedTmpBuffer 32-byte alignment.
//   sharedTmpBuffer: either at least the documented minimum (RoundUp(firstMaxRepeat, 32/size)
//              elements) or any size, in which case its content is not changed; dst may
//              overlap it only when it has the minimum size. We never read or write it.
//   repeatTime of the mask form: any non-negative int32 ("支持更大的取值范围").
// Tree across repeats (method 1) is computed the way the instruction chains do it: the repeat
//   results are summed again 256 bytes at a time (tree inside each chunk, zero padded) until one
//   value is left; for up to 64 (float) / 128 (half) repeats this is one plain binary tree.
// WholeReduceSum, atlasascendc_api_07_0081 (RepeatReduceSum 07_0086): one tree sum per repeat
//   into dst[r * dstRepStride] (dstRepStride in units of one repeat's result = 1 element).
// BlockReduceSum (pyasc block_reduce_sum doc, same page family): a tree sum per 32-byte block,
//   8 results per repeat at dst[r * dstRepStride * 8 + k]; half pairwise sums saturate likewise.
// ReduceMax / ReduceMin (reduction chapter, next to 07_0078): dst[0] = the extreme value and,
//   with calIndex, dst[1] = its index stored as the bits of a uint16_t (half) / uint32_t (float);
//   several equal extremes -> the first index; index = repeat * elements_per_repeat + lane.
//   sharedTmpBuffer minimum: RoundUp(2 * firstMaxRepeat) without index, the per-round sum of
//   32-byte aligned (value, index) outputs with index (the page's worked examples); a buffer
//   that overlaps src is exempt ("可以选择sharedTmpBuffer空间复用源操作数的空间").
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "jk_ascendc/erased.h"
#include "jk_ascendc/repeat.h"

namespace jk {
namespace red {

template <typename T>
constexpr bool sum_ok_v = rep::is_float_like_v<T>;

// One pairwise addition of the reduction unit.
template <typename T>
inline T add(T a, T b) {
  if constexpr (rep::is_half_v<T>) {
    const float s = static_cast<float>(a) + static_cast<float>(b);
    if (std::isfinite(s)) {
      if (s > 65504.0f) return static_cast<T>(65504.0f);
      if (s < -65504.0f) return static_cast<T>(-65504.0f);
    }
    return static_cast<T>(s);
  } else {
    return a + b;
  }
}

// Binary tree of adjacent pairs over n (a power of two) values, in place.
template <typename T>
inline T tree(T* v, uint32_t n) {
  for (; n > 1; n /= 2) {
    for (uint32_t i = 0; i < n / 2; ++i) v[i] = add(v[2 * i], v[2 * i + 1]);
  }
  return v[0];
}

// Read repeat r of src under mask m into a zero-padded lane array; return its tree sum.
template <typename T>
inline T repeat_sum(const char* api, const rep::Operand& s, uint64_t r, const rep::Mask& m,
                    Site site) {
  constexpr uint32_t L = rep::per_repeat<T>();
  T v[L];
  for (uint32_t i = 0; i < L; ++i) v[i] = static_cast<T>(0.0f);
  rep::touch(s, r, m, L, false, api, site, [&](uint32_t i, uint64_t o) { v[i] = rep::load<T>(s, o); });
  return tree(v, L);
}

// Method 1 across repeats: sum chunks of L results (zero padded) until one is left.
template <typename T>
inline T tree_across(std::vector<T> vals) {
  constexpr uint32_t L = rep::per_repeat<T>();
  while (vals.size() > 1) {
    std::vector<T> next;
    for (size_t c = 0; c < vals.size(); c += L) {
      T v[L];
      for (uint32_t i = 0; i < L; ++i) v[i] = c + i < vals.size() ? vals[c + i] : static_cast<T>(0.0f);
      next.push_back(tree(v, L));
    }
    vals.swap(next);
  }
  return vals.empty() ? static_cast<T>(0.0f) : vals[0];
}

// Cost of a multi-pass reduction: each pass over n values is one instruction of ceil(n/L) repeats.
inline uint64_t passes_repeats(uint64_t first, uint32_t lanes, uint64_t* passes) {
  uint64_t total = first, n = first;
  *passes = 1;
  while (n > 1) {
    n = (n + lanes - 1) / lanes;
    total += n;
    ++*passes;
  }
  return total;
}

inline void issue_passes(const char* api, uint32_t dtype_bytes, uint64_t first, uint32_t lanes,
                         Site site) {
  uint64_t passes = 0;
  const uint64_t reps = passes_repeats(first, lanes, &passes);
  const VectorCost c = eng().vector_cost(api, dtype_bytes);
  eng().issue(Pipe::V, api, passes * c.startup + reps * c.per_repeat, site);
}

inline bool overlap(const rep::Operand& a, uint64_t a_bytes, const rep::Operand& b,
                    uint64_t b_bytes) {
  return a.off < b.off + b_bytes && b.off < a.off + a_bytes;
}

inline uint64_t align_up(uint64_t n, uint64_t b) { return (n + b - 1) / b * b; }

template <typename T>
inline void write_scalar(const char* api, const rep::Operand& d, uint64_t byte, T v, Site site) {
  rep::declare(d, byte, byte + sizeof(T), true, api, site);
  rep::store<T>(d, byte, v);
}

// ReduceSum: `first` repeats of src under the per-repeat mask given by mask_of(r).
template <typename T, typename MaskOf>
inline void reduce_sum(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                       const AscendC::LocalTensor<T>& tmp, uint64_t repeats, int64_t src_rep,
                       bool in_order, MaskOf mask_of, Site site) {
  constexpr uint32_t L = rep::per_repeat<T>();
  const char* api = "ReduceSum";
  const rep::Operand d = rep::operand(dst, "dst", 1, 0, api, site, sizeof(T));
  const rep::Operand s = rep::operand(src, "src", 1, uint64_t(src_rep), api, site);
  const rep::Operand w = rep::operand(tmp, "sharedTmpBuffer", 1, 0, api, site);
  const uint64_t need = align_up(repeats ? repeats : 1, rep::per_block<T>()) * sizeof(T);
  if (overlap(d, sizeof(T), w, w.extent) && w.extent < need) {
    misuse("unsupported_argument", site,
           "ReduceSum: dst overlaps a sharedTmpBuffer of " + rep::u64s(w.extent) +
               " bytes, below the documented minimum of " + rep::u64s(need) +
               " bytes (atlasascendc_api_07_0078)");
  }
  if (repeats == 0) return;
  issue_passes(api, sizeof(T), repeats, L, site);
  std::vector<T> sums;
  sums.reserve(repeats);
  for (uint64_t r = 0; r < repeats; ++r) sums.push_back(repeat_sum<T>(api, s, r, mask_of(r), site));
  T total;
  if (in_order) {
    total = sums[0];
    for (uint64_t r = 1; r < repeats; ++r) total = add(total, sums[r]);
  } else {
    total = tree_across(std::move(sums));
  }
  write_scalar(api, d, 0, total, site);
}

// ReduceMax / ReduceMin.
template <typename T>
inline uint64_t extreme_tmp_need(uint64_t repeats, bool cal_index) {
  constexpr uint32_t L = rep::per_repeat<T>();
  constexpr uint32_t B = rep::per_block<T>();
  uint64_t n = 2 * (repeats ? repeats : 1);
  uint64_t total = align_up(n, B);
  if (!cal_index) return total;
  while (n > 2) {
    n = (n + L - 1) / L * 2;
    total += align_up(n, B);
  }
  return total;
}

template <typename T, bool IsMax, typename MaskOf>
inline void reduce_extreme(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                           const AscendC::LocalTensor<T>& tmp, uint64_t repeats, int64_t src_rep,
                           bool cal_index, MaskOf mask_of, Site site) {
  constexpr uint32_t L = rep::per_repeat<T>();
  const char* api = IsMax ? "ReduceMax" : "ReduceMin";
  const rep::Operand d = rep::operand(dst, "dst", 1, 0, api, site, sizeof(T));
  const rep::Operand s = rep::operand(src, "src", 1, uint64_t(src_rep), api, site);
  const rep::Operand w = rep::operand(tmp, "sharedTmpBuffer", 1, 0, api, site);
  const uint64_t need = extreme_tmp_need<T>(repeats, cal_index);
  const bool reuses_src = overlap(w, w.extent, s, s.extent);
  if (!reuses_src && w.extent / sizeof(T) < need) {
    misuse("ub_out_of_bounds", site,
           std::string(api) + ": sharedTmpBuffer holds " + rep::u64s(w.extent / sizeof(T)) +
               " elements; this call needs at least " + rep::u64s(need) +
               (cal_index ? " (with calIndex)" : "") + " for the intermediate (value, index) pairs");
  }
  if (repeats == 0) return;
  issue_passes(api, sizeof(T), repeats, L, site);
  if (!reuses_src) rep::declare(w, 0, need * sizeof(T), true, api, site);
  bool have = false;
  float best = 0.0f;
  T best_v{};
  uint64_t best_i = 0;
  for (uint64_t r = 0; r < repeats; ++r) {
    rep::touch(s, r, mask_of(r), L, false, api, site, [&](uint32_t i, uint64_t o) {
      const T v = rep::load<T>(s, o);
      const float f = static_cast<float>(v);
      if (!have || (IsMax ? f > best : f < best)) {
        have = true;
        best = f;
        best_v = v;
        best_i = r * L + i;
      }
    });
  }
  if (cal_index && sizeof(T) == 2 && best_i > 65535) {  // the page: half indexes stop at 65535
    misuse("unsupported_argument", site,
           std::string(api) + ": index " + rep::u64s(best_i) +
               " of a half input does not fit the uint16_t the result holds (max 65535)");
  }
  write_scalar(api, d, 0, best_v, site);
  if (cal_index) {
    T bits;
    if constexpr (sizeof(T) == 2) {
      const uint16_t ix = static_cast<uint16_t>(best_i);
      std::memcpy(&bits, &ix, 2);
    } else {
      const uint32_t ix = static_cast<uint32_t>(best_i);
      std::memcpy(&bits, &ix, 4);
    }
    write_scalar(api, d, sizeof(T), bits, site);
  }
}

// The per-repeat mask of a ReduceSum/ReduceMax/ReduceMin call: repeats before `full` use
// `body`, the rest `tail` (count form: full repeats, then the remainder; mask forms: all body).
struct RedMasks {
  rep::Mask body;
  uint64_t full = UINT64_MAX;
  rep::Mask tail;
  rep::Mask operator()(uint64_t r) const { return r < full ? body : tail; }
};

}  // namespace red

// ---- the compiled-once entry points (erased.h; defined in reduce_impl.h) ----------------------
namespace ops {

JK_ENGINE_FN void red_sum(Dt dt, const TRef& d, const TRef& s, const TRef& tmp, uint64_t repeats,
                          int64_t src_rep, bool in_order, const red::RedMasks& masks, Site site);
JK_ENGINE_FN void red_extreme(bool is_max, Dt dt, const TRef& d, const TRef& s, const TRef& tmp,
                              uint64_t repeats, int64_t src_rep, bool cal_index,
                              const red::RedMasks& masks, Site site);
JK_ENGINE_FN void red_whole_sum(Dt dt, const TRef& d, const TRef& s, const rep::MaskPlan& mp,
                                int32_t dst_rep, int32_t src_blk, int32_t src_rep, Site site);
JK_ENGINE_FN void red_block_sum(Dt dt, const TRef& d, const TRef& s, const rep::MaskPlan& mp,
                                int32_t dst_rep, int32_t src_blk, int32_t src_rep, Site site);

}  // namespace ops
}  // namespace jk

namespace AscendC {

// A tagged element type goes to the compiled body, any other to the same template inline.
#define JK_RED_SUM(REPEATS, SRC_REP, IN_ORDER, MASKS)                                              \
  if constexpr (jk::ops::erased_v<T>) {                                                            \
    jk::ops::red_sum(jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::ref(src),                    \
                     jk::ops::ref(sharedTmpBuffer), REPEATS, SRC_REP, IN_ORDER, MASKS, site);      \
  } else {                                                                                         \
    jk::red::reduce_sum(dst, src, sharedTmpBuffer, REPEATS, SRC_REP, IN_ORDER, MASKS, site);       \
  }
#define JK_RED_EXTREME_CALL(ISMAX, REPEATS, SRC_REP, MASKS)                                        \
  if constexpr (jk::ops::erased_v<T>) {                                                            \
    jk::ops::red_extreme(ISMAX, jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::ref(src),         \
                         jk::ops::ref(sharedTmpBuffer), REPEATS, SRC_REP, calIndex, MASKS, site);  \
  } else {                                                                                         \
    jk::red::reduce_extreme<T, ISMAX>(dst, src, sharedTmpBuffer, REPEATS, SRC_REP, calIndex,       \
                                      MASKS, site);                                                \
  }

#define JK_RED_CHECK(NAME)                                                                         \
  static_assert(jk::red::sum_ok_v<T>, "ascendc-cpu: AscendC::" NAME " supports half and float")

// ---- ReduceSum ------------------------------------------------------------------------------
template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& sharedTmpBuffer, const int32_t count,
                      jk::Site site = jk::here()) {
  JK_RED_CHECK("ReduceSum");
  constexpr uint32_t L = jk::rep::per_repeat<T>();
  const jk::rep::CountPlan p = jk::rep::plan_count(count, L, "ReduceSum", site);
  jk::red::RedMasks masks;
  masks.body = jk::rep::mask_first(L);
  masks.full = p.full;
  masks.tail = jk::rep::mask_first(p.tail);
  JK_RED_SUM(p.repeats(), 8, true, masks)
}

template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& sharedTmpBuffer, const int32_t mask,
                      const int32_t repeatTime, const int32_t srcRepStride,
                      jk::Site site = jk::here()) {
  JK_RED_CHECK("ReduceSum");
  const jk::rep::Mask m = jk::rep::mask_count(uint64_t(int64_t(mask)), jk::rep::per_repeat<T>(),
                                              "ReduceSum", site);
  jk::rep::check_repeat(repeatTime, "ReduceSum", site, INT32_MAX);
  jk::red::RedMasks masks;
  masks.body = m;
  JK_RED_SUM(uint64_t(repeatTime), srcRepStride, false, masks)
}

template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& sharedTmpBuffer, const uint64_t mask[],
                      const int32_t repeatTime, const int32_t srcRepStride,
                      jk::Site site = jk::here()) {
  JK_RED_CHECK("ReduceSum");
  const jk::rep::Mask m = jk::rep::mask_bits(mask, jk::rep::per_repeat<T>(), "ReduceSum", site);
  jk::rep::check_repeat(repeatTime, "ReduceSum", site, INT32_MAX);
  jk::red::RedMasks masks;
  masks.body = m;
  JK_RED_SUM(uint64_t(repeatTime), srcRepStride, false, masks)
}

// ---- ReduceMax / ReduceMin ----------------------------------------------------------------------
#define JK_RED_EXTREME(NAME, ISMAX)                                                                \
  template <typename T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                           \
                   const LocalTensor<T>& sharedTmpBuffer, const int32_t count,                     \
                   bool calIndex = false, jk::Site site = jk::here()) {                            \
    JK_RED_CHECK(#NAME);                                                                           \
    constexpr uint32_t L = jk::rep::per_repeat<T>();                                               \
    const jk::rep::CountPlan p = jk::rep::plan_count(count, L, #NAME, site);                       \
    jk::red::RedMasks masks;                                                                       \
    masks.body = jk::rep::mask_first(L);                                                           \
    masks.full = p.full;                                                                           \
    masks.tail = jk::rep::mask_first(p.tail);                                                      \
    JK_RED_EXTREME_CALL(ISMAX, p.repeats(), 8, masks)                                              \
  }                                                                                                \
  template <typename T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                           \
                   const LocalTensor<T>& sharedTmpBuffer, const int32_t mask,                      \
                   const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = false,    \
                   jk::Site site = jk::here()) {                                                   \
    JK_RED_CHECK(#NAME);                                                                           \
    const jk::rep::Mask m =                                                                        \
        jk::rep::mask_count(uint64_t(int64_t(mask)), jk::rep::per_repeat<T>(), #NAME, site);       \
    jk::rep::check_repeat(repeatTime, #NAME, site, INT32_MAX);                                     \
    jk::red::RedMasks masks;                                                                       \
    masks.body = m;                                                                                \
    JK_RED_EXTREME_CALL(ISMAX, uint64_t(repeatTime), srcRepStride, masks)                          \
  }                                                                                                \
  template <typename T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                           \
                   const LocalTensor<T>& sharedTmpBuffer, const uint64_t mask[],                   \
                   const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = false,    \
                   jk::Site site = jk::here()) {                                                   \
    JK_RED_CHECK(#NAME);                                                                           \
    const jk::rep::Mask m = jk::rep::mask_bits(mask, jk::rep::per_repeat<T>(), #NAME, site);       \
    jk::rep::check_repeat(repeatTime, #NAME, site, INT32_MAX);                                     \
    jk::red::RedMasks masks;                                                                       \
    masks.body = m;                                                                                \
    JK_RED_EXTREME_CALL(ISMAX, uint64_t(repeatTime), srcRepStride, masks)                          \
  }

JK_RED_EXTREME(ReduceMax, true)
JK_RED_EXTREME(ReduceMin, false)
#undef JK_RED_EXTREME
#undef JK_RED_EXTREME_CALL
#undef JK_RED_SUM

// ---- WholeReduceSum: one sum per repeat ---------------------------------------------------------
namespace jkdetail {
template <typename T>
inline void whole_reduce_sum_body(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                             const jk::rep::MaskPlan& mp, int32_t dst_rep, int32_t src_blk,
                             int32_t src_rep, jk::Site site) {
  const char* api = "WholeReduceSum";
  const jk::rep::Operand d = jk::rep::operand(dst, "dst", 1, 0, api, site, sizeof(T));
  const jk::rep::Operand s = jk::rep::operand(src, "src", src_blk, src_rep, api, site);
  jk::rep::issue_v(api, sizeof(T), mp.total(), site);
  for (uint64_t r = 0; r < mp.total(); ++r) {
    const T v = jk::red::repeat_sum<T>(api, s, r, mp.at(r), site);
    jk::red::write_scalar(api, d, uint64_t(r) * uint64_t(dst_rep) * sizeof(T), v, site);
  }
}

// BlockReduceSum: one tree sum per 32-byte block, 8 results per repeat.
template <typename T>
inline void block_reduce_sum_body(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                             const jk::rep::MaskPlan& mp, int32_t dst_rep, int32_t src_blk,
                             int32_t src_rep, jk::Site site) {
  const char* api = "BlockReduceSum";
  constexpr uint32_t L = jk::rep::per_repeat<T>();
  constexpr uint32_t B = jk::rep::per_block<T>();
  const jk::rep::Operand d = jk::rep::operand(dst, "dst", 1, 0, api, site, sizeof(T));
  const jk::rep::Operand s = jk::rep::operand(src, "src", src_blk, src_rep, api, site);
  jk::rep::issue_v(api, sizeof(T), mp.total(), site);
  for (uint64_t r = 0; r < mp.total(); ++r) {
    T v[L];
    for (uint32_t i = 0; i < L; ++i) v[i] = static_cast<T>(0.0f);
    jk::rep::touch(s, r, mp.at(r), L, false, api, site,
                   [&](uint32_t i, uint64_t o) { v[i] = jk::rep::load<T>(s, o); });
    T out[8];
    for (uint32_t k = 0; k < 8; ++k) out[k] = jk::red::tree(v + k * B, B);
    const uint64_t base = uint64_t(r) * uint64_t(dst_rep) * 8 * sizeof(T);
    jk::rep::declare(d, base, base + 8 * sizeof(T), true, api, site);
    for (uint32_t k = 0; k < 8; ++k) jk::rep::store<T>(d, base + k * sizeof(T), out[k]);
  }
}

// The dispatch of the two above: a tagged element type goes to the compiled body.
template <typename T>
inline void whole_reduce_sum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                             const jk::rep::MaskPlan& mp, int32_t dst_rep, int32_t src_blk,
                             int32_t src_rep, jk::Site site) {
  if constexpr (jk::ops::erased_v<T>) {
    jk::ops::red_whole_sum(jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::ref(src), mp, dst_rep,
                           src_blk, src_rep, site);
  } else {
    whole_reduce_sum_body(dst, src, mp, dst_rep, src_blk, src_rep, site);
  }
}
template <typename T>
inline void block_reduce_sum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                             const jk::rep::MaskPlan& mp, int32_t dst_rep, int32_t src_blk,
                             int32_t src_rep, jk::Site site) {
  if constexpr (jk::ops::erased_v<T>) {
    jk::ops::red_block_sum(jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::ref(src), mp, dst_rep,
                           src_blk, src_rep, site);
  } else {
    block_reduce_sum_body(dst, src, mp, dst_rep, src_blk, src_rep, site);
  }
}
}  // namespace jkdetail

template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTimes, const int32_t dstRepStride,
                           const int32_t srcBlkStride, const int32_t srcRepStride,
                           jk::Site site = jk::here()) {
  JK_RED_CHECK("WholeReduceSum");
  const jk::rep::MaskPlan mp = jk::rep::plan_mask<isSetMask>(
      uint64_t(int64_t(mask)), jk::rep::per_repeat<T>(), repeatTimes, "WholeReduceSum", site);
  jkdetail::whole_reduce_sum(dst, src, mp, dstRepStride, srcBlkStride, srcRepStride, site);
}

template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const uint64_t mask[], const int32_t repeatTimes,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, jk::Site site = jk::here()) {
  JK_RED_CHECK("WholeReduceSum");
  const jk::rep::MaskPlan mp = jk::rep::plan_mask<isSetMask>(
      mask, jk::rep::per_repeat<T>(), repeatTimes, "WholeReduceSum", site);
  jkdetail::whole_reduce_sum(dst, src, mp, dstRepStride, srcBlkStride, srcRepStride, site);
}

template <typename T, bool isSetMask = true>
inline void BlockReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const int32_t repeatTime, const int32_t mask, const int32_t dstRepStride,
                           const int32_t srcBlkStride, const int32_t srcRepStride,
                           jk::Site site = jk::here()) {
  JK_RED_CHECK("BlockReduceSum");
  const jk::rep::MaskPlan mp = jk::rep::plan_mask<isSetMask>(
      uint64_t(int64_t(mask)), jk::rep::per_repeat<T>(), repeatTime, "BlockReduceSum", site);
  jkdetail::block_reduce_sum(dst, src, mp, dstRepStride, srcBlkStride, srcRepStride, site);
}

template <typename T, bool isSetMask = true>
inline void BlockReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const int32_t repeatTime, const uint64_t mask[],
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, jk::Site site = jk::here()) {
  JK_RED_CHECK("BlockReduceSum");
  const jk::rep::MaskPlan mp = jk::rep::plan_mask<isSetMask>(
      mask, jk::rep::per_repeat<T>(), repeatTime, "BlockReduceSum", site);
  jkdetail::block_reduce_sum(dst, src, mp, dstRepStride, srcBlkStride, srcRepStride, site);
}

// ---- WholeReduceMax / WholeReduceMin (atlasascendc_api_07_0079 and its Min twin) ---------------
// Per repeat the extreme of the active lanes and its index INSIDE the repeat (first one on ties),
// stored per `order`; dstRepStride is in units of one repeat's output: 2 elements for value and
// index, 1 element for the value only, one uint32_t for the index only; dst alignment: 2 elements
// (4 bytes half, 8 bytes float) when the index is stored with the value.
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

namespace jkdetail {
template <typename T, bool IsMax>
inline void whole_reduce_extreme_body(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const jk::rep::MaskPlan& mp, int32_t dst_rep,
                                 int32_t src_blk, int32_t src_rep, ReduceOrder order,
                                 jk::Site site) {
  const char* api = IsMax ? "WholeReduceMax" : "WholeReduceMin";
  constexpr uint32_t L = jk::rep::per_repeat<T>();
  const int ord = static_cast<int>(order);
  if (ord < 0 || ord > static_cast<int>(ReduceOrder::ORDER_ONLY_INDEX)) {
    jk::misuse("unsupported_argument", site, std::string(api) + ": unknown ReduceOrder");
  }
  const bool pair = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
  const uint32_t unit = pair ? 2 * sizeof(T) : (order == ReduceOrder::ORDER_ONLY_VALUE ? sizeof(T) : 4);
  const jk::rep::Operand d = jk::rep::operand(dst, "dst", 1, 0, api, site, pair ? unit : sizeof(T));
  const jk::rep::Operand s = jk::rep::operand(src, "src", src_blk, src_rep, api, site);
  jk::rep::issue_v(api, sizeof(T), mp.total(), site);
  const jk::rep::Walk body(s, mp.body, L), tail(s, mp.tail, L);
  using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  for (uint64_t r = 0; r < mp.total(); ++r) {
    const jk::rep::Walk& ws = r < mp.repeats ? body : tail;
    bool have = false;
    float best = 0.0f;
    T best_v{};
    uint32_t best_i = 0;
    ws.run(s, r, false, api, site, [&](uint32_t i, uint64_t o) {
      const T v = jk::rep::load<T>(s, o);
      const float f = static_cast<float>(v);
      if (!have || (IsMax ? f > best : f < best)) {
        have = true;
        best = f;
        best_v = v;
        best_i = i;
      }
    });
    const uint64_t base = uint64_t(r) * uint64_t(dst_rep) * unit;
    jk::rep::declare(d, base, base + unit, true, api, site);
    const Bits ib = static_cast<Bits>(best_i);
    if (order == ReduceOrder::ORDER_VALUE_INDEX) {
      jk::rep::store<T>(d, base, best_v);
      jk::rep::store<Bits>(d, base + sizeof(T), ib);
    } else if (order == ReduceOrder::ORDER_INDEX_VALUE) {
      jk::rep::store<Bits>(d, base, ib);
      jk::rep::store<T>(d, base + sizeof(T), best_v);
    } else if (order == ReduceOrder::ORDER_ONLY_VALUE) {
      jk::rep::store<T>(d, base, best_v);
    } else {
      jk::rep::store<uint32_t>(d, base, best_i);
    }
  }
}
}  // namespace jkdetail
}  // namespace AscendC

namespace jk {
namespace ops {
JK_ENGINE_FN void red_whole_extreme(bool is_max, Dt dt, const TRef& d, const TRef& s,
                                    const rep::MaskPlan& mp, int32_t dst_rep, int32_t src_blk,
                                    int32_t src_rep, AscendC::ReduceOrder order, Site site);
}  // namespace ops
}  // namespace jk

namespace AscendC {
namespace jkdetail {
template <typename T, bool IsMax>
inline void whole_reduce_extreme(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const jk::rep::MaskPlan& mp, int32_t dst_rep,
                                 int32_t src_blk, int32_t src_rep, ReduceOrder order,
                                 jk::Site site) {
  if constexpr (jk::ops::erased_v<T>) {
    jk::ops::red_whole_extreme(IsMax, jk::ops::dt_of<T>(), jk::ops::ref(dst), jk::ops::ref(src),
                               mp, dst_rep, src_blk, src_rep, order, site);
  } else {
    whole_reduce_extreme_body<T, IsMax>(dst, src, mp, dst_rep, src_blk, src_rep, order, site);
  }
}
}  // namespace jkdetail

#define JK_WHOLE_EXTREME(NAME, ISMAX)                                                              \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,       \
                   const int32_t repeatTime, const int32_t dstRepStride,                           \
                   const int32_t srcBlkStride, const int32_t srcRepStride,                         \
                   ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, jk::Site site = jk::here()) { \
    JK_RED_CHECK(#NAME);                                                                           \
    const jk::rep::MaskPlan mp = jk::rep::plan_mask<isSetMask>(                                    \
        uint64_t(int64_t(mask)), jk::rep::per_repeat<T>(), repeatTime, #NAME, site);               \
    jkdetail::whole_reduce_extreme<T, ISMAX>(dst, src, mp, dstRepStride, srcBlkStride,             \
                                             srcRepStride, order, site);                           \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],    \
                   const int32_t repeatTime, const int32_t dstRepStride,                           \
                   const int32_t srcBlkStride, const int32_t srcRepStride,                         \
                   ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, jk::Site site = jk::here()) { \
    JK_RED_CHECK(#NAME);                                                                           \
    const jk::rep::MaskPlan mp =                                                                   \
        jk::rep::plan_mask<isSetMask>(mask, jk::rep::per_repeat<T>(), repeatTime, #NAME, site);    \
    jkdetail::whole_reduce_extreme<T, ISMAX>(dst, src, mp, dstRepStride, srcBlkStride,             \
                                             srcRepStride, order, site);                           \
  }

JK_WHOLE_EXTREME(WholeReduceMax, true)
JK_WHOLE_EXTREME(WholeReduceMin, false)
#undef JK_WHOLE_EXTREME

#undef JK_RED_CHECK

}  // namespace AscendC

#if JK_ENGINE_DEFS
#include "jk_ascendc/reduce_impl.h"
#endif
