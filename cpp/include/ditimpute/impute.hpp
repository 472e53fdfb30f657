// One imputation pipeline for every imputer (the paper's Algorithm 1): a batch
// of cases goes in with NaN on its missing entries, the imputer draws Z
// samples of each case's missing entries, and the summaries come back already
// in place: point estimate, per-entry intervals, the L2-ball radius and the
// samples. Eigen only; the DiT's sampler (dit.hpp) plugs in through
// CaseSampler. See cpp/DESIGN.md for the data path and the conventions.
//
// Conventions fixed here:
//  * a case's missing entries are the NaN entries of its values (the mask is
//    derived once, by masks_from_nan); Mask::observed is 1 on observed entries;
//  * samples of case i are a Z x m_i matrix over its missing entries in vec
//    (frame-major) order, h * d + j;
//  * case i draws all its randomness from Rng(case_seed(seed, i)), so a case's
//    samples do not depend on which other cases share the call, on how they
//    are batched, or on the thread count, up to rounding: the linear algebra
//    is not bit-identical across thread counts (with 128 or more missing
//    entries per pattern a review found samples 6.7e-15 apart between one
//    thread and two);
//  * a complete case (no missing entry: a window of a batch that happens to
//    be fully observed) passes through: no draws (a Z x 0 sample matrix), its
//    point and centre the data, no intervals, radius 0 (the ball in R^0 holds
//    its one point). Samplers skip it, so it costs nothing and, case seeds
//    being by index, changes no other case's draws. A batch of complete cases
//    only is an input error: there is nothing to impute.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"
#include "ditimpute/region.hpp"
#include "ditimpute/sampler.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ditimpute {

// Masks of the cases of `x` from its NaN entries. input_error(arg) when a
// value is infinite or a case has no observed entry, and when a case has no
// missing entry unless `allow_complete` (the pipeline's entries, which pass
// complete cases through: region_coverage(), region_contains(), and through
// masks_to_impute() below impute(), summarise_samples()'s callers and
// distribution_error()).
std::vector<Mask> masks_from_nan(const Batch& x, const std::string& arg = "x", bool allow_complete = false);

// The masks of a batch to impute (or of an imputation's data, for what is
// computed from it): masks_from_nan(x, arg, true), and input_error(arg) when
// every case is complete (nothing to impute). impute() and every other entry
// that takes a batch with its imputation (outside completions, a check of
// the data before a deterministic imputer, distribution_error()) apply this
// one rule.
std::vector<Mask> masks_to_impute(const Batch& x, const std::string& arg = "x");

// Cases grouped by identical masks, each group in ascending case order; groups
// ordered by their first case.
std::vector<std::vector<int>> group_by_pattern(const std::vector<Mask>& masks);

// Values of the entries listed in `entries` of one sequence (vec indices).
Vector gather_entries(const double* x, const std::vector<int>& entries);

// N(mean, Sigma) of one case's missing entries: mean, per-entry sd and the
// radius r with P(||X - mean|| <= r) = level (the weighted chi-square
// quantile in the eigenvalues of Sigma, chisq.hpp).
struct GaussianLaw {
  Vector mean, sd;
  double radius = 0.0;
};

// A source of imputation samples.
class CaseSampler {
 public:
  virtual ~CaseSampler() = default;
  // Z samples of the missing entries of every case of `x` (masks[i] its
  // pattern): Z x m_i matrices, missing entries in vec order. Case i draws
  // from case_seed(seed, i). A complete case (m_i = 0) gets a Z x 0 matrix
  // and no work.
  virtual std::vector<Matrix> draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                   int threads) const = 0;
  // A label for printing ("DiT", "exact GP", ...).
  virtual std::string name() const = 0;
  // True when the sampler knows each case's law exactly (a Gaussian): the
  // summaries then come from laws() in closed form, not from the samples.
  virtual bool exact() const { return false; }
  // For exact samplers: the law of every case's missing entries, with the
  // radius of its `level` L2 ball (input_error otherwise); a complete case's
  // is empty, radius 0.
  virtual std::vector<GaussianLaw> laws(const Batch& x, const std::vector<Mask>& masks, double level,
                                               int threads) const;
  // Exact samplers: draw() and laws() together (what impute() calls), into
  // `samples`. The default runs the two; a sampler that gets both from one
  // factorisation or pass overrides it.
  virtual std::vector<GaussianLaw> draw_and_laws(const Batch& x, const std::vector<Mask>& masks, int Z,
                                                 std::uint64_t seed, double level, int threads,
                                                 std::vector<Matrix>& samples) const;
};

// Exact conditional draws of a Gaussian process: one factorisation per
// pattern, shared by every case with that pattern.
class ExactGPSampler : public CaseSampler {
 public:
  explicit ExactGPSampler(const GaussianProcess& gp) : gp_(gp) {}
  std::vector<Matrix> draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                           int threads) const override;
  std::string name() const override { return "exact GP"; }
  bool exact() const override { return true; }
  std::vector<GaussianLaw> laws(const Batch& x, const std::vector<Mask>& masks, double level,
                                int threads) const override;
  // draw() and laws() from one conditional per pattern.
  std::vector<GaussianLaw> draw_and_laws(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                         double level, int threads, std::vector<Matrix>& samples) const override;

 private:
  const GaussianProcess& gp_;
};

// The reverse-time sampler driven by the exact GP score (oracle mode): one
// conditional per pattern.
class OracleGPSampler : public CaseSampler {
 public:
  OracleGPSampler(const GaussianProcess& gp, const SamplerOptions& options) : gp_(gp), options_(options) {}
  std::vector<Matrix> draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                           int threads) const override;
  std::string name() const override { return "exact-score " + to_string(options_.method) + " sampler"; }

 private:
  const GaussianProcess& gp_;
  SamplerOptions options_;
};

struct ImputeOptions {
  int n_samples = 100;   // Z, at least 2
  double level = 0.95;   // of the region and the intervals, in (0, 1)
  bool median = false;   // point estimate: entry-wise median instead of the mean
  // How regions and intervals are built from samples (exact samplers ignore
  // it and use the law in closed form):
  //  "finite":   split region and order-statistic intervals (region.hpp), which
  //              hold their level for exchangeable samples at any Z;
  //  "quantile": the paper's Algorithm 1: in-sample quantiles (under-cover at
  //              finite Z).
  std::string region = "finite";
  std::uint64_t seed = 1;
  int threads = 0;       // 0 = every core
  void validate() const; // input_error "n_samples", "level", "region"
};

// Every summary of an imputation, in place.
struct Imputation {
  Batch point;                  // the cases with missing entries filled by the point estimate
  Batch centre;                 // the same filled by the region's centre (the point, except for
                                // "finite" regions, whose centre uses half of the samples)
  Batch lower, upper;           // per-entry intervals on missing entries, NaN on observed ones
  std::vector<double> radius;   // L2-ball radius of each case's region around its point estimate
  std::vector<Matrix> samples;  // case i: Z x m_i
  std::vector<Mask> masks;
};

// Draws and summarises: the one entry every imputer goes through. Complete
// cases pass through (see the conventions above); input_error("x") when
// every case is complete.
Imputation impute(const CaseSampler& sampler, const Batch& x, const ImputeOptions& options);

// Summaries of samples that were drawn elsewhere (an outside imputer's
// completions): samples[i] is Z x m_i over the missing entries of case i
// (Z x 0 for a complete case, which passes through). masks[i] must be case
// i's own: H x d, missing exactly where x is NaN (input_error "masks").
Imputation summarise_samples(const Batch& x, std::vector<Mask> masks, std::vector<Matrix> samples,
                             const ImputeOptions& options);

// Coverage of the regions of an imputation of Gaussian-process data (the
// paper's): for each case of `x` (NaN = missing), the share of `n_draws` exact
// conditional draws inside the ball around its region centre (the missing
// entries of `centre`) with radius radius[i]; NaN for a complete case, which
// has nothing to cover. Draws of case i come from Rng(case_seed(seed, i));
// one conditional per pattern.
std::vector<double> region_coverage(const GaussianProcess& gp, const Batch& x, const Batch& centre,
                                    const std::vector<double>& radius, int n_draws, std::uint64_t seed,
                                    int threads = 0);

// For each case, whether its true missing values (those entries of `truth`)
// lie inside its region (true for a complete case: the empty vector lies in
// every ball; a caller that scores coverage leaves such cases out).
std::vector<bool> region_contains(const Batch& x, const Batch& centre, const std::vector<double>& radius,
                                  const Batch& truth);

}  // namespace ditimpute
