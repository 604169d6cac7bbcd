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
    const uint64_t off = uint64_t(index) * sizeof(T);  // no 32-bit wrap past the bounds check
    jk_check_span(off, sizeof(T), site);
    jk::eng().issue(jk::Pipe::S, "GetValue", jk::eng().soc().scalar_ub_access, site);
    jk::eng().ub_read(static_cast<uint32_t>(jk_off_ + off), sizeof(T), site);
    T v;
    std::memcpy(&v, jk::eng().ub_base() + jk_off_ + off, sizeof(T));
    return v;
  }
  // Scalar write of one element on the S pipe (SetValue).
  template <typename U>
  void SetValue(uint32_t index, U value, jk::Site site = jk::here()) const {
    const uint64_t off = uint64_t(index) * sizeof(T);  // no 32-bit wrap past the bounds check
    jk_check_span(off, sizeof(T), site);
    jk::eng().issue(jk::Pipe::S, "SetValue", jk::eng().soc().scalar_ub_access, site);
    jk::eng().ub_write(static_cast<uint32_t>(jk_off_ + off), sizeof(T), site);
    const T v = static_cast<T>(value);
    std::memcpy(jk::eng().ub_base() + jk_off_ + off, &v, sizeof(T));
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
  void jk_check_live(jk::Site site) const {
    if (jk_slot_ < 0)
      jk::misuse("ub_out_of_bounds", site,
                 "LocalTensor that no TQue::AllocTensor/DeQue or TBuf::Get produced");
    auto& slots = jk::eng().slots();
    if (static_cast<size_t>(jk_slot_) >= slots.size() || slots[jk_slot_].gen != jk_gen_)
      jk::misuse("queue_use_after_free", site,
                 "LocalTensor used after its buffer was freed (FreeTensor or TPipe::Reset)");
  }
  // Liveness plus [byte_off, byte_off+bytes) (relative to this tensor) inside its buffer.
  void jk_check_span(uint64_t byte_off, uint64_t bytes, jk::Site site) const {
    jk_check_live(site);
    if (byte_off + bytes > jk_bytes_available())
      jk::misuse("ub_out_of_bounds", site,
                 "access to bytes [" + std::to_string(byte_off) + ", " +
                     std::to_string(byte_off + bytes) + ") of a LocalTensor whose buffer has " +
                     std::to_string(jk_bytes_available()) + " bytes from its start (UB offset " +
                     std::to_string(jk_off_) + ")");
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
    const uint64_t fake = jk_span(index * sizeof(T), sizeof(T), site);
    auto& e = jk::eng();
    e.issue(jk::Pipe::S, "GetValue(GM)", jk_scalar_gm_cost(), site);
    e.gm_read(fake, sizeof(T), site);
    T v;
    std::memcpy(&v, e.gm_real(fake, sizeof(T), site), sizeof(T));
    return v;
  }
  template <typename U>
  void SetValue(uint64_t index, U value, jk::Site site = jk::here()) const {
    const uint64_t fake = jk_span(index * sizeof(T), sizeof(T), site);
    auto& e = jk::eng();
    e.issue(jk::Pipe::S, "SetValue(GM)", jk_scalar_gm_cost(), site);
    e.gm_write(fake, sizeof(T), site);
    const T v = static_cast<T>(value);
    std::memcpy(e.gm_real(fake, sizeof(T), site), &v, sizeof(T));
  }

  // ---- engine-facing helpers ------------------------------------------------------------------
  uint64_t jk_addr() const { return jk_addr_; }
  // Checks [byte_off, byte_off+bytes) against the SetGlobalBuffer extent and the registry;
  // returns the fake address of byte_off.
  uint64_t jk_span(uint64_t byte_off, uint64_t bytes, jk::Site site) const {
    if (jk_addr_ == 0)
      jk::misuse("gm_out_of_bounds", site, "GlobalTensor used before SetGlobalBuffer");
    if (jk_bounded_ && byte_off + bytes > jk_size_ * sizeof(T))
      jk::misuse("gm_out_of_bounds", site,
                 "GM access to bytes [" + std::to_string(byte_off) + ", " +
                     std::to_string(byte_off + bytes) + ") of a GlobalTensor whose extent is " +
                     std::to_string(jk_size_) + " elements (" +
                     std::to_string(jk_size_ * sizeof(T)) + " bytes) per SetGlobalBuffer");
    jk::eng().gm_real(jk_addr_ + byte_off, bytes, site);  // inside a registered buffer
    return jk_addr_ + byte_off;
  }
  static uint64_t jk_scalar_gm_cost() {
    const auto& s = jk::eng().soc();
    return s.mte2_latency + static_cast<uint64_t>(sizeof(T) / s.mte2_bytes_per_cycle + 0.999999);
  }

  uint64_t jk_addr_ = 0;
  uint64_t jk_size_ = 0;
  bool jk_bounded_ = false;
};

}  // namespace AscendC
