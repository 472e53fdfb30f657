// The imputation pipeline (impute.hpp): masks from NaN, cases grouped by
// pattern, samples from a CaseSampler, summaries written in place.
#include "ditimpute/impute.hpp"

#include <cmath>
#include <limits>
#include <map>

namespace ditimpute {

std::vector<Mask> masks_from_nan(const Batch& x, const std::string& arg) {
  if (x.n < 1) throw input_error(arg, arg + " holds no sequence.");
  if (x.data.size() != static_cast<std::size_t>(x.n) * x.seq_size())
    throw input_error(arg, arg + " has " + std::to_string(x.data.size()) + " values, not n * H * d.");
  std::vector<Mask> masks;
  masks.reserve(x.n);
  const std::size_t S = x.seq_size();
  for (int i = 0; i < x.n; ++i) {
    Mask m(x.H, x.d, true);
    const double* v = x.seq(i);
    for (std::size_t k = 0; k < S; ++k) {
      if (std::isinf(v[k]))
        throw input_error(arg, arg + " holds an infinite value (sequence " + std::to_string(i + 1) + ").");
      m.observed[k] = std::isnan(v[k]) ? 0 : 1;
    }
    const int miss = m.n_missing();
    if (miss == 0)
      throw input_error(arg, "sequence " + std::to_string(i + 1) +
                                 " has no missing value (NA): there is nothing to impute.");
    if (miss == static_cast<int>(S))
      throw input_error(arg, "sequence " + std::to_string(i + 1) + " has no observed value: every entry is missing.");
    masks.push_back(std::move(m));
  }
  return masks;
}

std::vector<std::vector<int>> group_by_pattern(const std::vector<Mask>& masks) {
  std::map<std::vector<std::uint8_t>, std::size_t> index;
  std::vector<std::vector<int>> groups;
  for (int i = 0; i < static_cast<int>(masks.size()); ++i) {
    auto it = index.find(masks[i].observed);
    if (it == index.end()) {
      index.emplace(masks[i].observed, groups.size());
      groups.push_back({i});
    } else {
      groups[it->second].push_back(i);
    }
  }
  return groups;
}

Vector gather_entries(const double* x, const std::vector<int>& entries) {
  Vector v(static_cast<Eigen::Index>(entries.size()));
  for (std::size_t k = 0; k < entries.size(); ++k) v(static_cast<Eigen::Index>(k)) = x[entries[k]];
  return v;
}

namespace {

// For each pattern group: one conditional (one factorisation), then fn(case,
// conditional) for every case of the group, cases spread over threads.
template <class Fn>
void for_each_case_by_pattern(const GaussianProcess& gp, const std::vector<Mask>& masks, int threads, Fn fn) {
  for (const auto& group : group_by_pattern(masks)) {
    const auto cond = make_conditional(gp, masks[group.front()]);
    parallel_for(static_cast<int>(group.size()), threads, [&](int k) { fn(group[k], *cond); });
  }
}

}  // namespace

std::vector<Matrix> ExactGPSampler::draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                         int threads) const {
  std::vector<Matrix> out(masks.size());
  for_each_case_by_pattern(gp_, masks, threads, [&](int i, const Conditional& cond) {
    Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
    out[i] = cond.sample(cond.mean(x.seq(i)), Z, rng);
  });
  return out;
}

std::vector<Matrix> OracleGPSampler::draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                          int threads) const {
  options_.validate();
  std::vector<Matrix> out(masks.size());
  for_each_case_by_pattern(gp_, masks, threads, [&](int i, const Conditional& cond) {
    out[i] = sample_oracle(cond, x.seq(i), Z, options_, case_seed(seed, static_cast<std::uint64_t>(i)));
  });
  return out;
}

void ImputeOptions::validate() const {
  if (n_samples < 2)
    throw input_error("n_samples", "at least 2 samples are needed for a region, not " + std::to_string(n_samples) + ".");
  if (!(level > 0.0 && level < 1.0))
    throw input_error("level", "level must lie strictly between 0 and 1, not " + std::to_string(level) + ".");
}

Imputation summarise_samples(const Batch& x, std::vector<Mask> masks, std::vector<Matrix> samples,
                             const ImputeOptions& options) {
  options.validate();
  if (masks.size() != static_cast<std::size_t>(x.n) || samples.size() != masks.size())
    throw input_error("samples", "there must be one mask and one sample matrix per sequence.");
  Imputation out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.point = x;
  out.lower = Batch(x.n, x.H, x.d);
  out.upper = Batch(x.n, x.H, x.d);
  std::fill(out.lower.data.begin(), out.lower.data.end(), nan);
  std::fill(out.upper.data.begin(), out.upper.data.end(), nan);
  out.radius.assign(x.n, nan);
  parallel_for(x.n, options.threads, [&](int i) {
    const std::vector<int> miss = masks[i].missing_entries();
    const Matrix& s = samples[i];
    if (s.cols() != static_cast<Eigen::Index>(miss.size()))
      throw input_error("samples", "the samples of sequence " + std::to_string(i + 1) + " have " +
                                       std::to_string(s.cols()) + " columns, not one per missing entry (" +
                                       std::to_string(miss.size()) + ").");
    const L2Region region = l2_region(s, options.level, options.median);
    const Matrix iv = quantile_intervals(s, options.level);
    out.radius[i] = region.radius;
    double* p = out.point.seq(i);
    double* lo = out.lower.seq(i);
    double* hi = out.upper.seq(i);
    for (std::size_t k = 0; k < miss.size(); ++k) {
      const Eigen::Index kk = static_cast<Eigen::Index>(k);
      p[miss[k]] = region.centre(kk);
      lo[miss[k]] = iv(kk, 0);
      hi[miss[k]] = iv(kk, 1);
    }
  });
  out.samples = std::move(samples);
  out.masks = std::move(masks);
  return out;
}

Imputation impute(const CaseSampler& sampler, const Batch& x, const ImputeOptions& options) {
  options.validate();
  std::vector<Mask> masks = masks_from_nan(x);
  std::vector<Matrix> samples = sampler.draw(x, masks, options.n_samples, options.seed, options.threads);
  return summarise_samples(x, std::move(masks), std::move(samples), options);
}

namespace {

void check_same_shape(const Batch& a, const Batch& b, const std::string& arg) {
  if (a.n != b.n || a.H != b.H || a.d != b.d)
    throw input_error(arg, arg + " must have the shape of x (" + std::to_string(a.n) + " x " + std::to_string(a.H) +
                               " x " + std::to_string(a.d) + ").");
}

void check_radius(const Batch& x, const std::vector<double>& radius) {
  if (radius.size() != static_cast<std::size_t>(x.n))
    throw input_error("radius", "there must be one radius per sequence.");
  for (double r : radius)
    if (!(r >= 0.0)) throw input_error("radius", "every radius must be a number >= 0 (a region is needed).");
}

}  // namespace

std::vector<double> region_coverage(const GaussianProcess& gp, const Batch& x, const Batch& point,
                                    const std::vector<double>& radius, int n_draws, std::uint64_t seed,
                                    int threads) {
  const std::vector<Mask> masks = masks_from_nan(x);
  check_same_shape(x, point, "point");
  check_radius(x, radius);
  if (n_draws < 1) throw input_error("n_draws", "n_draws must be at least 1.");
  std::vector<double> out(masks.size());
  for_each_case_by_pattern(gp, masks, threads, [&](int i, const Conditional& cond) {
    Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
    L2Region region;
    region.centre = gather_entries(point.seq(i), cond.missing_entries());
    region.radius = radius[i];
    out[i] = coverage(region, cond.sample(cond.mean(x.seq(i)), n_draws, rng));
  });
  return out;
}

std::vector<bool> region_contains(const Batch& x, const Batch& point, const std::vector<double>& radius,
                                  const Batch& truth) {
  const std::vector<Mask> masks = masks_from_nan(x);
  check_same_shape(x, point, "point");
  check_same_shape(x, truth, "truth");
  check_radius(x, radius);
  std::vector<bool> out(masks.size());
  for (std::size_t i = 0; i < masks.size(); ++i) {
    const std::vector<int> miss = masks[i].missing_entries();
    L2Region region;
    region.centre = gather_entries(point.seq(static_cast<int>(i)), miss);
    region.radius = radius[i];
    const Vector t = gather_entries(truth.seq(static_cast<int>(i)), miss);
    if (!t.allFinite()) throw input_error("truth", "truth must be finite at every missing entry of x.");
    out[i] = contains(region, t);
  }
  return out;
}

}  // namespace ditimpute
