// A whole series imputed by any window imputer (a CaseSampler: the DiT, the
// exact GP of one window, the oracle sampler). The frames are cut into
// consecutive blocks of B frames; block k is drawn from a window of H frames
// that holds `past` frames before it and `future` frames after it (fewer at
// the series' ends, where the window is shifted to fit): along each sample
// path the window is conditioned on what that path already holds (observed
// entries and its own draws of the earlier blocks) and on the observed entries
// ahead, so a gap that ends inside the window is bridged from both sides. The
// window's draws beyond the block are discarded (the next window draws them
// given this block). All paths of a window go through the sampler as one
// batch, one draw per path.
//
// Conventions: the series is T x d, NaN on missing entries; samples are
// Z x m over its missing entries in frame-major order (t * d + j), as in
// impute.hpp; window k draws from the seed case_seed(seed, k), and path z of
// it from case_seed(that, z) (the sampler's convention).
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/impute.hpp"

#include <cstdint>
#include <vector>

namespace ditimpute {

struct SeriesBlockOptions {
  int H = 0;            // window length in frames, at least 2 and at most T
  int past = -1;        // frames before the block; -1 = H / 4
  int future = -1;      // frames after the block; -1 = H / 4; past + future < H
  int n_samples = 100;  // sample paths, at least 1
  std::uint64_t seed = 1;
  int threads = 0;      // passed to the sampler; 0 = every core
  // input_error "H", "past", "future", "n_samples" for bad values against T
  // frames.
  void validate(int n_time) const;
};

struct SeriesPaths {
  Matrix samples;           // Z x m, the missing entries of every path, frame-major
  std::vector<int> starts;  // first frame (0-based) of every window that was drawn
  int past = 0, block = 0, future = 0;  // the layout used (block = H - past - future)
};

// Sample paths of y's missing entries. input_error("x") when y has infinite
// values or when a window that must be imputed holds no value at all (no
// observed entry and nothing drawn before it).
SeriesPaths sample_series_paths(const CaseSampler& sampler, const RowMatrix& y, const SeriesBlockOptions& options);

// sample_series_paths() summarised as impute() summarises a batch (the series
// is one case of a batch of one: its point estimate, per-entry intervals and
// L2 region from the samples, by options.region). A series with no missing
// entry comes back as it is, with no samples.
struct SeriesImputation {
  Imputation imputation;  // one case, T x d
  SeriesPaths paths;      // starts and layout (its samples moved into imputation)
};
SeriesImputation impute_series_blocks(const CaseSampler& sampler, const RowMatrix& y, const SeriesBlockOptions& blocks,
                                      const ImputeOptions& options);

}  // namespace ditimpute
