// KSPECTER_UNROLL: fully unroll the next loop (constant trip count) in device code, so that
// the small per-thread arrays it indexes stay in registers instead of local memory.
#pragma once

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define KSPECTER_UNROLL _Pragma("unroll")
#else
#define KSPECTER_UNROLL
#endif
