// Clean-room ascendc-cpu library: the compiled-once halves of the tensor accessors (tensor.h).
//
// Why a file of its own: every LocalTensor<T>/GlobalTensor<T> instantiation shares these checks
// and scalar accesses, which depend on the element size only. tensor.h includes this file when
// the definitions are wanted (JK_ENGINE_DEFS): inline for header-only use, once in the harness
// object under JK_ENGINE_IMPL; a team unit compiled with JK_ENGINE_EXTERN never sees it.
#pragma once

#include <cstring>
#include <string>

#include "jk_ascendc/tensor.h"

namespace jk {
namespace ops {

// Misuse unless the tensor comes from a live buffer (allocated, not freed, pipe not reset).
JK_ENGINE_FN void ub_check_live(int32_t slot, uint32_t gen, Site site) {
  if (slot < 0)
    misuse("ub_out_of_bounds", site,
           "LocalTensor that no TQue::AllocTensor/DeQue or TBuf::Get produced");
  auto& slots = eng().slots();
  if (static_cast<size_t>(slot) >= slots.size() || slots[slot].gen != gen)
    misuse("queue_use_after_free", site,
           "LocalTensor used after its buffer was freed (FreeTensor or TPipe::Reset)");
}

// Liveness plus [byte_off, byte_off+bytes) (relative to the tensor at `off`) inside its buffer.
JK_ENGINE_FN void ub_check_span(uint32_t off, uint32_t end, int32_t slot, uint32_t gen,
                                uint64_t byte_off, uint64_t bytes, Site site) {
  ub_check_live(slot, gen, site);
  const uint32_t available = end > off ? end - off : 0;
  if (byte_off + bytes > available)
    misuse("ub_out_of_bounds", site,
           "access to bytes [" + std::to_string(byte_off) + ", " +
               std::to_string(byte_off + bytes) + ") of a LocalTensor whose buffer has " +
               std::to_string(available) + " bytes from its start (UB offset " +
               std::to_string(off) + ")");
}

// Scalar read of one element on the S pipe (atlasascendc_api_07_0006: GetValue).
JK_ENGINE_FN void ub_get(uint32_t off, uint32_t end, int32_t slot, uint32_t gen, uint32_t esize,
                         uint32_t index, void* out, Site site) {
  const uint64_t at = uint64_t(index) * esize;  // no 32-bit wrap past the bounds check
  ub_check_span(off, end, slot, gen, at, esize, site);
  eng().issue(Pipe::S, "GetValue", eng().soc().scalar_ub_access, site);
  eng().ub_read(static_cast<uint32_t>(off + at), esize, site);
  std::memcpy(out, eng().ub_base() + off + at, esize);
}

// Scalar write of one element on the S pipe (SetValue).
JK_ENGINE_FN void ub_set(uint32_t off, uint32_t end, int32_t slot, uint32_t gen, uint32_t esize,
                         uint32_t index, const void* in, Site site) {
  const uint64_t at = uint64_t(index) * esize;  // no 32-bit wrap past the bounds check
  ub_check_span(off, end, slot, gen, at, esize, site);
  eng().issue(Pipe::S, "SetValue", eng().soc().scalar_ub_access, site);
  eng().ub_write(static_cast<uint32_t>(off + at), esize, site);
  std::memcpy(eng().ub_base() + off + at, in, esize);
}

// Checks [byte_off, byte_off+bytes) against the SetGlobalBuffer extent and the registry;
// returns the fake address of byte_off.
JK_ENGINE_FN uint64_t gm_span(uint64_t addr, uint64_t size, bool bounded, uint32_t esize,
                              uint64_t byte_off, uint64_t bytes, Site site) {
  if (addr == 0) misuse("gm_out_of_bounds", site, "GlobalTensor used before SetGlobalBuffer");
  if (bounded && byte_off + bytes > size * esize)
    misuse("gm_out_of_bounds", site,
           "GM access to bytes [" + std::to_string(byte_off) + ", " +
               std::to_string(byte_off + bytes) + ") of a GlobalTensor whose extent is " +
               std::to_string(size) + " elements (" + std::to_string(size * esize) +
               " bytes) per SetGlobalBuffer");
  eng().gm_real(addr + byte_off, bytes, site);  // inside a registered buffer
  return addr + byte_off;
}

// A scalar GM access on S costs a GM round trip (deliberately expensive).
inline uint64_t scalar_gm_cost(uint32_t esize) {
  const auto& s = eng().soc();
  return s.mte2_latency + static_cast<uint64_t>(size_t(esize) / s.mte2_bytes_per_cycle + 0.999999);
}

JK_ENGINE_FN void gm_get(uint64_t addr, uint64_t size, bool bounded, uint32_t esize,
                         uint64_t index, void* out, Site site) {
  const uint64_t fake = gm_span(addr, size, bounded, esize, index * esize, esize, site);
  auto& e = eng();
  e.issue(Pipe::S, "GetValue(GM)", scalar_gm_cost(esize), site);
  e.gm_read(fake, esize, site);
  std::memcpy(out, e.gm_real(fake, esize, site), esize);
}

JK_ENGINE_FN void gm_set(uint64_t addr, uint64_t size, bool bounded, uint32_t esize,
                         uint64_t index, const void* in, Site site) {
  const uint64_t fake = gm_span(addr, size, bounded, esize, index * esize, esize, site);
  auto& e = eng();
  e.issue(Pipe::S, "SetValue(GM)", scalar_gm_cost(esize), site);
  e.gm_write(fake, esize, site);
  std::memcpy(e.gm_real(fake, esize, site), in, esize);
}

}  // namespace ops
}  // namespace jk
