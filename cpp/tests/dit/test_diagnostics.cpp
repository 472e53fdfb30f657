// The DiT diagnostics (dit/diagnostics.cpp): batched noise predictions with
// per-state masks and times, and the expected denoising loss behind the
// distribution-shift coefficient.
#include "test_dit_helpers.hpp"

#include "ditimpute/dit_diagnostics.hpp"
#include "ditimpute/impute.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ditimpute;
using namespace ditimpute::testing;

TEST_CASE("predict_noise with per-state masks and times matches one call per state", "[dit][diagnostics]") {
  const DiTModel model = DiTModel::create(tiny_config(12, 2), 3, "cpu");
  Rng rng(4);
  Batch x = small_gp(12, 2, 3.0).simulate(5, rng);
  const std::vector<Mask> masks{Mask::from_missing_frames(12, 2, {9, 10, 11}), Mask::from_missing_frames(12, 2, {1}),
                                Mask::from_missing_frames(12, 2, {4, 5}), Mask::from_missing_frames(12, 2, {9, 10, 11}),
                                Mask::from_missing_frames(12, 2, {0, 6})};
  const std::vector<double> t{0.01, 0.5, 2.0, 7.0, 1e-4};
  const Batch all = model.predict_noise(x, masks, t, 1);
  for (int i = 0; i < 5; ++i) {
    Batch one(1, 12, 2);
    std::copy(x.seq(i), x.seq(i) + 24, one.seq(0));
    const Batch ref = model.predict_noise(one, masks[i], t[i], 1);
    for (int k = 0; k < 24; ++k) CHECK(all.seq(i)[k] == Approx(ref.seq(0)[k]).margin(1e-5));
  }
  CHECK_THROWS_AS(model.predict_noise(x, std::vector<Mask>(masks.begin(), masks.begin() + 2), t, 1), input_error);
  std::vector<double> bad_t = t;
  bad_t[2] = 0.0;
  CHECK_THROWS_AS(model.predict_noise(x, masks, bad_t, 1), input_error);
}

TEST_CASE("denoising_risk: reproducible, loss = excess + a positive irreducible part", "[dit][diagnostics]") {
  const GaussianProcess gp = small_gp(12, 2, 3.0);
  const DiTModel model = DiTModel::create(tiny_config(12, 2), 3, "cpu");
  Rng rng(5);
  Batch x = gp.simulate(6, rng);
  for (int i = 0; i < 6; ++i)
    for (int h = 8; h < 12; ++h)
      for (int j = 0; j < 2; ++j) x.at(i, h, j) = std::nan("");
  const DenoisingRisk a = denoising_risk(model, gp, x, 16, "eps", 9, 1);
  const DenoisingRisk b = denoising_risk(model, gp, x, 16, "eps", 9, 1);
  REQUIRE(a.loss.size() == 6u);
  CHECK(a.loss == b.loss);
  CHECK(a.excess == b.excess);
  double loss = 0, excess = 0;
  for (int i = 0; i < 6; ++i) {
    CHECK(a.excess[i] >= 0);
    CHECK(a.loss_se[i] > 0);
    loss += a.loss[i];
    excess += a.excess[i];
  }
  // E||eps_hat - eps||^2 = E||eps_hat - eps*||^2 + E||eps - eps*||^2, and the
  // last term is about 1 per entry at small t (half of the log-uniform times
  // lie below t ~ 0.01), so the gap is large against the Monte Carlo error of
  // 96 replicates.
  CHECK(loss > excess + 0.1 * 6);
  const DenoisingRisk s = denoising_risk(model, gp, x, 16, "score", 9, 1);
  CHECK(s.loss[0] != a.loss[0]);
  CHECK_THROWS_AS(denoising_risk(model, gp, x, 0, "eps", 9, 1), input_error);
  CHECK_THROWS_AS(denoising_risk(model, gp, x, 4, "v", 9, 1), input_error);
}

TEST_CASE("denoising_risk leaves a complete case out and a batch of complete cases is an input error", "[dit][diagnostics]") {
  // impute() passes a complete case through; its loss over no missing entry
  // is undefined: NaN, no replicates, and the other cases draw as they would
  // with its gap (their seeds go by index).
  const GaussianProcess gp = small_gp(12, 2, 3.0);
  const DiTModel model = DiTModel::create(tiny_config(12, 2), 3, "cpu");
  Rng rng(6);
  const Batch full = gp.simulate(4, rng);
  Batch gappy = full;
  for (int i = 0; i < 4; ++i)
    for (int h = 8; h < 12; ++h)
      for (int j = 0; j < 2; ++j) gappy.at(i, h, j) = std::nan("");
  Batch x = gappy;
  std::copy(full.seq(1), full.seq(1) + full.seq_size(), x.seq(1));  // case 1 complete
  const DenoisingRisk a = denoising_risk(model, gp, x, 8, "eps", 9, 1);
  const DenoisingRisk ref = denoising_risk(model, gp, gappy, 8, "eps", 9, 1);
  REQUIRE(a.loss.size() == 4u);
  CHECK(std::isnan(a.loss[1]));
  CHECK(std::isnan(a.loss_se[1]));
  CHECK(std::isnan(a.excess[1]));
  CHECK(std::isnan(a.excess_se[1]));
  for (int i : {0, 2, 3}) {
    CHECK(a.loss[i] == Approx(ref.loss[i]).epsilon(1e-5));
    CHECK(a.excess[i] == Approx(ref.excess[i]).epsilon(1e-5));
  }
  try {
    denoising_risk(model, gp, full, 8, "eps", 9, 1);
    FAIL("no error for a batch without a missing value");
  } catch (const input_error& e) {
    CHECK(e.arg() == "x");
  }
}
