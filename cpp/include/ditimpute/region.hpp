// Uncertainty from Z imputation samples (the paper's Algorithm 1; see
// cpp/DESIGN.md): the L2-ball confidence region around the sample mean (or the
// entry-wise median) and per-entry quantile intervals. Eigen only.
//
// Quantiles are R's type 7 (the default of quantile() in R): for sorted values
// x_(1) <= ... <= x_(n) and level p, with h = (n - 1) p, the quantile is
// x_(floor h + 1) + (h - floor h) (x_(floor h + 2) - x_(floor h + 1)).
#pragma once

#include "ditimpute/common.hpp"

namespace ditimpute {

// { x : ||x - centre||_2 <= radius }, a region at confidence `level`.
struct L2Region {
  Vector centre;
  double radius = 0.0;
  double level = 0.0;
};

// Type-7 quantile of `values` at p in [0, 1] (input_error "p"; "values" when
// empty or not finite).
double quantile(Vector values, double p);

// samples: Z x m, one imputation of the m missing entries a row. centre = the
// sample mean (median = false) or the entry-wise median (median = true);
// radius = the type-7 `level` quantile of ||sample_z - centre||_2 over z.
// input_error "level" (outside (0, 1)), "n_samples" (fewer than 2 rows),
// "samples" (no column, or a value not finite).
L2Region l2_region(const Matrix& samples, double level, bool median = false);

// True when ||x - centre||_2 <= radius (input_error "x" on a length mismatch).
bool contains(const L2Region& region, const Vector& x);

// Share of the rows of `draws` (n x m) that lie in the region (input_error
// "draws" on a column mismatch or no row).
double coverage(const L2Region& region, const Matrix& draws);

// Per-entry equal-tailed intervals: m x 2, column 0 the type-7 (1 - level)/2
// quantile of each column of `samples`, column 1 the (1 + level)/2 quantile.
// Same input errors as l2_region.
Matrix quantile_intervals(const Matrix& samples, double level);

// ------------------------------------------------ finite-sample constructions --
// The in-sample constructions above (the paper's) under-cover at finite Z: the
// radius is the quantile of distances to a centre fitted to the same samples,
// and a fresh draw lies farther away. The constructions below hold their level
// for any Z when the samples and the new value are exchangeable (e.g. i.i.d.
// draws of one law), the guarantee of split-conformal prediction.

// Split region: centre = the mean (or entry-wise median) of the first
// floor(Z/2) samples; radius = the k-th smallest distance to it of the other
// m = Z - floor(Z/2) samples, k = ceil((m + 1) level). A new draw lies inside
// with probability >= level (and < level + 1/(m + 1)). Needs k <= m, i.e.
// Z >= min_samples_split(level): input_error "n_samples" otherwise.
L2Region l2_region_split(const Matrix& samples, double level, bool median = false);
int min_samples_split(double level);

// Order-statistic intervals: [s_(a), s_(Z + 1 - a)] of each column with
// a = floor((Z + 1)(1 - level) / 2): a new draw lies inside with probability
// (Z + 1 - 2a) / (Z + 1) >= level. Needs a >= 1, i.e. Z >=
// min_samples_intervals(level): input_error "n_samples" otherwise. m x 2.
Matrix order_intervals(const Matrix& samples, double level);
int min_samples_intervals(double level);
// The fewest samples for both (what an imputation from samples alone needs).
int min_samples_finite(double level);

}  // namespace ditimpute
