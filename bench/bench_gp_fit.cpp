// gp_fit_em at BeijingAir size with heavy gaps: 100 windows of 30 x 132
// simulated from a Matern 3/2 GP (lengthscale 5, nugget 0.05, a random
// full-rank Lambda), 50% of entries missing completely at random; ridge 1e-3
// and nugget bounds [0.01, 1] as bench/real_data.R uses on BeijingAir.
// Prints the fit's time, iterations and the recovered lengthscale / nugget.
// Usage: bench_gp_fit [n_windows] [rate] [max_iter]
#include "ditimpute/gp_fit.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace ditimpute;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  const double rate = argc > 2 ? std::atof(argv[2]) : 0.5;
  const int max_iter = argc > 3 ? std::atoi(argv[3]) : 200;
  const int H = 30, d = 132;
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
  const auto t0 = std::chrono::steady_clock::now();
  const GpFitResult r = gp_fit_em(x, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("n = %d windows of %d x %d, %.0f%% MCAR: %.1f s, %d iterations (%s), lengthscale %.3f (true 5), "
              "nugget %.4f (true 0.05), loglik %.1f\n",
              n, H, d, 100 * rate, s, r.iterations, r.converged ? "converged" : "not converged",
              r.kernel.lengthscale, r.nugget, r.loglik);
  return 0;
}
