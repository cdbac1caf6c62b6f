#include "llmc/runtime/sampler.h"

namespace llmc::sample {
namespace {

constexpr uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

} // namespace

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256** must not start from the all-zero state; splitmix64 spreads any
// seed (0 included) over all four words, as Vigna recommends.
Rng::Rng(uint64_t seed) {
  for (uint64_t &word : s_)
    word = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

// The top 53 bits are the best ones of xoshiro256** and fill a double's
// mantissa exactly, so every value is a multiple of 2^-53 below 1.
double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

} // namespace llmc::sample
