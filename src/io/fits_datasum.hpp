// The FITS DATASUM of values about to be written, summed from memory: the 32-bit ones'
// complement sum of the data unit's big-endian words (the FITS checksum convention, as
// CFITSIO's ffcsum computes it). The sum needs the words' values, not their byte order, so
// no byte is swapped; the zero fill of the last 2880-byte block adds nothing. FitsWriter sums
// its images this way instead of reading them back from the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kspecter::io {

/// Ones' complement sum, in FITS's form, of the 32-bit words of `n` values of T (4 or 8 bytes:
/// a double is its two words), each 4-byte word xor-ed with `flip` first: 0x80000000 for
/// unsigned 32-bit values, which FITS stores as signed with BZERO = 2^31.
template <class T>
unsigned long fits_datasum(T const* values, std::size_t n, std::uint32_t flip = 0) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values only");
  static_assert(std::is_trivially_copyable_v<T>);
  // The 16-bit halves are summed apart and their carries folded back at the end: with 64-bit
  // accumulators nothing overflows below 2^47 words, and ones' complement sums may be folded
  // in any order.
  std::uint64_t hi = 0, lo = 0;
  auto add = [&](std::uint32_t w) {
    hi += w >> 16;
    lo += w & 0xFFFFu;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (sizeof(T) == 4) {
      std::uint32_t w;
      std::memcpy(&w, values + i, 4);
      add(w ^ flip);
    } else {
      std::uint64_t w;
      std::memcpy(&w, values + i, 8);
      add(static_cast<std::uint32_t>(w >> 32));
      add(static_cast<std::uint32_t>(w));
    }
  }
  while ((hi >> 16) != 0 || (lo >> 16) != 0) {
    std::uint64_t const hicarry = hi >> 16, locarry = lo >> 16;
    hi = (hi & 0xFFFFu) + locarry;
    lo = (lo & 0xFFFFu) + hicarry;
  }
  return static_cast<unsigned long>((hi << 16) + lo);
}

/// `sum` with the 32-bit words of `n` bytes (a multiple of 4, in FITS's big-endian order)
/// added in ones' complement, as CFITSIO's ffcsum adds a header's words to its data's sum.
inline unsigned long fits_sum_bytes(unsigned long sum, unsigned char const* bytes, std::size_t n) {
  std::uint64_t hi = (sum >> 16) & 0xFFFFu, lo = sum & 0xFFFFu;
  for (std::size_t i = 0; i + 4 <= n; i += 4) {
    unsigned char const* b = bytes + i;
    hi += std::uint32_t(b[0]) << 8 | b[1];
    lo += std::uint32_t(b[2]) << 8 | b[3];
  }
  while ((hi >> 16) != 0 || (lo >> 16) != 0) {
    std::uint64_t const hicarry = hi >> 16, locarry = lo >> 16;
    hi = (hi & 0xFFFFu) + locarry;
    lo = (lo & 0xFFFFu) + hicarry;
  }
  return static_cast<unsigned long>((hi << 16) + lo);
}

/// The DATASUM of `n` bytes (a multiple of 4) already in FITS's big-endian order.
inline unsigned long fits_datasum_bytes(char const* bytes, std::size_t n) {
  return fits_sum_bytes(0, reinterpret_cast<unsigned char const*>(bytes), n);
}

}  // namespace kspecter::io
