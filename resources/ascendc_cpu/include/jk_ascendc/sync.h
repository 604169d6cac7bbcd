// Clean-room Ascend C CPU library: pipe synchronisation and core identity.
#pragma once

#include <cstdint>

#include "jk_ascendc/engine.h"
#include "jk_ascendc/types.h"

namespace AscendC {

namespace jk_detail {

// HardEvent SRC_DST -> the two pipes. FIX has no pipe in this model.
inline bool event_pipes(HardEvent e, jk::Pipe& src, jk::Pipe& dst) {
  using jk::Pipe;
  switch (e) {
    case HardEvent::MTE2_V: src = Pipe::MTE2; dst = Pipe::V; return true;
    case HardEvent::V_MTE2: src = Pipe::V; dst = Pipe::MTE2; return true;
    case HardEvent::MTE3_V: src = Pipe::MTE3; dst = Pipe::V; return true;
    case HardEvent::V_MTE3: src = Pipe::V; dst = Pipe::MTE3; return true;
    case HardEvent::MTE2_S: src = Pipe::MTE2; dst = Pipe::S; return true;
    case HardEvent::S_MTE2: src = Pipe::S; dst = Pipe::MTE2; return true;
    case HardEvent::V_S: src = Pipe::V; dst = Pipe::S; return true;
    case HardEvent::S_V: src = Pipe::S; dst = Pipe::V; return true;
    case HardEvent::MTE3_S: src = Pipe::MTE3; dst = Pipe::S; return true;
    case HardEvent::S_MTE3: src = Pipe::S; dst = Pipe::MTE3; return true;
    case HardEvent::MTE2_MTE3: src = Pipe::MTE2; dst = Pipe::MTE3; return true;
    case HardEvent::MTE3_MTE2: src = Pipe::MTE3; dst = Pipe::MTE2; return true;
    case HardEvent::V_V: src = Pipe::V; dst = Pipe::V; return true;
    case HardEvent::MTE2_MTE1: src = Pipe::MTE2; dst = Pipe::MTE1; return true;
    case HardEvent::MTE1_MTE2: src = Pipe::MTE1; dst = Pipe::MTE2; return true;
    case HardEvent::MTE1_M: src = Pipe::MTE1; dst = Pipe::M; return true;
    case HardEvent::M_MTE1: src = Pipe::M; dst = Pipe::MTE1; return true;
    case HardEvent::M_V: src = Pipe::M; dst = Pipe::V; return true;
    case HardEvent::V_M: src = Pipe::V; dst = Pipe::M; return true;
    case HardEvent::MTE3_MTE1: src = Pipe::MTE3; dst = Pipe::MTE1; return true;
    case HardEvent::MTE1_MTE3: src = Pipe::MTE1; dst = Pipe::MTE3; return true;
    case HardEvent::MTE1_V: src = Pipe::MTE1; dst = Pipe::V; return true;
    case HardEvent::MTE2_M: src = Pipe::MTE2; dst = Pipe::M; return true;
    case HardEvent::M_MTE2: src = Pipe::M; dst = Pipe::MTE2; return true;
    case HardEvent::V_MTE1: src = Pipe::V; dst = Pipe::MTE1; return true;
    case HardEvent::M_S: src = Pipe::M; dst = Pipe::S; return true;
    default: return false;
  }
}

// Non-template (JK_ENGINE_FN): compiled once into the harness under JK_ENGINE_EXTERN.
JK_ENGINE_FN void event_or_misuse(HardEvent e, jk::Pipe& src, jk::Pipe& dst, jk::Site site)
#if JK_ENGINE_DEFS
{
  if (!event_pipes(e, src, dst))
    jk::misuse("unsupported_argument", site,
               "HardEvent " + std::to_string(static_cast<int>(e)) +
                   " involves the FIX pipe, which this model does not have");
}
#else
;
#endif

}  // namespace jk_detail

// SetFlag<SRC_DST>(id): SRC signals once everything it was given so far is done; WaitFlag makes
// DST wait for that signal (atlasascendc_api_07_0270 "SetFlag/WaitFlag": event ids 0-7 on Atlas A2,
// pairs required; a WaitFlag nobody set waits forever).
template <HardEvent E>
inline void SetFlag(int32_t eventID, jk::Site site = jk::here()) {
  jk::Pipe src, dst;
  jk_detail::event_or_misuse(E, src, dst, site);
  jk::eng().set_flag(src, dst, eventID, site);
}
template <HardEvent E>
inline void WaitFlag(int32_t eventID, jk::Site site = jk::here()) {
  jk::Pipe src, dst;
  jk_detail::event_or_misuse(E, src, dst, site);
  jk::eng().wait_flag(src, dst, eventID, site);
}

// PipeBarrier<PIPE_X>() (atlasascendc_api_07_0271): PIPE_ALL waits for every pipe; a single pipe
// only for itself (pipes run in order in this model, so that costs cycles and orders nothing new;
// the docs say the compiler's auto-sync inserts PIPE_V barriers anyway). PipeBarrier<PIPE_S> is a
// hardware error per the same page.
template <pipe_t P>
inline void PipeBarrier(jk::Site site = jk::here()) {
  auto& e = jk::eng();
  switch (P) {
    case PIPE_ALL: e.barrier_all(site); break;
    case PIPE_S:
      jk::misuse("unsupported_argument", site,
                 "PipeBarrier<PIPE_S>: scalar ordering is automatic and this call is a hardware "
                 "error on the device");
    case PIPE_V: e.barrier_pipe(jk::Pipe::V, site); break;
    case PIPE_MTE2: e.barrier_pipe(jk::Pipe::MTE2, site); break;
    case PIPE_MTE3: e.barrier_pipe(jk::Pipe::MTE3, site); break;
    case PIPE_MTE1: e.barrier_pipe(jk::Pipe::MTE1, site); break;
    case PIPE_M: e.barrier_pipe(jk::Pipe::M, site); break;
    default:
      jk::misuse("unsupported_argument", site, "PipeBarrier on a pipe this model does not have");
  }
}

// This core's index and the number of cores launched (GetBlockIdx / GetBlockNum).
inline int64_t GetBlockIdx() { return static_cast<int64_t>(jk::eng().block_idx()); }
inline int64_t GetBlockNum() { return static_cast<int64_t>(jk::eng().block_num()); }

// Synchronises all cores (SyncAll, hard-sync form, atlasascendc_api_07_0204): a full barrier
// here and a new phase for cross-core GM ordering. The harness runs the blocks side by side
// (jk::run_blocks), so every core waits here for the others and then sees what they wrote
// before the barrier. The soft-sync form (gmWorkspace, ubWorkspace) is not provided.
template <bool isAIVOnly = true>
inline void SyncAll(jk::Site site = jk::here()) {
  jk::eng().sync_all(site);
}

// The user part of the workspace (GetUserWorkspace): the harness may reserve a system part first.
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
  return workspace + jk::eng().sys_workspace_bytes;
}

}  // namespace AscendC

// The older free-function spellings.
inline void pipe_barrier(pipe_t p, jk::Site site = jk::here()) {
  switch (p) {
    case PIPE_ALL: AscendC::PipeBarrier<PIPE_ALL>(site); break;
    case PIPE_V: AscendC::PipeBarrier<PIPE_V>(site); break;
    case PIPE_S: AscendC::PipeBarrier<PIPE_S>(site); break;
    case PIPE_MTE2: AscendC::PipeBarrier<PIPE_MTE2>(site); break;
    case PIPE_MTE3: AscendC::PipeBarrier<PIPE_MTE3>(site); break;
    default: AscendC::PipeBarrier<PIPE_FIX>(site);
  }
}
