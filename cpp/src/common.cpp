#include "ditimpute/common.hpp"

#include <algorithm>

namespace ditimpute {

void fill_standard_normal(Rng& rng, double* out, std::size_t n) {
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) out[i] = normal(rng);
}

Mask::Mask(int H_, int d_, bool all_observed) : H(H_), d(d_) {
  if (H_ < 1) throw input_error("H", "H must be at least 1, not " + std::to_string(H_) + ".");
  if (d_ < 1) throw input_error("d", "d must be at least 1, not " + std::to_string(d_) + ".");
  observed.assign(static_cast<std::size_t>(H_) * d_, all_observed ? 1 : 0);
}

Mask Mask::from_missing_frames(int H, int d, const std::vector<int>& missing_frames) {
  Mask m(H, d, true);
  for (int h : missing_frames) {
    if (h < 0 || h >= H)
      throw input_error("missing", "frame index " + std::to_string(h + 1) + " is outside 1.." +
                                       std::to_string(H) + ".");
    if (!m.is_observed(h, 0))
      throw input_error("missing", "frame index " + std::to_string(h + 1) + " is given twice.");
    std::fill_n(m.observed.begin() + static_cast<std::ptrdiff_t>(h) * d, d, std::uint8_t{0});
  }
  return m;
}

bool Mask::frame_level() const {
  for (int h = 0; h < H; ++h)
    for (int j = 1; j < d; ++j)
      if (is_observed(h, j) != is_observed(h, 0)) return false;
  return true;
}

std::vector<int> Mask::missing_frames() const {
  std::vector<int> out;
  for (int h = 0; h < H; ++h)
    if (!is_observed(h, 0)) out.push_back(h);
  return out;
}

std::vector<int> Mask::observed_frames() const {
  std::vector<int> out;
  for (int h = 0; h < H; ++h)
    if (is_observed(h, 0)) out.push_back(h);
  return out;
}

std::vector<int> Mask::missing_entries() const {
  std::vector<int> out;
  for (std::size_t k = 0; k < observed.size(); ++k)
    if (!observed[k]) out.push_back(static_cast<int>(k));
  return out;
}

std::vector<int> Mask::observed_entries() const {
  std::vector<int> out;
  for (std::size_t k = 0; k < observed.size(); ++k)
    if (observed[k]) out.push_back(static_cast<int>(k));
  return out;
}

int Mask::n_missing() const {
  return static_cast<int>(std::count(observed.begin(), observed.end(), std::uint8_t{0}));
}

void Mask::require_proper(const std::string& arg) const {
  const int miss = n_missing();
  if (miss == 0) throw input_error(arg, "the pattern has no missing value: there is nothing to impute.");
  if (miss == static_cast<int>(observed.size()))
    throw input_error(arg, "the pattern has no observed value: every entry is missing.");
}

}  // namespace ditimpute
