// Clean-room ascendc-cpu library: the compiled-once bodies of the vector instructions.
//
// Why a file of its own: vector.h's API templates hand their operands here (erased.h), and this
// file switches once on (op, dtype) into the templated loops of vector.h. vector.h includes it
// when the definitions are wanted (JK_ENGINE_DEFS): inline for header-only use, once in the
// harness object under JK_ENGINE_IMPL; a team unit compiled with JK_ENGINE_EXTERN never sees it.
// Each (op, dtype) pair is instantiated only where the API's static_assert admits it.
#pragma once

#include "jk_ascendc/vector.h"

namespace jk {
namespace ops {

// The API name each op reports (stats, trace, misuse messages): the public function's name.
inline const char* vop_name(VOp op) {
  static const char* const names[] = {"Add",  "Sub", "Mul",  "Div",        "Max",  "Min",
                                      "Abs",  "Exp", "Ln",   "Sqrt",       "Reciprocal", "Relu",
                                      "Adds", "Muls", "Maxs", "Mins"};
  return names[static_cast<int>(op)];
}

// Calls f(Op{}) for a binary op (or the op of a tensor-scalar one) admitted for T.
template <typename T, typename F>
inline void with_binary_op(VOp op, F&& f) {
  constexpr bool arith = vops::arith_ok_v<T>;
  constexpr bool fl = rep::is_float_like_v<T>;
  switch (op) {
    case VOp::Add: case VOp::Adds: if constexpr (arith) f(vops::AddOp{}); break;
    case VOp::Sub: if constexpr (arith) f(vops::SubOp{}); break;
    case VOp::Mul: case VOp::Muls: if constexpr (arith) f(vops::MulOp{}); break;
    case VOp::Div: if constexpr (fl) f(vops::DivOp{}); break;
    case VOp::Max: case VOp::Maxs: if constexpr (arith) f(vops::MaxOp{}); break;
    case VOp::Min: case VOp::Mins: if constexpr (arith) f(vops::MinOp{}); break;
    default: break;
  }
}

// Calls f(element function) for a unary or tensor-scalar op admitted for T.
template <typename T, typename F>
inline void with_unary_fn(VOp op, Scalar v, F&& f) {
  constexpr bool fl = rep::is_float_like_v<T>;
  switch (op) {
    case VOp::Abs: if constexpr (fl) f([](T x) { return vops::AbsOp{}(x); }); break;
    case VOp::Exp: if constexpr (fl) f([](T x) { return vops::ExpOp{}(x); }); break;
    case VOp::Ln: if constexpr (fl) f([](T x) { return vops::LnOp{}(x); }); break;
    case VOp::Sqrt: if constexpr (fl) f([](T x) { return vops::SqrtOp{}(x); }); break;
    case VOp::Reciprocal: if constexpr (fl) f([](T x) { return vops::ReciprocalOp{}(x); }); break;
    case VOp::Relu:
      if constexpr (fl || std::is_same_v<T, int32_t>) f([](T x) { return vops::ReluOp{}(x); });
      break;
    case VOp::Adds: case VOp::Muls: case VOp::Maxs: case VOp::Mins: {
      const T s = value<T>(v);
      with_binary_op<T>(op, [&](auto o) { f([s, o](T x) { return o(x, s); }); });
      break;
    }
    default: break;
  }
}

JK_ENGINE_FN void vec_binary_count(VOp op, Dt dt, const TRef& d, const TRef& a, const TRef& b,
                                   int64_t count, Site site) {
  with_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    with_binary_op<T>(op, [&](auto o) {
      vops::binary_count(vop_name(op), local<T>(d), local<T>(a), local<T>(b), count, site, o);
    });
  });
}

JK_ENGINE_FN void vec_binary_mask(VOp op, Dt dt, const TRef& d, const TRef& a, const TRef& b,
                                  const rep::MaskPlan& mp, const AscendC::BinaryRepeatParams& rp,
                                  Site site) {
  with_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    with_binary_op<T>(op, [&](auto o) {
      vops::binary_mask(vop_name(op), local<T>(d), local<T>(a), local<T>(b), mp, rp, site, o);
    });
  });
}

JK_ENGINE_FN void vec_unary_count(VOp op, Dt dt, const TRef& d, const TRef& s, Scalar v,
                                  int64_t count, Site site) {
  with_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    with_unary_fn<T>(op, v, [&](auto fn) {
      vops::unary_count(vop_name(op), local<T>(d), local<T>(s), count, site, fn);
    });
  });
}

JK_ENGINE_FN void vec_unary_mask(VOp op, Dt dt, const TRef& d, const TRef& s, Scalar v,
                                 const rep::MaskPlan& mp, const AscendC::UnaryRepeatParams& rp,
                                 Site site) {
  with_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    with_unary_fn<T>(op, v, [&](auto fn) {
      vops::unary_mask(vop_name(op), local<T>(d), local<T>(s), mp, rp, site, fn);
    });
  });
}

JK_ENGINE_FN void vec_dup_count(Dt dt, const TRef& d, Scalar v, int64_t count, Site site) {
  with_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    vops::dup_count<T>(local<T>(d), value<T>(v), count, site);
  });
}

JK_ENGINE_FN void vec_dup_mask(Dt dt, const TRef& d, Scalar v, const rep::MaskPlan& mp,
                               uint16_t blk, uint16_t rep, Site site) {
  with_dt(dt, [&](auto tag) {
    using T = decltype(tag);
    vops::dup_mask<T>(local<T>(d), value<T>(v), mp, blk, rep, site);
  });
}

}  // namespace ops
}  // namespace jk
