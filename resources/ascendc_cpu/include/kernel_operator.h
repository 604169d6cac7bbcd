// Clean-room Ascend C CPU library: the umbrella header a kernel includes.
// Our own implementation of documented Ascend C behaviour (hiascend.com API reference); no vendor code.
#pragma once

#include "jk_ascendc/types.h"
#include "jk_ascendc/engine.h"
#include "jk_ascendc/tensor.h"
#include "jk_ascendc/queue.h"
#include "jk_ascendc/sync.h"
#include "jk_ascendc/datacopy.h"

// Op headers written by other parts; included once they exist.
#if __has_include("jk_ascendc/repeat.h")
#include "jk_ascendc/repeat.h"
#endif
#if __has_include("jk_ascendc/vector.h")
#include "jk_ascendc/vector.h"
#endif
#if __has_include("jk_ascendc/cast.h")
#include "jk_ascendc/cast.h"
#endif
#if __has_include("jk_ascendc/reduce.h")
#include "jk_ascendc/reduce.h"
#endif
#if __has_include("jk_ascendc/unsupported.h")
#include "jk_ascendc/unsupported.h"
#endif
#if __has_include("jk_ascendc/tiling_kernel.h")
#include "jk_ascendc/tiling_kernel.h"
#endif
