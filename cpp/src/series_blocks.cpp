// Whole-series imputation by a window imputer (series_blocks.hpp): one loop
// over overlapping windows, every sample path of a window in one batch.
#include "ditimpute/series_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace ditimpute {

void SeriesBlockOptions::validate(int n_time) const {
  if (H < 2) throw input_error("H", "a window needs at least 2 frames, not " + std::to_string(H) + ".");
  if (H > n_time)
    throw input_error("H", "the window (H = " + std::to_string(H) + ") is longer than the series (" +
                               std::to_string(n_time) + " frames).");
  if (past < -1) throw input_error("past", "past must be at least 0 (or -1 for H / 4), not " + std::to_string(past) + ".");
  if (future < -1)
    throw input_error("future", "future must be at least 0 (or -1 for H / 4), not " + std::to_string(future) + ".");
  const int p = past < 0 ? H / 4 : past, f = future < 0 ? H / 4 : future;
  if (p + f >= H)
    throw input_error("future", "past + future (" + std::to_string(p + f) + ") must be less than H (" +
                                    std::to_string(H) + "), leaving a block to draw.");
  if (n_samples < 1) throw input_error("n_samples", "at least one sample path is needed.");
}

SeriesPaths sample_series_paths(const CaseSampler& sampler, const RowMatrix& y, const SeriesBlockOptions& options) {
  const int T = static_cast<int>(y.rows());
  const int d = static_cast<int>(y.cols());
  if (T < 1 || d < 1) throw input_error("x", "the series is empty.");
  options.validate(T);
  for (Eigen::Index k = 0; k < y.size(); ++k)
    if (std::isinf(y.data()[k])) throw input_error("x", "the series holds an infinite value.");
  const int H = options.H;
  const int Z = options.n_samples;
  SeriesPaths out;
  out.past = options.past < 0 ? H / 4 : options.past;
  out.future = options.future < 0 ? H / 4 : options.future;
  out.block = H - out.past - out.future;

  // paths: Z copies of the series, NaN where a path holds no value yet.
  Batch paths(Z, T, d);
  for (int z = 0; z < Z; ++z) std::copy(y.data(), y.data() + y.size(), paths.seq(z));
  const auto missing_at = [&](std::size_t e) { return std::isnan(y.data()[e]); };

  const std::size_t W = static_cast<std::size_t>(H) * d;
  for (int b0 = 0, k = 0; b0 < T; b0 += out.block, ++k) {
    const int b1 = std::min(T, b0 + out.block);  // block [b0, b1)
    const std::size_t lo = static_cast<std::size_t>(b0) * d, hi = static_cast<std::size_t>(b1) * d;
    bool any_missing = false;
    for (std::size_t e = lo; e < hi && !any_missing; ++e) any_missing = missing_at(e);
    if (!any_missing) continue;
    const int s = std::max(0, std::min(b0 - out.past, T - H));  // the window [s, s + H) holds the block
    const std::size_t off = static_cast<std::size_t>(s) * d;
    const double* held = paths.seq(0) + off;  // every path holds the same entries
    if (std::all_of(held, held + W, [](double v) { return std::isnan(v); }))
      throw input_error("x", "frames " + std::to_string(s + 1) + "-" + std::to_string(s + H) +
                                 " hold no observed value: use a longer window (H) or the GP.");
    Batch cases(Z, H, d);
    for (int z = 0; z < Z; ++z) std::copy(paths.seq(z) + off, paths.seq(z) + off + W, cases.seq(z));
    const std::vector<Mask> masks = masks_from_nan(cases, "x");
    const std::vector<Matrix> draws =
        sampler.draw(cases, masks, 1, case_seed(options.seed, static_cast<std::uint64_t>(k)), options.threads);
    const std::vector<int> miss = masks.front().missing_entries();  // every path shares the window's pattern
    for (int z = 0; z < Z; ++z) {
      double* p = paths.seq(z) + off;
      for (std::size_t a = 0; a < miss.size(); ++a) {
        const std::size_t e = off + static_cast<std::size_t>(miss[a]);
        if (e >= lo && e < hi) p[miss[a]] = draws[static_cast<std::size_t>(z)](0, static_cast<Eigen::Index>(a));
      }
    }
    out.starts.push_back(s);
  }

  std::vector<Eigen::Index> missing;
  for (Eigen::Index k = 0; k < y.size(); ++k)
    if (std::isnan(y.data()[k])) missing.push_back(k);
  out.samples.resize(Z, static_cast<Eigen::Index>(missing.size()));
  for (int z = 0; z < Z; ++z) {
    const double* p = paths.seq(z);
    for (std::size_t a = 0; a < missing.size(); ++a) out.samples(z, static_cast<Eigen::Index>(a)) = p[missing[a]];
  }
  return out;
}

SeriesImputation impute_series_blocks(const CaseSampler& sampler, const RowMatrix& y, const SeriesBlockOptions& blocks,
                                      const ImputeOptions& options) {
  options.validate();
  SeriesBlockOptions b = blocks;
  b.n_samples = options.n_samples;
  b.seed = options.seed;
  b.threads = options.threads;
  SeriesImputation out;
  out.paths = sample_series_paths(sampler, y, b);
  Batch x(1, static_cast<int>(y.rows()), static_cast<int>(y.cols()));
  std::copy(y.data(), y.data() + y.size(), x.seq(0));
  if (out.paths.samples.cols() == 0) {  // nothing missing: the series as it is
    out.imputation.point = out.imputation.centre = x;
    out.imputation.lower = out.imputation.upper = x;
    std::fill(out.imputation.lower.data.begin(), out.imputation.lower.data.end(),
              std::numeric_limits<double>::quiet_NaN());
    out.imputation.upper = out.imputation.lower;
    out.imputation.radius.assign(1, 0.0);
    out.imputation.samples.assign(1, Matrix(options.n_samples, 0));
    out.imputation.masks.assign(1, Mask(x.H, x.d, true));
    return out;
  }
  std::vector<Matrix> samples(1);
  samples[0] = std::move(out.paths.samples);
  out.paths.samples = Matrix();
  out.imputation = summarise_samples(x, masks_from_nan(x, "x"), std::move(samples), options);
  return out;
}

}  // namespace ditimpute
