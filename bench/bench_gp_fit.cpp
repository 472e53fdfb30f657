// gp_fit_em with heavy gaps: windows of H x d simulated from a Matern 3/2 GP
// (lengthscale 5, nugget 0.05, a random full-rank Lambda), a share `rate` of
// entries missing completely at random; ridge 1e-3 and nugget bounds
// [0.01, 1] as bench/real_data.R uses on BeijingAir. Fits by ECM (the default:
// the search over lengthscale and nugget on the expected complete-data
// log-likelihood) and, as the baseline in the same run, by ECME (the search
// on the exact marginal likelihood); prints each fit's time, iterations,
// recovered lengthscale / nugget and exact log-likelihood, and the ratios.
// which = "plain" compares ECM with and without its over-relaxed steps.
// which = "lapack" times the dense algebra: the exact log-likelihood (one
// Cholesky a window) and an ECM fit of max_iter iterations, each run as the
// core runs it (LAPACK/BLAS, windows one at a time, every core inside each
// factorisation) and, as the baseline in the same run, from inside a
// parallel_for worker, where the core keeps to Eigen's own code with windows
// spread over the cores (the code path before LAPACK); same numbers expected.
// which = "sampled" compares ECM with exact E-step covariances (the baseline)
// and with covariances estimated from `draws` draws a window (GpFitEStep::sampled,
// stopping at a gain below tol_sampled per observed entry; by default the same
// tol as the exact fit, 1e-7).
// Every other mode keeps the exact E-step covariances.
// Usage: bench_gp_fit [n_windows] [rate] [H] [d] [which: both | ecm | ecme | plain | lapack | sampled] [max_iter]
//                     [draws] [tol_sampled]
#include "ditimpute/gp_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ditimpute;

namespace {

struct Timed {
  GpFitResult r;
  double seconds = 0.0;
};

Timed fit(const Batch& x, GpFitOptions o, GpFitSearch search, const char* label, bool accelerate = true) {
  o.search = search;
  o.accelerate = accelerate;
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.r = gp_fit_em(x, o);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-9s %8.1f s, %3d iterations (%s), %6.1f s an iteration, lengthscale %.3f (true 5), nugget %.4f "
              "(true 0.05), loglik %.3f\n",
              label, t.seconds, t.r.iterations, t.r.converged ? "converged" : "not converged",
              t.seconds / std::max(1, t.r.iterations), t.r.kernel.lengthscale, t.r.nugget, t.r.loglik);
  std::printf("          objective trace:");
  for (double v : t.r.objective_trace) std::printf(" %.1f", v);
  std::printf("\n");
  std::fflush(stdout);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  const double rate = argc > 2 ? std::atof(argv[2]) : 0.5;
  const int H = argc > 3 ? std::atoi(argv[3]) : 30;  // BeijingAir's windows: 30 x 132
  const int d = argc > 4 ? std::atoi(argv[4]) : 132;
  const std::string which = argc > 5 ? argv[5] : "both";
  const int max_iter = argc > 6 ? std::atoi(argv[6]) : 200;
  Rng rng(9);
  Kernel k;
  k.type = KernelType::matern32;
  k.lengthscale = 5.0;
  Matrix G = kernel_matrix(k, H);
  G.diagonal().array() += 0.05;
  Matrix M(d, d);
  fill_standard_normal(rng, M.data(), static_cast<std::size_t>(M.size()));
  const Matrix L = M * M.transpose() / d + 0.1 * Matrix::Identity(d, d);
  const GaussianProcess gp(G, L, RowMatrix::Zero(H, d));
  Batch x = gp.simulate(n, rng);
  Vector u(static_cast<Eigen::Index>(x.data.size()));
  fill_standard_normal(rng, u.data(), static_cast<std::size_t>(u.size()));
  double q = -10, hi = 10;  // normal quantile of `rate` by bisection
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (q + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < rate ? q : hi) = mid;
  }
  for (std::size_t i = 0; i < x.data.size(); ++i)
    if (u(static_cast<Eigen::Index>(i)) < q) x.data[i] = std::nan("");
  GpFitOptions o;
  o.kernel.type = KernelType::matern32;
  o.kernel.lengthscale = H / 4.0;
  o.lengthscale_upper = 100.0 * H;
  o.fit_nugget = true;
  o.nugget = 0.01;
  o.nugget_lower = 0.01;
  o.ridge = 1e-3;
  o.max_iter = max_iter;
  o.estep = GpFitEStep::exact;
  std::printf("n = %d windows of %d x %d, %.0f%% MCAR, max_iter %d; loglik at the truth %.3f\n", n, H, d, 100 * rate,
              max_iter, gp_marginal_loglik(x, G, L, Vector::Zero(d)));
  Timed ecm, ecme;
  if (which == "lapack") {
    // Runs f on a parallel_for worker (the second item is empty), where the
    // core's dense algebra keeps to Eigen.
    auto on_worker = [](const auto& f) { parallel_for(2, 2, [&](int i) { if (i == 0) f(); }); };
    auto seconds = [](const auto& f) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double ll_lapack = 0.0, ll_eigen = 0.0;
    const double t_lapack = seconds([&] { ll_lapack = gp_marginal_loglik(x, G, L, Vector::Zero(d)); });
    const double t_eigen = seconds([&] { on_worker([&] { ll_eigen = gp_marginal_loglik(x, G, L, Vector::Zero(d)); }); });
    std::printf("log-likelihood (a Cholesky a window): LAPACK %.2f s, Eigen %.2f s: %.1fx; values %.6f / %.6f\n", t_lapack,
                t_eigen, t_eigen / t_lapack, ll_lapack, ll_eigen);
    const Timed lap = fit(x, o, GpFitSearch::expected, "ECM LAPACK");
    Timed eig;
    on_worker([&] { eig = fit(x, o, GpFitSearch::expected, "ECM Eigen"); });
    std::printf("ECM fit, %d iterations: LAPACK %.1f s, Eigen %.1f s: %.1fx; loglik LAPACK - Eigen %.2e\n", lap.r.iterations,
                lap.seconds, eig.seconds, eig.seconds / lap.seconds, lap.r.loglik - eig.r.loglik);
    return 0;
  }
  if (which == "plain") {
    const Timed acc = fit(x, o, GpFitSearch::expected, "ECM");
    const Timed plain = fit(x, o, GpFitSearch::expected, "ECM plain", false);
    std::printf("plain / over-relaxed: time %.1fx, iterations %d / %d; loglik over-relaxed - plain %.3f\n",
                plain.seconds / acc.seconds, plain.r.iterations, acc.r.iterations, acc.r.loglik - plain.r.loglik);
    return 0;
  }
  if (which == "sampled") {
    // ECM with exact E-step covariances (the baseline, same run) and with
    // covariances from `draws` draws a window; the sampled fit's distance
    // from the exact one in log-likelihood and parameters.
    const int draws = argc > 7 ? std::atoi(argv[7]) : 32;
    const double tol_sampled = argc > 8 ? std::atof(argv[8]) : o.tol;
    const Timed exact = fit(x, o, GpFitSearch::expected, "ECM");
    GpFitOptions os = o;
    os.estep = GpFitEStep::sampled;
    os.estep_draws = draws;
    os.seed = 1;
    os.tol = tol_sampled;
    const Timed samp = fit(x, os, GpFitSearch::expected, "sampled");
    const double lam = (samp.r.Lambda - exact.r.Lambda).norm() / exact.r.Lambda.norm();
    const double lam_true = (exact.r.Lambda - L).norm() / L.norm();
    std::printf("exact / sampled (%d draws, tol %g): time %.1fx, time an iteration %.1fx; loglik sampled - exact %.3f "
                "(%.2e per observed entry); lengthscale %.4f vs %.4f, nugget %.5f vs %.5f; "
                "|Lambda_s - Lambda_e| / |Lambda_e| = %.2e (exact fit vs truth: %.2e)\n",
                draws, tol_sampled, exact.seconds / samp.seconds,
                (exact.seconds / exact.r.iterations) / (samp.seconds / samp.r.iterations), samp.r.loglik - exact.r.loglik,
                (samp.r.loglik - exact.r.loglik) / static_cast<double>(exact.r.n_observed), samp.r.kernel.lengthscale,
                exact.r.kernel.lengthscale, samp.r.nugget, exact.r.nugget, lam, lam_true);
    return 0;
  }
  if (which != "ecme") ecm = fit(x, o, GpFitSearch::expected, "ECM");
  if (which != "ecm") ecme = fit(x, o, GpFitSearch::exact, "ECME");
  if (which == "both")
    std::printf("ECME / ECM: time %.1fx, time an iteration %.1fx; loglik ECM - ECME %.3f (%.2e per observed entry)\n",
                ecme.seconds / ecm.seconds,
                (ecme.seconds / ecme.r.iterations) / (ecm.seconds / ecm.r.iterations), ecm.r.loglik - ecme.r.loglik,
                (ecm.r.loglik - ecme.r.loglik) / static_cast<double>(ecm.r.n_observed));
  return 0;
}
