#include "ditimpute/region.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace ditimpute {

namespace {

void check_samples(const Matrix& samples, double level) {
  if (!(level > 0.0 && level < 1.0))
    throw input_error("level", "level must lie strictly between 0 and 1, not " + std::to_string(level) + ".");
  if (samples.rows() < 2)
    throw input_error("n_samples", "at least 2 samples are needed for a region, not " +
                                       std::to_string(samples.rows()) + ".");
  if (samples.cols() < 1) throw input_error("samples", "the samples have no entry (0 columns).");
  if (!samples.allFinite()) throw input_error("samples", "the samples contain NaN or infinite values.");
}

// Type 7 on values already sorted ascending.
double quantile_sorted(const Vector& x, double p) {
  const double h = (static_cast<double>(x.size()) - 1.0) * p;
  const Eigen::Index lo = static_cast<Eigen::Index>(std::floor(h));
  if (lo + 1 >= x.size()) return x(x.size() - 1);
  return x(lo) + (h - static_cast<double>(lo)) * (x(lo + 1) - x(lo));
}

Vector sorted(Vector v) {
  std::sort(v.data(), v.data() + v.size());
  return v;
}

}  // namespace

double quantile(Vector values, double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw input_error("p", "p must lie in [0, 1], not " + std::to_string(p) + ".");
  if (values.size() == 0) throw input_error("values", "cannot take a quantile of no values.");
  if (!values.allFinite()) throw input_error("values", "the values contain NaN or infinite values.");
  return quantile_sorted(sorted(std::move(values)), p);
}

L2Region l2_region(const Matrix& samples, double level, bool median) {
  check_samples(samples, level);
  L2Region region;
  region.level = level;
  if (median) {
    region.centre.resize(samples.cols());
    for (Eigen::Index j = 0; j < samples.cols(); ++j)
      region.centre(j) = quantile_sorted(sorted(samples.col(j)), 0.5);
  } else {
    region.centre = samples.colwise().mean().transpose();
  }
  const Vector dist = (samples.rowwise() - region.centre.transpose()).rowwise().norm();
  region.radius = quantile_sorted(sorted(dist), level);
  return region;
}

bool contains(const L2Region& region, const Vector& x) {
  if (x.size() != region.centre.size())
    throw input_error("x", "x has " + std::to_string(x.size()) + " entries, the region " +
                               std::to_string(region.centre.size()) + ".");
  return (x - region.centre).norm() <= region.radius;
}

double coverage(const L2Region& region, const Matrix& draws) {
  if (draws.cols() != region.centre.size() || draws.rows() == 0)
    throw input_error("draws", "draws must have at least one row and " + std::to_string(region.centre.size()) +
                                   " columns, not " + std::to_string(draws.rows()) + " x " +
                                   std::to_string(draws.cols()) + ".");
  const Vector dist = (draws.rowwise() - region.centre.transpose()).rowwise().norm();
  return static_cast<double>((dist.array() <= region.radius).count()) / static_cast<double>(draws.rows());
}

Matrix quantile_intervals(const Matrix& samples, double level) {
  check_samples(samples, level);
  Matrix out(samples.cols(), 2);
  for (Eigen::Index j = 0; j < samples.cols(); ++j) {
    const Vector x = sorted(samples.col(j));
    out(j, 0) = quantile_sorted(x, 0.5 * (1.0 - level));
    out(j, 1) = quantile_sorted(x, 0.5 * (1.0 + level));
  }
  return out;
}

namespace {

// The sample counts below grow like 2 / (1 - level): a level of 1 or more
// (or NaN) has none, and one within 1e-8 of 1 would need hundreds of
// millions (a review: these loops never returned for level = 1).
void check_count_level(double level) {
  if (!(level > 0.0 && level < 1.0)) {
    std::ostringstream msg;  // the level as given (1.5), not std::to_string's 1.500000
    msg << "level must lie strictly between 0 and 1, not " << level << ".";
    throw input_error("level", msg.str());
  }
  if (2.0 / (1.0 - level) > 1e8)
    throw input_error("level", "a level this close to 1 needs over 10^8 samples; give at most 1 - 2e-8.");
}

}  // namespace

int min_samples_split(double level) {
  check_count_level(level);
  // Smallest Z with ceil((m + 1) level) <= m for m = Z - floor(Z / 2); the
  // condition holds from m ~ level / (1 - level) on, so the search starts
  // a little below that.
  const int from = std::max(2, 2 * static_cast<int>(level / (1.0 - level)) - 8);
  for (int Z = from;; ++Z) {
    const int m = Z - Z / 2;
    if (static_cast<int>(std::ceil((m + 1) * level - 1e-12)) <= m) return Z;
  }
}

int min_samples_intervals(double level) {
  check_count_level(level);
  // holds from Z ~ 2 / (1 - level) - 1 on
  const int from = std::max(1, static_cast<int>(2.0 / (1.0 - level)) - 4);
  for (int Z = from;; ++Z)
    if (static_cast<int>(std::floor((Z + 1) * (1.0 - level) / 2.0 + 1e-12)) >= 1) return Z;
}

int min_samples_finite(double level) { return std::max(min_samples_split(level), min_samples_intervals(level)); }

namespace {

void check_enough(const Matrix& samples, double level, int needed, const std::string& what) {
  check_samples(samples, level);
  if (samples.rows() < needed) {
    // The region and the per-entry intervals need different counts (37 and
    // 39 at 0.95); an imputation makes both, so the message gives the larger
    // too, and a user raising n_samples to the first is not refused again.
    std::ostringstream msg;
    msg << "a " << what << " at level " << level << " needs at least " << needed << " samples, not " << samples.rows();
    const int all = min_samples_finite(level);
    if (all > needed) msg << " (" << all << " for the per-entry intervals as well)";
    msg << "; use n_samples >= " << all << ", or the in-sample region, region = \"quantile\".";
    throw input_error("n_samples", msg.str());
  }
}

}  // namespace

L2Region l2_region_split(const Matrix& samples, double level, bool median) {
  check_enough(samples, level, min_samples_split(level), "finite-sample region");
  const Eigen::Index Z = samples.rows(), half = Z / 2, m = Z - half;
  const Matrix first = samples.topRows(half), rest = samples.bottomRows(m);
  L2Region region;
  region.level = level;
  if (median) {
    region.centre.resize(samples.cols());
    for (Eigen::Index j = 0; j < samples.cols(); ++j)
      region.centre(j) = quantile_sorted(sorted(first.col(j)), 0.5);
  } else {
    region.centre = first.colwise().mean().transpose();
  }
  const Vector dist = sorted((rest.rowwise() - region.centre.transpose()).rowwise().norm());
  const Eigen::Index k = static_cast<Eigen::Index>(std::ceil((m + 1) * level - 1e-12));
  region.radius = dist(k - 1);
  return region;
}

Matrix order_intervals(const Matrix& samples, double level) {
  check_enough(samples, level, min_samples_intervals(level), "finite-sample interval");
  const Eigen::Index Z = samples.rows();
  const Eigen::Index a = static_cast<Eigen::Index>(std::floor((Z + 1) * (1.0 - level) / 2.0 + 1e-12));
  Matrix out(samples.cols(), 2);
  for (Eigen::Index j = 0; j < samples.cols(); ++j) {
    const Vector x = sorted(samples.col(j));
    out(j, 0) = x(a - 1);
    out(j, 1) = x(Z - a);
  }
  return out;
}

}  // namespace ditimpute
