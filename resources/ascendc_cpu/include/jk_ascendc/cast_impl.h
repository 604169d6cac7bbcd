// Clean-room ascendc-cpu library: the compiled-once bodies of Cast.
//
// Why a file of its own: cast.h's API templates hand their operands here (erased.h), and this
// file switches once on the conversion into cast.h's templated loops. cast.h includes it when the
// definitions are wanted (JK_ENGINE_DEFS): inline for header-only use, once in the harness object
// under JK_ENGINE_IMPL; a team unit compiled with JK_ENGINE_EXTERN never sees it.
#pragma once

#include "jk_ascendc/cast.h"

namespace jk {
namespace ops {

// Calls f(D{}, S{}) for the (destination, source) types of `pair`.
template <typename F>
inline void with_cast_pair(CastPair pair, F&& f) {
  switch (pair) {
    case CastPair::F32_F16: f(half{}, float{}); break;
    case CastPair::F32_I32: f(int32_t{}, float{}); break;
    case CastPair::F32_F32: f(float{}, float{}); break;
    case CastPair::F16_F32: f(float{}, half{}); break;
    case CastPair::F16_I32: f(int32_t{}, half{}); break;
    case CastPair::I32_F32: f(float{}, int32_t{}); break;
    case CastPair::None: break;
  }
}

JK_ENGINE_FN void cast_check_mode(CastPair pair, cast::Mode mode, Site site) {
  with_cast_pair(pair, [&](auto dt, auto st) {
    cast::check_mode<decltype(dt), decltype(st)>(mode, site);
  });
}

JK_ENGINE_FN void cast_count(CastPair pair, const TRef& d, const TRef& s, cast::Mode mode,
                             uint32_t count, Site site) {
  with_cast_pair(pair, [&](auto dt, auto st) {
    using D = decltype(dt);
    using S = decltype(st);
    cast::cast_count<D, S>(local<D>(d), local<S>(s), mode, count, site);
  });
}

JK_ENGINE_FN void cast_mask(CastPair pair, const TRef& d, const TRef& s, cast::Mode mode,
                            const rep::MaskPlan& mp, const AscendC::UnaryRepeatParams& rp,
                            Site site) {
  with_cast_pair(pair, [&](auto dt, auto st) {
    using D = decltype(dt);
    using S = decltype(st);
    cast::cast_mask<D, S>(local<D>(d), local<S>(s), mode, mp, rp, site);
  });
}

}  // namespace ops
}  // namespace jk
