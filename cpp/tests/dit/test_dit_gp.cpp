// GP-informed DiT (DiTConfig::gp): the untrained residual model is the GP's
// conditional-marginal sampler and the untrained score model its exact
// conditional sampler, a short training does not make either worse on GP
// data, and the GP travels with the model.
#include "test_dit_helpers.hpp"
// Before Catch: model_impl.hpp brings c10's logging, whose CHECK macro Catch's
// must replace (included after Catch, c10's CHECK would abort instead of counting).
#include "../../src/dit/model_impl.hpp"
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

// Z draws of an untrained GP-DiT (`mode`) for two GP sequences (H = 16,
// d = 2), one missing about half its entries (MCAR), one five frames.
struct UntrainedDraws {
  GaussianProcess gp;
  Batch x;
  std::vector<Mask> masks;
  std::vector<Matrix> draws;
};
UntrainedDraws untrained_draws(const std::string& mode, int Z) {
  const int H = 16, d = 2;
  auto gp = small_gp(H, d, 3.0);
  auto model = DiTModel::create(gp_config(H, d, mode), 7, "cpu");
  model.set_gp(gp);
  Rng rng(21);
  Batch x = gp.simulate(2, rng);
  std::vector<Mask> masks{mcar_mask(H, d, 0.5, rng), Mask::from_missing_frames(H, d, {3, 4, 5, 10, 15})};
  auto draws = model.sample_missing(x, masks, Z, SamplerOptions(), 5, 1);
  return {gp, x, masks, draws};
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
  const int Z = 4000;
  const auto [gp, x, masks, draws] = untrained_draws("residual", Z);
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

TEST_CASE("gp_conditional_eigen: U diag(lambda) U^T is the GP's conditional covariance", "[dit][gp]") {
  const int H = 12, d = 3;
  auto gp = small_gp(H, d, 3.0);
  Rng rng(5);
  Batch x = gp.simulate(1, rng);
  auto check = [&](const Mask& mask, const std::string& what) {
    INFO(what);
    Matrix U;
    Vector lambda;
    gp_conditional_eigen(gp, x.seq(0), mask, U, lambda);
    const auto miss = mask.missing_entries();
    REQUIRE(U.rows() == H * d);
    REQUIRE(U.cols() == static_cast<Eigen::Index>(miss.size()));
    REQUIRE(lambda.size() == U.cols());
    CHECK(lambda.minCoeff() >= 0.0);
    for (int k : mask.observed_entries()) CHECK(U.row(k).norm() == 0.0);
    Matrix Um(miss.size(), U.cols());
    for (std::size_t e = 0; e < miss.size(); ++e) Um.row(e) = U.row(miss[e]);
    // Nothing observed: the prior's Gamma (x) Lambda (no conditional to build).
    Matrix C(miss.size(), miss.size());
    if (miss.size() == static_cast<std::size_t>(H * d)) {
      for (int r = 0; r < H * d; ++r)
        for (int c = 0; c < H * d; ++c) C(r, c) = gp.Gamma()(r / d, c / d) * gp.Lambda()(r % d, c % d);
    } else {
      C = make_conditional_dense(gp, mask)->covariance();
    }
    CHECK((Um * lambda.asDiagonal() * Um.transpose() - C).norm() <= 1e-10 * C.norm());
    CHECK((Um.transpose() * Um - Matrix::Identity(Um.cols(), Um.cols())).norm() <= 1e-10);
    // Asked for the marginals too (one factorisation), it gives what
    // gp_entry_marginals gives, and the same eigenpairs.
    std::vector<double> mu(H * d, -7.0), sd(H * d, -7.0), mu2(H * d), sd2(H * d);
    Matrix U2;
    Vector lambda2;
    gp_conditional_eigen(gp, x.seq(0), mask, U2, lambda2, mu.data(), sd.data());
    gp_entry_marginals(gp, x.seq(0), mask, mu2.data(), sd2.data());
    for (int k = 0; k < H * d; ++k) {
      CHECK(mu[k] == Approx(mu2[k]).margin(1e-10));
      CHECK(sd[k] == Approx(sd2[k]).margin(1e-10));
    }
    CHECK((U2 - U).norm() == 0.0);
    CHECK((lambda2 - lambda).norm() == 0.0);
  };
  check(Mask::from_missing_frames(H, d, {0, 4, 5, 11}), "frame-level (Kronecker)");
  check(mcar_mask(H, d, 0.4, rng), "entry-level (dense)");
  check(Mask::from_missing_frames(H, d, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), "nothing observed (the prior)");
  // A NaN counts as missing, as in gp_entry_marginals.
  Batch y = x;
  y.seq(0)[4] = std::nan("");
  Matrix U;
  Vector lambda;
  gp_conditional_eigen(gp, y.seq(0), Mask::from_missing_frames(H, d, {5}), U, lambda);
  CHECK(U.cols() == d + 1);
  CHECK(U.row(4).norm() > 0.0);
  std::vector<double> mu(H * d);
  CHECK_THROWS_AS(gp_conditional_eigen(gp, x.seq(0), mcar_mask(H, d, 0.4, rng), U, lambda, mu.data(), nullptr),
                  input_error);
}

// The score model's base is the exact noise of the GP's joint conditional
// law, -sigma_t times its score (Conditional::score): with the output layer at
// zero (untrained) the network's noise prediction must equal it, on frame- and
// entry-level masks and at small and large t. Float32 inputs: relative 1e-4.
TEST_CASE("An untrained score GP-DiT predicts the GP's exact conditional noise", "[dit][gp]") {
  const int H = 16, d = 2;
  auto gp = small_gp(H, d, 3.0);
  auto model = DiTModel::create(gp_config(H, d, "score"), 7, "cpu");
  model.set_gp(gp);
  Rng rng(8);
  const Batch x0 = gp.simulate(3, rng);
  for (const Mask& mask : {Mask::from_missing_frames(H, d, {2, 3, 4, 9, 15}), mcar_mask(H, d, 0.5, rng)}) {
    const auto cond = make_conditional_dense(gp, mask);
    const auto miss = mask.missing_entries();
    for (double t : {0.01, 0.3, 4.0}) {
      const double alpha = std::exp(-t / 2), sigma = std::sqrt(1 - std::exp(-t));
      Batch xt = x0;
      Matrix V(x0.n, miss.size());
      std::normal_distribution<double> z(0.0, 1.0);
      for (int i = 0; i < x0.n; ++i)
        for (std::size_t e = 0; e < miss.size(); ++e) {
          // Float32 states, as the network sees them.
          const double v = static_cast<float>(alpha * x0.seq(i)[miss[e]] + sigma * z(rng));
          xt.seq(i)[miss[e]] = v;
          V(i, e) = v;
        }
      for (int i = 0; i < x0.n; ++i)
        for (int k : mask.observed_entries()) xt.seq(i)[k] = static_cast<float>(x0.seq(i)[k]);
      const Batch eps = model.predict_noise(xt, std::vector<Mask>(x0.n, mask), std::vector<double>(x0.n, t), 1);
      for (int i = 0; i < x0.n; ++i) {
        INFO("t = " << t << ", sequence " << i << ", missing " << miss.size());
        const Vector mu = cond->mean(xt.seq(i));
        const Matrix exact = -sigma * cond->score(V.row(i), mu, t);
        Vector got(miss.size());
        for (std::size_t e = 0; e < miss.size(); ++e) got(e) = eps.seq(i)[miss[e]];
        CHECK((got - exact.row(0).transpose()).norm() <= 1e-4 * exact.norm());
      }
    }
  }
}

// Before training the score model samples the GP's exact joint conditional
// law: the marginals as the residual model's (test above) and also the
// correlation between missing entries that the residual model leaves out.
// Adjacent missing frames of small_gp (lengthscale 3) correlate strongly
// (required below, so a sampler of the marginals fails the check). A sample
// correlation with Z = 4000 has SE (1 - rho^2) / sqrt(Z) <= 0.016; we allow
// 4.5 SE plus 0.02 for the 8-step sampler and float32.
TEST_CASE("An untrained score GP-DiT samples the GP's exact joint conditional law", "[dit][gp]") {
  const int Z = 4000;
  const auto [gp, x, masks, draws] = untrained_draws("score", Z);
  int strong = 0;
  for (int i = 0; i < 2; ++i) {
    const auto cond = make_conditional_dense(gp, masks[i]);
    const Vector m = cond->mean(x.seq(i));
    const Matrix C = cond->covariance();
    const Matrix& D = draws[i];
    REQUIRE(D.cols() == m.size());
    const Vector mean = D.colwise().mean().transpose();
    const Matrix centred = D.rowwise() - mean.transpose();
    const Matrix S = centred.transpose() * centred / (Z - 1);
    for (Eigen::Index e = 0; e < m.size(); ++e) {
      const double s = std::sqrt(C(e, e));
      CHECK(std::abs(mean(e) - m(e)) <= (4.5 / std::sqrt(Z) + 0.02) * s);
      CHECK(std::abs(std::sqrt(S(e, e)) / s - 1) <= 4.5 / std::sqrt(2.0 * Z) + 0.02);
      for (Eigen::Index f = e + 1; f < m.size(); ++f) {
        const double rho = C(e, f) / std::sqrt(C(e, e) * C(f, f));
        const double r = S(e, f) / std::sqrt(S(e, e) * S(f, f));
        CHECK(std::abs(r - rho) <= 4.5 * (1 - rho * rho) / std::sqrt(Z) + 0.02);
        if (std::abs(rho) > 0.5) ++strong;
      }
    }
  }
  CHECK(strong >= 5);
}

// On GP data the untrained residual model's only error is the correlation
// between missing entries that the marginal base leaves out; the score model
// starts at the GP's exact conditional law, so its untrained loss is the
// least any model reaches (up to the held-out sample) and below the residual
// model's. Training can add what the residual base misses and has nothing to
// add to the score base; neither may lose what the GP gives. Paired
// comparison: the same held-out sequences, masks, times and noise (seed 77)
// for every loss, so differences measure the weights. A short run (200
// steps) must end within 2% of the untrained loss or below it (the v-weighted
// loss of a model this small moves by several % when training goes wrong:
// the plain DiT starts at ~3x this loss, test_dit_training.cpp).
TEST_CASE("A short training does not make a GP-DiT worse than its GP on GP data", "[dit][gp][learning]") {
  const int H = 16, d = 2;
  const auto [gp, train, held_out] = small_gp_split(H, d, 800, 200, 99);
  auto strategy = mixed_strategy(H);
  auto loss = [&](const DiTModel& m) { return m.denoising_loss(held_out, strategy, "log_uniform", 77, 1, "v"); };
  const double plain_untrained = loss(DiTModel::create(tiny_config(H, d), 5, "cpu"));
  std::vector<double> untrained, trained;
  for (const std::string mode : {"residual", "score"}) {
    auto model = DiTModel::create(gp_config(H, d, mode), 5, "cpu");
    model.set_gp(gp);
    untrained.push_back(loss(model));
    TrainOptions o = cpu_train_options(200, 32, 11);
    o.lr = 1e-3;
    o.ema = 0.999;
    model.fit(train, nullptr, strategy, o);
    trained.push_back(loss(model));
    std::cout << "[dit gp] held-out loss: plain untrained " << plain_untrained << ", GP-" << mode << " untrained "
              << untrained.back() << ", trained " << trained.back() << "\n";
    CHECK(trained.back() <= 1.02 * untrained.back());
  }
  CHECK(untrained[0] < plain_untrained);
  CHECK(untrained[1] < untrained[0]);
}

// SamplerOptions::gp_control. Untrained, the network adds nothing to the GP
// base, the control draws equal the model's and the samples' mean is the GP's
// conditional mean to float rounding (without it, it misses by the Monte
// Carlo error sd / sqrt(Z)); the shift moves every draw of an entry alike, so
// the spread is the plain draws'. Trained (the network now corrects the base),
// the control-variate point estimates the same mean as the plain one (they
// agree at Z = 2000 within the plain mean's Monte Carlo error) with a smaller
// seed-to-seed spread at Z = 40.
TEST_CASE("The GP control variate removes the Monte Carlo error a GP-DiT's draws share with its GP", "[dit][gp]") {
  const int H = 16, d = 2, Z = 50;
  for (const std::string mode : {"residual", "score"}) {
    const auto [gp, x, masks, plain] = untrained_draws(mode, Z);
    auto model = DiTModel::create(gp_config(H, d, mode), 7, "cpu");
    model.set_gp(gp);
    SamplerOptions o;
    o.gp_control = true;
    const auto ctrl = model.sample_missing(x, masks, Z, o, 5, 1);
    double worst_plain = 0.0;
    for (int i = 0; i < 2; ++i) {
      const auto cond = make_conditional_dense(gp, masks[i]);
      const Vector m = cond->mean(x.seq(i));
      const Vector sd = cond->covariance().diagonal().cwiseSqrt();
      REQUIRE(ctrl[i].cols() == m.size());
      for (Eigen::Index e = 0; e < m.size(); ++e) {
        CHECK(std::abs(ctrl[i].col(e).mean() - m(e)) <= 1e-5 * (sd(e) + std::abs(m(e))));
        worst_plain = std::max(worst_plain, std::abs(plain[i].col(e).mean() - m(e)) / sd(e));
        const Vector shift = ctrl[i].col(e) - plain[i].col(e);
        CHECK(shift.maxCoeff() - shift.minCoeff() <= 1e-9 * (1 + shift.cwiseAbs().maxCoeff()));
      }
    }
    // Over ~30 entries, the largest |error| / sd of a 50-draw mean is about
    // 2.5 / sqrt(50) = 0.35; below 0.1 would mean no Monte Carlo error at all.
    CHECK(worst_plain > 0.1);
  }

  const auto [gp, train, held_out] = small_gp_split(H, d, 800, 4, 99);
  auto model = DiTModel::create(gp_config(H, d, "residual"), 5, "cpu");
  model.set_gp(gp);
  TrainOptions to = cpu_train_options(300, 32, 11);
  to.lr = 3e-3;
  model.fit(train, nullptr, mixed_strategy(H), to);
  Batch x = held_out;
  std::vector<Mask> masks;
  for (int i = 0; i < x.n; ++i) masks.push_back(Mask::from_missing_frames(H, d, {4, 5, 6, 7, 12}));
  SamplerOptions plain_o, ctrl_o;
  ctrl_o.gp_control = true;
  // Unbiased: at Z = 2000 the two points agree within the plain one's error.
  const int Zbig = 2000;
  const auto pb = model.sample_missing(x, masks, Zbig, plain_o, 3, 1);
  const auto cb = model.sample_missing(x, masks, Zbig, ctrl_o, 3, 1);
  for (int i = 0; i < x.n; ++i)
    for (Eigen::Index e = 0; e < pb[i].cols(); ++e) {
      const double mp = pb[i].col(e).mean(), mc = cb[i].col(e).mean();
      const double se = std::sqrt((pb[i].col(e).array() - mp).square().sum() / (Zbig - 1) / Zbig);
      CHECK(std::abs(mc - mp) <= 4.5 * se);
    }
  // The trained network does correct its base (its draws differ from the GP
  // base's draws from the same random numbers by far more than float
  // rounding, 1e-6 here; 300 steps move them by about 0.008), so the shift
  // above is not the untrained case's again.
  auto untrained = DiTModel::create(gp_config(H, d, "residual"), 5, "cpu");
  untrained.set_gp(gp);
  const auto base = untrained.sample_missing(x, masks, 40, plain_o, 1, 1);
  const auto trained = model.sample_missing(x, masks, 40, plain_o, 1, 1);
  double corrected = 0.0;
  for (int i = 0; i < x.n; ++i) corrected = std::max(corrected, (trained[i] - base[i]).cwiseAbs().maxCoeff());
  CHECK(corrected > 1e-3);
  // Lower seed-to-seed variance at Z = 40 (the same 4 cases, 6 seeds).
  double var_plain = 0.0, var_ctrl = 0.0;
  for (const bool control : {false, true}) {
    std::vector<std::vector<Vector>> means(x.n);
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const auto dr = model.sample_missing(x, masks, 40, control ? ctrl_o : plain_o, seed, 1);
      for (int i = 0; i < x.n; ++i) means[i].push_back(dr[i].colwise().mean().transpose());
    }
    double v = 0.0;
    for (int i = 0; i < x.n; ++i) {
      Vector avg = Vector::Zero(means[i][0].size());
      for (const auto& mu : means[i]) avg += mu / 6.0;
      for (const auto& mu : means[i]) v += (mu - avg).squaredNorm() / 5.0;
    }
    (control ? var_ctrl : var_plain) = v;
  }
  std::cout << "[dit gp] seed-to-seed variance of the 40-draw mean: plain " << var_plain << ", GP control "
            << var_ctrl << "\n";
  CHECK(var_ctrl < 0.5 * var_plain);

  SamplerOptions bad;
  bad.gp_control = true;
  auto plain_dit = DiTModel::create(tiny_config(H, d), 1, "cpu");
  require_input_error([&] { plain_dit.sample_missing(x, masks, 4, bad, 1, 1); }, "control_variate");
  auto channels = DiTModel::create(gp_config(H, d, "channels"), 1, "cpu");
  channels.set_gp(gp);
  require_input_error([&] { channels.sample_missing(x, masks, 4, bad, 1, 1); }, "control_variate");
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
    // gp = "score" refuses a run whose eigenvectors could pass 4 GiB, before
    // computing any (H*d = 16384: 64 examples of a batch are 64 GiB at worst).
    const int Hb = 512, db = 32;
    auto big = DiTModel::create(gp_config(Hb, db, "score"), 1, "cpu");
    big.set_gp(small_gp(Hb, db, 3.0));
    Batch xb = small_gp(Hb, db, 3.0).simulate(2, rng);
    TrainOptions ob = o;
    ob.gp_pool = 0;
    require_input_error([&] { big.fit(xb, nullptr, mixed_strategy(Hb), ob); }, "gp");
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
    for (const std::string mode : {"residual", "channels", "score"}) {
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

// On the CPU the sampler's network calls take at most kCpuTokensPerCall
// tokens; a bigger batch goes through the network in row chunks, each whole
// cases or inside one case, with those cases' GP eigenvectors. Rows are
// independent, so the chunked calls must draw what unchunked ones draw. A
// score GP-DiT with entry tokens (its noise depends on each case's own
// eigenvectors), trained 20 steps so that the network adds to the GP: 4 cases
// x 200 rows in one batch (chunks of 2 cases) against one case per batch (no
// chunk), and 1,000 rows of one case (chunks of 250), whose first 200 rows
// start from the same noise as a 200-row call and follow the deterministic
// default sampler. float32 products in other blockings: 1e-5 relative.
TEST_CASE("Sampling in network row chunks draws what one network call draws", "[dit][gp]") {
  const int H = 12, d = 3, Z = 200;
  const int64_t tokens = int64_t{H} * d;
  auto gp = small_gp(H, d, 3.0);
  DiTConfig c = gp_config(H, d, "score");
  c.tokens = "entry";
  auto model = DiTModel::create(c, 7, "cpu");
  model.set_gp(gp);
  Rng rng(31);
  model.fit(gp.simulate(64, rng), nullptr, mixed_strategy(H), cpu_train_options(20, 8, 5));
  REQUIRE(4 * Z * tokens > ditimpute::detail::kCpuTokensPerCall);
  REQUIRE(Z * tokens <= ditimpute::detail::kCpuTokensPerCall);
  REQUIRE(ditimpute::detail::network_chunk_rows(4 * Z, Z, tokens, false) == 2 * Z);
  REQUIRE(ditimpute::detail::network_chunk_rows(5 * Z, 5 * Z, tokens, false) == 250);
  REQUIRE(ditimpute::detail::network_chunk_rows(Z, Z, tokens, false) == Z);
  REQUIRE(ditimpute::detail::network_chunk_rows(4 * Z, Z, tokens, true) == 4 * Z);  // a GPU takes the whole batch
  CHECK(ditimpute::detail::network_chunk_rows(37, 37, 2000, false) == 1);  // no divisor of 37 within 8 rows

  Batch x = gp.simulate(4, rng);
  std::vector<Mask> masks;
  for (int i = 0; i < 4; ++i) masks.push_back(mcar_mask(H, d, 0.4, rng));
  const auto together = model.sample_missing(x, masks, Z, SamplerOptions(), 3, 1, 4 * Z);
  const auto apart = model.sample_missing(x, masks, Z, SamplerOptions(), 3, 1, Z);
  for (int i = 0; i < 4; ++i) {
    INFO("case " << i);
    CHECK(together[i].allFinite());
    CHECK(together[i].isApprox(apart[i], 1e-5));
  }
  Batch one(1, H, d);
  std::copy(x.seq(0), x.seq(0) + H * d, one.seq(0));
  const auto big = model.sample_missing(one, {masks[0]}, 5 * Z, SamplerOptions(), 3, 1, 5 * Z);
  const auto small = model.sample_missing(one, {masks[0]}, Z, SamplerOptions(), 3, 1, Z);
  CHECK(big[0].topRows(Z).isApprox(small[0], 1e-5));
  // The samples are not all alike (the check above could not pass by a constant).
  CHECK((small[0].row(0) - small[0].row(1)).norm() > 1e-3);
}
