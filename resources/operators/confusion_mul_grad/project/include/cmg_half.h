/*
 * IEEE 754 binary16 <-> binary32 conversion helpers (fixed: do not edit).
 *
 * Pure integer/float arithmetic, no library calls, so kernels stay within the symbol allow-list.
 * cmg_float_to_half rounds to nearest, ties to even, with subnormals, overflow to infinity and
 * NaN preserved as a quiet NaN, which is how the golden reference rounds float16 outputs.
 */
#ifndef CMG_HALF_H
#define CMG_HALF_H

#include <stdint.h>

#include "cmg_abi.h"

static inline uint32_t cmg_float_bits(float f) {
    union {
        float f;
        uint32_t u;
    } v;
    v.f = f;
    return v.u;
}

static inline float cmg_bits_float(uint32_t u) {
    union {
        float f;
        uint32_t u;
    } v;
    v.u = u;
    return v.f;
}

/* Exact: every binary16 value is representable in binary32. */
static inline float cmg_half_to_float(cmg_half h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t man = (uint32_t)h & 0x3ffu;
    if (exp == 0x1fu) {
        return cmg_bits_float(sign | 0x7f800000u | (man << 13));
    }
    if (exp != 0) {
        return cmg_bits_float(sign | ((exp + 112u) << 23) | (man << 13));
    }
    /* zero or subnormal: man * 2^-24, exact in binary32 */
    return cmg_bits_float(sign | cmg_float_bits((float)man * 5.9604644775390625e-08f));
}

/* Round to nearest even (F. Giesen's float_to_half_fast3_rtne). */
static inline cmg_half cmg_float_to_half(float f) {
    const uint32_t f32_infinity = 255u << 23;
    const uint32_t f16_overflow = (127u + 16u) << 23; /* 65536.0f: rounds to infinity */
    const uint32_t denorm_magic_bits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t u = cmg_float_bits(f);
    uint32_t sign = u & 0x80000000u;
    uint32_t out;
    u ^= sign;
    if (u >= f16_overflow) {
        out = (u > f32_infinity) ? 0x7e00u : 0x7c00u;
    } else if (u < (113u << 23)) {
        /* subnormal or zero: let the FPU round the mantissa into place */
        float shifted = cmg_bits_float(u) + cmg_bits_float(denorm_magic_bits);
        out = cmg_float_bits(shifted) - denorm_magic_bits;
    } else {
        uint32_t mant_odd = (u >> 13) & 1u;
        u += ((uint32_t)(15 - 127) << 23) + 0xfffu;
        u += mant_odd;
        out = u >> 13;
    }
    return (cmg_half)(out | (sign >> 16));
}

#endif /* CMG_HALF_H */
