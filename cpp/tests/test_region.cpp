// L2-ball regions and quantile intervals (Algorithm 1 of the paper).
#include <catch2/catch.hpp>

#include "ditimpute/region.hpp"
#include "test_helpers.hpp"

#include <cmath>

using namespace ditimpute;

namespace {

Matrix line_samples() {  // five points on the x-axis: 0..4
  Matrix s = Matrix::Zero(5, 2);
  for (int i = 0; i < 5; ++i) s(i, 0) = i;
  return s;
}

Matrix normal_matrix(int n, const Vector& sd, Rng& rng) {
  Matrix out(n, sd.size());
  fill_standard_normal(rng, out.data(), static_cast<std::size_t>(out.size()));
  return out * sd.asDiagonal();
}

}  // namespace

TEST_CASE("quantile is R's type 7", "[region]") {
  Vector v(10);
  for (int i = 0; i < 10; ++i) v(i) = 10 - i;  // unsorted on purpose
  // R: quantile(1:10, c(0, .1, .5, .95, 1)) = 1, 1.9, 5.5, 9.55, 10
  CHECK(quantile(v, 0.0) == Approx(1.0));
  CHECK(quantile(v, 0.1) == Approx(1.9));
  CHECK(quantile(v, 0.5) == Approx(5.5));
  CHECK(quantile(v, 0.95) == Approx(9.55));
  CHECK(quantile(v, 1.0) == Approx(10.0));
  CHECK_THROWS_AS(quantile(v, 1.5), input_error);
  CHECK_THROWS_AS(quantile(Vector(), 0.5), input_error);
}

TEST_CASE("l2_region on a small exact example", "[region]") {
  const Matrix s = line_samples();
  // centre (2, 0); distances 2 1 0 1 2, sorted 0 1 1 2 2.
  L2Region r = l2_region(s, 0.5);
  CHECK(r.centre(0) == Approx(2.0));
  CHECK(r.centre(1) == Approx(0.0));
  CHECK(r.radius == Approx(1.0));  // h = 4 * 0.5 = 2 -> x_(3) = 1
  CHECK(r.level == 0.5);
  CHECK(l2_region(s, 0.3).radius == Approx(1.0));   // h = 1.2 -> 1 + 0.2 * 0
  CHECK(l2_region(s, 0.6).radius == Approx(1.4));   // h = 2.4 -> 1 + 0.4 * (2 - 1)
  CHECK(contains(r, Vector::Constant(2, 0.0)) == false);  // distance 2
  Vector inside(2);
  inside << 2.5, 0.5;
  CHECK(contains(r, inside));
  // coverage: the five samples themselves, distances 2 1 0 1 2 -> 3 of 5 inside.
  CHECK(coverage(r, s) == Approx(0.6));

  // The median centre is robust to an outlier, the mean is not.
  Matrix t = s;
  t(4, 0) = 100.0;
  CHECK(l2_region(t, 0.5, true).centre(0) == Approx(2.0));
  CHECK(l2_region(t, 0.5, false).centre(0) == Approx(21.2));
}

TEST_CASE("quantile_intervals per entry", "[region]") {
  Matrix s(5, 2);
  s << 1, 10, 2, 20, 3, 30, 4, 40, 5, 50;
  const Matrix q = quantile_intervals(s, 0.5);  // 25% and 75% quantiles
  REQUIRE(q.rows() == 2);
  REQUIRE(q.cols() == 2);
  CHECK(q(0, 0) == Approx(2.0));
  CHECK(q(0, 1) == Approx(4.0));
  CHECK(q(1, 0) == Approx(20.0));
  CHECK(q(1, 1) == Approx(40.0));
}

TEST_CASE("region input errors name the argument", "[region]") {
  const Matrix s = line_samples();
  auto arg_of = [](auto&& f) {
    try {
      f();
    } catch (const input_error& e) {
      return e.arg();
    }
    return std::string("no error");
  };
  CHECK(arg_of([&] { l2_region(s, 0.0); }) == "level");
  CHECK(arg_of([&] { l2_region(s, 1.0); }) == "level");
  CHECK(arg_of([&] { quantile_intervals(s, -0.1); }) == "level");
  CHECK(arg_of([&] { l2_region(s.topRows(1), 0.9); }) == "n_samples");
  CHECK(arg_of([&] { quantile_intervals(s.topRows(1), 0.9); }) == "n_samples");
  Matrix bad = s;
  bad(1, 1) = std::nan("");
  CHECK(arg_of([&] { l2_region(bad, 0.9); }) == "samples");
  const L2Region r = l2_region(s, 0.9);
  CHECK(arg_of([&] { contains(r, Vector::Zero(3)); }) == "x");
  CHECK(arg_of([&] { coverage(r, Matrix::Zero(4, 3)); }) == "draws");
}

TEST_CASE("l2_region covers its level for Gaussian samples", "[region]") {
  // 4,000 samples of N(0, diag(sd^2)) in 6 dimensions, 20,000 fresh draws.
  // The coverage of an empirical level-p quantile from n = 4000 has sd
  // sqrt(p (1 - p) / 4000) (0.0047 at 0.9, 0.0079 at 0.5), the fresh draws
  // add sqrt(p (1 - p) / 20000): the tolerance is 4 of the combined sd
  // (0.021 at 0.9, 0.035 at 0.5, 0.015 at 0.95).
  Rng rng(20240601);
  Vector sd(6);
  sd << 0.1, 0.5, 1, 1, 2, 3;
  for (double level : {0.5, 0.9, 0.95}) {
    const double tol = 4 * std::sqrt(level * (1 - level) * (1.0 / 4000 + 1.0 / 20000));
    const L2Region r = l2_region(normal_matrix(4000, sd, rng), level);
    CHECK(std::abs(coverage(r, normal_matrix(20000, sd, rng)) - level) < tol);
    const L2Region rm = l2_region(normal_matrix(4000, sd, rng), level, true);
    CHECK(std::abs(coverage(rm, normal_matrix(20000, sd, rng)) - level) < tol);
  }
  // Per-entry 90% intervals: about +-1.645 sd (sd of the empirical 5% quantile
  // of 4000 normals is ~0.034 sd; 0.15 sd is ~4 sd).
  const Matrix q = quantile_intervals(normal_matrix(4000, sd, rng), 0.9);
  for (int j = 0; j < 6; ++j) {
    CHECK(q(j, 0) / sd(j) == Approx(-1.6449).margin(0.15));
    CHECK(q(j, 1) / sd(j) == Approx(1.6449).margin(0.15));
  }
}

TEST_CASE("Finite-sample split regions and order intervals hold their level at small Z", "[region]") {
  // Draws from N(0, diag(sd^2)): the samples and the new value are
  // exchangeable, so the guarantee applies. Z = 40 at level 0.9: m = 20
  // distance samples, k = ceil(21 * 0.9) = 19, expected coverage exactly
  // k / (m + 1) = 0.9048; intervals: a = floor(41 * 0.05) = 2, coverage
  // (41 - 4) / 41 = 0.9024. 4000 repetitions give a standard error of 0.47%;
  // the in-sample construction, by contrast, falls about 2-3 points short.
  const int Z = 40, reps = 4000;
  const double level = 0.9;
  Vector sd(6);
  sd << 3, 1, 1, 0.5, 0.2, 0.1;
  Rng rng(5);
  double in_split = 0, in_quantile = 0, in_interval = 0, in_quantile_interval = 0;
  for (int r = 0; r < reps; ++r) {
    const Matrix s = normal_matrix(Z, sd, rng);
    const Vector y = normal_matrix(1, sd, rng).row(0).transpose();
    in_split += contains(l2_region_split(s, level), y);
    in_quantile += contains(l2_region(s, level), y);
    const Matrix iv = order_intervals(s, level), iq = quantile_intervals(s, level);
    for (int j = 0; j < 6; ++j) {
      in_interval += (y(j) >= iv(j, 0) && y(j) <= iv(j, 1)) / 6.0;
      in_quantile_interval += (y(j) >= iq(j, 0) && y(j) <= iq(j, 1)) / 6.0;
    }
  }
  CHECK(in_split / reps == Approx(19.0 / 21.0).margin(0.015));
  CHECK(in_interval / reps == Approx(37.0 / 41.0).margin(0.015));
  CHECK(in_quantile / reps < in_split / reps - 0.01);  // what the split construction fixes
  CHECK(in_quantile_interval / reps < in_interval / reps);
  CHECK(min_samples_split(0.95) == 37);  // m = 19, k = ceil(20 * 0.95) = 19
  CHECK(min_samples_intervals(0.95) == 39);
  // the counts at other levels against a search from the smallest count (the
  // functions start theirs near the answer)
  for (double lv : {0.1, 0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999, 0.9999, 1 - 1e-6}) {
    int split = 2, inter = 1;
    while (static_cast<int>(std::ceil((split - split / 2 + 1) * lv - 1e-12)) > split - split / 2) ++split;
    while (static_cast<int>(std::floor((inter + 1) * (1.0 - lv) / 2.0 + 1e-12)) < 1) ++inter;
    CHECK(min_samples_split(lv) == split);
    CHECK(min_samples_intervals(lv) == inter);
  }
  // a level of 1 or more, or NaN, has no count (these loops never returned)
  for (double lv : {1.0, 1.5, std::nan(""), 0.0, -0.5, 1 - 1e-9}) {
    testing::require_input_error([&] { min_samples_split(lv); }, "level");
    testing::require_input_error([&] { min_samples_intervals(lv); }, "level");
    testing::require_input_error([&] { min_samples_finite(lv); }, "level");
  }
  CHECK_THROWS_AS(l2_region_split(normal_matrix(20, sd, rng), 0.95), input_error);
  CHECK_THROWS_AS(order_intervals(normal_matrix(20, sd, rng), 0.95), input_error);
}
