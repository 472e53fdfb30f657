// Entry-level conditionals through the joint precision (kronecker_solve.cpp):
// the precision (Cholesky of Q_mm) and matrix-free CG paths against the dense
// reference, exact draws, closed-form vs sample radii, memory guard.
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/chisq.hpp"
#include "ditimpute/gp_fit.hpp"
#include "ditimpute/gaussian.hpp"
#include "ditimpute/impute.hpp"

#include <Eigen/Cholesky>

#include <cmath>

using namespace ditimpute;

namespace {

GaussianProcess matern_gp(int H, int d, double lengthscale, Rng& rng) {
  Kernel k;
  k.type = KernelType::matern32;
  k.lengthscale = lengthscale;
  Matrix G = kernel_matrix(k, H);
  G.diagonal().array() += 0.01;
  RowMatrix mu(H, d);
  fill_standard_normal(rng, mu.data(), static_cast<std::size_t>(mu.size()));
  return GaussianProcess(G, testing::random_full_rank_spd(d, rng, 0.2), mu);
}

// Each entry missing with probability `rate` (not a whole frame: entry level).
Mask mcar_mask(int H, int d, double rate, Rng& rng) {
  Mask m(H, d, true);
  Vector u(static_cast<Eigen::Index>(H) * d);
  fill_standard_normal(rng, u.data(), static_cast<std::size_t>(u.size()));
  const double q = rate == 0.3 ? -0.5244005 : rate == 0.5 ? 0.0 : -1.2815516;  // normal quantiles of 0.3, 0.5, 0.1
  for (Eigen::Index k = 0; k < u.size(); ++k) m.observed[k] = u(k) < q ? 0 : 1;
  return m;
}

std::unique_ptr<Conditional> with(const GaussianProcess& gp, const Mask& mask, ConditionalMethod method) {
  ConditionalOptions o;
  o.method = method;
  return make_conditional(gp, mask, o);
}

double rel(const Matrix& a, const Matrix& b) { return (a - b).norm() / b.norm(); }

}  // namespace

TEST_CASE("precision and CG paths equal the dense conditional", "[gaussian][precision]") {
  Rng rng(31);
  const GaussianProcess gp = matern_gp(24, 40, 4.0, rng);  // 960 entries: dense in ~0.1 s
  const Mask mask = mcar_mask(24, 40, 0.3, rng);
  REQUIRE(!mask.frame_level());
  const Batch x = gp.simulate(3, rng);
  const auto de = with(gp, mask, ConditionalMethod::dense);
  const auto pr = with(gp, mask, ConditionalMethod::precision);
  const auto cg = with(gp, mask, ConditionalMethod::cg);
  const auto au = make_conditional(gp, mask);
  CHECK(de->method() == "dense");
  CHECK(pr->method() == "precision");
  CHECK(cg->method() == "CG");
  CHECK(au->method() == "precision");
  const Matrix m0 = de->mean(x);
  // Both are exact up to rounding; CG stops at a relative residual of 1e-10,
  // which kappa(Q_mm) (< 1e4 here) turns into < 1e-6 relative error.
  CHECK(rel(pr->mean(x), m0) < 1e-10);
  CHECK(rel(cg->mean(x), m0) < 1e-6);
  // a CG capped below what it needs says so, with its tolerance as given (a
  // review: "a relative residual of 0.000000", blamed on Q_mm alone)
  ConditionalOptions capped;
  capped.method = ConditionalMethod::cg;
  capped.cg_max_iter = 1;
  try {
    make_conditional(gp, mask, capped)->mean(x);
    FAIL("one CG iteration reached the tolerance");
  } catch (const numeric_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("1e-10") != std::string::npos);
    CHECK(msg.find("cg_max_iter") != std::string::npos);
  }
  capped.cg_max_iter = -1;
  testing::require_input_error([&] { make_conditional(gp, mask, capped); }, "cg_max_iter");
  CHECK(rel(Matrix(cg->mean(x.seq(1)).transpose()), Matrix(m0.row(1))) < 1e-6);
  const Matrix S = de->covariance();
  CHECK(rel(pr->covariance(), S) < 1e-10);
  CHECK(rel(cg->covariance(), S) < 1e-6);
  CHECK(rel(pr->marginal_sd(), S.diagonal().cwiseSqrt()) < 1e-10);
  CHECK(cg->marginal_sd().size() == 0);  // no cheap diagonal: impute() estimates it from draws
  // covariance_into() (the glue writes into R's matrix): the same matrix on
  // every path, both triangles, and an output of the wrong size is refused.
  for (const Conditional* c : {de.get(), pr.get(), cg.get()}) {
    INFO(c->method());
    Matrix into = Matrix::Constant(c->n_missing(), c->n_missing(), std::nan(""));
    c->covariance_into(into);
    CHECK((into - c->covariance()).cwiseAbs().maxCoeff() == 0.0);
    CHECK((into - into.transpose()).cwiseAbs().maxCoeff() == 0.0);
    Matrix wrong(c->n_missing(), c->n_missing() - 1);
    CHECK_THROWS_AS(c->covariance_into(wrong), numeric_error);
  }
  CHECK(rel(pr->eigenvalues(), de->eigenvalues()) < 1e-9);
  // kappa_obs and kappa_cond of the precision path come from a Krylov method
  // (m and |o| >= 200 here): each of the two extreme eigenvalues to a
  // residual of 1e-6 relative, which bounds its error (Bauer-Fike). A Ritz
  // value's error is of order residual^2 / gap, so the ratio is checked to
  // 2.1e-8 of the dense one (100x inside the guarantee).
  CHECK(std::abs(pr->kappa_obs() / de->kappa_obs() - 1) < 2.1e-8);
  CHECK(std::abs(pr->kappa_cond() / de->kappa_cond() - 1) < 2.1e-8);
  // The exact score of eq. 9 at two times.
  Matrix V(2, pr->n_missing());
  fill_standard_normal(rng, V.data(), static_cast<std::size_t>(V.size()));
  const Vector mu = de->mean(x.seq(0));
  for (double t : {0.05, 1.0}) CHECK(rel(pr->score(V, mu, t), de->score(V, mu, t)) < 1e-8);
}

TEST_CASE("precision and CG draws have the exact conditional mean and covariance", "[gaussian][precision][sample]") {
  Rng rng(32);
  const GaussianProcess gp = matern_gp(8, 5, 3.0, rng);
  const Mask mask = mcar_mask(8, 5, 0.5, rng);
  const Batch x = gp.simulate(1, rng);
  const auto de = with(gp, mask, ConditionalMethod::dense);
  const Vector mu = de->mean(x.seq(0));
  const Matrix S = de->covariance();
  const Eigen::LLT<Matrix> llt(S);
  const int Z = 20000, m = de->n_missing();
  REQUIRE(m >= 10);
  for (ConditionalMethod method : {ConditionalMethod::precision, ConditionalMethod::cg}) {
    const auto c = with(gp, mask, method);
    Rng r(case_seed(5, 0));
    const Matrix X = c->sample(c->mean(x.seq(0)), Z, r);
    // Whitened by the exact law, W = L^{-1} (x - mu) has mean 0 and covariance
    // I: sample mean entries have sd 1/sqrt(Z), sample covariance entries sd
    // <= sqrt(2/Z). 5 sd over ~m^2/2 = 200 entries is exceeded with
    // probability < 1e-4 (and the seed is fixed).
    Matrix W = X.transpose();
    W.colwise() -= mu;
    llt.matrixL().solveInPlace(W);
    const Vector wbar = W.rowwise().mean();
    CHECK(wbar.cwiseAbs().maxCoeff() < 5.0 / std::sqrt(Z));
    const Matrix C = W * W.transpose() / Z;
    CHECK((C - Matrix::Identity(m, m)).cwiseAbs().maxCoeff() < 5.0 * std::sqrt(2.0 / Z));
  }
}

TEST_CASE("impute(): sample radii and sd on the scalable paths, closed form on small patterns", "[gaussian][precision]") {
  Rng rng(33);
  const GaussianProcess gp = matern_gp(30, 40, 4.0, rng);  // 30% of 1200: ~360 missing entries
  Batch x = gp.simulate(2, rng);
  const Mask big = mcar_mask(30, 40, 0.5, rng);              // ~600 > kExactRadiusMaxMissing
  const Mask small = mcar_mask(30, 40, 0.3, rng);
  REQUIRE(big.n_missing() > kExactRadiusMaxMissing);
  REQUIRE(small.n_missing() <= kExactRadiusMaxMissing);
  const double nan = std::nan("");
  for (int k = 0; k < 1200; ++k) {
    if (!big.observed[k]) x.seq(0)[k] = nan;
    if (!small.observed[k]) x.seq(1)[k] = nan;
  }
  ImputeOptions o;
  o.n_samples = 400;
  o.level = 0.9;
  o.seed = 3;
  o.threads = 1;
  const ExactGPSampler sampler(gp);
  const Imputation imp = impute(sampler, x, o);
  const auto de = make_conditional_dense(gp, big);
  const double exact = gaussian_ball_radius(de->eigenvalues(), 0.9);
  // ||X - mu|| over ~600 entries is concentrated (its sd is a few % of its
  // mean here); the 361st of 400 draws sits within 3% of the exact quantile.
  CHECK(std::abs(imp.radius[0] / exact - 1) < 0.03);
  const auto ds = make_conditional_dense(gp, small);
  CHECK(std::abs(imp.radius[1] / gaussian_ball_radius(ds->eigenvalues(), 0.9) - 1) < 1e-8);
  // Interval half-widths: exact sd on the precision path.
  const std::vector<int> miss = big.missing_entries();
  const Vector sd = de->covariance().diagonal().cwiseSqrt();
  const double z = 1.6448536269514722;
  for (std::size_t a = 0; a < miss.size(); a += 50)
    CHECK(std::abs((imp.upper.seq(0)[miss[a]] - imp.lower.seq(0)[miss[a]]) / (2 * z * sd(a)) - 1) < 1e-8);
}

TEST_CASE("precision path: a Q_mm over the memory limit is an input error naming the size, CG runs",
          "[gaussian][precision][memory]") {
  Rng rng(34);
  const GaussianProcess gp = matern_gp(20, 30, 4.0, rng);
  const Mask mask = mcar_mask(20, 30, 0.5, rng);  // ~300 missing: Q_mm ~ 0.7 MB
  const Batch x = gp.simulate(1, rng);
  set_memory_limit(2e5);
  try {
    testing::require_input_error([&] { with(gp, mask, ConditionalMethod::precision); }, "x");
    testing::require_input_error([&] { with(gp, mask, ConditionalMethod::dense); }, "x");
    const auto cg = with(gp, mask, ConditionalMethod::cg);
    set_memory_limit(0)  /* the default */;
    CHECK(rel(cg->mean(x), with(gp, mask, ConditionalMethod::dense)->mean(x)) < 1e-6);
  } catch (...) {
    set_memory_limit(0)  /* the default */;
    throw;
  }
  set_memory_limit(0)  /* the default */;
  testing::require_input_error([] { parse_conditional_method("fast"); }, "method");
}

// The large dense factorisations go to the system LAPACK (src/lapack.hpp) on
// the calling thread and keep to Eigen's code on parallel_for workers (BLAS
// threads there would oversubscribe the cores). Both must give the same
// numbers to rounding: a wrong leading dimension, triangle or a missed
// symmetrisation in the LAPACK wrappers would show here.
TEST_CASE("dense algebra: LAPACK on the calling thread equals Eigen on a parallel_for worker", "[gaussian][precision]") {
  CHECK_FALSE(inside_parallel_for());
  std::vector<int> inside(4, 0);
  parallel_for(4, 2, [&](int i) { inside[i] = inside_parallel_for() ? 1 : 0; });
  CHECK(inside == std::vector<int>(4, 1));
  CHECK_FALSE(inside_parallel_for());
  parallel_for(2, 1, [&](int i) { inside[i] = inside_parallel_for() ? 1 : 0; });  // one thread: the caller itself
  CHECK(inside[0] == 0);
  CHECK(inside[1] == 0);

  Rng rng(77);
  const GaussianProcess gp = matern_gp(24, 30, 4.0, rng);
  const Mask mask = mcar_mask(24, 30, 0.5, rng);  // about 360 missing entries: above LAPACK's 128
  REQUIRE(mask.n_missing() > 200);
  const Batch x = gp.simulate(2, rng);
  const auto main_thread = with(gp, mask, ConditionalMethod::precision);
  std::unique_ptr<Conditional> worker;
  parallel_for(2, 2, [&](int i) {
    if (i == 0) worker = with(gp, mask, ConditionalMethod::precision);
  });
  const Matrix S = main_thread->covariance();
  Matrix S_worker;
  Vector sd_worker;
  parallel_for(2, 2, [&](int i) {
    if (i == 0) {
      S_worker = worker->covariance();
      sd_worker = worker->marginal_sd();
    }
  });
  CHECK(rel(S, S_worker) < 1e-11);
  CHECK((S - S.transpose()).cwiseAbs().maxCoeff() == 0.0);  // both triangles written
  // The Krylov condition numbers: LAPACK dsyevr's top Ritz pair here, Eigen's
  // full decomposition on the worker; both to the 1e-8 residual (2.1e-8 on
  // the ratio, see above).
  double kc_worker = 0.0, ko_worker = 0.0;
  parallel_for(2, 2, [&](int i) {
    if (i == 0) {
      kc_worker = worker->kappa_cond();
      ko_worker = worker->kappa_obs();
    }
  });
  CHECK(std::abs(main_thread->kappa_cond() / kc_worker - 1) < 2.1e-8);
  CHECK(std::abs(main_thread->kappa_obs() / ko_worker - 1) < 2.1e-8);
  CHECK(rel(main_thread->marginal_sd(), sd_worker) < 1e-11);
  CHECK(rel(main_thread->mean(x), worker->mean(x)) < 1e-11);
  // Against the dense reference, which never uses LAPACK.
  CHECK(rel(S, with(gp, mask, ConditionalMethod::dense)->covariance()) < 1e-9);

  // gp_fit's windows: log-likelihood and a short fit, both ways.
  Batch w = gp.simulate(6, rng);
  for (std::size_t k = 0; k < w.data.size(); ++k)
    if (mask.observed[k % mask.observed.size()] == 0) w.data[k] = std::nan("");
  const double ll = gp_marginal_loglik(w, gp.Gamma(), gp.Lambda(), Vector::Zero(30));
  double ll_worker = 0.0;
  parallel_for(2, 2, [&](int i) {
    if (i == 0) ll_worker = gp_marginal_loglik(w, gp.Gamma(), gp.Lambda(), Vector::Zero(30));
  });
  CHECK(std::abs(ll - ll_worker) < 1e-10 * std::abs(ll));
  GpFitOptions o;
  o.kernel.type = KernelType::matern32;
  o.kernel.lengthscale = 4.0;
  o.max_iter = 3;
  const GpFitResult f = gp_fit_em(w, o);
  GpFitResult f_worker;
  parallel_for(2, 2, [&](int i) {
    if (i == 0) f_worker = gp_fit_em(w, o);
  });
  CHECK(f.iterations == f_worker.iterations);
  CHECK(std::abs(f.loglik - f_worker.loglik) < 1e-8 * std::abs(f.loglik));
  CHECK(rel(f.Lambda, f_worker.Lambda) < 1e-8);
  // The sampled E-step's draws: BLAS dtrsm / dsyrk here, Eigen on the worker.
  o.estep = GpFitEStep::sampled;
  o.estep_draws = 8;
  o.seed = 5;
  const GpFitResult s = gp_fit_em(w, o);
  GpFitResult s_worker;
  parallel_for(2, 2, [&](int i) {
    if (i == 0) s_worker = gp_fit_em(w, o);
  });
  CHECK(s.estep_sampled);
  CHECK(s.iterations == s_worker.iterations);
  CHECK(std::abs(s.loglik - s_worker.loglik) < 1e-8 * std::abs(s.loglik));
  CHECK(rel(s.Lambda, s_worker.Lambda) < 1e-8);
  CHECK(rel(s.Lambda, f.Lambda) > 1e-8);  // the draws did change the fit
}

// The LAPACK/BLAS paths (dpotrf, dpotri, dtrsm, dsyrk, dsyevd, dgemm from 128
// rows, lapack.hpp) against the conditional computed here with Eigen alone
// from its definition: Sigma_cond = S_mm - S_mo S_oo^{-1} S_om and
// mu = mu_m + S_mo S_oo^{-1} (x_o - mu_o), eigenvalues by Eigen's solver.
// Sizes (m ~ 260, |o| ~ 600) put every path above the LAPACK threshold.
// From 4 MB (m >= 725) the factor of Q_mm, marginal_sd's work matrix and
// covariance_into()'s output are advised as huge pages (lapack.hpp): the
// same values as the dense path there too.
TEST_CASE("precision path with huge-page buffers (m > 730) equals the dense conditional", "[gaussian][precision]") {
  Rng rng(41);
  const GaussianProcess gp = matern_gp(32, 48, 4.0, rng);
  const Mask mask = mcar_mask(32, 48, 0.5, rng);
  REQUIRE(mask.n_missing() > 730);  // 8 m^2 bytes > 4.2 MB
  const Batch x = gp.simulate(2, rng);
  const auto de = with(gp, mask, ConditionalMethod::dense);
  const auto pr = with(gp, mask, ConditionalMethod::precision);
  const Matrix S = de->covariance();
  CHECK(rel(pr->mean(x), de->mean(x)) < 1e-10);
  CHECK(rel(pr->covariance(), S) < 1e-10);
  Matrix into(pr->n_missing(), pr->n_missing());
  pr->covariance_into(into);
  CHECK(rel(into, S) < 1e-10);
  CHECK(rel(pr->marginal_sd(), S.diagonal().cwiseSqrt()) < 1e-10);
}

TEST_CASE("LAPACK covariances, sds and condition numbers equal an Eigen-only reference", "[gaussian][precision][lapack]") {
  Rng rng(37);
  const int H = 24, d = 36;
  const GaussianProcess gp = matern_gp(H, d, 4.0, rng);
  const Mask mask = mcar_mask(H, d, 0.3, rng);
  REQUIRE(mask.n_missing() >= 200);
  const Batch x = gp.simulate(1, rng);
  const std::vector<int> miss = mask.missing_entries(), obs = mask.observed_entries();
  const auto entries = [&](const std::vector<int>& r, const std::vector<int>& c) {
    Matrix S(r.size(), c.size());
    for (std::size_t p = 0; p < r.size(); ++p)
      for (std::size_t q = 0; q < c.size(); ++q)
        S(p, q) = gp.Gamma()(r[p] / d, c[q] / d) * gp.Lambda()(r[p] % d, c[q] % d);
    return S;
  };
  const Matrix Soo = entries(obs, obs), Som = entries(obs, miss), Smm = entries(miss, miss);
  const Eigen::LDLT<Matrix> ldlt(Soo);
  const Matrix S = Smm - Som.transpose() * ldlt.solve(Som);
  Vector xo(static_cast<Eigen::Index>(obs.size()));
  const double* prior = gp.mean().data();  // row-major H x d: vec order
  for (std::size_t p = 0; p < obs.size(); ++p) xo(static_cast<Eigen::Index>(p)) = x.seq(0)[obs[p]] - prior[obs[p]];
  Vector mu = Som.transpose() * ldlt.solve(xo);
  for (std::size_t p = 0; p < miss.size(); ++p) mu(static_cast<Eigen::Index>(p)) += prior[miss[p]];
  Eigen::SelfAdjointEigenSolver<Matrix> es_c(S, Eigen::EigenvaluesOnly), es_o(Soo, Eigen::EigenvaluesOnly);
  const Vector ev = es_c.eigenvalues(), evo = es_o.eigenvalues();
  const double kc = ev(ev.size() - 1) / ev(0), ko = evo(evo.size() - 1) / evo(0);
  for (ConditionalMethod method : {ConditionalMethod::dense, ConditionalMethod::precision}) {
    const auto c = with(gp, mask, method);
    INFO(c->method());
    // Both ways are backward stable; kappa(S_oo) (printed) times 1e-16
    // bounds the rounding, far below 1e-10.
    INFO("kappa_obs " << ko);
    CHECK(rel(c->mean(x.seq(0)), mu) < 1e-10);
    CHECK(rel(c->covariance(), S) < 1e-10);
    CHECK(rel(c->marginal_sd(), S.diagonal().cwiseSqrt()) < 1e-10);
    CHECK(rel(c->eigenvalues(), ev) < 1e-9);
    CHECK(std::abs(c->kappa_cond() / kc - 1) < 2.1e-8);  // Krylov on the precision path: see above
    CHECK(std::abs(c->kappa_obs() / ko - 1) < 2.1e-8);
  }
}
