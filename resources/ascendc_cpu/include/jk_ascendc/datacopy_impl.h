// Clean-room ascendc-cpu library: the compiled-once bodies of DataCopy and DataCopyPad.
//
// Why a file of its own: datacopy.h's API templates hand their operands here (erased.h); a copy
// depends on the element size only, so each entry point instantiates datacopy.h's templated body
// for the unsigned type of that size. datacopy.h includes this file when the definitions are
// wanted (JK_ENGINE_DEFS): inline for header-only use, once in the harness object under
// JK_ENGINE_IMPL; a team unit compiled with JK_ENGINE_EXTERN never sees it.
#pragma once

#include "jk_ascendc/datacopy.h"

namespace jk {
namespace ops {

JK_ENGINE_FN void copy_in(uint32_t esize, const TRef& dst, const GRef& src, uint32_t count,
                          Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::copy(local<U>(dst), global<U>(src), count, site);
  });
}

JK_ENGINE_FN void copy_out(uint32_t esize, const GRef& dst, const TRef& src, uint32_t count,
                           Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::copy(global<U>(dst), local<U>(src), count, site);
  });
}

JK_ENGINE_FN void copy_ub(uint32_t esize, const TRef& dst, const TRef& src, uint32_t count,
                          Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::copy(local<U>(dst), local<U>(src), count, site);
  });
}

JK_ENGINE_FN void copy_in(uint32_t esize, const TRef& dst, const GRef& src,
                          const AscendC::DataCopyParams& p, Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::copy(local<U>(dst), global<U>(src), p, site);
  });
}

JK_ENGINE_FN void copy_out(uint32_t esize, const GRef& dst, const TRef& src,
                           const AscendC::DataCopyParams& p, Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::copy(global<U>(dst), local<U>(src), p, site);
  });
}

JK_ENGINE_FN void copy_ub(uint32_t esize, const TRef& dst, const TRef& src,
                          const AscendC::DataCopyParams& p, Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::copy(local<U>(dst), local<U>(src), p, site);
  });
}

JK_ENGINE_FN void copy_pad_in(uint32_t esize, const TRef& dst, const GRef& src, uint32_t blockCount,
                              uint64_t blockLen, uint64_t srcStride, uint64_t dstStride, bool isPad,
                              uint32_t leftPad, uint32_t rightPad, Scalar padValue,
                              uint64_t max_len, Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::pad_in(local<U>(dst), global<U>(src), blockCount, blockLen, srcStride,
                               dstStride, isPad, leftPad, rightPad, value<U>(padValue), max_len,
                               site);
  });
}

JK_ENGINE_FN void copy_pad_out(uint32_t esize, const GRef& dst, const TRef& src,
                               uint32_t blockCount, uint64_t blockLen, uint64_t srcStride,
                               uint64_t dstStride, uint64_t max_len, Site site) {
  with_size(esize, [&](auto tag) {
    using U = decltype(tag);
    AscendC::jk_detail::pad_out(global<U>(dst), local<U>(src), blockCount, blockLen, srcStride,
                                dstStride, max_len, site);
  });
}

}  // namespace ops
}  // namespace jk
