// Clean-room Ascend C CPU library: the definitions of the engine's non-template functions.
//
// Why a file of its own: these ~35 functions are the same for every kernel, and compiled into
// each kernel object they cost most of its optimisation and code generation. engine.h includes
// this file (inline definitions, header-only) unless JK_ENGINE_EXTERN is defined; the toolchain
// defines it for team code and compiles the definitions once, into the trusted harness object
// (harness_main.cpp defines JK_ENGINE_IMPL: the same definitions, not inline).
#pragma once

#include "jk_ascendc/engine.h"

namespace jk {

JK_ENGINE_FN VectorCost Engine::vector_cost(const char* op, uint32_t dtype_bytes) const {
  if (soc_.vector_cost) return soc_.vector_cost(op, dtype_bytes);
  return VectorCost{8, 1};
}

JK_ENGINE_FN void Engine::begin_core(uint32_t block_idx, uint32_t block_num) {
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

JK_ENGINE_FN void Engine::end_core() {
  if (!in_core_) return;
  cur_.makespan = now_max();
  cores_.push_back(cur_);
  in_core_ = false;
}

JK_ENGINE_FN uint64_t Engine::issue(Pipe pipe, const char* op, uint64_t cycles, Site site) {
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

JK_ENGINE_FN void Engine::scalar_op(Site site) {
  require_core(site);
  scalar_tick(site);
}

JK_ENGINE_FN Snapshot Engine::snapshot(Pipe src, Site site) const {
  Snapshot s;
  const int p = static_cast<int>(src);
  s.vc = vc_[p];
  s.vc.join(vc_[0]);
  s.time = std::max(free_[p], s_time_);
  s.site = site;
  return s;
}

JK_ENGINE_FN void Engine::wait_on(Pipe dst, const Snapshot& s) {
  const int p = static_cast<int>(dst);
  vc_[p].join(s.vc);
  if (dst == Pipe::S) {
    s_time_ = std::max(s_time_, s.time);
    free_[0] = std::max(free_[0], s_time_);
  } else {
    free_[p] = std::max(free_[p], s.time);
  }
}

JK_ENGINE_FN void Engine::set_flag(Pipe src, Pipe dst, int32_t id, Site site) {
  require_core(site);
  check_event_id(id, site);
  scalar_tick(site);
  Snapshot s = snapshot(src, site);
  s.time += soc_.flag_cycles;
  flags_[flag_key(src, dst, id)].push_back(s);
}

JK_ENGINE_FN void Engine::wait_flag(Pipe src, Pipe dst, int32_t id, Site site) {
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

JK_ENGINE_FN void Engine::barrier_all(Site site) {
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

JK_ENGINE_FN void Engine::barrier_pipe(Pipe p, Site site) {
  require_core(site);
  scalar_tick(site);
  const int i = static_cast<int>(p);
  free_[i] = std::max(free_[i], s_time_) + soc_.barrier_cycles;
}

JK_ENGINE_FN void Engine::sync_all(Site site) {
  barrier_all(site);
  ++epoch_;
  if (barrier_hook_) barrier_hook_(barrier_ctx_, site);
}

JK_ENGINE_FN uint32_t Engine::ub_alloc(uint32_t bytes, Site site, const char* what) {
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

JK_ENGINE_FN void Engine::ub_reset_allocation() {
  ub_top_ = 0;
  for (auto& s : slots_) {
    s.state = kDead;
    ++s.gen;
  }
  queues_.clear();
}

JK_ENGINE_FN uint64_t Engine::gm_register(const char* name, uint8_t* real, uint64_t bytes, bool writable) {
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

JK_ENGINE_FN uint8_t* Engine::gm_real(uint64_t fake, uint64_t bytes, Site site) {
  GmBuffer& b = gm_checked(fake, bytes, site);
  return b.real + (fake - b.fake);
}

JK_ENGINE_FN uint64_t Engine::total_cycles() const {
  uint64_t t = 0;
  for (const auto& c : cores_) t = std::max(t, c.makespan);
  return t;
}

JK_ENGINE_FN int Engine::slowest_core() const {
  int best = -1;
  for (size_t i = 0; i < cores_.size(); ++i)
    if (best < 0 || cores_[i].makespan > cores_[static_cast<size_t>(best)].makespan)
      best = static_cast<int>(i);
  return best;
}

JK_ENGINE_FN Pipe Engine::bound_pipe() const {
  const int c = slowest_core();
  if (c < 0) return Pipe::S;
  int best = 0;
  for (int i = 1; i < kPipes; ++i)
    if (cores_[static_cast<size_t>(c)].pipes[i].busy > cores_[static_cast<size_t>(c)].pipes[best].busy)
      best = i;
  return static_cast<Pipe>(best);
}

JK_ENGINE_FN uint64_t Engine::now_max() const {
  uint64_t t = s_time_;
  for (int i = 0; i < kPipes; ++i) t = std::max(t, free_[i]);
  return t;
}

JK_ENGINE_FN void Engine::record_misuse(const MisuseRecord& r) {
  if (has_misuse_) return;
  first_ = r;
  has_misuse_ = true;
}

JK_ENGINE_FN void Engine::swap_core(CoreState& c) {
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

JK_ENGINE_FN void Engine::require_core(Site site) const {
  if (!in_core_) misuse("unsupported_argument", site, "kernel API called outside a running core");
}

JK_ENGINE_FN void Engine::scalar_tick(Site site) {
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

JK_ENGINE_FN void Engine::check_event_id(int32_t id, Site site) const {
  if (id < 0 || id >= 8)
    misuse("unsupported_argument", site,
           "event id " + std::to_string(id) + " outside 0..7 (use TPipe::FetchEventID)");
}

JK_ENGINE_FN void Engine::add_op(const char* op, Pipe pipe, uint64_t cycles) {
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

JK_ENGINE_FN Engine::Instr Engine::instr(Pipe p, uint32_t id) const {
  const auto& v = sites_[static_cast<int>(p)];
  if (id == 0 || id > v.size()) return Instr{Site{"?", 0}, "?"};
  return v[id - 1];
}

JK_ENGINE_FN void Engine::hazard(const char* space, uint64_t at, bool write, Pipe other,
                         uint32_t other_id, bool other_write, Site site) const {
  const Instr mine = instr(cur_pipe_, cur_id_), theirs = instr(other, other_id);
  misuse("pipeline_hazard", site,
         std::string(pipe_name(cur_pipe_)) + " (" + mine.op + ")" +
             (write ? " writes " : " reads ") + space + " byte " + std::to_string(at) +
             " that " + pipe_name(other) + " (" + theirs.op + ")" +
             (other_write ? " wrote" : " read") + " at " + site_str(theirs.site) +
             " with no EnQue/DeQue, SetFlag/WaitFlag or PipeBarrier<PIPE_ALL> ordering them");
}

JK_ENGINE_FN void Engine::ub_access(uint32_t offset, uint32_t bytes, bool write, Site site) {
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

JK_ENGINE_FN int Engine::find_gm(uint64_t fake) const {
  for (size_t i = 0; i < gm_.size(); ++i)
    if (fake >= gm_[i].fake && fake < gm_[i].fake + std::max<uint64_t>(gm_[i].bytes, 1))
      return static_cast<int>(i);
  return -1;
}

JK_ENGINE_FN Engine::GmBuffer& Engine::gm_checked(uint64_t fake, uint64_t bytes, Site site) {
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

JK_ENGINE_FN void Engine::gm_access(uint64_t fake, uint64_t bytes, bool write, Site site) {
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

JK_ENGINE_FN void Engine::cross_core(const GmBuffer& b, const GmShadow& s, uint64_t at, uint32_t mask, bool write,
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
                 "the cores run side by side (jk::run_blocks), not one after another");
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
                 "the cores run side by side (jk::run_blocks), not one after another");
  }
}

JK_ENGINE_FN void misuse(const char* check, Site site, const std::string& message) {
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
