// The imputation pipeline (impute.hpp): masks from NaN, cases grouped by
// pattern, samples from a CaseSampler, summaries written in place.
#include "ditimpute/impute.hpp"

#include "ditimpute/chisq.hpp"
#include "lapack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace ditimpute {

std::vector<Mask> masks_from_nan(const Batch& x, const std::string& arg, bool allow_complete) {
  if (x.n < 1) throw input_error(arg, arg + " holds no sequence.");
  if (x.data.size() != static_cast<std::size_t>(x.n) * x.seq_size())
    throw input_error(arg, arg + " has " + std::to_string(x.data.size()) + " values, not n * H * d.");
  std::vector<Mask> masks;
  masks.reserve(x.n);
  const std::size_t S = x.seq_size();
  std::vector<int> empty;  // sequences with every entry missing, named together
  for (int i = 0; i < x.n; ++i) {
    Mask m(x.H, x.d, true);
    const double* v = x.seq(i);
    for (std::size_t k = 0; k < S; ++k) {
      if (std::isinf(v[k]))
        throw input_error(arg, arg + " holds an infinite value (sequence " + std::to_string(i + 1) + ").");
      m.observed[k] = std::isnan(v[k]) ? 0 : 1;
    }
    const int miss = m.n_missing();
    if (miss == 0 && !allow_complete)
      throw input_error(arg, "sequence " + std::to_string(i + 1) +
                                 " has no missing value (NA): there is nothing to impute.");
    if (miss == static_cast<int>(S)) empty.push_back(i + 1);
    masks.push_back(std::move(m));
  }
  if (!empty.empty()) {
    // all of them at once (a review: windows cut from a series with a long
    // outage failed one by one, the first one named each time)
    std::string list;
    for (std::size_t k = 0; k < empty.size() && k < 20; ++k) list += (k ? ", " : "") + std::to_string(empty[k]);
    if (empty.size() > 20) list += ", ... (" + std::to_string(empty.size()) + " in all)";
    throw input_error(arg, (empty.size() == 1 ? "sequence " + list + " has" : "sequences " + list + " have") +
                               " no observed value (every entry missing): there is nothing to condition on; drop " +
                               (empty.size() == 1 ? "it" : "them") + " from " + arg + ".");
  }
  return masks;
}

std::vector<Mask> masks_to_impute(const Batch& x, const std::string& arg) {
  // A complete case among others passes through: a batch of windows cut
  // from data need not have a gap in every window. A batch without any
  // missing entry is almost surely a mistake (the truth passed as x, or a
  // missing-value code that is not NA) and has no law, draws or region.
  std::vector<Mask> masks = masks_from_nan(x, arg, true);
  if (std::all_of(masks.begin(), masks.end(), [](const Mask& m) { return m.n_missing() == 0; }))
    throw input_error(arg, x.n == 1 ? arg + " has no missing value (NA): there is nothing to impute."
                                    : "none of the " + std::to_string(x.n) + " sequences of " + arg +
                                          " has a missing value (NA): there is nothing to impute "
                                          "(a complete sequence passes through only beside one with a gap).");
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
// conditional) for every case of the group. One group: its cases spread over
// threads; several (e.g. MCAR gaps, nearly one pattern a case): the groups
// spread over threads, each building its own conditional. Complete cases
// (no missing entry: no conditional to build) are skipped: fn never sees
// them.
template <class Fn>
void for_each_case_by_pattern(const GaussianProcess& gp, const std::vector<Mask>& masks, int threads, Fn fn) {
  std::vector<std::vector<int>> groups = group_by_pattern(masks);
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const std::vector<int>& g) { return masks[g.front()].n_missing() == 0; }),
               groups.end());
  if (groups.empty()) return;
  if (groups.size() == 1) {
    check_cancelled();
    const auto cond = make_conditional(gp, masks[groups[0].front()]);
    parallel_for(static_cast<int>(groups[0].size()), threads, [&](int k) { fn(groups[0][k], *cond); });
    return;
  }
  // Patterns with thousands of missing entries go one at a time: their
  // factorisations then run in LAPACK on every core (lapack.hpp); BeijingAir's
  // 233 test windows of 30 x 132 at 50% hidden (m ~ 2,000, bench/real_data.R)
  // were imputed in 41 s instead of 73 s. Smaller patterns keep one case per
  // core, so the rest of each case's work (its draws) stays parallel.
  constexpr std::size_t kOneAtATime = 1000;
  std::size_t largest = 0;
  for (const auto& g : groups) {
    const auto& obs = masks[g.front()].observed;
    largest = std::max(largest, static_cast<std::size_t>(std::count(obs.begin(), obs.end(), 0)));
  }
  if (largest >= kOneAtATime && detail::use_lapack(static_cast<Eigen::Index>(largest))) threads = 1;
  parallel_for(static_cast<int>(groups.size()), threads, [&](int g) {
    check_cancelled();  // stops on the calling thread; a no-op on workers
    const auto cond = make_conditional(gp, masks[groups[g].front()]);
    for (int i : groups[g]) fn(i, *cond);
  });
}

// The Z draws of every case (Z x m_i doubles each), and about as much
// again for the standard normals behind them: checked before they are
// allocated (a review's n_samples = 1e9 ended in std::bad_alloc).
void check_draw_memory(const std::vector<Mask>& masks, int Z) {
  double entries = 0.0;
  for (const Mask& m : masks) entries += m.n_missing();
  check_memory(2.0 * 8.0 * static_cast<double>(Z) * entries, "n_samples",
               std::to_string(Z) + " draws of " + std::to_string(static_cast<long long>(entries)) + " missing entries");
}

}  // namespace

std::vector<Matrix> ExactGPSampler::draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                         int threads) const {
  check_draw_memory(masks, Z);
  std::vector<Matrix> out(masks.size(), Matrix(Z, 0));  // complete cases keep theirs
  for_each_case_by_pattern(gp_, masks, threads, [&](int i, const Conditional& cond) {
    Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
    out[i] = cond.sample(cond.mean(x.seq(i)), Z, rng);
  });
  return out;
}

std::vector<GaussianLaw> CaseSampler::laws(const Batch&, const std::vector<Mask>&, double, int) const {
  throw input_error("sampler", "the " + name() + " sampler does not know the law of its cases.");
}

std::vector<GaussianLaw> CaseSampler::draw_and_laws(const Batch& x, const std::vector<Mask>& masks, int Z,
                                                    std::uint64_t seed, double level, int threads,
                                                    std::vector<Matrix>& samples) const {
  samples = draw(x, masks, Z, seed, threads);
  return laws(x, masks, level, threads);
}

std::vector<GaussianLaw> ExactGPSampler::laws(const Batch& x, const std::vector<Mask>& masks, double level,
                                              int threads) const {
  std::vector<Matrix> none;
  return draw_and_laws(x, masks, 0, 0, level, threads, none);
}

std::vector<GaussianLaw> ExactGPSampler::draw_and_laws(const Batch& x, const std::vector<Mask>& masks, int Z,
                                                       std::uint64_t seed, double level, int threads,
                                                       std::vector<Matrix>& samples) const {
  std::vector<GaussianLaw> out(masks.size());  // complete cases keep theirs: empty, radius 0
  if (Z > 0) {
    check_draw_memory(masks, Z);
    samples.assign(masks.size(), Matrix(Z, 0));
  }
  // Sigma_cond and its radius belong to the pattern: computed once (for the
  // group's first case). The precision and CG paths have no cheap
  // eigenvalues (nor, for CG, a cheap diagonal): NaN radius / empty sd, which
  // impute() fills from the samples.
  const std::vector<std::vector<int>> groups = group_by_pattern(masks);
  std::vector<char> first(masks.size(), 0);
  for (const auto& group : groups) first[group.front()] = 1;
  for_each_case_by_pattern(gp_, masks, threads, [&](int i, const Conditional& cond) {
    out[i].mean = cond.mean(x.seq(i));
    if (Z > 0) {
      Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
      samples[i] = cond.sample(out[i].mean, Z, rng);
    }
    if (!first[i]) return;
    out[i].sd = cond.marginal_sd();
    out[i].radius = cond.cheap_eigenvalues() ? gaussian_ball_radius(cond.eigenvalues(), level)
                                             : std::numeric_limits<double>::quiet_NaN();
  });
  for (const auto& group : groups)
    for (int i : group) {
      out[i].sd = out[group.front()].sd;
      out[i].radius = out[group.front()].radius;
    }
  return out;
}

std::vector<Matrix> OracleGPSampler::draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                          int threads) const {
  options_.validate();
  check_draw_memory(masks, Z);
  std::vector<Matrix> out(masks.size(), Matrix(Z, 0));  // complete cases keep theirs
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
  if (region != "finite" && region != "quantile")
    throw input_error("region", "region must be \"finite\" or \"quantile\", not \"" + region + "\".");
}

namespace {

Imputation empty_imputation(const Batch& x) {
  Imputation out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.point = x;
  out.centre = x;
  out.lower = Batch(x.n, x.H, x.d);
  out.upper = Batch(x.n, x.H, x.d);
  std::fill(out.lower.data.begin(), out.lower.data.end(), nan);
  std::fill(out.upper.data.begin(), out.upper.data.end(), nan);
  out.radius.assign(x.n, nan);
  return out;
}

// Writes one case's summaries over its missing entries `miss` in place.
void put_case(Imputation& out, int i, const std::vector<int>& miss, const Vector& point, const Vector& centre,
              const Matrix& intervals, double radius) {
  out.radius[i] = radius;
  double* p = out.point.seq(i);
  double* c = out.centre.seq(i);
  double* lo = out.lower.seq(i);
  double* hi = out.upper.seq(i);
  for (std::size_t k = 0; k < miss.size(); ++k) {
    const Eigen::Index kk = static_cast<Eigen::Index>(k);
    p[miss[k]] = point(kk);
    c[miss[k]] = centre(kk);
    lo[miss[k]] = intervals(kk, 0);
    hi[miss[k]] = intervals(kk, 1);
  }
}

// The standard normal quantile at (1 + level) / 2: sqrt of the chi^2_1 quantile.
double normal_half_width(double level) {
  Vector one(1);
  one(0) = 1.0;
  return std::sqrt(weighted_chisq_quantile(one, level));
}

// Per-entry sd of exact draws around the known mean (divisor Z).
Vector sample_sd(const Matrix& s, const Vector& mean) {
  if (s.rows() < 1) throw input_error("n_samples", "at least one sample is needed for the sd.");
  return ((s.rowwise() - mean.transpose()).colwise().squaredNorm() / static_cast<double>(s.rows())).cwiseSqrt().transpose();
}

// Finite-sample L2 radius around the known centre `mean` from Z exact draws:
// the k-th smallest ||s_z - mean||, k = ceil((Z + 1) level). The truth and the
// draws are exchangeable under the model, so the ball holds it with
// probability >= level (the split region's argument, with no half spent on
// the centre).
double radius_at(const Matrix& s, const Vector& mean, double level) {
  const int Z = static_cast<int>(s.rows());
  const int k = static_cast<int>(std::ceil((Z + 1) * level));
  if (k > Z) {
    std::ostringstream msg;  // the level as 0.95, not std::to_string's 0.950000
    msg << "a level " << level << " radius from samples needs at least "
        << static_cast<int>(std::ceil(level / (1.0 - level))) << " samples, not " << Z << ".";
    throw input_error("n_samples", msg.str());
  }
  Vector dist = (s.rowwise() - mean.transpose()).rowwise().norm();
  std::nth_element(dist.data(), dist.data() + (k - 1), dist.data() + Z);
  return dist(k - 1);
}

}  // namespace

Imputation summarise_samples(const Batch& x, std::vector<Mask> masks, std::vector<Matrix> samples,
                             const ImputeOptions& options) {
  options.validate();
  if (masks.size() != static_cast<std::size_t>(x.n) || samples.size() != masks.size())
    throw input_error("samples", "there must be one mask and one sample matrix per sequence.");
  // The masks must be x's own (a review: a mask of another shape wrote one
  // sequence's draws into the next one's, or past the end): H x d, and
  // missing exactly where x is NaN.
  for (int i = 0; i < x.n; ++i) {
    const Mask& m = masks[static_cast<std::size_t>(i)];
    if (m.H != x.H || m.d != x.d || m.observed.size() != x.seq_size())
      throw input_error("masks", "the mask of sequence " + std::to_string(i + 1) + " is " + std::to_string(m.H) +
                                     " x " + std::to_string(m.d) + " (" + std::to_string(m.observed.size()) +
                                     " entries), not " + std::to_string(x.H) + " x " + std::to_string(x.d) + ".");
    const double* v = x.seq(i);
    for (std::size_t k = 0; k < x.seq_size(); ++k)
      if ((m.observed[k] != 0) == std::isnan(v[k]))
        throw input_error("masks", "the mask of sequence " + std::to_string(i + 1) +
                                       " does not match its missing values (NaN): entry " + std::to_string(k + 1) +
                                       (std::isnan(v[k]) ? " is NaN but marked observed." : " is observed but marked missing."));
  }
  Imputation out = empty_imputation(x);
  const bool finite = options.region == "finite";
  parallel_for(x.n, options.threads, [&](int i) {
    const std::vector<int> miss = masks[i].missing_entries();
    const Matrix& s = samples[i];
    if (s.cols() != static_cast<Eigen::Index>(miss.size()))
      throw input_error("samples", "the samples of sequence " + std::to_string(i + 1) + " have " +
                                       std::to_string(s.cols()) + " columns, not one per missing entry (" +
                                       std::to_string(miss.size()) + ").");
    // A complete case passes through: its point is its data, no intervals,
    // and the ball of radius 0 in R^0 (whatever Z, which a region from
    // samples would otherwise need enough of).
    if (miss.empty()) {
      out.radius[i] = 0.0;
      return;
    }
    // The point estimate always uses every sample; a finite-sample region
    // centres on half of them and calibrates its radius on the other half.
    const L2Region all = l2_region(s, options.level, options.median);
    const L2Region region = finite ? l2_region_split(s, options.level, options.median) : all;
    const Matrix iv = finite ? order_intervals(s, options.level) : quantile_intervals(s, options.level);
    put_case(out, i, miss, all.centre, region.centre, iv, region.radius);
  });
  out.samples = std::move(samples);
  out.masks = std::move(masks);
  return out;
}

Imputation impute(const CaseSampler& sampler, const Batch& x, const ImputeOptions& options) {
  options.validate();
  // Complete cases pass through; a batch of complete cases only is an input
  // error (masks_to_impute()).
  std::vector<Mask> masks = masks_to_impute(x, "x");
  std::vector<Matrix> samples;
  std::vector<GaussianLaw> laws;
  if (!sampler.exact()) {
    samples = sampler.draw(x, masks, options.n_samples, options.seed, options.threads);
    return summarise_samples(x, std::move(masks), std::move(samples), options);
  }
  laws = sampler.draw_and_laws(x, masks, options.n_samples, options.seed, options.level, options.threads, samples);
  // The law is known: centre and intervals in closed form, whatever Z (radius
  // and sd from the draws where the path has no cheap eigenvalues).
  Imputation out = empty_imputation(x);
  const double z = normal_half_width(options.level);
  for (int i = 0; i < x.n; ++i) {
    if (masks[i].n_missing() == 0) {  // passes through (empty_imputation() holds its data)
      out.radius[i] = 0.0;
      continue;
    }
    const GaussianLaw& law = laws[i];
    const Vector sd = law.sd.size() ? law.sd : sample_sd(samples[i], law.mean);
    const double radius = std::isnan(law.radius) ? radius_at(samples[i], law.mean, options.level) : law.radius;
    Matrix iv(law.mean.size(), 2);
    iv.col(0) = law.mean - z * sd;
    iv.col(1) = law.mean + z * sd;
    put_case(out, i, masks[i].missing_entries(), law.mean, law.mean, iv, radius);
  }
  out.samples = std::move(samples);
  out.masks = std::move(masks);
  return out;
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

std::vector<double> region_coverage(const GaussianProcess& gp, const Batch& x, const Batch& centre,
                                    const std::vector<double>& radius, int n_draws, std::uint64_t seed,
                                    int threads) {
  const std::vector<Mask> masks = masks_from_nan(x, "x", true);
  check_same_shape(x, centre, "centre");
  check_radius(x, radius);
  if (n_draws < 1) throw input_error("n_draws", "n_draws must be at least 1.");
  // Complete cases keep NaN: nothing to cover (for_each_case_by_pattern skips them).
  std::vector<double> out(masks.size(), std::numeric_limits<double>::quiet_NaN());
  for_each_case_by_pattern(gp, masks, threads, [&](int i, const Conditional& cond) {
    Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
    L2Region region;
    region.centre = gather_entries(centre.seq(i), cond.missing_entries());
    region.radius = radius[i];
    out[i] = coverage(region, cond.sample(cond.mean(x.seq(i)), n_draws, rng));
  });
  return out;
}

std::vector<bool> region_contains(const Batch& x, const Batch& centre, const std::vector<double>& radius,
                                  const Batch& truth) {
  const std::vector<Mask> masks = masks_from_nan(x, "x", true);
  check_same_shape(x, centre, "centre");
  check_same_shape(x, truth, "truth");
  check_radius(x, radius);
  std::vector<bool> out(masks.size());
  for (std::size_t i = 0; i < masks.size(); ++i) {
    const std::vector<int> miss = masks[i].missing_entries();
    L2Region region;
    region.centre = gather_entries(centre.seq(static_cast<int>(i)), miss);
    region.radius = radius[i];
    const Vector t = gather_entries(truth.seq(static_cast<int>(i)), miss);
    if (!t.allFinite()) throw input_error("truth", "truth must be finite at every missing entry of x.");
    out[i] = contains(region, t);
  }
  return out;
}

}  // namespace ditimpute
