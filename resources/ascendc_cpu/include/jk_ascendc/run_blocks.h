// Clean-room Ascend C CPU library: running the blocks of a kernel side by side (harness only).
//
// Why: on hardware the AI Cores run at the same time, and SyncAll (atlasascendc_api_07_0204) lets
// them pass data through GM: every core's writes before the barrier are seen by every core after
// it. Run one after another, core 0 would read, after the barrier, what core 1 has not written
// yet. Here each block runs on a thread of its own, exactly one thread at a time, in block order
// within each SyncAll phase: deterministic, and the cores of one phase all run before any core
// of the next. Every core leaves a barrier at the latest arrival time (the cycle model).
//
// Only the harness includes this header (kernel_operator.h does not): kernel objects must not
// refer to threads. Usage, instead of begin_core / kernel / end_core per block:
//   jk::run_blocks(*jk::g_engine, block_dim, [](void* ctx, uint32_t block) { ... }, &ctx);
// A jk::Misuse ends that block (first_misuse() has it); blocks already started still run (none
// may wait forever at a barrier), blocks not yet started are skipped. Any other exception must
// not leave `body` (std::terminate).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "jk_ascendc/engine.h"

namespace jk {

// The baton: which block's thread may run. A block that reaches SyncAll (or ends) hands over to
// the next block still in that phase; when none is left the phase is over and every block
// waiting at the barrier is released, first one first, at the latest arrival time.
struct BlockScheduler {
  enum : uint8_t { kNotStarted, kRunnable, kAtBarrier, kDone };
  BlockScheduler(Engine& engine, uint32_t n) : e(engine), state(n, kNotStarted), saved(n) {}
  Engine& e;
  std::mutex m;
  std::condition_variable cv;
  int turn = -1;
  std::vector<uint8_t> state;
  std::vector<Engine::CoreState> saved;
  uint64_t release = 0;
  uint64_t latest = 0;

  void wait_turn(uint32_t i) {
    std::unique_lock<std::mutex> g(m);
    cv.wait(g, [&] { return turn == static_cast<int>(i); });
  }
  int next_after(uint32_t i) {
    const uint32_t n = static_cast<uint32_t>(state.size());
    for (uint32_t j = i + 1; j < n; ++j)
      if (state[j] == kNotStarted || state[j] == kRunnable) return static_cast<int>(j);
    release = latest;
    latest = 0;
    int first = -1;
    for (uint32_t j = 0; j < n; ++j)
      if (state[j] == kAtBarrier) {
        state[j] = kRunnable;
        if (first < 0) first = static_cast<int>(j);
      }
    return first;
  }
  // Caller holds `m` and the engine's active state is block i's.
  void hand_over(uint32_t i) {
    e.swap_core(saved[i]);
    const int nx = next_after(i);
    if (nx >= 0) e.swap_core(saved[static_cast<size_t>(nx)]);
    turn = nx;
    cv.notify_all();
  }
  void arrive() {
    const uint32_t i = e.block_idx_;
    std::unique_lock<std::mutex> g(m);
    state[i] = kAtBarrier;
    latest = std::max(latest, e.now_max());
    hand_over(i);
    cv.wait(g, [&] { return turn == static_cast<int>(i); });
    const uint64_t t = release + e.soc_.barrier_cycles;
    for (int p = 0; p < kPipes; ++p) e.free_[p] = std::max(e.free_[p], t);
    e.s_time_ = std::max(e.s_time_, t);
  }
  void finish(uint32_t i) {
    std::unique_lock<std::mutex> g(m);
    state[i] = kDone;
    hand_over(i);
  }
  static void barrier_hook(void* self, Site) { static_cast<BlockScheduler*>(self)->arrive(); }

  void run(uint32_t n, void (*body)(void* ctx, uint32_t block), void* ctx) {
    e.barrier_hook_ = &BlockScheduler::barrier_hook;
    e.barrier_ctx_ = this;
    auto worker = [this, n, body, ctx](uint32_t i) {
      wait_turn(i);
      e.begin_core(i, n);
      try {
        if (!e.has_misuse_) body(ctx, i);  // after a misuse, blocks not yet started are skipped
      } catch (const Misuse&) {
        // recorded; this block stops here
      }
      e.end_core();
      finish(i);
    };
    // A block's thread is created when its turn first comes: without SyncAll at most two exist
    // at a time; with it, one per block waiting at the barrier.
    std::vector<std::thread> threads(n);
    {
      std::unique_lock<std::mutex> g(m);
      turn = n ? 0 : -1;
      for (;;) {
        cv.wait(g, [&] { return turn < 0 || state[static_cast<size_t>(turn)] == kNotStarted; });
        if (turn < 0) break;
        const uint32_t j = static_cast<uint32_t>(turn);
        state[j] = kRunnable;
        g.unlock();
        threads[j] = std::thread(worker, j);
        g.lock();
      }
    }
    for (auto& t : threads)
      if (t.joinable()) t.join();
    e.barrier_hook_ = nullptr;
    e.barrier_ctx_ = nullptr;
    auto& cores = e.cores_;
    std::stable_sort(cores.end() - static_cast<long>(std::min<size_t>(cores.size(), n)),
                     cores.end(), [](const Engine::CoreStats& a, const Engine::CoreStats& b) {
                       return a.block < b.block;
                     });
  }
};

inline void run_blocks(Engine& e, uint32_t n, void (*body)(void* ctx, uint32_t block), void* ctx) {
  BlockScheduler sched(e, n);
  sched.run(n, body, ctx);
}

}  // namespace jk
