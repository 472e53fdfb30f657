// GP-informed DiT (DiTConfig::gp): the untrained residual model is the GP's
// conditional-marginal sampler, a short training does not make it worse on
// GP data, and the GP travels with the model.
#include "test_dit_helpers.hpp"
#include "../test_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>

using namespace ditimpute;
using namespace ditimpute::testing;

namespace {

DiTConfig gp_config(int H, int d, const std::string& mode) {
  DiTConfig c = tiny_config(H, d);
  c.gp = mode;
  return c;
}

// An entry-level mask with about `rate` of the entries missing (at least one
// observed and one missing).
Mask mcar_mask(int H, int d, double rate, Rng& rng) {
  Mask m(H, d, true);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& o : m.observed) o = u(rng) < rate ? 0 : 1;
  m.observed[0] = 1;
  m.observed[1] = 0;
  return m;
}

}  // namespace

TEST_CASE("gp_entry_marginals: exact conditional marginals, data values where observed", "[dit][gp]") {
  const int H = 12, d = 2;
  auto gp = small_gp(H, d, 3.0);
  Rng rng(3);
  Batch x = gp.simulate(1, rng);
  const Mask mask = mcar_mask(H, d, 0.4, rng);
  std::vector<double> mu(H * d), sd(H * d);
  gp_entry_marginals(gp, x.seq(0), mask, mu.data(), sd.data());
  const auto dense = make_conditional_dense(gp, mask);
  const Vector m = dense->mean(x.seq(0));
  const Vector s = dense->covariance().diagonal().cwiseSqrt();
  const auto miss = mask.missing_entries();
  for (std::size_t e = 0; e < miss.size(); ++e) {
    CHECK(mu[miss[e]] == Approx(m(e)).margin(1e-8));
    CHECK(sd[miss[e]] == Approx(s(e)).margin(1e-8));
  }
  for (int k : mask.observed_entries()) {
    CHECK(mu[k] == x.seq(0)[k]);
    CHECK(sd[k] == 0.0);
  }
  // A NaN in the data counts as missing: it gets a conditional sd > 0.
  x.seq(0)[0] = std::nan("");
  gp_entry_marginals(gp, x.seq(0), mask, mu.data(), sd.data());
  CHECK(sd[0] > 0.0);
}

// Before training the residual network's output layer is zero, so its score
// is the exact score of N(mu, diag(sd^2)) and the sampler draws each missing
// entry from its exact GP conditional marginal, up to the sampler's own error
// (8-step UniPC-2: at most 1.4% in variance in oracle mode,
// bench/results/sampler.md) and float32 arithmetic. Tolerances with Z = 4000
// draws: a sample mean is off by sd / sqrt(Z) = 0.016 sd (one SE), a sample
// sd by about sd / sqrt(2 Z) = 0.011 sd; we allow 4.5 SE (two-sided 7e-6 per
// entry, so < 1e-3 over the ~25 entries checked) plus 2% for the sampler.
TEST_CASE("An untrained residual GP-informed DiT samples the GP's exact conditional marginals", "[dit][gp]") {
  const int H = 16, d = 2, Z = 4000;
  auto gp = small_gp(H, d, 3.0);
  auto model = DiTModel::create(gp_config(H, d, "residual"), 7, "cpu");
  model.set_gp(gp);
  Rng rng(21);
  Batch x = gp.simulate(2, rng);
  std::vector<Mask> masks{mcar_mask(H, d, 0.5, rng), Mask::from_missing_frames(H, d, {3, 4, 5, 10, 15})};
  const auto draws = model.sample_missing(x, masks, Z, SamplerOptions(), 5, 1);
  int checked = 0;
  for (int i = 0; i < 2; ++i) {
    const auto cond = make_conditional_dense(gp, masks[i]);
    const Vector m = cond->mean(x.seq(i));
    const Vector s = cond->covariance().diagonal().cwiseSqrt();
    const Matrix& D = draws[i];
    REQUIRE(D.cols() == m.size());
    for (Eigen::Index e = 0; e < m.size(); ++e) {
      const double mean = D.col(e).mean();
      const double sdev = std::sqrt((D.col(e).array() - mean).square().sum() / (Z - 1));
      CHECK(std::abs(mean - m(e)) <= (4.5 / std::sqrt(Z) + 0.02) * s(e));
      CHECK(std::abs(sdev / s(e) - 1) <= 4.5 / std::sqrt(2.0 * Z) + 0.02);
      ++checked;
    }
  }
  CHECK(checked >= 20);  // 10 entries of the frame mask, ~half of the 32 under MCAR
}

// On GP data the untrained residual model's only error is the correlation
// between missing entries that the marginal base leaves out; training can
// add it, and must not lose what the GP gives. Paired comparison: the same
// held-out sequences, masks, times and noise (seed 77) for both losses, so
// their difference measures the weights. A short run (200 steps) must end
// within 2% of the untrained loss or below it (the v-weighted loss of a
// model this small moves by several % when training goes wrong: the plain
// DiT starts at ~3x this loss, test_dit_training.cpp).
TEST_CASE("A short training does not make the residual GP-DiT worse than the GP on GP data", "[dit][gp][learning]") {
  const int H = 16, d = 2;
  const auto [gp, train, held_out] = small_gp_split(H, d, 800, 200, 99);
  auto strategy = mixed_strategy(H);
  auto model = DiTModel::create(gp_config(H, d, "residual"), 5, "cpu");
  model.set_gp(gp);
  const double untrained = model.denoising_loss(held_out, strategy, "log_uniform", 77, 1, "v");
  TrainOptions o = cpu_train_options(200, 32, 11);
  o.lr = 1e-3;
  o.ema = 0.999;
  model.fit(train, nullptr, strategy, o);
  const double trained = model.denoising_loss(held_out, strategy, "log_uniform", 77, 1, "v");
  auto plain = DiTModel::create(tiny_config(H, d), 5, "cpu");
  const double plain_untrained = plain.denoising_loss(held_out, strategy, "log_uniform", 77, 1, "v");
  std::cout << "[dit gp] held-out loss: plain untrained " << plain_untrained << ", GP-residual untrained "
            << untrained << ", trained " << trained << "\n";
  CHECK(untrained < plain_untrained);
  CHECK(trained <= 1.02 * untrained);
}

TEST_CASE("GP-informed DiT: the GP is checked, required, saved and pooled", "[dit][gp]") {
  const int H = 12, d = 2;
  auto gp = small_gp(H, d, 3.0);
  SECTION("configuration and set_gp name their arguments") {
    DiTConfig bad = gp_config(H, d, "both");
    require_input_error([&] { bad.validate(); }, "gp");
    auto plain = DiTModel::create(tiny_config(H, d), 1, "cpu");
    require_input_error([&] { plain.set_gp(gp); }, "gp");
    auto m = DiTModel::create(gp_config(H, d, "channels"), 1, "cpu");
    require_input_error([&] { m.set_gp(small_gp(H + 1, d, 3.0)); }, "gp");
    Rng rng(1);
    Batch x = gp.simulate(20, rng);
    TrainOptions o;
    o.steps = 2;
    o.threads = 1;
    o.device = "cpu";
    require_input_error([&] { m.fit(x, nullptr, mixed_strategy(H), o); }, "gp");
    o.gp_pool = -1;
    require_input_error([&] { o.validate(); }, "gp_pool");
  }
  SECTION("save/load keeps the GP: identical samples; pooled training is repeatable") {
    Rng rng(2);
    Batch x = gp.simulate(40, rng);
    auto fit_once = [&](const std::string& mode) {
      auto m = DiTModel::create(gp_config(H, d, mode), 3, "cpu");
      m.set_gp(gp);
      TrainOptions o = cpu_train_options(5, 8, 4);
      o.gp_pool = 16;
      m.fit(x, nullptr, mixed_strategy(H), o);
      return m;
    };
    for (const std::string mode : {"residual", "channels"}) {
      auto a = fit_once(mode);
      auto b = fit_once(mode);
      auto c = DiTModel::from_bytes(a.to_bytes(), "cpu");
      REQUIRE(c.gp() != nullptr);
      CHECK(c.config().gp == mode);
      CHECK((c.gp()->Gamma() - gp.Gamma()).norm() == 0.0);
      Batch y = gp.simulate(1, rng);
      std::vector<Mask> mk{Mask::from_missing_frames(H, d, {2, 3, 7})};
      const auto sa = a.sample_missing(y, mk, 10, SamplerOptions(), 9, 1);
      const auto sb = b.sample_missing(y, mk, 10, SamplerOptions(), 9, 1);
      const auto sc = c.sample_missing(y, mk, 10, SamplerOptions(), 9, 1);
      CHECK((sa[0] - sb[0]).norm() == 0.0);
      CHECK((sa[0] - sc[0]).norm() == 0.0);
    }
  }
}
