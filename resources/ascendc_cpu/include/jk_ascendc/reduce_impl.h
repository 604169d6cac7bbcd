// Clean-room ascendc-cpu library: the compiled-once bodies of the reductions.
//
// Why a file of its own: reduce.h's API templates hand their operands here (erased.h), and this
// file switches once on the dtype (half, float: sum_ok_v) into reduce.h's templated loops.
// reduce.h includes it when the definitions are wanted (JK_ENGINE_DEFS): inline for header-only
// use, once in the harness object under JK_ENGINE_IMPL; a team unit compiled with
// JK_ENGINE_EXTERN never sees it.
#pragma once

#include "jk_ascendc/reduce.h"

namespace jk {
namespace ops {

// Calls f(T{}) for a reduction dtype (the APIs' static_assert admits half and float only).
template <typename F>
inline void with_red_dt(Dt dt, F&& f) {
  with_dt(dt, [&](auto tag) {
    if constexpr (red::sum_ok_v<decltype(tag)>) f(tag);
  });
}

JK_ENGINE_FN void red_sum(Dt dt, const TRef& d, const TRef& s, const TRef& tmp, uint64_t repeats,
                          int64_t src_rep, bool in_order, const red::RedMasks& masks, Site site) {
  with_red_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    red::reduce_sum(local<T>(d), local<T>(s), local<T>(tmp), repeats, src_rep, in_order, masks,
                    site);
  });
}

JK_ENGINE_FN void red_extreme(bool is_max, Dt dt, const TRef& d, const TRef& s, const TRef& tmp,
                              uint64_t repeats, int64_t src_rep, bool cal_index,
                              const red::RedMasks& masks, Site site) {
  with_red_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    if (is_max) {
      red::reduce_extreme<T, true>(local<T>(d), local<T>(s), local<T>(tmp), repeats, src_rep,
                                   cal_index, masks, site);
    } else {
      red::reduce_extreme<T, false>(local<T>(d), local<T>(s), local<T>(tmp), repeats, src_rep,
                                    cal_index, masks, site);
    }
  });
}

JK_ENGINE_FN void red_whole_sum(Dt dt, const TRef& d, const TRef& s, const rep::MaskPlan& mp,
                                int32_t dst_rep, int32_t src_blk, int32_t src_rep, Site site) {
  with_red_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    AscendC::jkdetail::whole_reduce_sum_body(local<T>(d), local<T>(s), mp, dst_rep, src_blk,
                                             src_rep, site);
  });
}

JK_ENGINE_FN void red_block_sum(Dt dt, const TRef& d, const TRef& s, const rep::MaskPlan& mp,
                                int32_t dst_rep, int32_t src_blk, int32_t src_rep, Site site) {
  with_red_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    AscendC::jkdetail::block_reduce_sum_body(local<T>(d), local<T>(s), mp, dst_rep, src_blk,
                                             src_rep, site);
  });
}

JK_ENGINE_FN void red_whole_extreme(bool is_max, Dt dt, const TRef& d, const TRef& s,
                                    const rep::MaskPlan& mp, int32_t dst_rep, int32_t src_blk,
                                    int32_t src_rep, AscendC::ReduceOrder order, Site site) {
  with_red_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    if (is_max) {
      AscendC::jkdetail::whole_reduce_extreme_body<T, true>(local<T>(d), local<T>(s), mp, dst_rep,
                                                            src_blk, src_rep, order, site);
    } else {
      AscendC::jkdetail::whole_reduce_extreme_body<T, false>(local<T>(d), local<T>(s), mp,
                                                             dst_rep, src_blk, src_rep, order,
                                                             site);
    }
  });
}

}  // namespace ops
}  // namespace jk
