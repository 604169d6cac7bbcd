// Clean-room Ascend C CPU library: basic types, enums and macros.
// Written from the public Ascend C API reference (hiascend.com, atlasascendc_api_07_*); no vendor code.
#pragma once

#include <cstdint>

// Kernel qualifiers have no meaning on a CPU: the kernel is an ordinary function.
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif
// GM_ADDR is a byte pointer to global memory (the harness passes FAKE, unmapped addresses).
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif

// half: IEEE binary16 with round-to-nearest-even conversions (g++ 12 _Float16).
using half = _Float16;

// Hardware pipes as the CCE names them (PipeBarrier<PIPE_V>() and friends).
enum pipe_t : int32_t {
  PIPE_S = 0,
  PIPE_V,
  PIPE_M,
  PIPE_MTE1,
  PIPE_MTE2,
  PIPE_MTE3,
  PIPE_ALL,
  PIPE_FIX,
};

// Hardware event ids (SetFlag/WaitFlag take an id, usually from TPipe::FetchEventID).
enum event_t : int32_t {
  EVENT_ID0 = 0,
  EVENT_ID1,
  EVENT_ID2,
  EVENT_ID3,
  EVENT_ID4,
  EVENT_ID5,
  EVENT_ID6,
  EVENT_ID7,
};

namespace AscendC {

// Logical buffer positions (TPosition, atlasascendc_api_07_0110 "TPosition"); QuePosition is the
// same enumeration.
enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  C2PIPE2GM,
  C2PIPE2LOCAL,
  MAX,
};
using QuePosition = TPosition;

// Synchronisation events between pipes: SRC_DST (SetFlag/WaitFlag, atlasascendc_api_07_0270).
enum class HardEvent : uint8_t {
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  M_FIX,
  FIX_M,
  MTE3_MTE2,
  MTE2_MTE3,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE2_FIX,
  FIX_MTE2,
  FIX_S,
  M_S,
  FIX_MTE3,
  MAX,
};

using TEventID = int8_t;

// Cast rounding modes (Cast, atlasascendc_api_07_0073): CAST_NONE rounds half to even when
// precision is lost, CAST_RINT half to even, CAST_ROUND half away from zero, CAST_ODD von Neumann.
enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
};

constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t MAX_REPEAT_TIMES = 255;

// Address strides of a binary vector instruction (atlasascendc_api_07_0013): block strides in
// 32-byte blocks within one repeat (default 1), repeat strides in blocks between repeats
// (default 8). blockNumber, repeatStrideMode and strideSizeMode are reserved.
struct BinaryRepeatParams {
  BinaryRepeatParams() {}
  BinaryRepeatParams(uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep,
                     uint8_t src0Rep, uint8_t src1Rep)
      : dstBlkStride(dstBlk),
        src0BlkStride(src0Blk),
        src1BlkStride(src1Blk),
        dstRepStride(dstRep),
        src0RepStride(src0Rep),
        src1RepStride(src1Rep) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

// Address strides of a unary vector instruction (atlasascendc_api_07_0012), same units.
struct UnaryRepeatParams {
  UnaryRepeatParams() {}
  UnaryRepeatParams(uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep)
      : dstBlkStride(dstBlk), srcBlkStride(srcBlk), dstRepStride(dstRep), srcRepStride(srcRep) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

}  // namespace AscendC
