// Clean-room Ascend C CPU library: DataCopy and DataCopyPad.
//
// GM -> UB runs on MTE2, UB -> GM on MTE3 (pipe table, atlasascendc_api_07_0271), UB -> UB on V
// (no MTE path is listed for it there; assumed). The UB side must start 32-byte aligned
// (07_0102, 07_0265). Cost (design contract): one latency
// per instruction plus ceil(bytes moved / bytes per cycle); gaps between bursts are free.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "jk_ascendc/engine.h"
#include "jk_ascendc/erased.h"
#include "jk_ascendc/tensor.h"
#include "jk_ascendc/types.h"

namespace AscendC {

// Strided copy parameters (DataCopy, atlasascendc_api_07_0102): blockCount bursts of blockLen
// 32-byte blocks; srcStride/dstStride are the gaps between bursts, in 32-byte blocks.
struct DataCopyParams {
  DataCopyParams() {}
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  uint16_t srcStride = 0;
  uint16_t dstStride = 0;
};

// DataCopyPad parameters (atlasascendc_api_07_0265): blockLen in BYTES; a stride on the GM side is
// in bytes, on the UB side in 32-byte blocks.
struct DataCopyExtParams {
  DataCopyExtParams() {}
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn,
                    uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

// Padding of a GM -> UB DataCopyPad: leftPadding/rightPadding elements (at most 32 bytes each)
// around each burst, filled with paddingValue when isPad.
template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() {}
  DataCopyPadExtParams(bool isPadIn, uint8_t left, uint8_t right, T value)
      : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = 0;
};

// The DataCopyParams flavour of DataCopyPad's padding (paddingValue as raw bits).
struct DataCopyPadParams {
  DataCopyPadParams() {}
  DataCopyPadParams(bool isPadIn, uint8_t left, uint8_t right, uint64_t value)
      : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
};

namespace jk_detail {

inline uint64_t mte_cost(jk::Pipe pipe, uint64_t bytes) {
  const auto& s = jk::eng().soc();
  const bool in = pipe == jk::Pipe::MTE2;
  const double bpc = in ? s.mte2_bytes_per_cycle : s.mte3_bytes_per_cycle;
  const uint64_t lat = in ? s.mte2_latency : s.mte3_latency;
  // ceil(bytes / bpc) without floating-point surprises for integral figures
  const double q = static_cast<double>(bytes) / bpc;
  uint64_t c = static_cast<uint64_t>(q);
  if (static_cast<double>(c) < q) ++c;
  return lat + c;
}

template <typename T>
inline void ub_aligned(const LocalTensor<T>& t, jk::Site site, const char* what) {
  if (t.jk_offset() % 32 != 0)
    jk::misuse("ub_misaligned", site,
               std::string(what) + ": UB address " + std::to_string(t.jk_offset()) +
                   " is not 32-byte aligned (the UB side of a copy must start on a 32-byte block)");
}

JK_ENGINE_FN void count_aligned(uint64_t bytes, uint32_t count, uint32_t elem, jk::Site site)
#if JK_ENGINE_DEFS
{
  if (bytes % 32 != 0)
    jk::misuse("datacopy_misaligned", site,
               "DataCopy of " + std::to_string(count) + " elements x " + std::to_string(elem) +
                   " bytes = " + std::to_string(bytes) +
                   " bytes is not a whole number of 32-byte blocks; DataCopyPad handles tails");
}
#else
;
#endif

JK_ENGINE_FN void params_range(uint32_t blockCount, uint64_t blockLen, jk::Site site, const char* what,
                         uint64_t max_len)
#if JK_ENGINE_DEFS
{
  if (blockCount < 1 || blockCount > 4095)
    jk::misuse("unsupported_argument", site,
               std::string(what) + " blockCount " + std::to_string(blockCount) +
                   " outside [1, 4095]");
  if (blockLen < 1 || blockLen > max_len)
    jk::misuse("unsupported_argument", site,
               std::string(what) + " blockLen " + std::to_string(blockLen) + " outside [1, " +
                   std::to_string(max_len) + "]");
}
#else
;
#endif

}  // namespace jk_detail

// The bodies of the DataCopy forms (templates; the compiled entry points of datacopy_impl.h
// instantiate them once per element size).
namespace jk_detail {

// ---- count form (atlasascendc_api_07_0102): count * sizeof(T) must be a multiple of 32 bytes ----

template <typename T>
inline void copy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count,
                 jk::Site site) {
  const uint64_t bytes = uint64_t(count) * sizeof(T);
  count_aligned(bytes, count, sizeof(T), site);
  ub_aligned(dst, site, "DataCopy GM->UB");
  dst.jk_check_span(0, bytes, site);
  const uint64_t g = src.jk_span(0, bytes, site);
  if (bytes == 0) return;
  auto& e = jk::eng();
  e.issue(jk::Pipe::MTE2, "DataCopy", mte_cost(jk::Pipe::MTE2, bytes), site);
  e.gm_read(g, bytes, site);
  e.ub_write(dst.jk_offset(), static_cast<uint32_t>(bytes), site);
  std::memcpy(e.ub_base() + dst.jk_offset(), e.gm_real(g, bytes, site), bytes);
}

template <typename T>
inline void copy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                 jk::Site site) {
  const uint64_t bytes = uint64_t(count) * sizeof(T);
  count_aligned(bytes, count, sizeof(T), site);
  ub_aligned(src, site, "DataCopy UB->GM");
  src.jk_check_span(0, bytes, site);
  const uint64_t g = dst.jk_span(0, bytes, site);
  if (bytes == 0) return;
  auto& e = jk::eng();
  e.issue(jk::Pipe::MTE3, "DataCopy", mte_cost(jk::Pipe::MTE3, bytes), site);
  e.ub_read(src.jk_offset(), static_cast<uint32_t>(bytes), site);
  e.gm_write(g, bytes, site);
  std::memcpy(e.gm_real(g, bytes, site), e.ub_base() + src.jk_offset(), bytes);
}

// UB -> UB copy, on the vector pipe (costed as a vector op "DataCopy").
template <typename T>
inline void copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                 jk::Site site) {
  const uint64_t bytes = uint64_t(count) * sizeof(T);
  count_aligned(bytes, count, sizeof(T), site);
  ub_aligned(dst, site, "DataCopy UB->UB");
  ub_aligned(src, site, "DataCopy UB->UB");
  src.jk_check_span(0, bytes, site);
  dst.jk_check_span(0, bytes, site);
  if (bytes == 0) return;
  auto& e = jk::eng();
  const jk::VectorCost vc = e.vector_cost("DataCopy", sizeof(T));
  const uint64_t repeats = (bytes + e.soc().repeat_bytes - 1) / e.soc().repeat_bytes;
  e.issue(jk::Pipe::V, "DataCopy", vc.startup + repeats * vc.per_repeat, site);
  e.ub_read(src.jk_offset(), static_cast<uint32_t>(bytes), site);
  e.ub_write(dst.jk_offset(), static_cast<uint32_t>(bytes), site);
  std::memmove(e.ub_base() + dst.jk_offset(), e.ub_base() + src.jk_offset(), bytes);
}

// ---- DataCopyParams form: bursts of whole 32-byte blocks -------------------------------------

template <typename T>
inline void copy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                 const DataCopyParams& p, jk::Site site) {
  params_range(p.blockCount, p.blockLen, site, "DataCopyParams", 65535);
  ub_aligned(dst, site, "DataCopy GM->UB");
  const uint64_t len = uint64_t(p.blockLen) * 32;
  const uint64_t sstep = len + uint64_t(p.srcStride) * 32, dstep = len + uint64_t(p.dstStride) * 32;
  const uint64_t last = p.blockCount - 1;
  dst.jk_check_span(0, last * dstep + len, site);
  const uint64_t g = src.jk_span(0, last * sstep + len, site);
  auto& e = jk::eng();
  e.issue(jk::Pipe::MTE2, "DataCopy", mte_cost(jk::Pipe::MTE2, len * p.blockCount), site);
  for (uint64_t i = 0; i < p.blockCount; ++i) {
    e.gm_read(g + i * sstep, len, site);
    e.ub_write(static_cast<uint32_t>(dst.jk_offset() + i * dstep), static_cast<uint32_t>(len), site);
    std::memcpy(e.ub_base() + dst.jk_offset() + i * dstep, e.gm_real(g + i * sstep, len, site), len);
  }
}

template <typename T>
inline void copy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                 const DataCopyParams& p, jk::Site site) {
  params_range(p.blockCount, p.blockLen, site, "DataCopyParams", 65535);
  ub_aligned(src, site, "DataCopy UB->GM");
  const uint64_t len = uint64_t(p.blockLen) * 32;
  const uint64_t sstep = len + uint64_t(p.srcStride) * 32, dstep = len + uint64_t(p.dstStride) * 32;
  const uint64_t last = p.blockCount - 1;
  src.jk_check_span(0, last * sstep + len, site);
  const uint64_t g = dst.jk_span(0, last * dstep + len, site);
  auto& e = jk::eng();
  e.issue(jk::Pipe::MTE3, "DataCopy", mte_cost(jk::Pipe::MTE3, len * p.blockCount), site);
  for (uint64_t i = 0; i < p.blockCount; ++i) {
    e.ub_read(static_cast<uint32_t>(src.jk_offset() + i * sstep), static_cast<uint32_t>(len), site);
    e.gm_write(g + i * dstep, len, site);
    std::memcpy(e.gm_real(g + i * dstep, len, site), e.ub_base() + src.jk_offset() + i * sstep, len);
  }
}

template <typename T>
inline void copy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                 const DataCopyParams& p, jk::Site site) {
  params_range(p.blockCount, p.blockLen, site, "DataCopyParams", 65535);
  ub_aligned(dst, site, "DataCopy UB->UB");
  ub_aligned(src, site, "DataCopy UB->UB");
  const uint64_t len = uint64_t(p.blockLen) * 32;
  const uint64_t sstep = len + uint64_t(p.srcStride) * 32, dstep = len + uint64_t(p.dstStride) * 32;
  const uint64_t last = p.blockCount - 1;
  src.jk_check_span(0, last * sstep + len, site);
  dst.jk_check_span(0, last * dstep + len, site);
  auto& e = jk::eng();
  const jk::VectorCost vc = e.vector_cost("DataCopy", sizeof(T));
  const uint64_t per = (len + e.soc().repeat_bytes - 1) / e.soc().repeat_bytes;
  e.issue(jk::Pipe::V, "DataCopy", vc.startup + per * p.blockCount * vc.per_repeat, site);
  for (uint64_t i = 0; i < p.blockCount; ++i)
    e.ub_read(static_cast<uint32_t>(src.jk_offset() + i * sstep), static_cast<uint32_t>(len), site);
  for (uint64_t i = 0; i < p.blockCount; ++i) {
    e.ub_write(static_cast<uint32_t>(dst.jk_offset() + i * dstep), static_cast<uint32_t>(len), site);
    std::memmove(e.ub_base() + dst.jk_offset() + i * dstep, e.ub_base() + src.jk_offset() + i * sstep,
                 len);
  }
}

}  // namespace jk_detail

// ---- DataCopyPad (atlasascendc_api_07_0265): byte-granular on the GM side --------------------

namespace jk_detail {

// GM -> UB: burst i reads blockLen bytes at GM i*(blockLen+srcStride); in UB it starts at
// i*(round32(left + blockLen + right) + dstStride*32), data after `left` padding bytes.
template <typename T>
inline void pad_in(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t blockCount,
                   uint64_t blockLen, uint64_t srcStride, uint64_t dstStride, bool isPad,
                   uint32_t leftPad, uint32_t rightPad, T padValue, uint64_t max_len,
                   jk::Site site) {
  params_range(blockCount, blockLen, site, "DataCopyPad", max_len);
  ub_aligned(dst, site, "DataCopyPad GM->UB");
  const uint64_t lb = uint64_t(leftPad) * sizeof(T), rb = uint64_t(rightPad) * sizeof(T);
  if (lb > 32 || rb > 32)
    jk::misuse("unsupported_argument", site,
               "DataCopyPad leftPadding/rightPadding over 32 bytes (" + std::to_string(lb) + "/" +
                   std::to_string(rb) + ")");
  const uint64_t ub_block = (lb + blockLen + rb + 31) / 32 * 32;
  const uint64_t sstep = blockLen + srcStride, dstep = ub_block + dstStride * 32;
  const uint64_t last = blockCount - 1;
  dst.jk_check_span(0, last * dstep + lb + blockLen + rb, site);
  const uint64_t g = src.jk_span(0, last * sstep + blockLen, site);
  auto& e = jk::eng();
  e.issue(jk::Pipe::MTE2, "DataCopyPad", mte_cost(jk::Pipe::MTE2, blockLen * blockCount), site);
  uint8_t* ub = e.ub_base();
  for (uint64_t i = 0; i < blockCount; ++i) {
    const uint64_t u = dst.jk_offset() + i * dstep;
    e.gm_read(g + i * sstep, blockLen, site);
    e.ub_write(static_cast<uint32_t>(u + lb), static_cast<uint32_t>(blockLen), site);
    std::memcpy(ub + u + lb, e.gm_real(g + i * sstep, blockLen, site), blockLen);
    if (isPad) {
      if (lb) e.ub_write(static_cast<uint32_t>(u), static_cast<uint32_t>(lb), site);
      if (rb) e.ub_write(static_cast<uint32_t>(u + lb + blockLen), static_cast<uint32_t>(rb), site);
      for (uint64_t k = 0; k < leftPad; ++k) std::memcpy(ub + u + k * sizeof(T), &padValue, sizeof(T));
      for (uint64_t k = 0; k < rightPad; ++k)
        std::memcpy(ub + u + lb + blockLen + k * sizeof(T), &padValue, sizeof(T));
    }
  }
}

// UB -> GM: burst i reads blockLen bytes at UB i*(round32(blockLen) + srcStride*32) and writes
// them at GM i*(blockLen + dstStride).
template <typename T>
inline void pad_out(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t blockCount,
                    uint64_t blockLen, uint64_t srcStride, uint64_t dstStride, uint64_t max_len,
                    jk::Site site) {
  params_range(blockCount, blockLen, site, "DataCopyPad", max_len);
  ub_aligned(src, site, "DataCopyPad UB->GM");
  const uint64_t ub_block = (blockLen + 31) / 32 * 32;
  const uint64_t sstep = ub_block + srcStride * 32, dstep = blockLen + dstStride;
  const uint64_t last = blockCount - 1;
  src.jk_check_span(0, last * sstep + blockLen, site);
  const uint64_t g = dst.jk_span(0, last * dstep + blockLen, site);
  auto& e = jk::eng();
  e.issue(jk::Pipe::MTE3, "DataCopyPad", mte_cost(jk::Pipe::MTE3, blockLen * blockCount), site);
  for (uint64_t i = 0; i < blockCount; ++i) {
    const uint64_t u = src.jk_offset() + i * sstep;
    e.ub_read(static_cast<uint32_t>(u), static_cast<uint32_t>(blockLen), site);
    e.gm_write(g + i * dstep, blockLen, site);
    std::memcpy(e.gm_real(g + i * dstep, blockLen, site), e.ub_base() + u, blockLen);
  }
}

// Element types whose copies go to the compiled bodies: a copy depends on the element size only.
template <typename T>
constexpr bool copy_erased_v = sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8;

}  // namespace jk_detail
}  // namespace AscendC

// ---- the compiled-once entry points (erased.h; defined in datacopy_impl.h) --------------------
namespace jk {
namespace ops {

JK_ENGINE_FN void copy_in(uint32_t esize, const TRef& dst, const GRef& src, uint32_t count,
                          Site site);
JK_ENGINE_FN void copy_out(uint32_t esize, const GRef& dst, const TRef& src, uint32_t count,
                           Site site);
JK_ENGINE_FN void copy_ub(uint32_t esize, const TRef& dst, const TRef& src, uint32_t count,
                          Site site);
JK_ENGINE_FN void copy_in(uint32_t esize, const TRef& dst, const GRef& src,
                          const AscendC::DataCopyParams& p, Site site);
JK_ENGINE_FN void copy_out(uint32_t esize, const GRef& dst, const TRef& src,
                           const AscendC::DataCopyParams& p, Site site);
JK_ENGINE_FN void copy_ub(uint32_t esize, const TRef& dst, const TRef& src,
                          const AscendC::DataCopyParams& p, Site site);
JK_ENGINE_FN void copy_pad_in(uint32_t esize, const TRef& dst, const GRef& src, uint32_t blockCount,
                              uint64_t blockLen, uint64_t srcStride, uint64_t dstStride, bool isPad,
                              uint32_t leftPad, uint32_t rightPad, Scalar padValue,
                              uint64_t max_len, Site site);
JK_ENGINE_FN void copy_pad_out(uint32_t esize, const GRef& dst, const TRef& src,
                               uint32_t blockCount, uint64_t blockLen, uint64_t srcStride,
                               uint64_t dstStride, uint64_t max_len, Site site);

}  // namespace ops
}  // namespace jk

namespace AscendC {

// The public forms: an element size of 1, 2, 4 or 8 bytes goes to the compiled body, any other
// to the same template inline.
#define JK_COPY(ERASED, INLINE)                                                                    \
  if constexpr (jk_detail::copy_erased_v<T>) {                                                     \
    jk::ops::ERASED;                                                                               \
  } else {                                                                                         \
    jk_detail::INLINE;                                                                             \
  }

// ---- count form (atlasascendc_api_07_0102): count * sizeof(T) must be a multiple of 32 bytes ----
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count,
                     jk::Site site = jk::here()) {
  JK_COPY(copy_in(sizeof(T), jk::ops::ref(dst), jk::ops::gref(src), count, site),
          copy(dst, src, count, site))
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                     jk::Site site = jk::here()) {
  JK_COPY(copy_out(sizeof(T), jk::ops::gref(dst), jk::ops::ref(src), count, site),
          copy(dst, src, count, site))
}

// UB -> UB copy, on the vector pipe (costed as a vector op "DataCopy").
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                     jk::Site site = jk::here()) {
  JK_COPY(copy_ub(sizeof(T), jk::ops::ref(dst), jk::ops::ref(src), count, site),
          copy(dst, src, count, site))
}

// ---- DataCopyParams form: bursts of whole 32-byte blocks -------------------------------------
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const DataCopyParams& p, jk::Site site = jk::here()) {
  JK_COPY(copy_in(sizeof(T), jk::ops::ref(dst), jk::ops::gref(src), p, site),
          copy(dst, src, p, site))
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p, jk::Site site = jk::here()) {
  JK_COPY(copy_out(sizeof(T), jk::ops::gref(dst), jk::ops::ref(src), p, site),
          copy(dst, src, p, site))
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p, jk::Site site = jk::here()) {
  JK_COPY(copy_ub(sizeof(T), jk::ops::ref(dst), jk::ops::ref(src), p, site),
          copy(dst, src, p, site))
}

// ---- DataCopyPad (atlasascendc_api_07_0265) ---------------------------------------------------
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad,
                        jk::Site site = jk::here()) {
  JK_COPY(copy_pad_in(sizeof(T), jk::ops::ref(dst), jk::ops::gref(src), p.blockCount, p.blockLen,
                      p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding,
                      jk::ops::scalar<T>(pad.paddingValue), 0xFFFFFFFFull, site),
          pad_in(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad,
                 pad.leftPadding, pad.rightPadding, pad.paddingValue, 0xFFFFFFFFull, site))
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyParams& p, const DataCopyPadParams& pad,
                        jk::Site site = jk::here()) {
  T v;
  std::memset(&v, 0, sizeof v);
  std::memcpy(&v, &pad.paddingValue, sizeof(T) < 8 ? sizeof(T) : 8);
  JK_COPY(copy_pad_in(sizeof(T), jk::ops::ref(dst), jk::ops::gref(src), p.blockCount, p.blockLen,
                      p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding,
                      jk::ops::scalar<T>(v), 65535, site),
          pad_in(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad,
                 pad.leftPadding, pad.rightPadding, v, 65535, site))
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                        const DataCopyExtParams& p, jk::Site site = jk::here()) {
  JK_COPY(copy_pad_out(sizeof(T), jk::ops::gref(dst), jk::ops::ref(src), p.blockCount, p.blockLen,
                       p.srcStride, p.dstStride, 0xFFFFFFFFull, site),
          pad_out(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0xFFFFFFFFull,
                  site))
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                        const DataCopyParams& p, jk::Site site = jk::here()) {
  JK_COPY(copy_pad_out(sizeof(T), jk::ops::gref(dst), jk::ops::ref(src), p.blockCount, p.blockLen,
                       p.srcStride, p.dstStride, 65535, site),
          pad_out(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, 65535, site))
}

#undef JK_COPY

}  // namespace AscendC

#if JK_ENGINE_DEFS
#include "jk_ascendc/datacopy_impl.h"
#endif
