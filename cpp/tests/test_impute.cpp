// The imputation pipeline (impute.hpp): masks from NaN, grouping by pattern,
// the per-case seed scheme, closed-form regions of the exact GP imputer.
#include <catch2/catch.hpp>

#include "ditimpute/chisq.hpp"
#include "ditimpute/impute.hpp"
#include "ditimpute/patterns.hpp"
#include "test_helpers.hpp"

#include <cmath>
#include <limits>

using namespace ditimpute;

namespace {

GaussianProcess small_process(int H, int d) {
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 10.0;
  Matrix Lambda = Matrix::Identity(d, d);
  if (d > 1) Lambda(0, 1) = Lambda(1, 0) = 0.5;
  return GaussianProcess(kernel_matrix(k, H), Lambda, RowMatrix::Zero(H, d));
}

// n simulated sequences with frames [from, to) missing in sequences of even
// index and one entry missing in the others.
Batch cases_with_gaps(const GaussianProcess& gp, int n, Rng& rng) {
  Batch x = gp.simulate(n, rng);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0)
      for (int h = 5; h < 9; ++h)
        for (int j = 0; j < x.d; ++j) x.at(i, h, j) = nan;
    else
      x.at(i, 3, 1) = nan;
  }
  return x;
}

}  // namespace

TEST_CASE("masks_from_nan and group_by_pattern", "[impute]") {
  const GaussianProcess gp = small_process(12, 2);
  Rng rng(1);
  Batch x = cases_with_gaps(gp, 5, rng);
  const auto masks = masks_from_nan(x);
  REQUIRE(masks.size() == 5);
  CHECK(masks[0].n_missing() == 8);
  CHECK(masks[1].n_missing() == 1);
  const auto groups = group_by_pattern(masks);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0] == std::vector<int>{0, 2, 4});
  CHECK(groups[1] == std::vector<int>{1, 3});
  Batch full = gp.simulate(1, rng);
  CHECK_THROWS_AS(masks_from_nan(full), input_error);  // nothing to impute
  x.at(1, 0, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(masks_from_nan(x), input_error);
}

TEST_CASE("summarise_samples takes only the cases' own masks", "[impute]") {
  // a review: a mask of another shape wrote one case's draws into the next
  // case's values, or past the end of the batch
  const GaussianProcess gp = small_process(12, 2);
  Rng rng(4);
  const Batch x = cases_with_gaps(gp, 3, rng);
  const auto masks = masks_from_nan(x);
  std::vector<Matrix> samples;
  for (const Mask& m : masks) samples.push_back(Matrix::Random(50, m.n_missing()));
  ImputeOptions o;
  o.n_samples = 50;
  o.level = 0.9;
  CHECK_NOTHROW(summarise_samples(x, masks, samples, o));
  auto wrong = masks;
  wrong[0] = Mask(24, 1);  // as many entries, another shape
  wrong[0].observed = masks[0].observed;
  testing::require_input_error([&] { summarise_samples(x, wrong, samples, o); }, "masks");
  wrong = masks;
  wrong[1] = Mask(1000, 2);
  testing::require_input_error([&] { summarise_samples(x, wrong, samples, o); }, "masks");
  // the right shape, but missing where x is observed
  wrong = masks;
  const int k = masks[2].observed_entries()[0];
  wrong[2].observed[static_cast<std::size_t>(k)] = 0;
  auto more = samples;
  more[2] = Matrix::Random(50, wrong[2].n_missing());
  testing::require_input_error([&] { summarise_samples(x, wrong, more, o); }, "masks");
}

TEST_CASE("A complete case passes through the pipeline and a batch of complete cases is an input error", "[impute]") {
  const GaussianProcess gp = small_process(12, 2);
  Rng rng(5);
  const Batch gappy = cases_with_gaps(gp, 4, rng);
  Batch x = gappy;  // case 1 complete (its one gap filled), the others as in `gappy`
  x.at(1, 3, 1) = 0.25;
  CHECK_THROWS_AS(masks_from_nan(x), input_error);  // the default still wants a gap in every case
  const auto masks = masks_from_nan(x, "x", true);
  CHECK(masks[1].n_missing() == 0);
  SamplerOptions so;
  so.steps = 5;
  const ExactGPSampler exact(gp);
  const OracleGPSampler oracle(gp, so);
  ImputeOptions o;
  o.n_samples = 40;  // enough for the sampled imputer's finite-sample region at 0.95
  o.seed = 6;
  for (const CaseSampler* s : {static_cast<const CaseSampler*>(&exact), static_cast<const CaseSampler*>(&oracle)}) {
    const Imputation imp = impute(*s, x, o);
    const Imputation ref = impute(*s, gappy, o);
    const std::size_t S = x.seq_size();
    for (std::size_t k = 0; k < S; ++k) {
      CHECK(imp.point.seq(1)[k] == x.seq(1)[k]);
      CHECK(imp.centre.seq(1)[k] == x.seq(1)[k]);
      CHECK(std::isnan(imp.lower.seq(1)[k]));
      CHECK(std::isnan(imp.upper.seq(1)[k]));
    }
    CHECK(imp.radius[1] == 0.0);
    CHECK(imp.samples[1].rows() == o.n_samples);
    CHECK(imp.samples[1].cols() == 0);
    // Every other case as if the complete one had had its gap: seeds go by
    // case index, and the complete case takes none of the draws.
    for (int i : {0, 2, 3}) {
      CHECK(imp.samples[i] == ref.samples[i]);
      CHECK(imp.radius[i] == ref.radius[i]);
      for (std::size_t k = 0; k < S; ++k) CHECK(imp.point.seq(i)[k] == ref.point.seq(i)[k]);
    }
    // The draws of the samplers themselves (not only the pipeline's use).
    const auto draws = s->draw(x, masks, 3, 7, 1);
    CHECK(draws[1].rows() == 3);
    CHECK(draws[1].cols() == 0);
    CHECK(draws[0] == s->draw(gappy, masks_from_nan(gappy), 3, 7, 1)[0]);
    // Its samples summarised again (another level): still passed through.
    ImputeOptions o80 = o;
    o80.level = 0.8;
    const Imputation again = summarise_samples(x, masks, imp.samples, o80);
    CHECK(again.radius[1] == 0.0);
    CHECK(again.point.seq(1)[0] == x.seq(1)[0]);
    // Coverage: nothing to cover (NaN); the empty truth lies in its ball.
    const auto cov = region_coverage(gp, x, imp.centre, imp.radius, 50, 8, 1);
    CHECK(std::isnan(cov[1]));
    CHECK(cov[0] >= 0.0);
    CHECK(region_contains(x, imp.centre, imp.radius, imp.point)[1]);
  }
  // Nothing to impute anywhere: an input error naming x, for one case or several.
  Batch full = gp.simulate(3, rng);
  for (int n : {1, 3}) {
    Batch b(n, full.H, full.d);
    std::copy(full.data.begin(), full.data.begin() + static_cast<std::ptrdiff_t>(n * full.seq_size()), b.data.begin());
    try {
      impute(exact, b, o);
      FAIL("no error for a batch without a missing value");
    } catch (const input_error& e) {
      CHECK(e.arg() == "x");
      CHECK(std::string(e.what()).find("nothing to impute") != std::string::npos);
    }
  }
}

TEST_CASE("masks_to_impute passes a complete case beside others and rejects a batch of complete cases", "[impute]") {
  // The one rule of every entry that takes a batch with its imputation
  // (impute(), outside completions, distribution_error()).
  const GaussianProcess gp = small_process(12, 2);
  Rng rng(3);
  Batch x = cases_with_gaps(gp, 3, rng);
  x.at(1, 3, 1) = 0.5;  // case 1 complete
  const auto masks = masks_to_impute(x, "x");
  REQUIRE(masks.size() == 3);
  CHECK(masks[0].n_missing() == 8);
  CHECK(masks[1].n_missing() == 0);
  CHECK(masks[2].n_missing() == 8);
  // Every case complete: nothing to impute, an input error naming the argument.
  const Batch full = gp.simulate(2, rng);
  for (int n : {1, 2}) {
    Batch b(n, full.H, full.d);
    std::copy(full.data.begin(), full.data.begin() + static_cast<std::ptrdiff_t>(n * full.seq_size()), b.data.begin());
    try {
      masks_to_impute(b, "data");
      FAIL("no error for a batch without a missing value");
    } catch (const input_error& e) {
      CHECK(e.arg() == "data");
      CHECK(std::string(e.what()).find("nothing to impute") != std::string::npos);
    }
  }
  // The other checks of masks_from_nan still hold.
  x.at(0, 0, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(masks_to_impute(x, "x"), input_error);
  Batch empty_case = gp.simulate(2, rng);
  for (std::size_t k = 0; k < empty_case.seq_size(); ++k) empty_case.seq(0)[k] = std::nan("");
  CHECK_THROWS_AS(masks_to_impute(empty_case, "x"), input_error);
}

TEST_CASE("A case's draws depend only on its own seed, not on its neighbours", "[impute]") {
  const GaussianProcess gp = small_process(12, 2);
  Rng rng(2);
  const Batch x = cases_with_gaps(gp, 4, rng);
  Batch first(1, 12, 2);
  std::copy(x.seq(0), x.seq(0) + 24, first.data.begin());
  SamplerOptions so;
  so.steps = 10;
  const ExactGPSampler exact(gp);
  const OracleGPSampler oracle(gp, so);
  for (const CaseSampler* s : {static_cast<const CaseSampler*>(&exact), static_cast<const CaseSampler*>(&oracle)}) {
    const auto all = s->draw(x, masks_from_nan(x), 5, 9, 2);
    const auto alone = s->draw(first, masks_from_nan(first), 5, 9, 1);
    CHECK(all[0] == alone[0]);
    CHECK(all[0] != all[2]);  // same pattern, other case: other stream
  }
}

TEST_CASE("The exact GP imputer's regions and intervals are closed-form and hold their level", "[impute]") {
  const GaussianProcess gp = small_process(16, 2);
  Rng rng(3);
  const Batch x = cases_with_gaps(gp, 6, rng);
  ImputeOptions o;
  o.n_samples = 10;  // the closed form does not depend on Z
  o.level = 0.9;
  o.seed = 4;
  const Imputation imp = impute(ExactGPSampler(gp), x, o);
  const auto masks = masks_from_nan(x);
  for (int i = 0; i < x.n; ++i) {
    const auto cond = make_conditional(gp, masks[i]);
    const Vector mu = cond->mean(x.seq(i));
    const auto miss = cond->missing_entries();
    CHECK((gather_entries(imp.point.seq(i), miss) - mu).norm() < 1e-10);
    CHECK(imp.radius[i] == Approx(gaussian_ball_radius(cond->eigenvalues(), 0.9)));
    // The ball holds 90% of 20,000 exact draws (sd of the estimate 0.2%).
    L2Region ball;
    ball.centre = mu;
    ball.radius = imp.radius[i];
    CHECK(coverage(ball, cond->sample(mu, 20000, rng)) == Approx(0.9).margin(0.01));
    const double sd0 = std::sqrt(cond->covariance()(0, 0));
    CHECK(imp.upper.seq(i)[miss[0]] - imp.lower.seq(i)[miss[0]] == Approx(2 * 1.6448536 * sd0).epsilon(1e-6));
    CHECK(std::isnan(imp.lower.seq(i)[miss[0] == 0 ? 1 : 0]) == (masks[i].observed[miss[0] == 0 ? 1 : 0] != 0));
  }
  // Sampled imputers take the finite-sample construction; too few samples for it is an input error.
  o.n_samples = 10;
  SamplerOptions so;
  so.steps = 5;
  CHECK_THROWS_AS(impute(OracleGPSampler(gp, so), x, o), input_error);
  o.region = "quantile";
  CHECK_NOTHROW(impute(OracleGPSampler(gp, so), x, o));
  o.region = "other";
  CHECK_THROWS_AS(impute(ExactGPSampler(gp), x, o), input_error);
}
