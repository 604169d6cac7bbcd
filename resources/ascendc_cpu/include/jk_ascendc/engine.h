// Clean-room Ascend C CPU library: the engine behind every API call.
//
// Why it exists: a kernel runs on the CPU one AI Core (block) after another, but what matters is
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
// Everything here is inline and header-only; the only global is the trivially initialised
// `g_engine` pointer (no dynamic initialiser in user objects).
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

[[noreturn]] inline void misuse(const char* check, Site site, const std::string& message);

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

  VectorCost vector_cost(const char* op, uint32_t dtype_bytes) const {
    if (soc_.vector_cost) return soc_.vector_cost(op, dtype_bytes);
    return VectorCost{8, 1};
  }

  // ---- cores ---------------------------------------------------------------------------------
  void begin_core(uint32_t block_idx, uint32_t block_num) {
    block_idx_ = block_idx;
    block_num_ = block_num;
    in_core_ = true;
    core_serial_ = ++serial_counter_;
    epoch_ = 0;
    // Poison: UB holds garbage at core start; fill with 0xFF (NaN for floats) and mark unwritten.
    ub_.assign(soc_.ub_bytes + 64, 0xFF);
    init_.assign(soc_.ub_bytes, 0);
    ub_shadow_.assign((soc_.ub_bytes + 31) / 32, UbShadow{});
    for (int i = 0; i < kPipes; ++i) {
      vc_[i] = VClock{};
      free_[i] = 0;
      count_[i] = 0;
      sites_[i].clear();
    }
    s_time_ = 0;
    cur_ = CoreStats{};
    cur_.block = block_idx;
    for (auto& f : flags_) f.clear();
    slots_.clear();
    queues_.clear();
    ub_top_ = 0;
    tpipe_ = nullptr;
    has_cur_instr_ = false;
    has_issue_event_ = false;
  }

  void end_core() {
    if (!in_core_) return;
    cur_.makespan = now_max();
    cores_.push_back(cur_);
    in_core_ = false;
  }

  // ---- instructions --------------------------------------------------------------------------
  // One API call = one scalar issue; the instruction on `pipe` starts when both the scalar has
  // issued it and the pipe is free (in-order pipes), and inherits the scalar's clock (program order).
  uint64_t issue(Pipe pipe, const char* op, uint64_t cycles, Site site) {
    require_core(site);
    scalar_tick(site);
    const int p = static_cast<int>(pipe);
    const uint32_t id = ++count_[p];
    uint64_t start;
    if (pipe == Pipe::S) {
      start = s_time_;
    } else {
      vc_[p].join(vc_[0]);
      start = std::max(s_time_, free_[p]);
    }
    vc_[p].c[p] = id;
    const uint64_t end = start + cycles;
    free_[p] = end;
    if (pipe == Pipe::S) s_time_ = end;
    cur_.pipes[p].busy += cycles;
    cur_.pipes[p].instructions += 1;
    add_op(op, pipe, cycles);
    if (trace_.size() < trace_cap) {
      trace_.push_back(TraceEvent{block_idx_, pipe, op, start, cycles, site});
    } else {
      trace_truncated_ = true;
    }
    sites_[p].push_back(Instr{site, op});
    cur_pipe_ = pipe;
    cur_id_ = id;
    has_cur_instr_ = true;
    return id;
  }

  // A scalar bookkeeping call (queue operations): one issue slot on the scalar, no instruction.
  void scalar_op(Site site) {
    require_core(site);
    scalar_tick(site);
  }

  // ---- UB accesses of the instruction just issued ----------------------------------------------
  void ub_read(uint32_t offset, uint32_t bytes, Site site) { ub_access(offset, bytes, false, site); }
  void ub_write(uint32_t offset, uint32_t bytes, Site site) { ub_access(offset, bytes, true, site); }

  // ---- synchronisation primitives (used by sync.h and queue.h) --------------------------------
  // What `src` has done so far, as a signal (SetFlag/EnQue/FreeTensor issued now, program order).
  Snapshot snapshot(Pipe src, Site site) const {
    Snapshot s;
    const int p = static_cast<int>(src);
    s.vc = vc_[p];
    s.vc.join(vc_[0]);
    s.time = std::max(free_[p], s_time_);
    s.site = site;
    return s;
  }
  // `dst` waits for a signal: it inherits the signaller's clock and cannot start earlier.
  void wait_on(Pipe dst, const Snapshot& s) {
    const int p = static_cast<int>(dst);
    vc_[p].join(s.vc);
    if (dst == Pipe::S) {
      s_time_ = std::max(s_time_, s.time);
      free_[0] = std::max(free_[0], s_time_);
    } else {
      free_[p] = std::max(free_[p], s.time);
    }
  }
  void set_flag(Pipe src, Pipe dst, int32_t id, Site site) {
    require_core(site);
    check_event_id(id, site);
    scalar_tick(site);
    Snapshot s = snapshot(src, site);
    s.time += soc_.flag_cycles;
    flags_[flag_key(src, dst, id)].push_back(s);
  }
  void wait_flag(Pipe src, Pipe dst, int32_t id, Site site) {
    require_core(site);
    check_event_id(id, site);
    scalar_tick(site);
    auto& pending = flags_[flag_key(src, dst, id)];
    if (pending.empty()) {
      misuse("wait_without_set", site,
             std::string("WaitFlag<") + pipe_name(src) + "_" + pipe_name(dst) + ">(" +
                 std::to_string(id) + ") with no SetFlag pending for that event id: the " +
                 pipe_name(dst) + " pipe would wait forever on hardware");
    }
    Snapshot s = pending.front();
    pending.erase(pending.begin());
    wait_on(dst, s);
  }
  // PipeBarrier<PIPE_ALL>: every pipe and the scalar wait for everything issued so far.
  void barrier_all(Site site) {
    require_core(site);
    scalar_tick(site);
    VClock all;
    for (int i = 0; i < kPipes; ++i) all.join(vc_[i]);
    const uint64_t t = now_max() + soc_.barrier_cycles;
    for (int i = 0; i < kPipes; ++i) {
      vc_[i] = all;
      free_[i] = t;
    }
    s_time_ = t;
  }
  // PipeBarrier<PIPE_X>: pipes are modelled in order, so only the cost remains.
  void barrier_pipe(Pipe p, Site site) {
    require_core(site);
    scalar_tick(site);
    const int i = static_cast<int>(p);
    free_[i] = std::max(free_[i], s_time_) + soc_.barrier_cycles;
  }
  // SyncAll: a full barrier in this core, and a new phase for cross-core GM ordering. Under
  // run_blocks the core also waits for every other core to reach it: the cores of one phase run
  // before any core of the next, and all leave the barrier at the latest arrival time.
  void sync_all(Site site) {
    barrier_all(site);
    ++epoch_;
    if (barrier_hook_) barrier_hook_(barrier_ctx_, site);
  }

  // Blocks side by side (SyncAll between cores): jk::run_blocks in jk_ascendc/run_blocks.h, for
  // the harness only, so that no kernel object refers to threads.
  friend struct BlockScheduler;

  // ---- UB allocation and queue slots (TPipe, TQue, TBuf) -------------------------------------
  // TPipe::InitBuffer: buffers from UB offset 0 upwards, 32-byte aligned (atlasascendc_api_07_0110).
  uint32_t ub_alloc(uint32_t bytes, Site site, const char* what) {
    require_core(site);
    const uint64_t aligned = (static_cast<uint64_t>(bytes) + 31) / 32 * 32;
    if (ub_top_ + aligned > soc_.ub_bytes) {
      misuse("ub_overflow", site,
             std::string(what) + " asks " + std::to_string(bytes) + " bytes (" +
                 std::to_string(aligned) + " aligned to 32) with " + std::to_string(ub_top_) +
                 " bytes already allocated: " + std::to_string(ub_top_ + aligned) +
                 " bytes in total exceed the " + std::to_string(soc_.ub_bytes) +
                 "-byte Unified Buffer of " + soc_.name);
    }
    const uint32_t off = static_cast<uint32_t>(ub_top_);
    ub_top_ += aligned;
    return off;
  }
  uint64_t ub_allocated() const { return ub_top_; }
  void ub_reset_allocation() {
    ub_top_ = 0;
    for (auto& s : slots_) {
      s.state = kDead;
      ++s.gen;
    }
    queues_.clear();
  }
  std::vector<Slot>& slots() { return slots_; }
  const std::vector<Slot>& slots() const { return slots_; }
  std::vector<QueueRec>& queues() { return queues_; }
  const std::vector<QueueRec>& queues() const { return queues_; }
  void* tpipe() const { return tpipe_; }
  void set_tpipe(void* p) { tpipe_ = p; }

  // ---- GM registry ---------------------------------------------------------------------------
  static constexpr uint64_t kFakeBase = 0x7e0000000000ull;
  // Registers a harness buffer; returns the fake address the kernel sees (deterministic).
  uint64_t gm_register(const char* name, uint8_t* real, uint64_t bytes, bool writable) {
    GmBuffer b;
    b.name = name;
    b.real = real;
    b.bytes = bytes;
    b.fake = kFakeBase + gm_cursor_;
    b.writable = writable;
    gm_cursor_ += (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20) + (1u << 20);
    gm_.push_back(b);
    return b.fake;
  }
  bool gm_is_registered(uint64_t fake) const { return find_gm(fake) >= 0; }
  // Real host pointer for [fake, fake+bytes); gm_out_of_bounds if not inside one buffer.
  uint8_t* gm_real(uint64_t fake, uint64_t bytes, Site site) {
    GmBuffer& b = gm_checked(fake, bytes, site);
    return b.real + (fake - b.fake);
  }
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
  uint64_t total_cycles() const {
    uint64_t t = 0;
    for (const auto& c : cores_) t = std::max(t, c.makespan);
    return t;
  }
  // index into cores() of the slowest core (first one on ties), or -1
  int slowest_core() const {
    int best = -1;
    for (size_t i = 0; i < cores_.size(); ++i)
      if (best < 0 || cores_[i].makespan > cores_[static_cast<size_t>(best)].makespan)
        best = static_cast<int>(i);
    return best;
  }
  // the pipe with the most busy cycles on the slowest core
  Pipe bound_pipe() const {
    const int c = slowest_core();
    if (c < 0) return Pipe::S;
    int best = 0;
    for (int i = 1; i < kPipes; ++i)
      if (cores_[static_cast<size_t>(c)].pipes[i].busy > cores_[static_cast<size_t>(c)].pipes[best].busy)
        best = i;
    return static_cast<Pipe>(best);
  }
  // current core's timeline position (for tests)
  uint64_t now_max() const {
    uint64_t t = s_time_;
    for (int i = 0; i < kPipes; ++i) t = std::max(t, free_[i]);
    return t;
  }

  // Records the first misuse (sticky); used by jk::misuse.
  void record_misuse(const MisuseRecord& r) {
    if (has_misuse_) return;
    first_ = r;
    has_misuse_ = true;
  }

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
  void swap_core(CoreState& c) {
    using std::swap;
    swap(ub_, c.ub);
    swap(init_, c.init);
    swap(ub_shadow_, c.ub_shadow);
    for (int i = 0; i < kPipes; ++i) {
      swap(vc_[i], c.vc[i]);
      swap(free_[i], c.free[i]);
      swap(count_[i], c.count[i]);
      swap(sites_[i], c.sites[i]);
    }
    swap(s_time_, c.s_time);
    swap(cur_pipe_, c.cur_pipe);
    swap(cur_id_, c.cur_id);
    swap(has_cur_instr_, c.has_cur_instr);
    swap(block_idx_, c.block_idx);
    swap(in_core_, c.in_core);
    swap(core_serial_, c.core_serial);
    swap(epoch_, c.epoch);
    swap(cur_, c.cur);
    for (size_t i = 0; i < kPipes * kPipes * 8; ++i) swap(flags_[i], c.flags[i]);
    swap(slots_, c.slots);
    swap(queues_, c.queues);
    swap(ub_top_, c.ub_top);
    swap(tpipe_, c.tpipe);
    swap(issue_event_, c.issue_event);
    swap(has_issue_event_, c.has_issue_event);
  }

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

  void require_core(Site site) const {
    if (!in_core_) misuse("unsupported_argument", site, "kernel API called outside a running core");
  }
  // The scalar spends scalar_issue cycles issuing each API call: S-pipe busy time, shown on the
  // S lane of the trace as "issue" spans (back-to-back issues merged into one span).
  void scalar_tick(Site site) {
    const uint64_t cost = soc_.scalar_issue;
    if (cost == 0) return;
    const uint64_t start = s_time_;
    s_time_ += cost;
    free_[0] = std::max(free_[0], s_time_);
    cur_.pipes[0].busy += cost;
    add_op("issue", Pipe::S, cost);
    if (has_issue_event_ && issue_event_ + 1 == trace_.size() &&
        trace_[issue_event_].start + trace_[issue_event_].dur == start) {
      trace_[issue_event_].dur += cost;
    } else if (trace_.size() < trace_cap) {
      issue_event_ = trace_.size();
      has_issue_event_ = true;
      trace_.push_back(TraceEvent{block_idx_, Pipe::S, "issue", start, cost, site});
    } else {
      trace_truncated_ = true;
    }
  }
  void check_event_id(int32_t id, Site site) const {
    if (id < 0 || id >= 8)
      misuse("unsupported_argument", site,
             "event id " + std::to_string(id) + " outside 0..7 (use TPipe::FetchEventID)");
  }
  static size_t flag_key(Pipe src, Pipe dst, int32_t id) {
    return (static_cast<size_t>(src) * kPipes + static_cast<size_t>(dst)) * 8 +
           static_cast<size_t>(id);
  }
  void add_op(const char* op, Pipe pipe, uint64_t cycles) {
    for (size_t i = 0; i < op_keys_.size(); ++i) {
      if (op_keys_[i] == op && ops_[i].pipe == pipe) {
        ops_[i].calls += 1;
        ops_[i].cycles += cycles;
        return;
      }
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].pipe == pipe && ops_[i].op == op) {
        op_keys_[i] = op;
        ops_[i].calls += 1;
        ops_[i].cycles += cycles;
        return;
      }
    }
    ops_.push_back(OpStats{op, pipe, 1, cycles});
    op_keys_.push_back(op);
  }

  Instr instr(Pipe p, uint32_t id) const {
    const auto& v = sites_[static_cast<int>(p)];
    if (id == 0 || id > v.size()) return Instr{Site{"?", 0}, "?"};
    return v[id - 1];
  }

  // "V (Add) reads UB byte 64 that MTE2 (DataCopy) wrote at op_kernel/x.cpp:12 with no ..."
  [[noreturn]] void hazard(const char* space, uint64_t at, bool write, Pipe other,
                           uint32_t other_id, bool other_write, Site site) const {
    const Instr mine = instr(cur_pipe_, cur_id_), theirs = instr(other, other_id);
    misuse("pipeline_hazard", site,
           std::string(pipe_name(cur_pipe_)) + " (" + mine.op + ")" +
               (write ? " writes " : " reads ") + space + " byte " + std::to_string(at) +
               " that " + pipe_name(other) + " (" + theirs.op + ")" +
               (other_write ? " wrote" : " read") + " at " + site_str(theirs.site) +
               " with no EnQue/DeQue, SetFlag/WaitFlag or PipeBarrier<PIPE_ALL> ordering them");
  }

  void ub_access(uint32_t offset, uint32_t bytes, bool write, Site site) {
    if (bytes == 0) return;
    if (!has_cur_instr_) misuse("unsupported_argument", site, "UB access before any instruction");
    if (static_cast<uint64_t>(offset) + bytes > soc_.ub_bytes) {
      misuse("ub_out_of_bounds", site,
             "access [" + std::to_string(offset) + ", " +
                 std::to_string(static_cast<uint64_t>(offset) + bytes) +
                 ") past the end of the " + std::to_string(soc_.ub_bytes) + "-byte Unified Buffer");
    }
    if (!write) {
      const void* hole = std::memchr(init_.data() + offset, 0, bytes);
      if (hole) {
        const size_t at = static_cast<const uint8_t*>(hole) - init_.data();
        misuse("ub_uninitialised_read", site,
               std::string(pipe_name(cur_pipe_)) + " reads UB byte " + std::to_string(at) +
                   " (in [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                   ")) that nothing wrote since the core started: UB holds garbage on hardware");
      }
    }
    if (check_hazards) {
      const int q = static_cast<int>(cur_pipe_);
      const VClock& v = vc_[q];
      const uint32_t b0 = offset / 32, b1 = (offset + bytes - 1) / 32;
      for (uint32_t b = b0; b <= b1; ++b) {
        UbShadow& s = ub_shadow_[b];
        if (s.w_id && s.w_pipe != q && v.c[s.w_pipe] < s.w_id)
          hazard("UB", std::max<uint64_t>(offset, uint64_t(b) * 32), write,
                 static_cast<Pipe>(s.w_pipe), s.w_id, true, site);
        if (write) {
          for (int r = 0; r < kPipes; ++r)
            if (r != q && s.r_id[r] > v.c[r])
              hazard("UB", std::max<uint64_t>(offset, uint64_t(b) * 32), true,
                     static_cast<Pipe>(r), s.r_id[r], false, site);
          s.w_id = cur_id_;
          s.w_pipe = static_cast<uint8_t>(q);
        } else {
          s.r_id[q] = cur_id_;
        }
      }
    } else if (write) {
      // keep the shadow coherent in case checks are turned back on: nothing to do
    }
    if (write) std::memset(init_.data() + offset, 1, bytes);
  }

  int find_gm(uint64_t fake) const {
    for (size_t i = 0; i < gm_.size(); ++i)
      if (fake >= gm_[i].fake && fake < gm_[i].fake + std::max<uint64_t>(gm_[i].bytes, 1))
        return static_cast<int>(i);
    return -1;
  }
  GmBuffer& gm_checked(uint64_t fake, uint64_t bytes, Site site) {
    const int i = find_gm(fake);
    if (i < 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(fake));
      misuse("gm_out_of_bounds", site,
             std::string("GM address ") + buf + " is not inside any buffer the harness passed");
    }
    GmBuffer& b = gm_[static_cast<size_t>(i)];
    if (fake - b.fake + bytes > b.bytes) {
      misuse("gm_out_of_bounds", site,
             "GM access [" + std::to_string(fake - b.fake) + ", " +
                 std::to_string(fake - b.fake + bytes) + ") runs past the end of buffer '" +
                 b.name + "' (" + std::to_string(b.bytes) + " bytes)");
    }
    return b;
  }

  static uint32_t block_mask(uint64_t lo, uint64_t hi) {  // bytes [lo, hi) within one block
    const uint32_t n = static_cast<uint32_t>(hi - lo);
    const uint32_t m = n >= 32 ? 0xFFFFFFFFu : ((1u << n) - 1u);
    return m << (lo & 31);
  }

  void gm_access(uint64_t fake, uint64_t bytes, bool write, Site site) {
    if (bytes == 0) return;
    if (!has_cur_instr_) misuse("unsupported_argument", site, "GM access before any instruction");
    GmBuffer& b = gm_checked(fake, bytes, site);
    if (write && !b.writable)
      misuse("gm_write_readonly", site,
             "writes input buffer '" + b.name + "' (inputs are read-only for the kernel)");
    if (!b.writable) return;  // nobody writes it: no hazard possible
    if (!b.shadow) {
      const size_t n = (b.bytes + 31) / 32;
      b.shadow = static_cast<GmShadow*>(std::calloc(n ? n : 1, sizeof(GmShadow)));
      if (!b.shadow) misuse("unsupported_argument", site, "out of host memory for GM shadow");
    }
    const uint64_t lo = fake - b.fake, hi = lo + bytes;
    const int q = static_cast<int>(cur_pipe_);
    const int rq = cur_pipe_ == Pipe::S ? 0 : (cur_pipe_ == Pipe::MTE2 ? 1 : 2);
    static const Pipe rpipes[3] = {Pipe::S, Pipe::MTE2, Pipe::MTE3};
    const VClock& v = vc_[q];
    const int16_t me = static_cast<int16_t>(block_idx_ + 1);
    const uint16_t ep = static_cast<uint16_t>(epoch_);
    for (uint64_t blk = lo / 32; blk <= (hi - 1) / 32; ++blk) {
      GmShadow& s = b.shadow[blk];
      const uint64_t bl = std::max(lo, blk * 32), bh = std::min(hi, blk * 32 + 32);
      const uint32_t mask = block_mask(bl, bh);
      if (s.stamp != core_serial_) {
        s.stamp = core_serial_;
        s.w_id = 0;
        s.r_id[0] = s.r_id[1] = s.r_id[2] = 0;
      }
      if (check_hazards) {
        if (s.w_id && s.w_pipe != q && v.c[s.w_pipe] < s.w_id)
          hazard("GM", bl, write, static_cast<Pipe>(s.w_pipe), s.w_id, true, site);
        if (write)
          for (int r = 0; r < 3; ++r)
            if (r != rq && s.r_id[r] > v.c[static_cast<int>(rpipes[r])])
              hazard("GM", bl, true, rpipes[r], s.r_id[r], false, site);
        cross_core(b, s, bl, mask, write, me, ep, site);
      }
      if (write) {
        s.w_id = cur_id_;
        s.w_pipe = static_cast<uint8_t>(q);
        if (s.w_core == me && s.w_epoch == ep) {
          s.w_mask |= mask;
        } else {
          s.w_core = me;
          s.w_epoch = ep;
          s.w_mask = mask;
        }
      } else {
        s.r_id[rq] = cur_id_;
        if (s.r_min == 0 || s.r_epoch != ep) {
          s.r_min = s.r_max = me;
          s.r_epoch = ep;
          s.r_mask = mask;
        } else {
          s.r_min = std::min(s.r_min, me);
          s.r_max = std::max(s.r_max, me);
          s.r_mask |= mask;
        }
      }
    }
  }

  // Cores run one after another here but at the same time on hardware: within one SyncAll phase,
  // a block another core wrote must not be read or written by this one (and vice versa).
  void cross_core(const GmBuffer& b, const GmShadow& s, uint64_t at, uint32_t mask, bool write,
                  int16_t me, uint16_t ep, Site site) const {
    auto where = [&]() { return "GM buffer '" + b.name + "' byte " + std::to_string(at); };
    if (s.w_core && s.w_core != me && (s.w_mask & mask)) {
      if (s.w_epoch == ep)
        misuse("cross_core_race", site,
               std::string("core ") + std::to_string(block_idx_) + (write ? " writes " : " reads ") +
                   where() + " that core " + std::to_string(s.w_core - 1) +
                   " writes with no SyncAll between them");
      if (s.w_epoch > ep)
        misuse("unsupported_argument", site,
               "core " + std::to_string(block_idx_) + " touches " + where() + " that core " +
                   std::to_string(s.w_core - 1) +
                   " writes after a later SyncAll: passing data between cores across SyncAll needs "
                   "the cores run side by side (Engine::run_blocks), not one after another");
    }
    if (write && s.r_min && (s.r_min != me || s.r_max != me) && (s.r_mask & mask)) {
      const int16_t other = s.r_min != me ? s.r_min : s.r_max;
      if (s.r_epoch == ep)
        misuse("cross_core_race", site,
               "core " + std::to_string(block_idx_) + " writes " + where() + " that core " +
                   std::to_string(other - 1) + " reads with no SyncAll between them");
      if (s.r_epoch > ep)
        misuse("unsupported_argument", site,
               "core " + std::to_string(block_idx_) + " writes " + where() + " that core " +
                   std::to_string(other - 1) +
                   " reads after a later SyncAll: passing data between cores across SyncAll needs "
                   "the cores run side by side (Engine::run_blocks), not one after another");
    }
  }

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

[[noreturn]] inline void misuse(const char* check, Site site, const std::string& message) {
  MisuseRecord r;
  r.check = check;
  r.message = message;
  r.file = site.file ? site.file : "?";
  r.line = site.line;
  if (g_engine) {
    r.block = g_engine->in_core() ? static_cast<int32_t>(g_engine->block_idx()) : -1;
    g_engine->record_misuse(r);
  }
  throw Misuse(r);
}

}  // namespace jk
