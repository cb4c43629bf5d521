#pragma once
// Histogram: a log-linear latency histogram (after HdrHistogram) with 64 sub-buckets per power of two,
// so every recorded value is kept within 1.6 % and recording is a shift and an increment, no allocation.
// Values are nanoseconds; anything up to 2^40 ns (18 minutes) fits.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace opcuad::bench {

class Histogram {
 public:
  void record(uint64_t v) noexcept {
    v = std::min<uint64_t>(v, kMaxValue);
    ++counts_[index_of(v)];
    ++count_;
    max_ = std::max(max_, v);
  }
  void merge(const Histogram& o) noexcept {
    for (size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    max_ = std::max(max_, o.max_);
  }
  uint64_t count() const noexcept { return count_; }
  uint64_t max() const noexcept { return max_; }
  // The value at quantile q (0..1): the middle of the bucket holding it, never above the maximum seen.
  uint64_t quantile(double q) const noexcept {
    if (count_ == 0) return 0;
    auto rank = static_cast<uint64_t>(q * static_cast<double>(count_ - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(middle_of(i), max_);
    }
    return max_;
  }

 private:
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 40) - 1;
  // Values below 128 have a bucket each; above, bucket = shift * 64 + (v >> shift) with v >> shift in
  // [64, 127], which continues the numbering without a gap.
  static constexpr size_t kBuckets = 34 * 64 + 128;

  static size_t index_of(uint64_t v) noexcept {
    if (v < 128) return static_cast<size_t>(v);
    const unsigned shift = static_cast<unsigned>(std::bit_width(v)) - 7;
    return shift * 64 + static_cast<size_t>(v >> shift);
  }
  static uint64_t middle_of(size_t i) noexcept {
    if (i < 128) return i;
    const size_t shift = i / 64 - 1;
    const uint64_t m = i % 64 + 64;
    return (m << shift) + ((uint64_t{1} << shift) >> 1);
  }

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

// The median of a set of samples (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace opcuad::bench
