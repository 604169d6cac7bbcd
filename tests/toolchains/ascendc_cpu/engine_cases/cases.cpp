// Engine test programs: small Ascend C "kernels" run on a hand-filled SoC, one per case name.
// Prints one JSON object: the first misuse (or null), the timeline figures and a digest of the
// output buffer. A line ending in `// MISUSE <check>` is where that check must point.
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernel_operator.h"
#include "jk_ascendc/run_blocks.h"

using namespace AscendC;

namespace {

// Test SoC: round figures so the expected timeline can be worked out by hand.
// MTE2/MTE3: 100 + bytes/32 cycles; vector op: 10 + 2 per 256-byte repeat; no issue cost.
jk::VectorCost test_cost(const char*, uint32_t) { return {10, 2}; }
jk::SocParams test_soc() {
  jk::SocParams p{};
  p.name = "test-soc";
  p.ub_bytes = 196608;
  p.block_bytes = 32;
  p.repeat_bytes = 256;
  p.max_repeat = 255;
  p.vector_cores = 8;
  p.clock_mhz = 1000.0;
  p.mte2_latency = 100;
  p.mte2_bytes_per_cycle = 32.0;
  p.mte3_latency = 100;
  p.mte3_bytes_per_cycle = 32.0;
  p.scalar_issue = 0;
  p.scalar_ub_access = 3;
  p.flag_cycles = 0;
  p.barrier_cycles = 0;
  p.vector_cost = test_cost;
  return p;
}

// A vector op of our own (the real ones live in other headers): dst = src * k on V.
template <typename T>
void TestScale(const LocalTensor<T>& dst, const LocalTensor<T>& src, T k, uint32_t count,
               jk::Site site = jk::here()) {
  auto& e = jk::eng();
  const uint32_t bytes = count * sizeof(T);
  const jk::VectorCost c = e.vector_cost("TestScale", sizeof(T));
  e.issue(jk::Pipe::V, "TestScale", c.startup + (bytes + 255) / 256 * c.per_repeat, site);
  src.jk_read(0, bytes, site);
  dst.jk_write(0, bytes, site);
  for (uint32_t i = 0; i < count; ++i) dst.jk_data()[i] = src.jk_data()[i] * k;
}

// Fills a tensor on V (so later reads are initialised and ordered by the queue).
template <typename T>
void Duplicate_free_fill(const LocalTensor<T>& t, jk::Site site = jk::here()) {
  auto& e = jk::eng();
  const uint32_t bytes = t.GetSize() * sizeof(T);
  e.issue(jk::Pipe::V, "TestFill", 10 + bytes / 256 * 2, site);
  t.jk_write(0, bytes, site);
  for (uint32_t i = 0; i < t.GetSize(); ++i) t.jk_data()[i] = static_cast<T>(i);
}

// sum += src on V (in place on sum).
template <typename T>
void TestAdd(const LocalTensor<T>& sum, const LocalTensor<T>& src, uint32_t count,
             jk::Site site = jk::here()) {
  auto& e = jk::eng();
  const uint32_t bytes = count * sizeof(T);
  e.issue(jk::Pipe::V, "TestAdd", 10 + (bytes + 255) / 256 * 2, site);
  src.jk_read(0, bytes, site);
  sum.jk_read(0, bytes, site);
  sum.jk_write(0, bytes, site);
  for (uint32_t i = 0; i < count; ++i) sum.jk_data()[i] += src.jk_data()[i];
}

constexpr uint32_t kTile = 1024;  // floats per tile: 4096 bytes = 228 cycles of MTE2 or MTE3
constexpr uint32_t kTiles = 4;
constexpr uint32_t kN = kTile * kTiles;

struct Gm {
  GM_ADDR x;  // input, read-only
  GM_ADDR y;  // output
  GM_ADDR z;  // second output
  uint32_t block;
};

// The canonical CopyIn / Compute / CopyOut loop; `buffers` = 1 (single) or 2 (double buffering).
template <int BUFS>
void pipeline(const Gm& g, uint32_t tiles_per_core) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, BUFS, kTile * sizeof(float));
  pipe.InitBuffer(qout, BUFS, kTile * sizeof(float));
  GlobalTensor<float> xg, yg;
  const uint32_t per_core = kTile * tiles_per_core;
  xg.SetGlobalBuffer((__gm__ float*)g.x + GetBlockIdx() * per_core, per_core);
  yg.SetGlobalBuffer((__gm__ float*)g.y + GetBlockIdx() * per_core, per_core);
  for (uint32_t i = 0; i < tiles_per_core; ++i) {
    LocalTensor<float> a = qin.AllocTensor<float>();
    DataCopy(a, xg[i * kTile], kTile);
    qin.EnQue(a);
    LocalTensor<float> b = qin.DeQue<float>();
    LocalTensor<float> o = qout.AllocTensor<float>();
    TestScale(o, b, 2.0f, kTile);
    qout.EnQue(o);
    qin.FreeTensor(b);
    LocalTensor<float> c = qout.DeQue<float>();
    DataCopy(yg[i * kTile], c, kTile);
    qout.FreeTensor(c);
  }
}

// Explicit flags instead of queues: MTE2 -> V -> MTE3 with SetFlag/WaitFlag, one tile.
void flags_clean(const Gm& g) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 2 * kTile * sizeof(float));
  LocalTensor<float> a = tb.Get<float>(kTile);
  LocalTensor<float> o = tb.GetWithOffset<float>(kTile, kTile * sizeof(float));
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  DataCopy(a, xg, kTile);
  event_t e1 = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE2_V));
  SetFlag<HardEvent::MTE2_V>(e1);
  WaitFlag<HardEvent::MTE2_V>(e1);
  TestScale(o, a, 2.0f, kTile);
  event_t e2 = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE3));
  SetFlag<HardEvent::V_MTE3>(e2);
  WaitFlag<HardEvent::V_MTE3>(e2);
  DataCopy(yg, o, kTile);
  PipeBarrier<PIPE_ALL>();
  float v = o.GetValue(3);  // after PIPE_ALL: ordered
  o.SetValue(4, v + 1.0f);
}

// Tails with DataCopyPad: 100 floats (400 bytes) in, padded to 416 bytes in UB, 100 out.
void pad_clean(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, 1, 512);
  pipe.InitBuffer(qout, 1, 512);
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, 100);
  yg.SetGlobalBuffer((__gm__ float*)g.y, 100);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopyExtParams cp{1, 100 * sizeof(float), 0, 0, 0};
  DataCopyPadExtParams<float> pad{true, 0, 4, 0.0f};
  DataCopyPad(a, xg, cp, pad);
  qin.EnQue(a);
  LocalTensor<float> b = qin.DeQue<float>();
  LocalTensor<float> o = qout.AllocTensor<float>();
  TestScale(o, b, 3.0f, 104);  // reads the 4 padded floats too: written by the padding
  qout.EnQue(o);
  qin.FreeTensor(b);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopyPad(yg, c, cp);
  qout.FreeTensor(c);
}

// ---- misuse cases -------------------------------------------------------------------------

void ub_overflow(const Gm&) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(qin, 2, 65536);
  pipe.InitBuffer(tb, 65537);  // MISUSE ub_overflow
}

void ub_out_of_bounds(const Gm&) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 256);
  LocalTensor<float> t = tb.Get<float>();
  t.SetValue(63, 1.0f);
  t.SetValue(64, 1.0f);  // MISUSE ub_out_of_bounds
}

// An element offset whose byte offset wraps 32 bits must not land back inside the buffer.
void wrapped_offset(const Gm&) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 256);
  LocalTensor<float> t = tb.Get<float>();
  t.SetValue(0, 1.0f);
  float v = t[0x40000000u].GetValue(0);  // MISUSE ub_out_of_bounds
  float w = t.GetValue(0x40000000u);
  (void)v;
  (void)w;
}

void ub_misaligned(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a[3], xg, 64);  // MISUSE ub_misaligned
}

void datacopy_misaligned(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, xg, 8);
  DataCopy(a, xg, 100);  // MISUSE datacopy_misaligned
}

void queue_empty_deque(const Gm&) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  LocalTensor<float> b = qin.DeQue<float>();  // MISUSE queue_empty_deque
  (void)b;
}

void queue_alloc_past_depth(const Gm&) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  LocalTensor<float> a = qin.AllocTensor<float>();
  LocalTensor<float> b = qin.AllocTensor<float>();  // MISUSE queue_alloc_past_depth
  (void)a;
  (void)b;
}

void queue_use_after_free(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, xg, kTile);
  qin.EnQue(a);
  LocalTensor<float> b = qin.DeQue<float>();
  qin.FreeTensor(b);
  float v = b.GetValue(0);  // MISUSE queue_use_after_free
  (void)v;
}

void queue_foreign_tensor(const Gm&) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, 1, 4096);
  pipe.InitBuffer(qout, 1, 4096);
  LocalTensor<float> a = qin.AllocTensor<float>();
  qout.EnQue(a);  // MISUSE queue_foreign_tensor
}

void gm_out_of_bounds(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, 1000);  // extent 1000 floats
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, xg[992], 8);
  DataCopy(a, xg[992], 16);  // MISUSE gm_out_of_bounds
}

void gm_write_readonly(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qout, 1, 4096);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  LocalTensor<float> o = qout.AllocTensor<float>();
  Duplicate_free_fill(o);
  qout.EnQue(o);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopy(xg, c, kTile);  // MISUSE gm_write_readonly
}

void ub_uninitialised_read(const Gm&) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 4096);
  LocalTensor<float> t = tb.Get<float>();
  t.SetValue(0, 1.0f);
  float a = t.GetValue(0);
  float b = t.GetValue(1);  // MISUSE ub_uninitialised_read
  (void)a;
  (void)b;
}

// MTE2 writes the buffer and V reads it with nothing ordering them.
void pipeline_hazard(const Gm& g) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 2 * kTile * sizeof(float));
  LocalTensor<float> a = tb.Get<float>(kTile);
  LocalTensor<float> o = tb.GetWithOffset<float>(kTile, kTile * sizeof(float));
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  DataCopy(a, xg, kTile);
  TestScale(o, a, 2.0f, kTile);  // MISUSE pipeline_hazard
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, o, kTile);
}

// The same race on the way out: V writes, MTE3 reads without V_MTE3.
void pipeline_hazard_out(const Gm& g) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 2 * kTile * sizeof(float));
  LocalTensor<float> a = tb.Get<float>(kTile);
  LocalTensor<float> o = tb.GetWithOffset<float>(kTile, kTile * sizeof(float));
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  DataCopy(a, xg, kTile);
  PipeBarrier<PIPE_ALL>();
  TestScale(o, a, 2.0f, kTile);
  DataCopy(yg, o, kTile);  // MISUSE pipeline_hazard
}

void wait_without_set(const Gm&) {
  TPipe pipe;
  event_t e = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_MTE3));
  SetFlag<HardEvent::V_MTE3>(e);
  WaitFlag<HardEvent::V_MTE3>(e);
  WaitFlag<HardEvent::V_MTE3>(e);  // MISUSE wait_without_set
}

// Two cores write the same GM blocks (each core copies tile 0 of y).
void cross_core_race(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qout, 1, 4096);
  GlobalTensor<float> yg;
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  LocalTensor<float> o = qout.AllocTensor<float>();
  Duplicate_free_fill(o);
  qout.EnQue(o);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopy(yg, c, kTile);  // MISUSE cross_core_race
  qout.FreeTensor(c);
}

// Core b writes tile b, SyncAll, then reads tile b-1 written by the core before: ordered; and
// byte-exact tails of neighbouring cores sharing one 32-byte block do not race.
void cross_core_clean(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECOUT, 1> qout;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qout, 1, 4096);
  pipe.InitBuffer(qin, 1, 4096);
  GlobalTensor<float> zg;
  zg.SetGlobalBuffer((__gm__ float*)g.z, kN);
  const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
  LocalTensor<float> o = qout.AllocTensor<float>();
  Duplicate_free_fill(o);
  qout.EnQue(o);
  LocalTensor<float> c = qout.DeQue<float>();
  // 10 floats per core at 10*b: neighbours share a 32-byte block, not a byte
  DataCopyExtParams cp{1, 10 * sizeof(float), 0, 0, 0};
  DataCopyPad(zg[10 * b], c, cp);
  qout.FreeTensor(c);
  SyncAll();
}

// Tail padding off: the 16 bytes after the 400 copied stay garbage, and a read of them is caught.
void pad_tail_poison(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, 1, 512);
  pipe.InitBuffer(qout, 1, 512);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, 100);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopyExtParams cp{1, 100 * sizeof(float), 0, 0, 0};
  DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
  DataCopyPad(a, xg, cp, pad);
  qin.EnQue(a);
  LocalTensor<float> b = qin.DeQue<float>();
  LocalTensor<float> o = qout.AllocTensor<float>();
  TestScale(o, b, 3.0f, 100);
  TestScale(o, b, 3.0f, 104);  // MISUSE ub_uninitialised_read
}

// DataCopyParams: gather 4 bursts of 2 blocks (16 floats) every 4 blocks, scatter them back.
void params_strided(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TQue<QuePosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, 1, 256);
  pipe.InitBuffer(qout, 1, 256);
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, xg, DataCopyParams{4, 2, 2, 0});
  qin.EnQue(a);
  LocalTensor<float> b = qin.DeQue<float>();
  LocalTensor<float> o = qout.AllocTensor<float>();
  TestScale(o, b, 2.0f, 64);
  qout.EnQue(o);
  qin.FreeTensor(b);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopy(yg, c, DataCopyParams{4, 2, 0, 2});
  qout.FreeTensor(c);
}

void params_out_of_range(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 256);
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, xg, DataCopyParams{0, 2, 0, 0});  // MISUSE unsupported_argument
}

// MTE3 writes GM that MTE2 then reads back: needs MTE3_MTE2 between them.
void gm_round_trip(const Gm& g, bool sync) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 2 * kTile * sizeof(float));
  LocalTensor<float> a = tb.Get<float>(kTile);
  LocalTensor<float> o = tb.GetWithOffset<float>(kTile, kTile * sizeof(float));
  GlobalTensor<float> yg;
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  Duplicate_free_fill(o);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(yg, o, kTile);
  if (sync) {
    SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
    WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
  }
  DataCopy(a, yg, kTile);  // MISUSE pipeline_hazard (without the flags)
}

// A scalar read of what V wrote needs V_S.
void scalar_after_vector(const Gm&, bool sync) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 1024);
  LocalTensor<float> t = tb.Get<float>();
  Duplicate_free_fill(t);
  if (sync) {
    SetFlag<HardEvent::V_S>(EVENT_ID1);
    WaitFlag<HardEvent::V_S>(EVENT_ID1);
  }
  float v = t.GetValue(5);  // MISUSE pipeline_hazard (without the flags)
  (void)v;
}

// Cores run one after another here: core 0 reading, after SyncAll, what core 1 writes before it
// cannot be modelled, and says so instead of computing garbage.
void sync_all_exchange(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECOUT, 1> qout;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qout, 1, 256);
  pipe.InitBuffer(qin, 1, 256);
  GlobalTensor<float> zg;
  zg.SetGlobalBuffer((__gm__ float*)g.z, kN);
  const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
  LocalTensor<float> o = qout.AllocTensor<float>();
  Duplicate_free_fill(o);
  qout.EnQue(o);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopy(zg[8 * b], c, 8);  // MISUSE unsupported_argument
  qout.FreeTensor(c);
  SyncAll();
  LocalTensor<float> a = qin.AllocTensor<float>();
  DataCopy(a, zg[8 * ((b + 1) % 2)], 8);
  qin.FreeTensor(a);
}

// Data flowing forward across SyncAll (core 1 reads what core 0 wrote before it) is ordered.
void sync_all_forward(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECOUT, 1> qout;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qout, 1, 256);
  pipe.InitBuffer(qin, 1, 256);
  GlobalTensor<float> zg;
  zg.SetGlobalBuffer((__gm__ float*)g.z, kN);
  const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
  LocalTensor<float> o = qout.AllocTensor<float>();
  Duplicate_free_fill(o);
  qout.EnQue(o);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopy(zg[8 * b], c, 8);
  qout.FreeTensor(c);
  SyncAll();
  if (b == 1) {
    LocalTensor<float> a = qin.AllocTensor<float>();
    DataCopy(a, zg, 8);
    qin.FreeTensor(a);
  }
}

void pipe_reset_kills_tensors(const Gm&) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 1024);
  LocalTensor<float> t = tb.Get<float>();
  t.SetValue(0, 1.0f);
  pipe.Reset();
  t.SetValue(1, 1.0f);  // MISUSE queue_use_after_free
}

// Multi-core reduction through GM: core b writes 8 floats k*(b+1) to z, SyncAll, core 0 sums
// every core's 8 into y. Needs the cores to run side by side (run_blocks).
void sync_all_reduce(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECOUT, 1> qout;
  TQue<QuePosition::VECIN, 1> qin;
  TBuf<TPosition::VECCALC> acc;
  pipe.InitBuffer(qout, 1, 256);
  pipe.InitBuffer(qin, 1, 256);
  pipe.InitBuffer(acc, 256);
  GlobalTensor<float> yg, zg;
  yg.SetGlobalBuffer((__gm__ float*)g.y, kN);
  zg.SetGlobalBuffer((__gm__ float*)g.z, kN);
  const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
  const uint32_t n = static_cast<uint32_t>(GetBlockNum());
  LocalTensor<float> o = qout.AllocTensor<float>();
  Duplicate_free_fill(o);
  TestScale(o, o, static_cast<float>(b + 1), 8);
  qout.EnQue(o);
  LocalTensor<float> c = qout.DeQue<float>();
  DataCopy(zg[8 * b], c, 8);
  qout.FreeTensor(c);
  SyncAll();
  if (b != 0) return;
  LocalTensor<float> sum = acc.Get<float>();
  Duplicate_free_fill(sum);
  TestScale(sum, sum, 0.0f, 8);
  for (uint32_t k = 0; k < n; ++k) {
    LocalTensor<float> a = qin.AllocTensor<float>();
    DataCopy(a, zg[8 * k], 8);
    qin.EnQue(a);
    LocalTensor<float> d = qin.DeQue<float>();
    TestAdd(sum, d, 8);
    qin.FreeTensor(d);
  }
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(yg, sum, 8);
}

// Core b moves b+1 tiles before SyncAll and one after: every core leaves the barrier when the
// slowest arrives.
void sync_all_timing(const Gm& g) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, kTile * sizeof(float));
  LocalTensor<float> a = tb.Get<float>();
  GlobalTensor<float> xg;
  xg.SetGlobalBuffer((__gm__ float*)g.x, kN);
  for (int64_t i = 0; i <= GetBlockIdx(); ++i) DataCopy(a, xg, kTile);
  SyncAll();
  DataCopy(a, xg, kTile);
}

void pipe_barrier_s(const Gm&) {
  PipeBarrier<PIPE_V>();
  PipeBarrier<PIPE_S>();  // MISUSE unsupported_argument
}

// Nine tensors alive at once from the VECIN queues: past the 8 an Atlas A2 position allows.
void nine_vecin_tensors(const Gm&) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> q0, q1, q2;
  pipe.InitBuffer(q0, 4, 256);
  pipe.InitBuffer(q1, 4, 256);
  pipe.InitBuffer(q2, 4, 256);
  for (int i = 0; i < 4; ++i) (void)q0.AllocTensor<float>();
  for (int i = 0; i < 4; ++i) (void)q1.AllocTensor<float>();
  (void)q2.AllocTensor<float>();  // MISUSE queue_alloc_past_depth
}

// InitBuffer rounds a length up to 32 bytes: 100 bytes hold a 25-float tensor in a 128-byte buffer.
void rounded_buffer(const Gm&) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(qin, 1, 100);
  pipe.InitBuffer(tb, 100);
  LocalTensor<float> a = qin.AllocTensor<float>();
  LocalTensor<float> t = tb.Get<float>();
  if (a.GetSize() != 25 || t.GetSize() != 25 || t.GetPhyAddr() != 128) jk::misuse("unsupported_argument", jk::here(), "sizes");
  t.SetValue(31, 1.0f);  // inside the rounded buffer: fine on hardware
  t.SetValue(32, 1.0f);  // MISUSE ub_out_of_bounds
}

void catch_all_hides_nothing(const Gm& g) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, 4096);
  try {
    LocalTensor<float> b = qin.DeQue<float>();  // MISUSE queue_empty_deque
    (void)b;
  } catch (...) {
    // a kernel that swallows everything and carries on
  }
  pad_clean(g);
}

struct Case {
  std::function<void(const Gm&)> kernel;
  uint32_t blocks;
};

std::map<std::string, Case> cases() {
  return {
      {"single_buffer", {[](const Gm& g) { pipeline<1>(g, kTiles); }, 1}},
      {"double_buffer", {[](const Gm& g) { pipeline<2>(g, kTiles); }, 1}},
      {"two_cores", {[](const Gm& g) { pipeline<2>(g, kTiles / 2); }, 2}},
      {"flags_clean", {flags_clean, 1}},
      {"pad_clean", {pad_clean, 1}},
      {"ub_overflow", {ub_overflow, 1}},
      {"ub_out_of_bounds", {ub_out_of_bounds, 1}},
      {"ub_misaligned", {ub_misaligned, 1}},
      {"wrapped_offset", {wrapped_offset, 1}},
      {"datacopy_misaligned", {datacopy_misaligned, 1}},
      {"queue_empty_deque", {queue_empty_deque, 1}},
      {"queue_alloc_past_depth", {queue_alloc_past_depth, 1}},
      {"queue_use_after_free", {queue_use_after_free, 1}},
      {"queue_foreign_tensor", {queue_foreign_tensor, 1}},
      {"gm_out_of_bounds", {gm_out_of_bounds, 1}},
      {"gm_write_readonly", {gm_write_readonly, 1}},
      {"ub_uninitialised_read", {ub_uninitialised_read, 1}},
      {"pipeline_hazard", {pipeline_hazard, 1}},
      {"pipeline_hazard_out", {pipeline_hazard_out, 1}},
      {"wait_without_set", {wait_without_set, 1}},
      {"cross_core_race", {cross_core_race, 2}},
      {"cross_core_clean", {cross_core_clean, 3}},
      {"catch_all_hides_nothing", {catch_all_hides_nothing, 1}},
      {"pad_tail_poison", {pad_tail_poison, 1}},
      {"pipe_barrier_s", {pipe_barrier_s, 1}},
      {"sync_all_reduce", {sync_all_reduce, 3}},
      {"sync_all_timing", {sync_all_timing, 2}},
      {"nine_vecin_tensors", {nine_vecin_tensors, 1}},
      {"rounded_buffer", {rounded_buffer, 1}},
      {"params_strided", {params_strided, 1}},
      {"params_out_of_range", {params_out_of_range, 1}},
      {"gm_hazard", {[](const Gm& g) { gm_round_trip(g, false); }, 1}},
      {"gm_round_trip", {[](const Gm& g) { gm_round_trip(g, true); }, 1}},
      {"scalar_hazard", {[](const Gm& g) { scalar_after_vector(g, false); }, 1}},
      {"scalar_after_vector", {[](const Gm& g) { scalar_after_vector(g, true); }, 1}},
      {"sync_all_exchange", {sync_all_exchange, 2}},
      {"sync_all_forward", {sync_all_forward, 2}},
      {"pipe_reset_kills_tensors", {pipe_reset_kills_tensors, 1}},
  };
}

std::string esc(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string name = argv[1];
  bool no_hazards = false;
  bool threads = false;  // run the blocks side by side (Engine::run_blocks)
  uint32_t issue = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-hazard-checks") no_hazards = true;
    if (a == "--threads") threads = true;
    if (a.rfind("--issue=", 0) == 0) issue = static_cast<uint32_t>(std::stoul(a.substr(8)));
  }
  auto all = cases();
  auto it = all.find(name);
  if (it == all.end()) return 2;

  jk::SocParams soc = test_soc();
  soc.scalar_issue = issue;
  jk::g_engine = new jk::Engine(soc);
  jk::Engine& e = jk::eng();
  e.check_hazards = !no_hazards;
  std::vector<float> x(kN), y(kN, -1.0f), z(kN, -1.0f);
  for (uint32_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i % 97);
  Gm g{};
  g.x = reinterpret_cast<GM_ADDR>(e.gm_register("input0", reinterpret_cast<uint8_t*>(x.data()),
                                                kN * 4, false));
  g.y = reinterpret_cast<GM_ADDR>(e.gm_register("output0", reinterpret_cast<uint8_t*>(y.data()),
                                                kN * 4, true));
  g.z = reinterpret_cast<GM_ADDR>(e.gm_register("output1", reinterpret_cast<uint8_t*>(z.data()),
                                                kN * 4, true));
  bool thrown = false;
  if (threads) {
    struct Ctx {
      Gm* g;
      Case* c;
    } ctx{&g, &it->second};
    jk::run_blocks(
        e, it->second.blocks,
        [](void* p, uint32_t) {
          auto* cx = static_cast<Ctx*>(p);
          cx->c->kernel(*cx->g);
        },
        &ctx);
  }
  for (uint32_t b = 0; !threads && b < it->second.blocks && !thrown; ++b) {
    e.begin_core(b, it->second.blocks);
    g.block = b;
    try {
      it->second.kernel(g);
    } catch (const jk::Misuse&) {
      thrown = true;
    }
    e.end_core();
  }

  double ysum = 0, zsum = 0;
  for (uint32_t i = 0; i < kN; ++i) {
    ysum += y[i];
    zsum += z[i];
  }
  std::printf("{\"case\": \"%s\", ", name.c_str());
  if (const jk::MisuseRecord* m = e.first_misuse()) {
    std::printf("\"misuse\": {\"check\": \"%s\", \"file\": \"%s\", \"line\": %u, \"block\": %d, "
                "\"message\": \"%s\"}, ",
                m->check.c_str(), esc(m->file).c_str(), m->line, m->block,
                esc(m->message).c_str());
  } else {
    std::printf("\"misuse\": null, ");
  }
  std::printf("\"total\": %llu, \"bound\": \"%s\", \"cores\": [",
              static_cast<unsigned long long>(e.total_cycles()), jk::pipe_name(e.bound_pipe()));
  for (size_t i = 0; i < e.cores().size(); ++i) {
    const auto& c = e.cores()[i];
    std::printf("%s{\"block\": %u, \"makespan\": %llu, \"busy\": {", i ? ", " : "", c.block,
                static_cast<unsigned long long>(c.makespan));
    for (int p = 0; p < jk::kPipes; ++p)
      std::printf("%s\"%s\": %llu", p ? ", " : "", jk::pipe_name(static_cast<jk::Pipe>(p)),
                  static_cast<unsigned long long>(c.pipes[p].busy));
    std::printf("}}");
  }
  std::printf("], \"ops\": [");
  const auto ops = e.op_stats();
  for (size_t i = 0; i < ops.size(); ++i)
    std::printf("%s{\"op\": \"%s\", \"pipe\": \"%s\", \"calls\": %llu, \"cycles\": %llu}",
                i ? ", " : "", ops[i].op.c_str(), jk::pipe_name(ops[i].pipe),
                static_cast<unsigned long long>(ops[i].calls),
                static_cast<unsigned long long>(ops[i].cycles));
  // per core and pipe: the sum of trace durations and whether one lane ever overlaps itself
  std::printf("], \"trace\": [");
  for (size_t i = 0; i < e.cores().size(); ++i) {
    std::printf("%s{", i ? ", " : "");
    for (int p = 0; p < jk::kPipes; ++p) {
      uint64_t sum = 0, last_end = 0;
      bool overlap = false;
      for (const auto& ev : e.trace()) {
        if (ev.core != e.cores()[i].block || static_cast<int>(ev.pipe) != p) continue;
        sum += ev.dur;
        overlap = overlap || ev.start < last_end;
        last_end = ev.start + ev.dur;
      }
      std::printf("%s\"%s\": [%llu, %s]", p ? ", " : "", jk::pipe_name(static_cast<jk::Pipe>(p)),
                  static_cast<unsigned long long>(sum), overlap ? "true" : "false");
    }
    std::printf("}");
  }
  std::printf("], \"trace_events\": %zu, \"ysum\": %.1f, \"zsum\": %.1f, \"y\": [",
              e.trace().size(), ysum, zsum);
  for (int i = 0; i < 8; ++i) std::printf("%s%.1f", i ? ", " : "", static_cast<double>(y[i]));
  std::printf("]}\n");
  return 0;
}
