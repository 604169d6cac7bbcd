// Clean-room Ascend C CPU library: the engine behind every API call.
//
// Why it exists: a kernel runs on the CPU one AI Core (block) at a time, but what matters is
// what real hardware would do. The engine keeps, per core, the Unified Buffer bytes, which bytes
// were ever written (poison), per-pipe vector clocks and a timeline (the cycle model), a
// per-32-byte-block hazard shadow for UB and GM, and, across cores, who wrote which GM block
// since the last SyncAll.
// The first API misuse is recorded (sticky: a kernel that catches exceptions cannot hide it) and
// thrown as jk::Misuse.
//
// Contract for the op headers - how an op reports what it does:
//   1. check arguments (misuse(...) with the caller's Site), before anything is issued;
//   2. `eng().issue(Pipe::V, "Add", cycles, site)` - one instruction, placed on the timeline;
//   3. declare every UB span it reads and writes: `t.jk_read(byte_off, bytes, site)` /
//      `t.jk_write(...)` on the LocalTensor (liveness, the tensor's buffer bounds, then
//      eng().ub_read/ub_write), or eng().ub_read/ub_write with raw offsets after
//      t.jk_check_live(site) and your own bounds check (t.jk_offset() / jk_ub_offset(),
//      t.jk_bytes_available() / jk_ub_bytes()). Declare exactly the bytes whose values are used
//      (a masked-off lane is not read), so poison and hazards stay precise; reads first;
//   4. compute on t.jk_data() (a T* into this core's UB).
// Contract for the harness: `g_engine = new Engine(params)`; gm_register each buffer (inputs
// read-only) and pass the returned fake addresses; per block begin_core(i, n), call the kernel,
// end_core() - or jk::run_blocks (run_blocks.h) to run the blocks side by side across SyncAll;
// catch jk::Misuse and read first_misuse() (it is set even if the kernel caught the
// exception); results: cores(), op_stats(), trace(), trace_truncated(), total_cycles(),
// bound_pipe(). `check_hazards = false` silences pipeline_hazard and cross_core_race only.
// Queue code (queue.h) uses snapshot()/wait_on(), ub_alloc(), slots(), queues(), scalar_op().
// Header-only by default: with no macro every definition is inline (engine_impl.h, included at
// the end). The toolchain compiles team code with -DJK_ENGINE_EXTERN: the engine's non-template
// functions (JK_ENGINE_FN) are then only declared, and the harness, which defines
// JK_ENGINE_IMPL, holds their one compiled copy (a kernel unit no longer optimises ~35 engine
// functions it does not own). Templates stay inline. The only global is the trivially
// initialised `g_engine` pointer (no dynamic initialiser in user objects).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#if defined(JK_ENGINE_IMPL)  // the harness: the one out-of-line copy
#define JK_ENGINE_FN
#define JK_ENGINE_DEFS 1
#elif defined(JK_ENGINE_EXTERN)  // team code under the toolchain: declarations only
#define JK_ENGINE_FN
#define JK_ENGINE_DEFS 0
#else  // header-only use
#define JK_ENGINE_FN inline
#define JK_ENGINE_DEFS 1
#endif

namespace jk {

struct Site {
  const char* file;
  unsigned line;
};

// Every public API takes `jk::Site site = jk::here()` last: g++ evaluates __builtin_FILE/LINE in a
// default argument at the call site, so a misuse names the kernel's line, not the header's.
inline Site here(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE()) { return {f, l}; }

enum class Pipe : uint8_t { S = 0, V = 1, MTE2 = 2, MTE3 = 3, MTE1 = 4, M = 5 };
constexpr int kPipes = 6;

inline const char* pipe_name(Pipe p) {
  static const char* const names[kPipes] = {"S", "V", "MTE2", "MTE3", "MTE1", "M"};
  return names[static_cast<int>(p)];
}

struct VectorCost {
  uint32_t startup;
  uint32_t per_repeat;
};

struct SocParams {
  const char* name;
  uint32_t ub_bytes;
  uint32_t block_bytes;   // 32
  uint32_t repeat_bytes;  // 256
  uint32_t max_repeat;    // 255
  uint32_t vector_cores;
  double clock_mhz;
  uint32_t mte2_latency;
  double mte2_bytes_per_cycle;
  uint32_t mte3_latency;
  double mte3_bytes_per_cycle;
  uint32_t scalar_issue;
  uint32_t scalar_ub_access;
  uint32_t flag_cycles;
  uint32_t barrier_cycles;
  VectorCost (*vector_cost)(const char* op, uint32_t dtype_bytes);
};

struct MisuseRecord {
  std::string check;
  std::string message;
  std::string file;
  unsigned line = 0;
  int32_t block = -1;  // -1: outside any core
};

// Thrown at the first (and every later) misuse; the engine keeps the first one regardless.
struct Misuse : std::exception {
  MisuseRecord record;
  std::string text;
  explicit Misuse(MisuseRecord r) : record(std::move(r)) {
    text = record.check + " at " + record.file + ":" + std::to_string(record.line) + ": " +
           record.message;
  }
  const char* what() const noexcept override { return text.c_str(); }
};

struct Engine;
inline Engine* g_engine = nullptr;
inline Engine& eng() { return *g_engine; }

[[noreturn]] JK_ENGINE_FN void misuse(const char* check, Site site, const std::string& message);

// A vector clock: c[p] = how many instructions of pipe p are known complete (ordered before).
struct VClock {
  uint32_t c[kPipes] = {0, 0, 0, 0, 0, 0};
  void join(const VClock& o) {
    for (int i = 0; i < kPipes; ++i) c[i] = std::max(c[i], o.c[i]);
  }
};

// What a waiter inherits from a signal: the signalling pipe's knowledge and completion time.
struct Snapshot {
  VClock vc;
  uint64_t time = 0;
  Site site = {"", 0};
};

inline std::string site_str(Site s) { return std::string(s.file) + ":" + std::to_string(s.line); }

struct Engine {
  // ---- results -------------------------------------------------------------------------------
  struct PipeStats {
    uint64_t busy = 0;
    uint64_t instructions = 0;
  };
  struct CoreStats {
    uint32_t block = 0;
    uint64_t makespan = 0;
    PipeStats pipes[kPipes];
  };
  struct OpStats {
    std::string op;
    Pipe pipe;
    uint64_t calls;
    uint64_t cycles;
  };
  struct TraceEvent {
    uint32_t core;
    Pipe pipe;
    const char* op;
    uint64_t start;
    uint64_t dur;
    Site site;
  };

  // ---- queue slots (TQue buffers, TBuf buffers) ---------------------------------------------
  enum SlotState : uint8_t { kFree = 0, kAllocated, kQueued, kDequeued, kTBuf, kDead };
  struct Slot {
    uint32_t offset = 0;
    uint32_t bytes = 0;  // the buffer: len rounded up to 32 bytes (bounds of its tensors)
    uint32_t len = 0;    // the length InitBuffer was asked for (GetSize of its tensors)
    uint32_t gen = 0;
    SlotState state = kFree;
    int32_t queue = -1;  // -1: a TBuf
    bool has_free_snap = false;
    Snapshot free_snap;  // consumer's state at FreeTensor: the next AllocTensor waits on it
    Snapshot enq_snap;   // producer's state at EnQue: DeQue waits on it
  };
  struct QueueRec {
    uint32_t first_slot = 0;
    uint32_t num = 0;
    uint32_t depth = 0;  // 0: unlimited
    uint8_t position = 0;  // TPosition of the producer side
    bool synced = false;
    Pipe producer = Pipe::MTE2;
    Pipe consumer = Pipe::V;
    std::vector<uint32_t> fifo;  // slot indices, oldest first from `head`
    size_t head = 0;
    uint32_t next_alloc = 0;
    size_t queued() const { return fifo.size() - head; }
  };

  // ---- configuration -------------------------------------------------------------------------
  bool check_hazards = true;           // false: pipeline_hazard/cross_core_race not reported
  uint64_t sys_workspace_bytes = 0;    // GetUserWorkspace skips this many bytes
  size_t trace_cap = 200000;

  explicit Engine(const SocParams& p) : soc_(p) {
    ub_.assign(soc_.ub_bytes + 64, 0);
    init_.assign(soc_.ub_bytes, 0);
    ub_shadow_.assign((soc_.ub_bytes + 31) / 32, UbShadow{});
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine() {
    for (auto& b : gm_) std::free(b.shadow);
  }

  const SocParams& soc() const { return soc_; }
  uint8_t* ub_base() { return ub_.data(); }
  uint32_t block_idx() const { return block_idx_; }
  uint32_t block_num() const { return block_num_; }
  bool in_core() const { return in_core_; }

  VectorCost vector_cost(const char* op, uint32_t dtype_bytes) const;

  // ---- cores ---------------------------------------------------------------------------------
  void begin_core(uint32_t block_idx, uint32_t block_num);

  void end_core();

  // ---- instructions --------------------------------------------------------------------------
  // One API call = one scalar issue; the instruction on `pipe` starts when both the scalar has
  // issued it and the pipe is free (in-order pipes), and inherits the scalar's clock (program order).
  uint64_t issue(Pipe pipe, const char* op, uint64_t cycles, Site site);

  // A scalar bookkeeping call (queue operations): one issue slot on the scalar, no instruction.
  void scalar_op(Site site);

  // ---- UB accesses of the instruction just issued ----------------------------------------------
  void ub_read(uint32_t offset, uint32_t bytes, Site site) { ub_access(offset, bytes, false, site); }
  void ub_write(uint32_t offset, uint32_t bytes, Site site) { ub_access(offset, bytes, true, site); }

  // ---- synchronisation primitives (used by sync.h and queue.h) --------------------------------
  // What `src` has done so far, as a signal (SetFlag/EnQue/FreeTensor issued now, program order).
  Snapshot snapshot(Pipe src, Site site) const;
  // `dst` waits for a signal: it inherits the signaller's clock and cannot start earlier.
  void wait_on(Pipe dst, const Snapshot& s);
  void set_flag(Pipe src, Pipe dst, int32_t id, Site site);
  void wait_flag(Pipe src, Pipe dst, int32_t id, Site site);
  // PipeBarrier<PIPE_ALL>: every pipe and the scalar wait for everything issued so far.
  void barrier_all(Site site);
  // PipeBarrier<PIPE_X>: pipes are modelled in order, so only the cost remains.
  void barrier_pipe(Pipe p, Site site);
  // SyncAll: a full barrier in this core, and a new phase for cross-core GM ordering. Under
  // run_blocks the core also waits for every other core to reach it: the cores of one phase run
  // before any core of the next, and all leave the barrier at the latest arrival time.
  void sync_all(Site site);

  // Blocks side by side (SyncAll between cores): jk::run_blocks in jk_ascendc/run_blocks.h, for
  // the harness only, so that no kernel object refers to threads.
  friend struct BlockScheduler;

  // ---- UB allocation and queue slots (TPipe, TQue, TBuf) -------------------------------------
  // TPipe::InitBuffer: buffers from UB offset 0 upwards, 32-byte aligned (atlasascendc_api_07_0110).
  uint32_t ub_alloc(uint32_t bytes, Site site, const char* what);
  uint64_t ub_allocated() const { return ub_top_; }
  void ub_reset_allocation();
  std::vector<Slot>& slots() { return slots_; }
  const std::vector<Slot>& slots() const { return slots_; }
  std::vector<QueueRec>& queues() { return queues_; }
  const std::vector<QueueRec>& queues() const { return queues_; }
  void* tpipe() const { return tpipe_; }
  void set_tpipe(void* p) { tpipe_ = p; }

  // ---- GM registry ---------------------------------------------------------------------------
  static constexpr uint64_t kFakeBase = 0x7e0000000000ull;
  // Registers a harness buffer; returns the fake address the kernel sees (deterministic).
  uint64_t gm_register(const char* name, uint8_t* real, uint64_t bytes, bool writable);
  bool gm_is_registered(uint64_t fake) const { return find_gm(fake) >= 0; }
  // Real host pointer for [fake, fake+bytes); gm_out_of_bounds if not inside one buffer.
  uint8_t* gm_real(uint64_t fake, uint64_t bytes, Site site);
  // GM accesses of the instruction just issued: extent, read-only, intra-core hazards between
  // pipes (MTE2/MTE3/S), cross-core races since the last SyncAll.
  void gm_read(uint64_t fake, uint64_t bytes, Site site) { gm_access(fake, bytes, false, site); }
  void gm_write(uint64_t fake, uint64_t bytes, Site site) { gm_access(fake, bytes, true, site); }

  // ---- results -------------------------------------------------------------------------------
  const std::vector<CoreStats>& cores() const { return cores_; }
  std::vector<OpStats> op_stats() const { return ops_; }
  const std::vector<TraceEvent>& trace() const { return trace_; }
  bool trace_truncated() const { return trace_truncated_; }
  const MisuseRecord* first_misuse() const { return has_misuse_ ? &first_ : nullptr; }
  // max makespan over cores (the kernel's estimated cycles)
  uint64_t total_cycles() const;
  // index into cores() of the slowest core (first one on ties), or -1
  int slowest_core() const;
  // the pipe with the most busy cycles on the slowest core
  Pipe bound_pipe() const;
  // current core's timeline position (for tests)
  uint64_t now_max() const;

  // Records the first misuse (sticky); used by jk::misuse.
  void record_misuse(const MisuseRecord& r);

 private:
  struct UbShadow {
    uint32_t w_id = 0;  // 0: never written by any pipe this core
    uint8_t w_pipe = 0;
    uint32_t r_id[kPipes] = {0, 0, 0, 0, 0, 0};
  };
  struct Instr {
    Site site;
    const char* op;
  };

  // Everything that belongs to one core while it runs; swapped in and out under run_blocks.
  struct CoreState {
    std::vector<uint8_t> ub, init;
    std::vector<UbShadow> ub_shadow;
    VClock vc[kPipes];
    uint64_t free[kPipes] = {0, 0, 0, 0, 0, 0};
    uint32_t count[kPipes] = {0, 0, 0, 0, 0, 0};
    uint64_t s_time = 0;
    std::vector<Instr> sites[kPipes];
    Pipe cur_pipe = Pipe::S;
    uint32_t cur_id = 0;
    bool has_cur_instr = false;
    uint32_t block_idx = 0;
    bool in_core = false;
    uint32_t core_serial = 0;
    uint32_t epoch = 0;
    CoreStats cur;
    std::vector<Snapshot> flags[kPipes * kPipes * 8];
    std::vector<Slot> slots;
    std::vector<QueueRec> queues;
    uint64_t ub_top = 0;
    void* tpipe = nullptr;
    size_t issue_event = 0;
    bool has_issue_event = false;
  };
  void swap_core(CoreState& c);

  void (*barrier_hook_)(void* ctx, Site site) = nullptr;  // set by jk::run_blocks
  void* barrier_ctx_ = nullptr;
  uint32_t serial_counter_ = 0;

  // Per-32-byte GM block of a writable buffer. Intra-core fields are valid when stamp matches the
  // running core; cross-core fields persist over the run.
  struct GmShadow {
    uint32_t stamp;
    uint32_t w_id;
    uint32_t r_id[3];  // S, MTE2, other
    uint32_t w_mask;   // bytes of the block written by w_core in phase w_epoch
    uint32_t r_mask;   // bytes read by cores r_min..r_max in phase r_epoch
    int16_t w_core;    // block index + 1, 0: none
    int16_t r_min;     // block index + 1, 0: none
    int16_t r_max;
    uint16_t w_epoch;
    uint16_t r_epoch;
    uint8_t w_pipe;
  };
  struct GmBuffer {
    std::string name;
    uint8_t* real = nullptr;
    uint64_t bytes = 0;
    uint64_t fake = 0;
    bool writable = false;
    GmShadow* shadow = nullptr;  // calloc'ed lazily (zero pages stay untouched)
  };

  void require_core(Site site) const;
  // The scalar spends scalar_issue cycles issuing each API call: S-pipe busy time, shown on the
  // S lane of the trace as "issue" spans (back-to-back issues merged into one span).
  void scalar_tick(Site site);
  void check_event_id(int32_t id, Site site) const;
  static size_t flag_key(Pipe src, Pipe dst, int32_t id) {
    return (static_cast<size_t>(src) * kPipes + static_cast<size_t>(dst)) * 8 +
           static_cast<size_t>(id);
  }
  void add_op(const char* op, Pipe pipe, uint64_t cycles);

  Instr instr(Pipe p, uint32_t id) const;

  // "V (Add) reads UB byte 64 that MTE2 (DataCopy) wrote at op_kernel/x.cpp:12 with no ..."
  [[noreturn]] void hazard(const char* space, uint64_t at, bool write, Pipe other,
                           uint32_t other_id, bool other_write, Site site) const;

  void ub_access(uint32_t offset, uint32_t bytes, bool write, Site site);

  int find_gm(uint64_t fake) const;
  GmBuffer& gm_checked(uint64_t fake, uint64_t bytes, Site site);

  static uint32_t block_mask(uint64_t lo, uint64_t hi) {  // bytes [lo, hi) within one block
    const uint32_t n = static_cast<uint32_t>(hi - lo);
    const uint32_t m = n >= 32 ? 0xFFFFFFFFu : ((1u << n) - 1u);
    return m << (lo & 31);
  }

  void gm_access(uint64_t fake, uint64_t bytes, bool write, Site site);

  // Cores run one at a time here but at the same time on hardware: within one SyncAll phase,
  // a block another core wrote must not be read or written by this one (and vice versa).
  void cross_core(const GmBuffer& b, const GmShadow& s, uint64_t at, uint32_t mask, bool write,
                  int16_t me, uint16_t ep, Site site) const;

  SocParams soc_;
  std::vector<uint8_t> ub_;
  std::vector<uint8_t> init_;  // 1 = byte written since core start
  std::vector<UbShadow> ub_shadow_;
  VClock vc_[kPipes];
  uint64_t free_[kPipes] = {0, 0, 0, 0, 0, 0};
  uint32_t count_[kPipes] = {0, 0, 0, 0, 0, 0};
  uint64_t s_time_ = 0;
  std::vector<Instr> sites_[kPipes];  // per pipe, by instruction id - 1: where and what
  Pipe cur_pipe_ = Pipe::S;
  uint32_t cur_id_ = 0;
  bool has_cur_instr_ = false;
  uint32_t block_idx_ = 0;
  uint32_t block_num_ = 1;
  bool in_core_ = false;
  uint32_t core_serial_ = 0;
  uint32_t epoch_ = 0;
  CoreStats cur_;
  std::vector<CoreStats> cores_;
  std::vector<OpStats> ops_;
  std::vector<const char*> op_keys_;
  std::vector<TraceEvent> trace_;
  bool trace_truncated_ = false;
  size_t issue_event_ = 0;  // index in trace_ of this core's latest "issue" span
  bool has_issue_event_ = false;
  MisuseRecord first_;
  bool has_misuse_ = false;
  std::vector<Snapshot> flags_[kPipes * kPipes * 8];
  std::vector<Slot> slots_;
  std::vector<QueueRec> queues_;
  uint64_t ub_top_ = 0;
  void* tpipe_ = nullptr;
  std::vector<GmBuffer> gm_;
  uint64_t gm_cursor_ = 0;
};

}  // namespace jk

#if JK_ENGINE_DEFS
#include "jk_ascendc/engine_impl.h"
#endif
