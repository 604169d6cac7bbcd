// Clean-room Ascend C CPU library: TPipe, TQue/TQueBind, TBuf.
//
// Queues are where Ascend C kernels synchronise pipes. The model (design contract): by queue
// position, EnQue is a SetFlag of the producer pipe and DeQue a WaitFlag of the consumer pipe;
// FreeTensor signals the consumer's last use of the buffer and the next AllocTensor of that buffer
// makes the producer wait for it. VECIN: MTE2 -> V; VECOUT: V -> MTE3; VECCALC: no sync.
// So depth-2 queues (two buffers) let MTE2 fill one buffer while V works on the other.
#pragma once

#include <cstdint>
#include <string>

#include "jk_ascendc/engine.h"
#include "jk_ascendc/tensor.h"
#include "jk_ascendc/types.h"

namespace AscendC {

namespace jk_detail {

inline bool producer_consumer(TPosition src, TPosition dst, jk::Pipe& prod, jk::Pipe& cons) {
  // Producer: who writes the buffer before EnQue; consumer: who reads it after DeQue.
  bool ok = true;
  switch (src) {
    case TPosition::GM:
    case TPosition::VECIN:
      prod = jk::Pipe::MTE2;
      break;
    case TPosition::VECOUT:
      prod = jk::Pipe::V;
      break;
    default:
      ok = false;
  }
  switch (dst) {
    case TPosition::VECIN:
      cons = jk::Pipe::V;
      break;
    case TPosition::VECOUT:
    case TPosition::GM:
      cons = jk::Pipe::MTE3;
      break;
    default:
      ok = false;
  }
  if (src == TPosition::VECOUT && dst == TPosition::VECOUT) cons = jk::Pipe::MTE3;
  return ok;
}

inline std::string slot_state_name(uint8_t s) {
  static const char* const n[] = {"free", "allocated", "enqueued", "dequeued", "TBuf", "released"};
  return n[s < 6 ? s : 5];
}

// The queue bookkeeping every TQueBind<SRC, DST, DEPTH> and element type shares, by queue id and
// slot index: non-template (JK_ENGINE_FN), so team units compiled with JK_ENGINE_EXTERN do not
// instantiate it per queue type (the harness holds its one compiled copy).
JK_ENGINE_FN jk::Engine::QueueRec& queue_rec(int32_t qid, jk::Site site, const char* what)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  if (qid < 0 || static_cast<size_t>(qid) >= e.queues().size())
    jk::misuse("unsupported_argument", site,
               std::string(what) + " on a queue that TPipe::InitBuffer did not set up");
  return e.queues()[static_cast<size_t>(qid)];
}
#else
;
#endif

// The slot of a tensor this queue allocated and that is still the same buffer generation.
JK_ENGINE_FN jk::Engine::Slot& queue_owned(int32_t qid, int32_t slot, uint32_t gen, jk::Site site,
                                           const char* what)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  auto& q = e.queues()[static_cast<size_t>(qid)];
  if (slot < 0 || static_cast<uint32_t>(slot) < q.first_slot ||
      static_cast<uint32_t>(slot) >= q.first_slot + q.num)
    jk::misuse("queue_foreign_tensor", site,
               std::string(what) + " of a tensor that this queue did not allocate");
  auto& s = e.slots()[static_cast<size_t>(slot)];
  if (s.gen != gen)
    jk::misuse("queue_use_after_free", site,
               std::string(what) + " of a tensor whose buffer was already freed");
  return s;
}
#else
;
#endif

// Atlas A2 allows at most 8 tensors allocated at once from the queues of one TPosition
// (AllocTensor constraints; InitBuffer atlasascendc_api_07_0110 "QUE Buffer" limit).
JK_ENGINE_FN void position_limit(const jk::Engine::QueueRec& q, jk::Site site)
#if JK_ENGINE_DEFS
{
  const auto& e = jk::eng();
  uint32_t live = 0;
  for (const auto& other : e.queues()) {
    if (other.position != q.position) continue;
    for (uint32_t k = 0; k < other.num; ++k) {
      const auto st = e.slots()[other.first_slot + k].state;
      if (st == jk::Engine::kAllocated || st == jk::Engine::kQueued || st == jk::Engine::kDequeued)
        ++live;
    }
  }
  if (live >= 8)
    jk::misuse("queue_alloc_past_depth", site,
               "AllocTensor of a 9th tensor at one TPosition while 8 are in use: Atlas A2 allows "
               "at most 8 allocated tensors per position");
}
#else
;
#endif

// AllocTensor: the next free buffer of the queue (the producer waits for its last FreeTensor).
JK_ENGINE_FN uint32_t queue_alloc(int32_t qid, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  auto& q = queue_rec(qid, site, "AllocTensor");
  auto& slots = e.slots();
  e.scalar_op(site);
  for (uint32_t k = 0; k < q.num; ++k) {
    const uint32_t si = q.first_slot + (q.next_alloc + k) % q.num;
    auto& s = slots[si];
    if (s.state != jk::Engine::kFree) continue;
    position_limit(q, site);
    q.next_alloc = (q.next_alloc + k + 1) % q.num;
    // The producer may refill the buffer only after the consumer freed it.
    if (q.synced && s.has_free_snap) e.wait_on(q.producer, s.free_snap);
    s.state = jk::Engine::kAllocated;
    return si;
  }
  jk::misuse("queue_alloc_past_depth", site,
             "AllocTensor while all " + std::to_string(q.num) +
                 " buffers of this queue are in use (FreeTensor one first): on hardware the "
                 "call waits forever");
}
#else
;
#endif

// EnQue of the tensor in `slot` (generation `gen`); depth <= 0: unlimited.
JK_ENGINE_FN bool queue_enque(int32_t qid, int32_t slot, uint32_t gen, bool synced,
                              jk::Pipe producer, int32_t depth, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  auto& q = queue_rec(qid, site, "EnQue");
  auto& s = queue_owned(qid, slot, gen, site, "EnQue");
  if (s.state != jk::Engine::kAllocated && s.state != jk::Engine::kDequeued)
    jk::misuse("queue_use_after_free", site,
               "EnQue of a tensor whose buffer is " + slot_state_name(s.state));
  if (depth > 0 && q.queued() >= static_cast<size_t>(depth))
    jk::misuse("queue_alloc_past_depth", site,
               "EnQue onto a queue already holding depth=" + std::to_string(depth) +
                   " tensors: EnQue returns false and the tensor is never dequeued");
  e.scalar_op(site);
  if (synced) s.enq_snap = e.snapshot(producer, site);
  s.state = jk::Engine::kQueued;
  q.fifo.push_back(static_cast<uint32_t>(slot));
  return true;
}
#else
;
#endif

// DeQue: the oldest enqueued buffer's slot (the consumer waits for the producer's EnQue).
JK_ENGINE_FN uint32_t queue_deque(int32_t qid, bool synced, jk::Pipe consumer, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  auto& q = queue_rec(qid, site, "DeQue");
  if (q.queued() == 0)
    jk::misuse("queue_empty_deque", site,
               "DeQue on an empty queue (nothing was EnQue'd): on hardware the consumer waits "
               "forever");
  e.scalar_op(site);
  const uint32_t si = q.fifo[q.head++];
  if (q.head == q.fifo.size()) {
    q.fifo.clear();
    q.head = 0;
  }
  auto& s = e.slots()[si];
  if (synced) e.wait_on(consumer, s.enq_snap);
  s.state = jk::Engine::kDequeued;
  return si;
}
#else
;
#endif

// FreeTensor: the consumer's last use of the buffer (the next AllocTensor of it waits for this).
JK_ENGINE_FN void queue_free(int32_t qid, int32_t slot, uint32_t gen, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  auto& q = queue_rec(qid, site, "FreeTensor");
  auto& s = queue_owned(qid, slot, gen, site, "FreeTensor");
  if (s.state == jk::Engine::kQueued)
    jk::misuse("queue_use_after_free", site,
               "FreeTensor of a tensor still in the queue (DeQue it first)");
  if (s.state != jk::Engine::kAllocated && s.state != jk::Engine::kDequeued)
    jk::misuse("queue_use_after_free", site,
               "FreeTensor of a buffer that is " + slot_state_name(s.state));
  e.scalar_op(site);
  if (q.synced) {
    s.free_snap = e.snapshot(q.consumer, site);
    s.has_free_snap = true;
  }
  s.state = jk::Engine::kFree;
  ++s.gen;
}
#else
;
#endif

// TPipe::InitBuffer of a queue: `num` buffers of `len` bytes from UB, one queue record; sets
// `qid` (atlasascendc_api_07_0110). Non-template for the same reason as the functions above.
JK_ENGINE_FN void init_queue(int32_t& qid, TPosition src, TPosition dst, int32_t depth,
                             uint8_t num, uint32_t len, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  if (num == 0 || len == 0)
    jk::misuse("unsupported_argument", site, "InitBuffer with num or len 0");
  if (qid >= 0 && static_cast<size_t>(qid) < e.queues().size())
    jk::misuse("unsupported_argument", site, "InitBuffer twice on the same queue");
  jk::Engine::QueueRec q;
  q.first_slot = static_cast<uint32_t>(e.slots().size());
  q.num = num;
  q.depth = depth > 0 ? static_cast<uint32_t>(depth) : 0;
  q.synced = producer_consumer(src, dst, q.producer, q.consumer);
  q.position = static_cast<uint8_t>(src);
  const uint32_t aligned = (len + 31) / 32 * 32;
  const uint32_t base =
      e.ub_alloc(static_cast<uint32_t>(uint64_t(aligned) * num), site, "InitBuffer(queue)");
  for (uint32_t i = 0; i < num; ++i) {
    jk::Engine::Slot s;
    s.offset = base + i * aligned;
    s.bytes = aligned;  // len is rounded up to 32 bytes (atlasascendc_api_07_0110)
    s.len = len;
    e.slots().push_back(s);
  }
  qid = static_cast<int32_t>(e.queues().size());
  e.queues().push_back(q);
}
#else
;
#endif

// TPipe::InitBuffer of a TBuf: one buffer of `len` bytes; sets `slot`.
JK_ENGINE_FN void init_tbuf(int32_t& slot, uint32_t len, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  if (len == 0) jk::misuse("unsupported_argument", site, "InitBuffer(TBuf) with len 0");
  const uint32_t off = e.ub_alloc(len, site, "InitBuffer(TBuf)");
  jk::Engine::Slot s;
  s.offset = off;
  s.bytes = (len + 31) / 32 * 32;
  s.len = len;
  s.state = jk::Engine::kTBuf;
  slot = static_cast<int32_t>(e.slots().size());
  e.slots().push_back(s);
}
#else
;
#endif

// The slot of a TBuf that InitBuffer set up.
JK_ENGINE_FN const jk::Engine::Slot& tbuf_slot(int32_t slot, jk::Site site)
#if JK_ENGINE_DEFS
{
  auto& e = jk::eng();
  if (slot < 0 || static_cast<size_t>(slot) >= e.slots().size() ||
      e.slots()[static_cast<size_t>(slot)].state != jk::Engine::kTBuf)
    jk::misuse("unsupported_argument", site, "TBuf used before TPipe::InitBuffer(tbuf, len)");
  return e.slots()[static_cast<size_t>(slot)];
}
#else
;
#endif

}  // namespace jk_detail

class TPipe;

// A queue between two logical positions (TQueBind); TQue<pos, depth> is the same with one
// position (TQue introduction atlasascendc_api_07_0137). Methods: AllocTensor, FreeTensor, EnQue
// (returns false when full, 07_0151), DeQue (an empty queue is an error, 07_0141), VacantInQue,
// HasTensorInQue.
template <TPosition SRC, TPosition DST, int32_t DEPTH>
class TQueBind {
 public:
  TQueBind() = default;
  static constexpr TPosition jk_src = SRC;
  static constexpr TPosition jk_dst = DST;

  template <typename T>
  LocalTensor<T> AllocTensor(jk::Site site = jk::here()) {
    return jk_tensor<T>(jk_detail::queue_alloc(jk_qid_, site), SRC);
  }
  template <typename T>
  void AllocTensor(LocalTensor<T>& t, jk::Site site = jk::here()) {
    t = AllocTensor<T>(site);
  }

  template <typename T>
  bool EnQue(const LocalTensor<T>& t, jk::Site site = jk::here()) {
    auto& q = jk_queue(site, "EnQue");
    return jk_enque(t, q.synced, q.producer, site);
  }
  // EnQue/DeQue naming the user positions of this hop (TQueBind buffer reuse, 07_0141):
  // EnQue<GM, VECIN> is MTE2's signal, DeQue<GM, VECIN> V's wait; <VECOUT, GM> is V -> MTE3.
  template <TPosition S2, TPosition D2, typename T>
  bool EnQue(const LocalTensor<T>& t, jk::Site site = jk::here()) {
    jk::Pipe prod = jk::Pipe::MTE2, cons = jk::Pipe::V;
    const bool synced = jk_detail::producer_consumer(S2, D2, prod, cons);
    return jk_enque(t, synced, prod, site);
  }
  template <TPosition S2, TPosition D2, typename T>
  LocalTensor<T> DeQue(jk::Site site = jk::here()) {
    jk::Pipe prod = jk::Pipe::MTE2, cons = jk::Pipe::V;
    const bool synced = jk_detail::producer_consumer(S2, D2, prod, cons);
    return jk_deque<T>(synced, cons, site);
  }

  template <typename T>
  bool jk_enque(const LocalTensor<T>& t, bool synced, jk::Pipe producer, jk::Site site) {
    return jk_detail::queue_enque(jk_qid_, t.jk_slot_, t.jk_gen_, synced, producer, DEPTH, site);
  }

  template <typename T>
  LocalTensor<T> DeQue(jk::Site site = jk::here()) {
    auto& q = jk_queue(site, "DeQue");
    return jk_deque<T>(q.synced, q.consumer, site);
  }
  template <typename T>
  LocalTensor<T> jk_deque(bool synced, jk::Pipe consumer, jk::Site site) {
    return jk_tensor<T>(jk_detail::queue_deque(jk_qid_, synced, consumer, site), DST);
  }
  template <typename T>
  void DeQue(LocalTensor<T>& t, jk::Site site = jk::here()) {
    t = DeQue<T>(site);
  }

  template <typename T>
  void FreeTensor(LocalTensor<T>& t, jk::Site site = jk::here()) {
    jk_detail::queue_free(jk_qid_, t.jk_slot_, t.jk_gen_, site);
  }

  // Room for another EnQue / something to DeQue.
  bool VacantInQue() const {
    const auto& q = jk::eng().queues()[static_cast<size_t>(jk_qid_)];
    return DEPTH <= 0 || q.queued() < static_cast<size_t>(DEPTH);
  }
  bool HasTensorInQue() const { return jk::eng().queues()[static_cast<size_t>(jk_qid_)].queued() > 0; }
  int32_t GetTensorCountInQue() const {
    return static_cast<int32_t>(jk::eng().queues()[static_cast<size_t>(jk_qid_)].queued());
  }
  bool HasIdleBuffer() const {
    const auto& e = jk::eng();
    const auto& q = e.queues()[static_cast<size_t>(jk_qid_)];
    for (uint32_t k = 0; k < q.num; ++k)
      if (e.slots()[q.first_slot + k].state == jk::Engine::kFree) return true;
    return false;
  }

  // ---- internal -------------------------------------------------------------------------------
  int32_t jk_qid_ = -1;
  uint32_t jk_serial_ = 0;  // pipe generation the queue was initialised in

  jk::Engine::QueueRec& jk_queue(jk::Site site, const char* what) {
    return jk_detail::queue_rec(jk_qid_, site, what);
  }
  // A tensor over slot `si` of this core's UB, seen at position `pos`.
  template <typename T>
  static LocalTensor<T> jk_tensor(uint32_t si, TPosition pos) {
    const auto& s = jk::eng().slots()[si];
    LocalTensor<T> t;
    t.jk_off_ = s.offset;
    t.jk_end_ = s.offset + s.bytes;
    t.jk_size_ = s.len / static_cast<uint32_t>(sizeof(T));
    t.jk_slot_ = static_cast<int32_t>(si);
    t.jk_gen_ = s.gen;
    t.jk_pos_ = pos;
    return t;
  }
};

// depth = how many EnQue may happen in a row without a DeQue (atlasascendc_api_07_0137); it is
// unrelated to double buffering (the number of buffers given to InitBuffer). 0: in-place queue.
template <TPosition POS, int32_t DEPTH = 1, auto MASK = 0>
class TQue : public TQueBind<POS, POS, DEPTH> {};

// A buffer without queue semantics (TBuf; Get 07_0163, GetWithOffset 07_0164).
template <TPosition POS = TPosition::VECCALC>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get(jk::Site site = jk::here()) const {
    const auto& s = jk_slot(site);
    return jk_make<T>(s, 0, s.len / static_cast<uint32_t>(sizeof(T)));
  }
  // The first `len` elements: len * sizeof(T) must not exceed the InitBuffer length
  // (atlasascendc_api_07_0163 "Get").
  template <typename T>
  LocalTensor<T> Get(uint32_t len, jk::Site site = jk::here()) const {
    const auto& s = jk_slot(site);
    if (uint64_t(len) * sizeof(T) > s.len)
      jk::misuse("ub_out_of_bounds", site,
                 "TBuf::Get(" + std::to_string(len) + ") asks " +
                     std::to_string(uint64_t(len) * sizeof(T)) + " bytes of a " +
                     std::to_string(s.len) + "-byte buffer");
    return jk_make<T>(s, 0, len);
  }
  // `size` elements starting `bufOffset` bytes into the buffer; bufOffset 32-byte aligned and
  // size * sizeof(T) + bufOffset within the InitBuffer length (atlasascendc_api_07_0164).
  template <typename T>
  LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, jk::Site site = jk::here()) const {
    const auto& s = jk_slot(site);
    if (bufOffset % 32 != 0)
      jk::misuse("ub_misaligned", site,
                 "TBuf::GetWithOffset offset " + std::to_string(bufOffset) +
                     " is not a multiple of 32 bytes");
    if (uint64_t(bufOffset) + uint64_t(size) * sizeof(T) > s.len)
      jk::misuse("ub_out_of_bounds", site,
                 "TBuf::GetWithOffset(" + std::to_string(size) + ", " + std::to_string(bufOffset) +
                     ") runs past the " + std::to_string(s.len) + "-byte buffer");
    return jk_make<T>(s, bufOffset, size);
  }

  int32_t jk_slot_ = -1;

 private:
  const jk::Engine::Slot& jk_slot(jk::Site site) const {
    return jk_detail::tbuf_slot(jk_slot_, site);
  }
  template <typename T>
  LocalTensor<T> jk_make(const jk::Engine::Slot& s, uint32_t off, uint32_t size) const {
    LocalTensor<T> t;
    t.jk_off_ = s.offset + off;
    t.jk_end_ = s.offset + s.bytes;
    t.jk_size_ = size;
    t.jk_slot_ = jk_slot_;
    t.jk_gen_ = s.gen;
    t.jk_pos_ = POS;
    return t;
  }
};

// The resource manager (TPipe; InitBuffer atlasascendc_api_07_0110): buffers for queues and
// TBufs, released when the TPipe goes (or on Reset), and event ids.
class TPipe {
 public:
  TPipe() {
    if (jk::g_engine && jk::eng().in_core()) {
      jk::eng().ub_reset_allocation();
      jk::eng().set_tpipe(this);
    }
  }
  ~TPipe() {
    if (jk::g_engine && jk::eng().in_core() && jk::eng().tpipe() == this) {
      jk::eng().ub_reset_allocation();
      jk::eng().set_tpipe(nullptr);
    }
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  // `num` buffers of `len` bytes each for a queue (InitBuffer, atlasascendc_api_07_0110).
  template <TPosition SRC, TPosition DST, int32_t DEPTH>
  bool InitBuffer(TQueBind<SRC, DST, DEPTH>& que, uint8_t num, uint32_t len,
                  jk::Site site = jk::here()) {
    jk_detail::init_queue(que.jk_qid_, SRC, DST, DEPTH, num, len, site);
    return true;
  }
  // One buffer of `len` bytes for a TBuf.
  template <TPosition POS>
  bool InitBuffer(TBuf<POS>& buf, uint32_t len, jk::Site site = jk::here()) {
    jk_detail::init_tbuf(buf.jk_slot_, len, site);
    return true;
  }

  // Releases every buffer: tensors from before are dead (use -> queue_use_after_free).
  void Reset() { jk::eng().ub_reset_allocation(); }
  void Destroy() { Reset(); }

  // Event ids per HardEvent (FetchEventID peeks, AllocEventID takes, ReleaseEventID returns).
  template <HardEvent E>
  TEventID FetchEventID() {
    return FetchEventID(E);
  }
  TEventID FetchEventID(HardEvent evt) {
    const uint8_t used = jk_ids_[static_cast<size_t>(evt)];
    for (int i = 0; i < 8; ++i)
      if (!(used & (1u << i))) return static_cast<TEventID>(i);
    return 0;
  }
  template <HardEvent E>
  TEventID AllocEventID(jk::Site site = jk::here()) {
    uint8_t& used = jk_ids_[static_cast<size_t>(E)];
    for (int i = 0; i < 8; ++i)
      if (!(used & (1u << i))) {
        used = static_cast<uint8_t>(used | (1u << i));
        return static_cast<TEventID>(i);
      }
    jk::misuse("unsupported_argument", site, "AllocEventID with all 8 event ids of that event in use");
  }
  template <HardEvent E>
  void ReleaseEventID(TEventID id) {
    if (id >= 0 && id < 8) jk_ids_[static_cast<size_t>(E)] &= static_cast<uint8_t>(~(1u << id));
  }

 private:
  uint8_t jk_ids_[static_cast<size_t>(HardEvent::MAX) + 1] = {};
};

inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(jk::eng().tpipe()); }

}  // namespace AscendC
