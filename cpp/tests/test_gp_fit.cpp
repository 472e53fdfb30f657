// Tests of the ECM / ECME fit of the separable GP (gp_fit.hpp): the precision-based
// marginal likelihood against the textbook dense formula, recovery of known
// parameters from simulated windows with missing entries, monotone
// likelihood, and input errors.
#include <catch2/catch.hpp>

#include "ditimpute/gp_fit.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace ditimpute;

namespace {

Matrix lambda3() {
  Matrix L(3, 3);
  L << 1.0, 0.5, 0.2,
       0.5, 2.0, -0.3,
       0.2, -0.3, 0.5;
  return L;
}

Kernel matern(double ell) {
  Kernel k;
  k.type = KernelType::matern32;
  k.lengthscale = ell;
  return k;
}

// Lengthscale (from `start`) and nugget (from 0.01) both fitted.
GpFitOptions nugget_options(double start) {
  GpFitOptions opt;
  opt.kernel = matern(start);
  opt.lengthscale_upper = 100.0;
  opt.fit_nugget = true;
  opt.nugget = 0.01;
  return opt;
}

// n windows from the process with each entry hidden (NaN) with probability p.
Batch simulate_with_gaps(const GaussianProcess& gp, int n, double p, std::uint64_t seed) {
  Rng rng(seed);
  Batch x = gp.simulate(n, rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (double& v : x.data)
    if (u(rng) < p) v = std::numeric_limits<double>::quiet_NaN();
  return x;
}

// log N(x_o; mu_o, Sigma_oo) with Sigma_oo gathered from Gamma (x) Lambda.
double dense_loglik(const GaussianProcess& gp, const Batch& x) {
  double s = 0.0;
  for (int i = 0; i < x.n; ++i) {
    std::vector<int> obs;
    for (int k = 0; k < x.H * x.d; ++k)
      if (!std::isnan(x.seq(i)[k])) obs.push_back(k);
    if (obs.empty()) continue;
    const Matrix S = covariance_entries(gp, obs, obs);
    Vector r(obs.size());
    for (std::size_t a = 0; a < obs.size(); ++a) r(a) = x.seq(i)[obs[a]] - gp.mean()(obs[a] / x.d, obs[a] % x.d);
    Eigen::LLT<Matrix> llt(S);
    s += -0.5 * (obs.size() * std::log(2.0 * M_PI) + 2.0 * Matrix(llt.matrixL()).diagonal().array().log().sum() +
                 r.dot(llt.solve(r)));
  }
  return s;
}

// A GP whose Gamma is a Matern 3/2 kernel plus a white-noise share (the
// nugget the fits estimate), Lambda from lambda3(), mean zero.
GaussianProcess nugget_gp(int H, double lengthscale, double nugget) {
  Matrix G = kernel_matrix(matern(lengthscale), H);
  G.diagonal().array() += nugget;
  return GaussianProcess(G, lambda3(), RowMatrix::Zero(H, 3));
}

// An EM-type fit never lowers its objective (up to rounding).
void check_monotone(const GpFitResult& fit) {
  for (std::size_t k = 1; k < fit.objective_trace.size(); ++k)
    CHECK(fit.objective_trace[k] >= fit.objective_trace[k - 1] - 1e-8 * std::abs(fit.objective_trace[k - 1]));
}

// The penalised objective as documented in gp_fit.hpp, from the exact
// log-likelihood: loglik - (ridge n H / 2) tr(Lambda^{-1})
// - (nu / 2) [log|Lambda| + tr(D Lambda^{-1})], nu = s n H / (1 - s).
double penalised(const Batch& x, const Matrix& Gamma, const Matrix& Lambda, const Vector& mean, double ridge,
                 double s, const Vector& D) {
  const double nH = static_cast<double>(x.n) * x.H;
  const double nu = s * nH / (1.0 - s);
  const Eigen::LLT<Matrix> llt(Lambda);
  const Matrix inv = llt.solve(Matrix::Identity(Lambda.rows(), Lambda.cols()));
  const double logdet = 2.0 * Matrix(llt.matrixL()).diagonal().array().log().sum();
  return gp_marginal_loglik(x, Gamma, Lambda, mean) - 0.5 * ridge * nH * inv.trace() -
         0.5 * nu * (logdet + D.dot(inv.diagonal()));
}

// Each variable's observed variance (over the observed count) and its mean.
Vector observed_variance(const Batch& x) {
  Vector sum = Vector::Zero(x.d), sq = Vector::Zero(x.d), cnt = Vector::Zero(x.d);
  for (int i = 0; i < x.n; ++i)
    for (int h = 0; h < x.H; ++h)
      for (int j = 0; j < x.d; ++j) {
        const double v = x.at(i, h, j);
        if (std::isnan(v)) continue;
        sum(j) += v;
        sq(j) += v * v;
        cnt(j) += 1.0;
      }
  return (sq.array() / cnt.array() - (sum.array() / cnt.array()).square()).matrix();
}

// The recovery tests' data: 150 windows of 24 frames x 3 variables (Matern
// lengthscale 4, Lambda lambda3(), mean mu) with 20% of entries missing, and
// fit options that start far from the truth.
struct Recovery {
  Vector mu;
  GaussianProcess gp;
  Batch x;
  GpFitOptions opt;
};

Recovery recovery_setup() {
  const int H = 24, n = 150;
  const Vector mu = (Vector(3) << 1.0, -2.0, 0.5).finished();
  RowMatrix M(H, 3);
  for (int h = 0; h < H; ++h) M.row(h) = mu.transpose();
  GaussianProcess gp(kernel_matrix(matern(4.0), H), lambda3(), M);
  Batch x = simulate_with_gaps(gp, n, 0.2, 2024);
  GpFitOptions opt;
  opt.kernel = matern(1.0);  // start far from the truth
  opt.lengthscale_upper = 100.0;
  return Recovery{mu, gp, x, opt};
}

}  // namespace

TEST_CASE("Shrinkage with complete windows gives (1 - s) times the ML Lambda plus s D in one step", "[gp_fit][shrinkage]") {
  const int H = 8, n = 25;
  Matrix G = kernel_matrix(matern(2.0), H);
  G.diagonal().array() += 0.1;
  const GaussianProcess gp(G, lambda3(), RowMatrix::Zero(H, 3));
  Rng rng(21);
  const Batch x = gp.simulate(n, rng);
  GpFitOptions opt;
  opt.kernel = matern(2.0);
  opt.fixed_Gamma = G;
  opt.shrinkage = 0.3;
  const GpFitResult f = gp_fit_em(x, opt);
  // Complete data and Gamma fixed: the GLS mean and S = sum_i R_i' Gi R_i, no iteration needed.
  const Matrix Gi = G.inverse();
  const Vector a = Gi * Vector::Ones(H);
  RowMatrix total = RowMatrix::Zero(H, 3);
  for (int i = 0; i < n; ++i) total += x.matrix(i);
  const Vector mu = total.transpose() * a / (n * a.sum());
  Matrix S = Matrix::Zero(3, 3);
  for (int i = 0; i < n; ++i) {
    const RowMatrix R = x.matrix(i).rowwise() - mu.transpose();
    S += R.transpose() * Gi * R;
  }
  const Vector D = observed_variance(x) / (G.trace() / H);
  const Matrix expected = 0.7 * S / (n * H) + Matrix(0.3 * D.asDiagonal());
  INFO("fitted\n" << f.Lambda << "\nexpected\n" << expected);
  CHECK((f.Lambda - expected).norm() < 1e-10 * expected.norm());
  CHECK((f.mean - mu).norm() < 1e-10);
  CHECK(f.converged);
  // Correlations shrink by 0.7 relative to maximum likelihood (the diagonal
  // moves only by the gap between S / (nH) and D).
  opt.shrinkage = 0.0;
  const GpFitResult ml = gp_fit_em(x, opt);
  CHECK(std::abs(f.Lambda(0, 1) - 0.7 * ml.Lambda(0, 1)) < 1e-10);
  CHECK(std::abs(f.objective - penalised(x, G, f.Lambda, f.mean, 0.0, 0.3, D)) < 1e-8 * std::abs(f.objective));
}

TEST_CASE("Shrinkage with missing entries converges to a maximum of the penalised likelihood", "[gp_fit][shrinkage]") {
  // The fit's objective is checked from outside: at the returned parameters
  // it matches loglik minus the documented penalty, and no small change of
  // Lambda or the mean raises it (a stationary point of the right objective;
  // a wrong CM-step would converge elsewhere and some direction would gain).
  const int H = 8;
  Matrix G = kernel_matrix(matern(2.0), H);
  G.diagonal().array() += 0.05;
  const GaussianProcess gp(G, lambda3(), RowMatrix::Zero(H, 3));
  const Batch x = simulate_with_gaps(gp, 30, 0.3, 17);
  GpFitOptions opt;
  opt.kernel = matern(3.0);  // the lengthscale is fitted too, the nugget held at the truth's
  opt.lengthscale_upper = 100.0;
  opt.nugget = 0.05;
  opt.ridge = 1e-3;
  opt.shrinkage = 0.4;
  opt.estep = GpFitEStep::exact;
  opt.tol = 1e-13;
  opt.max_iter = 5000;
  const GpFitResult f = gp_fit_em(x, opt);
  REQUIRE(f.converged);
  const Vector D = observed_variance(x) / 1.05;  // Gamma's diagonal is 1 + nugget
  const double at = penalised(x, f.Gamma, f.Lambda, f.mean, 1e-3, 0.4, D);
  CHECK(std::abs(f.objective - at) < 1e-9 * std::abs(at));
  CHECK(f.objective < f.loglik);
  const double eps = 1e-3;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c <= r; ++c)
      for (double sign : {-1.0, 1.0}) {
        Matrix L = f.Lambda;
        L(r, c) += sign * eps;
        if (r != c) L(c, r) += sign * eps;
        INFO("entry (" << r << ", " << c << "), sign " << sign);
        CHECK(penalised(x, f.Gamma, L, f.mean, 1e-3, 0.4, D) < at);
      }
  for (int j = 0; j < 3; ++j)
    for (double sign : {-1.0, 1.0}) {
      Vector m = f.mean;
      m(j) += sign * eps;
      CHECK(penalised(x, f.Gamma, f.Lambda, m, 1e-3, 0.4, D) < at);
    }
  // The lengthscale's search (on the expected complete-data objective with
  // the prior's weight) ends where the penalised likelihood is flat in it too:
  // 2% either way lowers it (the search's own tolerance is 0.01%).
  for (double factor_ell : {0.98, 1.02}) {
    Matrix Gs = kernel_matrix(matern(f.kernel.lengthscale * factor_ell), H);
    Gs.diagonal().array() += 0.05;
    CHECK(penalised(x, Gs, f.Lambda, f.mean, 1e-3, 0.4, D) < at);
  }
  // And shrinkage pulls the correlations towards zero against the ML fit.
  opt.shrinkage = 0.0;
  const GpFitResult ml = gp_fit_em(x, opt);
  auto corr = [](const Matrix& L, int r, int c) { return L(r, c) / std::sqrt(L(r, r) * L(c, c)); };
  for (int r = 1; r < 3; ++r)
    for (int c = 0; c < r; ++c) CHECK(std::abs(corr(f.Lambda, r, c)) < std::abs(corr(ml.Lambda, r, c)));
}


TEST_CASE("gp_marginal_loglik equals the dense Gaussian log-density of the observed entries", "[gp_fit]") {
  const Vector mu = (Vector(3) << 1.0, -2.0, 0.5).finished();
  RowMatrix M(7, 3);
  for (int h = 0; h < 7; ++h) M.row(h) = mu.transpose();
  const GaussianProcess gp(kernel_matrix(matern(2.5), 7), lambda3(), M);
  Batch x = simulate_with_gaps(gp, 5, 0.3, 11);
  // One window fully observed, one with a single observed entry: both paths of the formula.
  for (int k = 0; k < 21; ++k) x.seq(0)[k] = gp.mean()(k / 3, k % 3) + 0.1 * k;
  for (int k = 1; k < 21; ++k) x.seq(1)[k] = std::numeric_limits<double>::quiet_NaN();
  const double ours = gp_marginal_loglik(x, gp.Gamma(), gp.Lambda(), mu);
  // Both are sums of a few dozen O(1)..O(10) terms in double precision.
  CHECK(ours == Approx(dense_loglik(gp, x)).epsilon(1e-10));
}

TEST_CASE("gp_fit_em recovers lengthscale, Lambda and mean from windows with 20% missing entries", "[gp_fit]") {
  const auto [mu, gp, x, start] = recovery_setup();
  GpFitOptions opt = start;
  const GpFitResult fit = gp_fit_em(x, opt);

  REQUIRE(fit.converged);
  // With Gamma known the frames whiten into n*H = 3600 draws of N(0, Lambda):
  // the sd of an entry of Lambda-hat is about sqrt((L_jj L_kk + L_jk^2)/3600),
  // under 2.5% of sqrt(L_jj L_kk); 10% is four such sds (20% missing adds a little).
  const Matrix L = lambda3();
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) CHECK(std::abs(fit.Lambda(j, k) - L(j, k)) < 0.1 * std::sqrt(L(j, j) * L(k, k)));
  // The lengthscale is pinned by 150 * 24 frames; 10% is several of its sds.
  CHECK(fit.kernel.lengthscale == Approx(4.0).epsilon(0.1));
  CHECK(fit.kernel.variance == 1.0);
  // The GLS mean of 150 windows has sd sqrt(L_jj / (150 * 1'Gamma^-1 1)) ~ 0.04 sqrt(L_jj).
  for (int j = 0; j < 3; ++j) CHECK(std::abs(fit.mean(j) - mu(j)) < 0.15 * std::sqrt(L(j, j)));

  // ECME never lowers the likelihood (up to rounding of a sum of ~10^4 terms).
  check_monotone(fit);
  CHECK(fit.objective == fit.loglik);  // ridge 0: plain maximum likelihood
  CHECK(fit.loglik == Approx(gp_marginal_loglik(x, fit.Gamma, fit.Lambda, fit.mean)).epsilon(1e-12));
  // A maximum of the likelihood beats the true parameters on the same data.
  CHECK(fit.loglik >= gp_marginal_loglik(x, gp.Gamma(), gp.Lambda(), mu));
  long n_obs = 0;
  for (double v : x.data) n_obs += std::isnan(v) ? 0 : 1;
  CHECK(fit.n_observed == n_obs);
}

TEST_CASE("gp_fit fits a shifted copy of the windows to the same parameters, its mean shifted", "[gp_fit]") {
  // A level that dwarfs the spread (1e7 with sds of about 1: sensor offsets,
  // map coordinates in metres): uncentred, the second moments cancelled, and
  // the fit lost Lambda's correlation or failed (a user review).
  const auto [mu, gp, x, start] = recovery_setup();
  GpFitOptions opt = start;
  opt.max_iter = 30;
  for (const double shift : {1e7, -3e8}) {
    Batch y = x;
    for (double& v : y.data)
      if (!std::isnan(v)) v += shift;
    for (const bool lbfgs : {false, true}) {
      const GpFitResult a = lbfgs ? gp_fit_lbfgs(x, opt) : gp_fit_em(x, opt);
      const GpFitResult b = lbfgs ? gp_fit_lbfgs(y, opt) : gp_fit_em(y, opt);
      CHECK(b.kernel.lengthscale == Approx(a.kernel.lengthscale).epsilon(1e-6));
      CHECK((b.Lambda - a.Lambda).cwiseAbs().maxCoeff() < 1e-6 * a.Lambda.cwiseAbs().maxCoeff());
      // the mean to the digits a value of 1e7-3e8 keeps (2e-16 of it: 0.06 at 3e8)
      for (int j = 0; j < 3; ++j) CHECK(std::abs(b.mean(j) - shift - a.mean(j)) < 1e-6 * std::abs(shift) + 1e-6);
      CHECK(b.loglik == Approx(a.loglik).epsilon(1e-8));
      CHECK(b.iterations == a.iterations);
    }
  }
}

TEST_CASE("gp_fit_em fits a nugget together with the lengthscale", "[gp_fit]") {
  const GaussianProcess gp = nugget_gp(24, 5.0, 0.2);
  const Batch x = simulate_with_gaps(gp, 150, 0.2, 77);
  const GpFitResult fit = gp_fit_em(x, nugget_options(2.0));
  REQUIRE(fit.converged);
  // 3,600 frames pin both; 15% / 25% are several standard errors (a smaller
  // nugget trades against a shorter lengthscale, so it is the looser one).
  CHECK(fit.kernel.lengthscale == Approx(5.0).epsilon(0.15));
  CHECK(fit.nugget == Approx(0.2).epsilon(0.25));
  check_monotone(fit);
  CHECK(fit.loglik >= gp_marginal_loglik(x, gp.Gamma(), gp.Lambda(), Vector::Zero(3)));
}

TEST_CASE("ECM (search on the expected complete-data likelihood) reaches the ECME fit at 50% missing", "[gp_fit]") {
  const GaussianProcess gp = nugget_gp(16, 3.0, 0.1);
  const Batch x = simulate_with_gaps(gp, 60, 0.5, 77);
  GpFitOptions opt = nugget_options(1.0);
  const GpFitResult ecm = gp_fit_em(x, opt);
  opt.search = GpFitSearch::exact;
  const GpFitResult ecme = gp_fit_em(x, opt);
  REQUIRE(ecm.converged);
  REQUIRE(ecme.converged);
  // Both climb the same likelihood and stop when an iteration gains less than
  // tol = 1e-7 per observed entry; at EM's linear rate (about 0.9 here) what
  // is left is ~10 gains, 1e-6 per entry. 1e-4 per entry (~0.14 in total) is
  // 100 times that, and far below the likelihood's own sampling noise
  // (O(1) in total): the two fits are the same maximum.
  const double per_entry = std::abs(ecm.loglik - ecme.loglik) / static_cast<double>(ecm.n_observed);
  CHECK(per_entry < 1e-4);
  // A log-likelihood within 0.14 of the maximum moves a parameter by under
  // half its standard error (about 8% for the lengthscale and 25% for the
  // nugget here), so 5% / 15% relative.
  CHECK(ecm.kernel.lengthscale == Approx(ecme.kernel.lengthscale).epsilon(0.05));
  CHECK(ecm.nugget == Approx(ecme.nugget).epsilon(0.15));
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) CHECK(std::abs(ecm.Lambda(j, k) - ecme.Lambda(j, k)) < 0.05 * std::sqrt(ecme.Lambda(j, j) * ecme.Lambda(k, k)));
  // ECM never lowers the exact likelihood; the reported value is the exact one.
  check_monotone(ecm);
  CHECK(ecm.loglik == Approx(gp_marginal_loglik(x, ecm.Gamma, ecm.Lambda, ecm.mean)).epsilon(1e-12));
  CHECK(ecm.loglik >= gp_marginal_loglik(x, gp.Gamma(), gp.Lambda(), Vector::Zero(3)));
}

TEST_CASE("The sampled E-step reaches the exact fit's maximum up to its Monte Carlo gap", "[gp_fit][sampled]") {
  // Same data and settings as the ECM / ECME case above (p = 11 free
  // parameters: 3 means, 6 entries of Lambda, lengthscale, nugget).
  const GaussianProcess gp = nugget_gp(16, 3.0, 0.1);
  const Batch x = simulate_with_gaps(gp, 60, 0.5, 77);
  GpFitOptions opt = nugget_options(1.0);
  opt.estep = GpFitEStep::exact;
  const GpFitResult exact = gp_fit_em(x, opt);
  REQUIRE(exact.converged);
  CHECK_FALSE(exact.estep_sampled);
  auto sampled = [&](int draws, std::uint64_t seed) {
    GpFitOptions o = opt;
    o.estep = GpFitEStep::sampled;
    o.estep_draws = draws;
    o.seed = seed;
    return gp_fit_em(x, o);
  };
  const GpFitResult s32 = sampled(32, 1);
  CHECK(s32.estep_sampled);
  CHECK(s32.converged);
  // The reported log-likelihood is the exact one at the fit, and every kept
  // step raised it.
  check_monotone(s32);
  CHECK(s32.loglik == Approx(gp_marginal_loglik(x, s32.Gamma, s32.Lambda, s32.mean)).epsilon(1e-12));
  // The fit is a Monte Carlo perturbation of the maximum: below it, and close.
  // The likelihood's own sampling scale is p / 2 = 5.5 (the expected log
  // likelihood ratio of the maximum over the truth); a gap under a tenth of
  // it moves no parameter by more than about a third of its standard error,
  // so the ECM case's tolerances (half a standard error) hold.
  const double gap32 = exact.loglik - s32.loglik;
  CHECK(gap32 > -1e-6);
  CHECK(gap32 < 0.55);
  CHECK(s32.kernel.lengthscale == Approx(exact.kernel.lengthscale).epsilon(0.05));
  CHECK(s32.nugget == Approx(exact.nugget).epsilon(0.15));
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k)
      CHECK(std::abs(s32.Lambda(j, k) - exact.Lambda(j, k)) < 0.05 * std::sqrt(exact.Lambda(j, j) * exact.Lambda(k, k)));
  // The gap shrinks with the draws (their covariance estimate's variance goes
  // like 1 / draws): 1,024 draws land closer than 4.
  const double gap4 = exact.loglik - sampled(4, 1).loglik;
  const double gap1024 = exact.loglik - sampled(1024, 1).loglik;
  CHECK(gap1024 < gap4);
  CHECK(gap1024 < 0.05);
  // The seed fixes the draws: the same seed gives the same fit, another a different one.
  const GpFitResult again = sampled(32, 1);
  CHECK(again.loglik == s32.loglik);
  CHECK((again.Lambda.array() == s32.Lambda.array()).all());
  CHECK(sampled(32, 2).loglik != s32.loglik);
  // Bad draws are an input error naming the argument.
  GpFitOptions bad = opt;
  bad.estep = GpFitEStep::sampled;
  bad.estep_draws = 0;
  CHECK_THROWS_AS(gp_fit_em(x, bad), input_error);
}

TEST_CASE("The automatic E-step samples only when a window misses 1,000 entries or more", "[gp_fit][sampled]") {
  GpFitOptions opt = nugget_options(2.0);
  opt.max_iter = 1;
  const GaussianProcess small = nugget_gp(16, 3.0, 0.1);
  CHECK_FALSE(gp_fit_em(simulate_with_gaps(small, 10, 0.5, 3), opt).estep_sampled);
  // 400 frames of 3 variables with 90% missing: about 1,080 missing entries.
  const GaussianProcess big = nugget_gp(400, 3.0, 0.1);
  Batch x = simulate_with_gaps(big, 2, 0.9, 4);
  int most = 0;
  for (int i = 0; i < x.n; ++i) {
    int m = 0;
    for (int k = 0; k < x.H * x.d; ++k) m += std::isnan(x.seq(i)[k]) ? 1 : 0;
    most = std::max(most, m);
  }
  REQUIRE(most >= kAutoSampledMissing);
  CHECK(gp_fit_em(x, opt).estep_sampled);
  opt.estep = GpFitEStep::exact;
  CHECK_FALSE(gp_fit_em(x, opt).estep_sampled);
}

TEST_CASE("gp_fit_em gives bit-identical fits run to run whatever thread finishes a window first", "[gp_fit]") {
  // Windows are spread over every core and their E-step statistics summed;
  // the sums must be taken in window order, or the last digits (and, through
  // the series layer's draws, a seeded imputation) change from run to run.
  // Both E-step kinds: second moments (the kernel search) and Lambda's
  // statistics with Gamma fixed (impute_series()).
  const GaussianProcess gp = nugget_gp(16, 3.0, 0.1);
  const Batch x = simulate_with_gaps(gp, 40, 0.4, 91);
  GpFitOptions fixed = nugget_options(1.0);
  fixed.fixed_Gamma = gp.Gamma();
  for (const GpFitOptions& opt : {nugget_options(1.0), fixed}) {
    const GpFitResult first = gp_fit_em(x, opt);
    for (int rep = 0; rep < 4; ++rep) {
      const GpFitResult again = gp_fit_em(x, opt);
      CHECK(again.loglik == first.loglik);
      CHECK(again.iterations == first.iterations);
      CHECK((again.Lambda.array() == first.Lambda.array()).all());
      CHECK((again.mean.array() == first.mean.array()).all());
    }
  }
}

TEST_CASE("gp_fit_em with the lengthscale fixed keeps it and still raises the likelihood", "[gp_fit]") {
  const int H = 12;
  const GaussianProcess gp(kernel_matrix(matern(3.0), H), lambda3(), RowMatrix::Zero(H, 3));
  const Batch x = simulate_with_gaps(gp, 40, 0.3, 5);
  GpFitOptions opt;
  opt.kernel = matern(3.0);
  opt.fit_lengthscale = false;
  const GpFitResult fit = gp_fit_em(x, opt);
  CHECK(fit.kernel.lengthscale == 3.0);
  CHECK(fit.loglik > fit.objective_trace.front());
}

TEST_CASE("gp_fit_em with a ridge fits collinear variables that plain ML cannot", "[gp_fit]") {
  // Variable 3 is an exact copy of variable 1 (as BeijingAir sites that share a
  // weather station): Lambda is singular at the maximum, the likelihood unbounded.
  const int H = 10;
  const GaussianProcess gp(kernel_matrix(matern(2.0), H), lambda3(), RowMatrix::Zero(H, 3));
  Batch x = simulate_with_gaps(gp, 30, 0.1, 9);
  for (int i = 0; i < x.n; ++i)
    for (int h = 0; h < H; ++h) x.at(i, h, 2) = x.at(i, h, 0);
  GpFitOptions opt;
  opt.kernel = matern(2.0);
  // The lengthscale is held: exact zeros in the copy's differences also pull
  // Gamma towards singular (that needs a nugget), which is not this test.
  opt.fit_lengthscale = false;
  opt.ridge = 1e-3;
  const GpFitResult fit = gp_fit_em(x, opt);
  CHECK(fit.converged);
  check_monotone(fit);
  // The ridge is the floor of Lambda's spectrum: S / (nH) is PSD, plus ridge I.
  Eigen::SelfAdjointEigenSolver<Matrix> es(fit.Lambda);
  CHECK(es.eigenvalues().minCoeff() >= 1e-3 * (1 - 1e-9));
  CHECK(fit.objective < fit.loglik);
  // The copy is (almost) perfectly correlated with its original.
  CHECK(fit.Lambda(0, 2) / std::sqrt(fit.Lambda(0, 0) * fit.Lambda(2, 2)) > 0.99);
}

TEST_CASE("gp_fit_em rejects bad input naming the argument", "[gp_fit]") {
  const int H = 6;
  const GaussianProcess gp(kernel_matrix(matern(2.0), H), lambda3(), RowMatrix::Zero(H, 3));
  Rng rng(1);
  Batch x = gp.simulate(4, rng);
  GpFitOptions opt;
  opt.kernel = matern(2.0);
  auto arg_of = [&](const Batch& b, const GpFitOptions& o) {
    try {
      gp_fit_em(b, o);
    } catch (const input_error& e) {
      return e.arg();
    }
    return std::string("no error");
  };
  GpFitOptions bad = opt;
  bad.lengthscale_lower = 5.0;
  CHECK(arg_of(x, bad) == "lengthscale");
  bad = opt;
  bad.lengthscale_upper = 0.05;
  CHECK(arg_of(x, bad) == "upper");
  bad = opt;
  bad.max_iter = 0;
  CHECK(arg_of(x, bad) == "max_iter");
  Batch no_var = x;
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < H; ++h) no_var.at(i, h, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK(arg_of(no_var, opt) == "x");
  Batch inf = x;
  inf.at(2, 3, 0) = std::numeric_limits<double>::infinity();
  CHECK(arg_of(inf, opt) == "x");
  for (double v : {-0.1, 0.6, std::numeric_limits<double>::quiet_NaN()}) {
    bad = opt;
    bad.validation = v;
    CHECK(arg_of(x, bad) == "validation");
  }
  bad = opt;
  bad.validation = 0.1;
  bad.patience = 0;
  CHECK(arg_of(x, bad) == "patience");
  for (double v : {-0.1, 1.0, std::numeric_limits<double>::quiet_NaN()}) {
    bad = opt;
    bad.shrinkage = v;
    CHECK(arg_of(x, bad) == "shrinkage");
  }
  // a fixed Gamma: named as such, and a covariance (a review: an asymmetric one
  // was fitted with and returned as given; -I and NaN blamed the lengthscale)
  const Matrix G = kernel_matrix(matern(2.0), H);
  bad = opt;
  bad.fixed_Gamma = G;
  bad.fixed_Gamma(0, 1) += 0.5;
  CHECK(arg_of(x, bad) == "fixed_Gamma");
  bad.fixed_Gamma = -Matrix::Identity(H, H);
  CHECK(arg_of(x, bad) == "fixed_Gamma");
  bad.fixed_Gamma = G;
  bad.fixed_Gamma(2, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK(arg_of(x, bad) == "fixed_Gamma");
  bad.fixed_Gamma = Matrix::Identity(H + 1, H + 1);
  CHECK(arg_of(x, bad) == "fixed_Gamma");
  bad.fixed_Gamma = G;
  CHECK(arg_of(x, bad) == "no error");
}

TEST_CASE("Early stopping returns the parameters where the held-out error was lowest", "[gp_fit][validation]") {
  // Few windows for a 16 x 16 Lambda (136 free entries from about 480
  // observed values at 50% missing): the likelihood's maximiser overfits,
  // so the held-out error turns up before the fit converges.
  const int H = 10, d = 16;
  Rng lrng(7);
  Matrix A(d, d);
  fill_standard_normal(lrng, A.data(), static_cast<std::size_t>(A.size()));
  Matrix Lam = A * A.transpose() / d;
  Lam.diagonal().array() += 0.1;
  Matrix G = kernel_matrix(matern(3.0), H);
  G.diagonal().array() += 0.05;
  const GaussianProcess gp(G, Lam, RowMatrix::Zero(H, d));
  const Batch x = simulate_with_gaps(gp, 6, 0.5, 11);
  long observed = 0;
  for (double v : x.data) observed += std::isnan(v) ? 0 : 1;

  GpFitOptions opt = nugget_options(3.0);
  opt.ridge = 1e-3;
  opt.validation = 0.2;
  opt.seed = 5;
  const GpFitResult f = gp_fit_em(x, opt);
  INFO("iterations " << f.iterations << ", best " << f.best_iteration << ", held out " << f.n_validation);
  // The held-out entries: about 20% of those observed (binomial, 4 sd), the rest fitted.
  CHECK(f.n_observed + f.n_validation == observed);
  CHECK(std::abs(f.n_validation - 0.2 * observed) < 4.0 * std::sqrt(observed * 0.2 * 0.8));
  // One score at the start and after each iteration; the returned iteration is the lowest.
  REQUIRE(f.validation_trace.size() == f.objective_trace.size());
  REQUIRE(f.best_iteration >= 0);
  REQUIRE(f.best_iteration <= f.iterations);
  const double lowest = *std::min_element(f.validation_trace.begin(), f.validation_trace.end());
  CHECK(f.validation_trace[f.best_iteration] == lowest);
  // Here the error turns up, and the patience rule ends the fit 3 iterations on.
  CHECK(f.stopped_early);
  CHECK(f.converged);
  CHECK(f.iterations - f.best_iteration == opt.patience);
  CHECK(f.validation_trace.back() > lowest);
  // What is returned is the fit stopped at best_iteration (same draws, same path).
  GpFitOptions capped = opt;
  capped.max_iter = std::max(1, f.best_iteration);
  const GpFitResult c = gp_fit_em(x, capped);
  if (f.best_iteration >= 1) {
    CHECK(c.loglik == f.loglik);
    CHECK(c.kernel.lengthscale == f.kernel.lengthscale);
    CHECK(c.nugget == f.nugget);
    CHECK((c.Lambda - f.Lambda).norm() == 0.0);
    CHECK((c.mean - f.mean).norm() == 0.0);
  }
  // Without validation the same data fit by maximum likelihood, all entries used.
  GpFitOptions ml = opt;
  ml.validation = 0.0;
  const GpFitResult m = gp_fit_em(x, ml);
  CHECK(m.n_observed == observed);
  CHECK(m.validation_trace.empty());
  CHECK_FALSE(m.stopped_early);
}

TEST_CASE("gp_fit_em: E-step statistics over the memory limit are an input error naming the size", "[gp_fit][memory]") {
  const int H = 12;
  const GaussianProcess gp(kernel_matrix(matern(3.0), H), lambda3(), RowMatrix::Zero(H, 3));
  const Batch x = simulate_with_gaps(gp, 40, 0.3, 5);  // second moments of 36 entries: 36^2 doubles ~ 10.4 kB
  GpFitOptions opt;
  opt.kernel = matern(3.0);
  set_memory_limit(1e4);
  try {
    gp_fit_em(x, opt);
    set_memory_limit(0);
    FAIL("no input_error");
  } catch (const input_error& e) {
    set_memory_limit(0);  // the default again
    CHECK(e.arg() == "x");
    CHECK(std::string(e.what()).find("E-step") != std::string::npos);
  }
}

TEST_CASE("gp_fit_gradient matches central finite differences of the penalised log-likelihood", "[gp_fit][lbfgs]") {
  // Small problem, every term present: 30% missing, a nugget, ridge and shrinkage.
  const int H = 8;
  const GaussianProcess gp = nugget_gp(H, 3.0, 0.1);
  const Batch x = simulate_with_gaps(gp, 12, 0.3, 77);
  GpFitOptions opt = nugget_options(2.0);
  opt.ridge = 0.05;
  opt.shrinkage = 0.2;
  // A point away from the maximum, so the gradient is far from zero.
  Matrix Lam = lambda3();
  Lam(0, 1) = Lam(1, 0) = 0.3;
  const Vector mu = (Vector(3) << 0.2, -0.1, 0.3).finished();
  const double ell = 2.5, nug = 0.15;
  const GpFitGradient g = gp_fit_gradient(x, opt, ell, nug, mu, Lam);
  auto f = [&](double e, double nu, const Vector& m, const Matrix& L) {
    return gp_fit_gradient(x, opt, e, nu, m, L).objective;
  };
  // Central differences have error O(h^2 f''') ~ 1e-10 relative at h = 1e-5;
  // rounding in an objective of ~1e2 adds ~1e-16 * 1e2 / 1e-5 = 1e-9. A wrong
  // term (a missing factor 2, a transposed block) is off by O(1) relative.
  const double h = 1e-5;
  auto check = [&](double analytic, double plus, double minus) {
    const double fd = (plus - minus) / (2.0 * h);
    CHECK(std::abs(analytic - fd) <= 1e-5 * std::max(1.0, std::abs(fd)));
  };
  for (int j = 0; j < 3; ++j) {
    Vector mp = mu, mm = mu;
    mp(j) += h;
    mm(j) -= h;
    check(g.mean(j), f(ell, nug, mp, Lam), f(ell, nug, mm, Lam));
  }
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k <= j; ++k) {
      Matrix Lp = Lam, Lm = Lam;  // a symmetric perturbation: d f = G_jj h, or 2 G_jk h off the diagonal
      Lp(j, k) += h;
      Lm(j, k) -= h;
      if (j != k) {
        Lp(k, j) += h;
        Lm(k, j) -= h;
      }
      check((j == k ? 1.0 : 2.0) * g.Lambda(j, k), f(ell, nug, mu, Lp), f(ell, nug, mu, Lm));
    }
  check(g.log_lengthscale, f(ell * std::exp(h), nug, mu, Lam), f(ell * std::exp(-h), nug, mu, Lam));
  check(g.log_nugget, f(ell, nug * std::exp(h), mu, Lam), f(ell, nug * std::exp(-h), mu, Lam));
  CHECK(g.gradient_norm > 1.0);  // far from a stationary point
  // The loglik it reports is the exact one.
  Matrix Gm = kernel_matrix(matern(ell), H);
  Gm.diagonal().array() += nug;
  CHECK(g.loglik == Approx(gp_marginal_loglik(x, Gm, Lam, mu)).epsilon(1e-12));
}

TEST_CASE("gp_fit_gradient's lengthscale derivative is right for every kernel type", "[gp_fit][lbfgs]") {
  const GaussianProcess gp = nugget_gp(10, 3.0, 0.1);
  const Batch x = simulate_with_gaps(gp, 6, 0.2, 5);
  for (KernelType t : {KernelType::laplace, KernelType::rbf, KernelType::matern32, KernelType::matern52}) {
    GpFitOptions opt = nugget_options(2.0);
    opt.kernel.type = t;
    const double ell = 2.2, nug = 0.1, h = 1e-5;
    const Vector mu = Vector::Zero(3);
    const GpFitGradient g = gp_fit_gradient(x, opt, ell, nug, mu, lambda3());
    const double fd = (gp_fit_gradient(x, opt, ell * std::exp(h), nug, mu, lambda3()).objective -
                       gp_fit_gradient(x, opt, ell * std::exp(-h), nug, mu, lambda3()).objective) / (2.0 * h);
    INFO(to_string(t));
    CHECK(std::abs(g.log_lengthscale - fd) <= 1e-5 * std::max(1.0, std::abs(fd)));
  }
}

TEST_CASE("gp_fit_lbfgs reaches a stationary point and recovers the parameters from windows with 20% missing", "[gp_fit][lbfgs]") {
  const auto [mu, gp, x, start] = recovery_setup();
  GpFitOptions opt = start;
  opt.gradient_tol = 1e-3;
  const GpFitResult fit = gp_fit_lbfgs(x, opt);
  REQUIRE(fit.converged);
  CHECK(fit.gradient_norm < 1e-3);
  // The reported norm is the one gp_fit_gradient gives at the fit (not a stale one).
  const GpFitGradient g = gp_fit_gradient(x, opt, fit.kernel.lengthscale, fit.nugget, fit.mean, fit.Lambda);
  CHECK(g.gradient_norm < 1e-3);
  // Tolerances as for gp_fit_em's recovery test above (the same data): each
  // several sampling sds of the estimate.
  const Matrix L = lambda3();
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 3; ++k) CHECK(std::abs(fit.Lambda(j, k) - L(j, k)) < 0.1 * std::sqrt(L(j, j) * L(k, k)));
  CHECK(fit.kernel.lengthscale == Approx(4.0).epsilon(0.1));
  for (int j = 0; j < 3; ++j) CHECK(std::abs(fit.mean(j) - mu(j)) < 0.15 * std::sqrt(L(j, j)));
  check_monotone(fit);
  CHECK(fit.loglik == Approx(gp_marginal_loglik(x, fit.Gamma, fit.Lambda, fit.mean)).epsilon(1e-12));
  CHECK(fit.loglik >= gp_marginal_loglik(x, gp.Gamma(), gp.Lambda(), mu));
  // The same maximum as EM: at gradient norm 1e-3 the gain left is ~ norm^2 / 2
  // times the missing-information factor, far below 0.01 log-likelihood units.
  const GpFitResult em = gp_fit_em(x, opt);
  CHECK(std::abs(fit.loglik - em.loglik) < 0.05);
  CHECK(fit.loglik >= em.loglik - 1e-3);
  CHECK(fit.kernel.lengthscale == Approx(em.kernel.lengthscale).epsilon(1e-3));
}

TEST_CASE("gp_fit_lbfgs fits the nugget, ridge and shrinkage to a stationary point of the penalised objective", "[gp_fit][lbfgs]") {
  const GaussianProcess gp = nugget_gp(16, 4.0, 0.2);
  const Batch x = simulate_with_gaps(gp, 60, 0.5, 31);
  GpFitOptions opt = nugget_options(2.0);
  opt.ridge = 0.01;
  opt.shrinkage = 0.1;
  opt.gradient_tol = 1e-3;
  const GpFitResult fit = gp_fit_lbfgs(x, opt);
  REQUIRE(fit.converged);
  check_monotone(fit);
  const GpFitGradient g = gp_fit_gradient(x, opt, fit.kernel.lengthscale, fit.nugget, fit.mean, fit.Lambda);
  CHECK(g.gradient_norm < 1e-3);
  CHECK(std::abs(g.objective - fit.objective) < 1e-9 * std::abs(fit.objective));
  // Perturbing any fitted parameter a little lowers the penalised objective.
  const double base = fit.objective;
  CHECK(gp_fit_gradient(x, opt, fit.kernel.lengthscale * 1.05, fit.nugget, fit.mean, fit.Lambda).objective < base);
  CHECK(gp_fit_gradient(x, opt, fit.kernel.lengthscale / 1.05, fit.nugget, fit.mean, fit.Lambda).objective < base);
  CHECK(gp_fit_gradient(x, opt, fit.kernel.lengthscale, fit.nugget * 1.1, fit.mean, fit.Lambda).objective < base);
  CHECK(gp_fit_gradient(x, opt, fit.kernel.lengthscale, fit.nugget / 1.1, fit.mean, fit.Lambda).objective < base);
  CHECK(gp_fit_gradient(x, opt, fit.kernel.lengthscale, fit.nugget, fit.mean, 1.05 * fit.Lambda).objective < base);
  CHECK(gp_fit_gradient(x, opt, fit.kernel.lengthscale, fit.nugget, fit.mean, fit.Lambda / 1.05).objective < base);
  // EM with a tight tol reaches the same penalised maximum.
  GpFitOptions em_opt = opt;
  em_opt.tol = 1e-10;
  em_opt.max_iter = 2000;
  const GpFitResult em = gp_fit_em(x, em_opt);
  CHECK(fit.objective >= em.objective - 0.01);
}

TEST_CASE("gp_fit_lbfgs rejects early stopping and bad settings naming the argument", "[gp_fit][lbfgs]") {
  const GaussianProcess gp = nugget_gp(8, 3.0, 0.1);
  const Batch x = simulate_with_gaps(gp, 5, 0.2, 1);
  GpFitOptions opt = nugget_options(2.0);
  opt.validation = 0.1;
  CHECK_THROWS_AS(gp_fit_lbfgs(x, opt), input_error);
  opt.validation = 0.0;
  opt.gradient_tol = 0.0;
  CHECK_THROWS_AS(gp_fit_lbfgs(x, opt), input_error);
}

TEST_CASE("gp_fit_em returns an exactly symmetric Lambda when Gamma is ill-conditioned", "[gp_fit]") {
  // A smooth kernel without a nugget (rbf, lengthscale 3 on 24 frames) fitted
  // to rougher (Matern 3/2) data: Gamma^-1 is huge and the closed-form Lambda
  // carries its rounding. Its symmetrisation once read entries it had already
  // overwritten (Eigen aliasing), leaving one triangle off by about 1e-10
  // relative, which the GaussianProcess check then refused (a review: R's
  // gp_fit(kernel = "rbf") ended in "Lambda is not symmetric").
  const int H = 24;
  const GaussianProcess gp(kernel_matrix(matern(4.0), H), lambda3(), RowMatrix::Zero(H, 3));
  const Batch x = simulate_with_gaps(gp, 60, 0.2, 42);
  GpFitOptions opt;
  opt.kernel.type = KernelType::rbf;
  opt.kernel.lengthscale = 3.0;
  opt.fit_lengthscale = false;
  opt.max_iter = 20;
  const GpFitResult fit = gp_fit_em(x, opt);
  REQUIRE(fit.Lambda.allFinite());
  CHECK((fit.Lambda - fit.Lambda.transpose()).cwiseAbs().maxCoeff() == 0.0);
  CHECK_NOTHROW(GaussianProcess(fit.Gamma, fit.Lambda, RowMatrix::Zero(H, 3)));
}
