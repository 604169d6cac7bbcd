// Clean-room ascendc-cpu library: the mask / repeat / stride iteration engine of vector instructions.
//
// Why: every Ascend C vector instruction (level-0 "tensor high-dimension" form) walks `repeatTimes`
// iterations of 256 bytes (8 blocks of 32 bytes); inside one iteration a mask picks the elements and
// a block stride spaces the 8 blocks; between iterations a repeat stride moves each operand.
// Ref: atlasascendc_api_07_0047 (Repeat times / Block stride / Repeat stride / Mask, general
// description), atlasascendc_api_07_0013 (BinaryRepeatParams), TIK general definition
// tbedevg_tikapi_0045 (mask ranges per dtype). This header enumerates, for one operand and one
// repeat, exactly the bytes an instruction touches and declares them to the engine (ub_read /
// ub_write), so poison, bounds and cross-pipe hazards are checked on what the hardware accesses.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "jk_ascendc/engine.h"
#include "jk_ascendc/tensor.h"
#include "jk_ascendc/types.h"

namespace jk {
namespace rep {

constexpr uint32_t kBlockBytes = 32;   // one data block (atlasascendc_api_07_0047)
constexpr uint32_t kRepeatBytes = 256; // one repeat = 8 blocks (atlasascendc_api_07_0047)
constexpr int64_t kMaxRepeat = 255;    // repeatTimes in [0, 255] (atlasascendc_api_07_0047)

// ---- adapter to H1's LocalTensor (the only place that knows its internals) -------------------
template <typename T>
inline uint32_t ub_offset(const AscendC::LocalTensor<T>& t) {
  return static_cast<uint32_t>(t.jk_ub_offset());
}
template <typename T>
inline uint32_t ub_extent(const AscendC::LocalTensor<T>& t) {
  return static_cast<uint32_t>(t.jk_ub_bytes());
}

// True for the 16-bit floating type the library calls `half`.
template <typename T>
constexpr bool is_half_v = !std::is_integral_v<T> && !std::is_same_v<T, float> && sizeof(T) == 2;
template <typename T>
constexpr bool is_float_like_v = std::is_same_v<T, float> || is_half_v<T>;

template <typename T>
constexpr uint32_t per_repeat() {
  return kRepeatBytes / sizeof(T);
}
template <typename T>
constexpr uint32_t per_block() {
  return kBlockBytes / sizeof(T);
}

inline std::string u64s(uint64_t v) { return std::to_string(v); }

// One repeat's element mask: bit i set = element i of the repeat takes part.
struct Mask {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool test(uint32_t i) const { return i < 64 ? (lo >> i) & 1u : (hi >> (i - 64)) & 1u; }
};

inline Mask mask_first(uint32_t n) {
  Mask m;
  m.lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
  m.hi = n <= 64 ? 0 : (n >= 128 ? ~0ull : ((1ull << (n - 64)) - 1));
  return m;
}

// Continuous mask: the first `mask` elements; mask in [1, 128] for 16-bit, [1, 64] for 32-bit
// operands (atlasascendc_api_07_0047, "mask" section; atlasascendc_api_07_0078 parameter table).
JK_ENGINE_FN Mask mask_count(uint64_t mask, uint32_t lanes, const char* api, Site site)
#if JK_ENGINE_DEFS
{
  if (mask < 1 || mask > lanes) {
    misuse("mask_out_of_range", site,
           std::string(api) + ": continuous mask " + u64s(mask) + " is outside [1, " + u64s(lanes) +
               "] for " + u64s(kRepeatBytes / lanes) + "-byte elements");
  }
  return mask_first(static_cast<uint32_t>(mask));
}
#else
;
#endif

// Bitwise mask: for 16-bit operands mask[0] covers elements 0..63 and mask[1] 64..127, not both 0;
// for 32-bit operands the array has ONE element, mask[0] != 0 (mask[1] is never read).
// (atlasascendc_api_07_0078 / 07_0047 "逐bit模式").
JK_ENGINE_FN Mask mask_bits(const uint64_t* mask, uint32_t lanes, const char* api, Site site)
#if JK_ENGINE_DEFS
{
  Mask m;
  m.lo = mask[0];
  m.hi = lanes > 64 ? mask[1] : 0;
  if (m.lo == 0 && m.hi == 0) {
    misuse("mask_out_of_range", site, std::string(api) + ": bitwise mask selects no element");
  }
  return m;
}
#else
;
#endif

JK_ENGINE_FN void check_repeat(int64_t repeat, const char* api, Site site, int64_t max = kMaxRepeat)
#if JK_ENGINE_DEFS
{
  if (repeat < 0 || repeat > max) {
    misuse("repeat_out_of_range", site,
           std::string(api) + ": repeatTimes " + std::to_string(repeat) + " is outside [0, " +
               std::to_string(max) + "]");
  }
}
#else
;
#endif

// A UB operand of one vector instruction and its element layout.
struct Operand {
  uint32_t off = 0;     // byte offset of the tensor start in UB
  uint32_t extent = 0;  // bytes the tensor owns from `off`
  uint32_t esize = 0;   // element size in bytes
  uint64_t blk = 1;     // block stride (32-byte blocks) inside one repeat
  uint64_t rep = 8;     // repeat stride (32-byte blocks) between repeats
  uint64_t rep_unit = kBlockBytes;  // bytes per unit of `rep` (reductions use element units)
  const char* role = "";
  // Byte offset, from the tensor start, of element i of repeat r.
  uint64_t at(uint64_t r, uint32_t i) const {
    const uint32_t pb = kBlockBytes / esize;
    return r * rep * rep_unit + uint64_t(i / pb) * blk * kBlockBytes + uint64_t(i % pb) * esize;
  }
};

// Build an operand; `align` is the byte alignment the API documents for its start address
// (32 for vector sources/destinations, atlasascendc_api_07_0047 general constraints).
template <typename T>
inline Operand operand(const AscendC::LocalTensor<T>& t, const char* role, uint64_t blk,
                       uint64_t rep, const char* api, Site site, uint32_t align = kBlockBytes) {
  t.jk_check_live(site);  // use after FreeTensor / a tensor no buffer produced
  Operand op;
  op.off = ub_offset(t);
  op.extent = ub_extent(t);
  op.esize = sizeof(T);
  op.blk = blk;
  op.rep = rep;
  op.role = role;
  if (op.off % align != 0) {
    misuse("ub_misaligned", site,
           std::string(api) + ": " + role + " starts at UB offset " + u64s(op.off) +
               ", not a multiple of " + u64s(align) + " bytes");
  }
  return op;
}

inline uint8_t* ub() { return eng().ub_base(); }

template <typename T>
inline T load(const Operand& op, uint64_t byte) {
  T v;
  std::memcpy(&v, ub() + op.off + byte, sizeof(T));
  return v;
}
template <typename T>
inline void store(const Operand& op, uint64_t byte, T v) {
  std::memcpy(ub() + op.off + byte, &v, sizeof(T));
}

// Declare to the engine one contiguous span [start, end) (bytes from the tensor start), after a
// bounds check against the tensor's own buffer.
JK_ENGINE_FN void declare(const Operand& op, uint64_t start, uint64_t end, bool write, const char* api,
                    Site site)
#if JK_ENGINE_DEFS
{
  if (end > op.extent) {
    misuse("ub_out_of_bounds", site,
           std::string(api) + ": " + op.role + " access to bytes [" + u64s(start) + ", " +
               u64s(end) + ") of a tensor of " + u64s(op.extent) + " bytes");
  }
  if (write) {
    eng().ub_write(op.off + static_cast<uint32_t>(start), static_cast<uint32_t>(end - start), site);
  } else {
    eng().ub_read(op.off + static_cast<uint32_t>(start), static_cast<uint32_t>(end - start), site);
  }
}
#else
;
#endif

// The lanes one operand touches under one mask, laid out once per instruction: every repeat
// touches the same pattern shifted by r * repeat stride.
struct Walk {
  uint32_t n = 0;       // active lanes
  uint32_t nspans = 0;  // maximal contiguous byte spans inside one repeat
  uint16_t lane[128];
  uint64_t off[128];    // byte offset of each active lane inside its repeat
  uint64_t s[128], e[128];
  Walk(const Operand& op, const Mask& m, uint32_t lanes) {
    for (uint32_t i = 0; i < lanes; ++i) {
      if (!m.test(i)) continue;
      const uint64_t o = op.at(0, i);
      lane[n] = static_cast<uint16_t>(i);
      off[n++] = o;
      if (nspans && e[nspans - 1] == o) {
        e[nspans - 1] += op.esize;
      } else {
        s[nspans] = o;
        e[nspans++] = o + op.esize;
      }
    }
  }
  // Repeat r: declare each span to the engine, then f(lane, byte_offset) per active lane.
  template <typename F>
  void run(const Operand& op, uint64_t r, bool write, const char* api, Site site, F&& f) const {
    const uint64_t base = r * op.rep * op.rep_unit;
    for (uint32_t k = 0; k < nspans; ++k) declare(op, base + s[k], base + e[k], write, api, site);
    for (uint32_t k = 0; k < n; ++k) f(lane[k], base + off[k]);
  }
};

// One-off form of Walk for a single repeat.
template <typename F>
inline void touch(const Operand& op, uint64_t r, const Mask& m, uint32_t lanes, bool write,
                  const char* api, Site site, F&& f) {
  Walk(op, m, lanes).run(op, r, write, api, site, f);
}

// Count-form fast path: a count-form operand is contiguous, so it is ONE span of `count`
// elements; declaring it once (reads before writes) keeps the engine checks exact and cheap.
inline void declare_count(const Operand& op, uint64_t count, bool write, const char* api,
                          Site site) {
  if (count) declare(op, 0, count * op.esize, write, api, site);
}

// Issue one V-pipe instruction costing startup + repeats * per_repeat (SoC table by op, dtype).
inline void issue_v(const char* api, uint32_t dtype_bytes, uint64_t repeats, Site site) {
  const VectorCost c = eng().vector_cost(api, dtype_bytes);
  eng().issue(Pipe::V, api, uint64_t(c.startup) + repeats * uint64_t(c.per_repeat), site);
}

// Count form ("tensor前n个数据计算"): `count` contiguous elements lower to count / lanes full
// repeats plus one tail repeat masked to the remainder (atlasascendc_api_07_0047).
struct CountPlan {
  uint64_t full = 0;
  uint32_t tail = 0;
  uint64_t repeats() const { return full + (tail ? 1 : 0); }
};

JK_ENGINE_FN CountPlan plan_count(int64_t count, uint32_t lanes, const char* api, Site site)
#if JK_ENGINE_DEFS
{
  if (count < 0) {
    misuse("unsupported_argument", site,
           std::string(api) + ": negative count " + std::to_string(count));
  }
  CountPlan p;
  p.full = uint64_t(count) / lanes;
  p.tail = static_cast<uint32_t>(uint64_t(count) % lanes);
  return p;
}
#else
;
#endif

// ---- the vector mask register (isSetMask = false) ------------------------------------------
// SetMaskCount / SetMaskNorm (atlasascendc_api_07_0093..0097, "掩码操作"): in Counter mode the
// mask set by SetVectorMask is the number of elements to process, the instruction infers its
// repeats (the repeatTimes argument has no effect) and the last repeat is partial; in Normal
// mode it is the per-repeat bit mask. An API called with isSetMask = false takes its mask from
// this register (its mask argument is MASK_PLACEHOLDER); with isSetMask = true it writes its own
// mask into the register, which in Counter mode would be read as an element COUNT: the pages
// require SetMaskNorm after Counter-mode use, so that case is `unsupported_argument`.
// One register per core (blocks may interleave at SyncAll): Normal mode, all lanes, at start.
struct MaskReg {
  const Engine* engine;  // the run this entry belongs to (nullptr: never used)
  bool counter;
  uint64_t hi, lo;
};
constexpr uint32_t kMaskRegs = 256;  // block indexes beyond share the last entry
inline MaskReg g_mask_regs[kMaskRegs] = {};  // zero-initialised: no dynamic initialiser

inline MaskReg& mask_reg() {
  const uint32_t b = eng().block_idx();
  MaskReg& reg = g_mask_regs[b < kMaskRegs ? b : kMaskRegs - 1];
  if (reg.engine != g_engine) reg = MaskReg{g_engine, false, ~0ull, ~0ull};
  return reg;
}

// Which mask each repeat of one high-dimension instruction uses: `repeats` repeats under `body`,
// then (Counter mode) one partial repeat under `tail`.
struct MaskPlan {
  Mask body;
  uint64_t repeats = 0;
  bool has_tail = false;
  Mask tail;
  uint64_t total() const { return repeats + (has_tail ? 1 : 0); }
  const Mask& at(uint64_t r) const { return r < repeats ? body : tail; }
};

JK_ENGINE_FN MaskPlan plan_explicit(const Mask& m, int64_t repeat, const char* api, Site site,
                              int64_t max_repeat = kMaxRepeat)
#if JK_ENGINE_DEFS
{
  check_repeat(repeat, api, site, max_repeat);
  MaskReg& reg = mask_reg();
  if (reg.counter) {
    misuse("unsupported_argument", site,
           std::string(api) + ": called with its own mask (isSetMask = true) while the mask "
                              "register is in Counter mode (SetMaskCount without SetMaskNorm)");
  }
  reg.lo = m.lo;
  reg.hi = m.hi;
  MaskPlan p;
  p.body = m;
  p.repeats = uint64_t(repeat);
  return p;
}
#else
;
#endif

JK_ENGINE_FN MaskPlan plan_register(uint32_t lanes, int64_t repeat, const char* api, Site site,
                              int64_t max_repeat = kMaxRepeat)
#if JK_ENGINE_DEFS
{
  const MaskReg& reg = mask_reg();
  MaskPlan p;
  if (!reg.counter) {
    check_repeat(repeat, api, site, max_repeat);
    p.body.lo = reg.lo;
    p.body.hi = lanes > 64 ? reg.hi : 0;
    if (p.body.lo == 0 && p.body.hi == 0) {
      misuse("mask_out_of_range", site,
             std::string(api) + ": the mask set by SetVectorMask selects no element");
    }
    p.repeats = uint64_t(repeat);
    return p;
  }
  p.body = mask_first(lanes);
  p.repeats = reg.lo / lanes;
  p.has_tail = reg.lo % lanes != 0;
  p.tail = mask_first(static_cast<uint32_t>(reg.lo % lanes));
  return p;
}
#else
;
#endif

// The plan of a call with a continuous (`uint64_t mask`) or bitwise (`mask[]`) mask argument.
template <bool isSetMask>
inline MaskPlan plan_mask(uint64_t mask, uint32_t lanes, int64_t repeat, const char* api,
                          Site site, int64_t max_repeat = kMaxRepeat) {
  if constexpr (isSetMask) {
    return plan_explicit(mask_count(mask, lanes, api, site), repeat, api, site, max_repeat);
  } else {
    return plan_register(lanes, repeat, api, site, max_repeat);
  }
}
template <bool isSetMask>
inline MaskPlan plan_mask(const uint64_t* mask, uint32_t lanes, int64_t repeat, const char* api,
                          Site site, int64_t max_repeat = kMaxRepeat) {
  if constexpr (isSetMask) {
    return plan_explicit(mask_bits(mask, lanes, api, site), repeat, api, site, max_repeat);
  } else {
    return plan_register(lanes, repeat, api, site, max_repeat);
  }
}

}  // namespace rep
}  // namespace jk

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER = 1 };
// The mask argument of an API called with isSetMask = false (no meaning).
constexpr int32_t MASK_PLACEHOLDER = 0;

// Mask register APIs (S pipe register writes).
inline void SetMaskCount(jk::Site site = jk::here()) {
  jk::eng().issue(jk::Pipe::S, "SetMaskCount", 1, site);
  jk::rep::mask_reg().counter = true;
}
inline void SetMaskNorm(jk::Site site = jk::here()) {
  jk::eng().issue(jk::Pipe::S, "SetMaskNorm", 1, site);
  jk::rep::mask_reg().counter = false;
}
// ResetMask: the mask value back to its default (all lanes).
inline void ResetMask(jk::Site site = jk::here()) {
  jk::eng().issue(jk::Pipe::S, "ResetMask", 1, site);
  jk::rep::mask_reg().hi = jk::rep::mask_reg().lo = ~0ull;
}
// Normal mode: per-repeat bits (maskHigh = lanes 64..127, 16-bit types only); Counter mode: the
// element count in maskLow.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow,
                          jk::Site site = jk::here()) {
  jk::eng().issue(jk::Pipe::S, "SetVectorMask", 1, site);
  jk::rep::MaskReg& reg = jk::rep::mask_reg();
  reg.hi = maskHigh;
  reg.lo = maskLow;
}
// `len`: Normal mode the first len lanes, Counter mode len elements.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len, jk::Site site = jk::here()) {
  jk::eng().issue(jk::Pipe::S, "SetVectorMask", 1, site);
  jk::rep::MaskReg& reg = jk::rep::mask_reg();
  if (len < 0) jk::misuse("mask_out_of_range", site, "SetVectorMask: negative length");
  if (reg.counter) {
    reg.lo = uint64_t(len);
    reg.hi = 0;
  } else {
    if (len > int32_t(jk::rep::per_repeat<T>())) {
      jk::misuse("mask_out_of_range", site,
                 "SetVectorMask: " + std::to_string(len) + " lanes in Normal mode, above " +
                     std::to_string(jk::rep::per_repeat<T>()));
    }
    const jk::rep::Mask m = jk::rep::mask_first(uint32_t(len));
    reg.lo = m.lo;
    reg.hi = m.hi;
  }
}

}  // namespace AscendC
