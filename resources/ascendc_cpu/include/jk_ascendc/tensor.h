// Clean-room Ascend C CPU library: GlobalTensor and LocalTensor.
//
// A LocalTensor is a view of this core's Unified Buffer: a byte offset from the UB base, an element
// count, the end of the buffer it came from (bounds), and the queue slot + generation that owns it
// (use after FreeTensor). A GlobalTensor holds a FAKE GM address (the harness's) and an extent; the
// engine's GM registry translates it, so a kernel never gets a usable host pointer to GM or UB.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "jk_ascendc/engine.h"
#include "jk_ascendc/types.h"

// The element-type-independent halves of the tensor accessors below: non-template, so a kernel
// unit compiled with -DJK_ENGINE_EXTERN only calls them (defined in tensor_impl.h, compiled once
// into the harness; inline in header-only use). `esize` is sizeof(T) of the calling tensor.
namespace jk {
namespace ops {
JK_ENGINE_FN void ub_check_live(int32_t slot, uint32_t gen, Site site);
JK_ENGINE_FN void ub_check_span(uint32_t off, uint32_t end, int32_t slot, uint32_t gen,
                                uint64_t byte_off, uint64_t bytes, Site site);
// LocalTensor::GetValue / SetValue of element `index` (bytes copied to `out` / from `in`).
JK_ENGINE_FN void ub_get(uint32_t off, uint32_t end, int32_t slot, uint32_t gen, uint32_t esize,
                         uint32_t index, void* out, Site site);
JK_ENGINE_FN void ub_set(uint32_t off, uint32_t end, int32_t slot, uint32_t gen, uint32_t esize,
                         uint32_t index, const void* in, Site site);
// GlobalTensor::jk_span, GetValue and SetValue.
JK_ENGINE_FN uint64_t gm_span(uint64_t addr, uint64_t size, bool bounded, uint32_t esize,
                              uint64_t byte_off, uint64_t bytes, Site site);
JK_ENGINE_FN void gm_get(uint64_t addr, uint64_t size, bool bounded, uint32_t esize,
                         uint64_t index, void* out, Site site);
JK_ENGINE_FN void gm_set(uint64_t addr, uint64_t size, bool bounded, uint32_t esize,
                         uint64_t index, const void* in, Site site);
}  // namespace ops
}  // namespace jk

namespace AscendC {

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;

  // Sub-tensor starting `offset` elements further (atlasascendc_api_07_0006 "LocalTensor": operator[]).
  LocalTensor operator[](uint32_t offset) const {
    LocalTensor t = *this;
    // past the buffer (or past 4 GiB): a tensor with no bytes, so any access is out of bounds
    const uint64_t off = uint64_t(jk_off_) + uint64_t(offset) * sizeof(T);
    t.jk_off_ = off > jk_end_ ? jk_end_ : static_cast<uint32_t>(off);
    t.jk_size_ = offset <= jk_size_ ? jk_size_ - offset : 0;
    return t;
  }

  // Element count (GetSize) and its setter (SetSize); SetSize past the buffer is ub_out_of_bounds.
  uint32_t GetSize() const { return jk_size_; }
  void SetSize(uint32_t size, jk::Site site = jk::here()) {
    if (static_cast<uint64_t>(jk_off_) + uint64_t(size) * sizeof(T) > jk_end_)
      jk::misuse("ub_out_of_bounds", site,
                 "SetSize(" + std::to_string(size) + ") runs past the tensor's buffer (" +
                     std::to_string(jk_bytes_available()) + " bytes available)");
    jk_size_ = size;
  }
  // Length in bytes.
  uint32_t GetLength() const { return jk_size_ * static_cast<uint32_t>(sizeof(T)); }
  TPosition GetPosition() const { return jk_pos_; }

  // The UB address as a number (offset from the UB base); never a usable host pointer.
  uint64_t GetPhyAddr() const { return jk_off_; }
  uint64_t GetPhyAddr(uint32_t offset) const { return jk_off_ + offset * sizeof(T); }

  // Same bytes seen as another element type (ReinterpretCast).
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.jk_off_ = jk_off_;
    t.jk_end_ = jk_end_;
    t.jk_size_ = static_cast<uint32_t>(uint64_t(jk_size_) * sizeof(T) / sizeof(U));
    t.jk_slot_ = jk_slot_;
    t.jk_gen_ = jk_gen_;
    t.jk_pos_ = jk_pos_;
    return t;
  }

  // Scalar read of one element on the S pipe (atlasascendc_api_07_0006: GetValue); ordering with
  // vector/MTE writes needs WaitFlag<V_S>/<MTE2_S>.
  T GetValue(uint32_t index, jk::Site site = jk::here()) const {
    T v;
    jk::ops::ub_get(jk_off_, jk_end_, jk_slot_, jk_gen_, sizeof(T), index, &v, site);
    return v;
  }
  // Scalar write of one element on the S pipe (SetValue).
  template <typename U>
  void SetValue(uint32_t index, U value, jk::Site site = jk::here()) const {
    const T v = static_cast<T>(value);
    jk::ops::ub_set(jk_off_, jk_end_, jk_slot_, jk_gen_, sizeof(T), index, &v, site);
  }

  // ---- engine-facing helpers (for the op headers; not Ascend C API) ---------------------------
  uint32_t jk_offset() const { return jk_off_; }                 // bytes from the UB base
  uint32_t jk_bytes_available() const {                          // bytes up to the buffer's end
    return jk_end_ > jk_off_ ? jk_end_ - jk_off_ : 0;
  }
  // Spellings the op headers use (same meaning as jk_offset / jk_bytes_available).
  uint32_t jk_ub_offset() const { return jk_off_; }
  uint32_t jk_ub_bytes() const { return jk_bytes_available(); }
  T* jk_data() const { return reinterpret_cast<T*>(jk::eng().ub_base() + jk_off_); }
  // Misuse unless the tensor comes from a live buffer (allocated, not freed, pipe not reset).
  void jk_check_live(jk::Site site) const { jk::ops::ub_check_live(jk_slot_, jk_gen_, site); }
  // Liveness plus [byte_off, byte_off+bytes) (relative to this tensor) inside its buffer.
  void jk_check_span(uint64_t byte_off, uint64_t bytes, jk::Site site) const {
    jk::ops::ub_check_span(jk_off_, jk_end_, jk_slot_, jk_gen_, byte_off, bytes, site);
  }
  // Declare a read/write of the instruction just issued (checked span, poison, hazards).
  void jk_read(uint32_t byte_off, uint32_t bytes, jk::Site site) const {
    jk_check_span(byte_off, bytes, site);
    jk::eng().ub_read(jk_off_ + byte_off, bytes, site);
  }
  void jk_write(uint32_t byte_off, uint32_t bytes, jk::Site site) const {
    jk_check_span(byte_off, bytes, site);
    jk::eng().ub_write(jk_off_ + byte_off, bytes, site);
  }

  // Internal state (public so other instantiations and queue.h can build tensors).
  uint32_t jk_off_ = 0;
  uint32_t jk_end_ = 0;   // byte offset of the owning buffer's end
  uint32_t jk_size_ = 0;  // elements
  int32_t jk_slot_ = -1;
  uint32_t jk_gen_ = 0;
  TPosition jk_pos_ = TPosition::VECCALC;
};

template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;
  GlobalTensor() = default;

  // Binds the tensor to GM (atlasascendc_api_07_0007 "GlobalTensor": SetGlobalBuffer). The extent
  // is checked on access, not here: a core past the data may legally bind an empty range.
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    jk_addr_ = reinterpret_cast<uint64_t>(buffer);
    jk_size_ = bufferSize;
    jk_bounded_ = true;
  }
  void SetGlobalBuffer(__gm__ T* buffer) {
    jk_addr_ = reinterpret_cast<uint64_t>(buffer);
    jk_size_ = 0;
    jk_bounded_ = false;
  }

  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor t = *this;
    t.jk_addr_ = jk_addr_ + offset * sizeof(T);
    t.jk_size_ = offset <= jk_size_ ? jk_size_ - offset : 0;
    return t;
  }
  uint64_t GetSize() const { return jk_size_; }
  // The FAKE GM address: dereferencing it faults (gm_raw_access).
  __gm__ T* GetPhyAddr() const { return reinterpret_cast<T*>(jk_addr_); }
  __gm__ T* GetPhyAddr(uint64_t offset) const {
    return reinterpret_cast<T*>(jk_addr_ + offset * sizeof(T));
  }

  // Scalar GM read/write on S: as slow as a GM round trip (deliberately expensive).
  T GetValue(uint64_t index, jk::Site site = jk::here()) const {
    T v;
    jk::ops::gm_get(jk_addr_, jk_size_, jk_bounded_, sizeof(T), index, &v, site);
    return v;
  }
  template <typename U>
  void SetValue(uint64_t index, U value, jk::Site site = jk::here()) const {
    const T v = static_cast<T>(value);
    jk::ops::gm_set(jk_addr_, jk_size_, jk_bounded_, sizeof(T), index, &v, site);
  }

  // ---- engine-facing helpers ------------------------------------------------------------------
  uint64_t jk_addr() const { return jk_addr_; }
  // Checks [byte_off, byte_off+bytes) against the SetGlobalBuffer extent and the registry;
  // returns the fake address of byte_off.
  uint64_t jk_span(uint64_t byte_off, uint64_t bytes, jk::Site site) const {
    return jk::ops::gm_span(jk_addr_, jk_size_, jk_bounded_, sizeof(T), byte_off, bytes, site);
  }

  uint64_t jk_addr_ = 0;
  uint64_t jk_size_ = 0;
  bool jk_bounded_ = false;
};

}  // namespace AscendC

#if JK_ENGINE_DEFS
#include "jk_ascendc/tensor_impl.h"
#endif
