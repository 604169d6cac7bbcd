// Clean-room ascendc-cpu library: type-erased operands for the compiled-once instruction bodies.
//
// Why: the per-element bodies of DataCopy, the vector family, Cast and the reductions are
// templates on the element type; inlined into a kernel unit they cost most of its g++ time. The
// public API templates (vector.h, cast.h, reduce.h, datacopy.h) keep their signatures, checks and
// call-site capture, but hand their operands to NON-template entry points (jk::ops, JK_ENGINE_FN)
// as plain records: a UB tensor (TRef), a GM tensor (GRef), a scalar as the bits of its dtype
// (Scalar) and the dtype as a tag (Dt). The entry points switch once on (op, dtype) into the
// unchanged templated loops; with -DJK_ENGINE_EXTERN they are compiled only into the harness
// object (JK_ENGINE_IMPL), header-only use keeps them inline (engine.h's macros).
// An element type with no tag (Dt::None) keeps the inline template path, so nothing changes for it.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "jk_ascendc/engine.h"
#include "jk_ascendc/tensor.h"
#include "jk_ascendc/types.h"

namespace jk {
namespace ops {

// The element types the compiled bodies are instantiated for.
enum class Dt : uint8_t { F32 = 0, F16, I16, I32, U16, U32, None };

template <typename T>
constexpr Dt dt_of() {
  if constexpr (std::is_same_v<T, float>) return Dt::F32;
  else if constexpr (std::is_same_v<T, half>) return Dt::F16;
  else if constexpr (std::is_same_v<T, int16_t>) return Dt::I16;
  else if constexpr (std::is_same_v<T, int32_t>) return Dt::I32;
  else if constexpr (std::is_same_v<T, uint16_t>) return Dt::U16;
  else if constexpr (std::is_same_v<T, uint32_t>) return Dt::U32;
  else return Dt::None;
}
template <typename T>
constexpr bool erased_v = dt_of<T>() != Dt::None;

// A LocalTensor's state, whatever its element type (tensor.h's fields, copied as they are).
struct TRef {
  uint32_t off;
  uint32_t end;
  uint32_t size;
  int32_t slot;
  uint32_t gen;
  AscendC::TPosition pos;
};
template <typename T>
inline TRef ref(const AscendC::LocalTensor<T>& t) {
  return TRef{t.jk_off_, t.jk_end_, t.jk_size_, t.jk_slot_, t.jk_gen_, t.jk_pos_};
}
template <typename T>
inline AscendC::LocalTensor<T> local(const TRef& r) {
  AscendC::LocalTensor<T> t;
  t.jk_off_ = r.off;
  t.jk_end_ = r.end;
  t.jk_size_ = r.size;
  t.jk_slot_ = r.slot;
  t.jk_gen_ = r.gen;
  t.jk_pos_ = r.pos;
  return t;
}

// A GlobalTensor's state (fake address, extent in elements, whether SetGlobalBuffer bounded it).
struct GRef {
  uint64_t addr;
  uint64_t size;
  bool bounded;
};
template <typename T>
inline GRef gref(const AscendC::GlobalTensor<T>& g) {
  return GRef{g.jk_addr_, g.jk_size_, g.jk_bounded_};
}
template <typename T>
inline AscendC::GlobalTensor<T> global(const GRef& r) {
  AscendC::GlobalTensor<T> g;
  g.jk_addr_ = r.addr;
  g.jk_size_ = r.size;
  g.jk_bounded_ = r.bounded;
  return g;
}

// A scalar operand as the bytes of its dtype (bit-exact: no conversion on the way).
struct Scalar {
  uint8_t b[8];
};
template <typename T>
inline Scalar scalar(const T& v) {
  static_assert(sizeof(T) <= 8, "ascendc-cpu: scalar operand wider than 8 bytes");
  Scalar s{};
  std::memcpy(s.b, &v, sizeof(T));
  return s;
}
template <typename T>
inline T value(const Scalar& s) {
  T v;
  std::memcpy(&v, s.b, sizeof(T));
  return v;
}

// Calls f(T{}) for the element type of tag `dt` (compiled bodies only; Dt::None never gets here).
template <typename F>
inline void with_dt(Dt dt, F&& f) {
  switch (dt) {
    case Dt::F32: f(float{}); break;
    case Dt::F16: f(half{}); break;
    case Dt::I16: f(int16_t{}); break;
    case Dt::I32: f(int32_t{}); break;
    case Dt::U16: f(uint16_t{}); break;
    case Dt::U32: f(uint32_t{}); break;
    case Dt::None: break;
  }
}

// Calls f(U{}) for the unsigned type of `esize` bytes (bodies that depend on the size only).
template <typename F>
inline void with_size(uint32_t esize, F&& f) {
  switch (esize) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: break;
  }
}

}  // namespace ops
}  // namespace jk
