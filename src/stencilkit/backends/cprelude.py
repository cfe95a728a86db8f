"""The C++ runtime header every generated C++ and CUDA program starts with, and the index type."""

from __future__ import annotations


def index_typedef(narrow: bool) -> str:
    """The C type of index arithmetic (``sk_idx``): 32-bit where every index of the call fits
    (cheaper address arithmetic on a GPU), else 64-bit. The argument block stays 64-bit."""
    return f"typedef {'int32_t' if narrow else 'int64_t'} sk_idx;"


PRELUDE = r"""
#if defined(__CUDACC_RTC__)
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#include <cstring>
#include <cmath>
#endif
#ifndef SK_FN
#define SK_FN static inline
#endif
template <class T> struct sk_is_float { static constexpr bool value = false; };
template <> struct sk_is_float<float> { static constexpr bool value = true; };
template <> struct sk_is_float<double> { static constexpr bool value = true; };
template <class T> struct sk_limits;
#define SK_LIMITS(T, LO, HI) \
  template <> struct sk_limits<T> { static constexpr T lo = LO; static constexpr T hi = HI; };
SK_LIMITS(double, -1.7976931348623157e308, 1.7976931348623157e308)
SK_LIMITS(float, -3.4028234663852886e38f, 3.4028234663852886e38f)
SK_LIMITS(int8_t, -128, 127) SK_LIMITS(int16_t, -32768, 32767)
SK_LIMITS(int32_t, -2147483647 - 1, 2147483647) SK_LIMITS(int64_t, -9223372036854775807LL - 1, 9223372036854775807LL)
SK_LIMITS(uint8_t, 0, 255) SK_LIMITS(uint16_t, 0, 65535) SK_LIMITS(uint32_t, 0, 4294967295u)
SK_LIMITS(uint64_t, 0, 18446744073709551615ull) SK_LIMITS(bool, false, true)
// A read whose position is data (as_offset): an index outside the field's range [lo, hi) reads
// at lo instead (never outside the allocation) and records which read it was and the index in
// err[0], err[1] (a word the caller owns and checks; null while the tune stage times kernels).
template <class I> SK_FN I sk_guard(I i, int64_t lo, int64_t hi, volatile int64_t* err, int64_t code) {
  if (__builtin_expect(i < lo || i >= hi, 0)) {
    if (err) { err[1] = (int64_t)i; err[0] = code; }
    return (I)lo;
  }
  return i;
}
template <class T> SK_FN T sk_floordiv(T a, T b) {
  if constexpr (sk_is_float<T>::value) { return floor(a / b); }
  else {
    // Integer division by zero gives 0 (NumPy's result), and the one overflowing quotient
    // INT_MIN // -1 wraps to INT_MIN as in NumPy: never a SIGFPE.
    if (b == T(0)) return T(0);
    if (T(-1) < T(0) && b == T(-1)) return (T)(0ULL - (unsigned long long)a);
    T q = a / b; return (q * b != a && ((a < T(0)) != (b < T(0)))) ? q - 1 : q; }
}
template <class T> SK_FN T sk_mod(T a, T b) {
  if constexpr (sk_is_float<T>::value) {  // NumPy's steps: a zero takes the divisor's sign
    T r = fmod(a, b); return r == T(0) ? copysign(T(0), b) : ((r < T(0)) != (b < T(0))) ? r + b : r; }
  else {
    if (b == T(0) || (T(-1) < T(0) && b == T(-1))) return T(0);
    T r = a % b; return (r != 0 && ((r < T(0)) != (b < T(0)))) ? r + b : r; }
}
// NaN propagates through minimum/maximum/min_over/max_over, as in NumPy: a + b is NaN then.
template <class T> SK_FN T sk_min(T a, T b) {
  if constexpr (sk_is_float<T>::value) { if (a != a || b != b) return a + b; }
  return b < a ? b : a;
}
template <class T> SK_FN T sk_max(T a, T b) {
  if constexpr (sk_is_float<T>::value) { if (a != a || b != b) return a + b; }
  return a < b ? b : a;
}
template <class T> SK_FN T sk_abs(T a) { return a < T(0) ? -a : a; }
template <class T> SK_FN T sk_pow(T a, T b) {
  if constexpr (sk_is_float<T>::value) { return pow(a, b); }
  else { T r = 1; while (b > 0) { if (b & 1) r *= a; a *= a; b >>= 1; } return r; }
}
SK_FN double sk_slot_double(int64_t v) {
#if defined(__CUDACC__)
  return __longlong_as_double(v);
#else
  double d; memcpy(&d, &v, 8); return d;
#endif
}
template <class T> SK_FN T sk_from_slot(int64_t v) {
  if constexpr (sk_is_float<T>::value) { return (T)sk_slot_double(v); }
  else { return (T)v; }
}
"""
