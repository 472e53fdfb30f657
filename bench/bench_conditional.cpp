// Conditional of a frame-level pattern: Kronecker path against the dense
// reference (one Cholesky of the Hd x Hd covariance), timed in the same run.
// Work timed for each path: build the conditional for the pattern (factors of
// Sigma_cond, eigen-decompositions), the conditional means of a batch of 100
// sequences, and kappa(Sigma_cond).
//
// Setup: laplace kernel, lengthscale 128 on the plain index, a random SPD
// Lambda (fixed seed), the missing set a tail block of 16 frames (the paper's
// |I_miss| = 16). Usage: bench_conditional [max_H_for_dense]  (default 512;
// the dense path at H = 512, d = 32 factors a 16384^2 matrix, minutes with
// Eigen's own single-threaded Cholesky, and ~2 GB).
#include "ditimpute/gaussian.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

using namespace ditimpute;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Mean ms per run: repeat until 0.5 s has passed (at least once), so small
// cases get stable numbers and big ones run once.
double time_ms(const std::function<void()>& f, int* reps) {
  const double start = now_ms();
  int n = 0;
  double elapsed = 0;
  do {
    f();
    ++n;
    elapsed = now_ms() - start;
  } while (elapsed < 500.0);
  *reps = n;
  return elapsed / n;
}

Matrix random_spd(int d, Rng& rng) {
  Matrix M(d, d);
  fill_standard_normal(rng, M.data(), static_cast<std::size_t>(M.size()));
  return M * M.transpose() / d + 0.5 * Matrix::Identity(d, d);
}

struct Timing {
  double build_ms = 0, mean_ms = 0;  // per run
  int build_reps = 0, mean_reps = 0;
  Matrix mean;
  double kappa = 0;
};

// Times the two parts separately: the per-pattern work (factorisation, factors
// of Sigma_cond, kappa) and the conditional means of the batch.
Timing time_path(const GaussianProcess& gp, const Mask& mask, const Batch& x, bool dense) {
  Timing out;
  std::unique_ptr<Conditional> c;
  out.build_ms = time_ms(
      [&] {
        c = dense ? make_conditional_dense(gp, mask) : make_conditional(gp, mask);
        out.kappa = c->kappa_cond();
      },
      &out.build_reps);
  out.mean_ms = time_ms([&] { out.mean = c->mean(x); }, &out.mean_reps);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int max_dense_H = argc > 1 ? std::atoi(argv[1]) : 512;
  const int sizes[][2] = {{96, 8}, {256, 16}, {512, 32}};
  const int n_seq = 100, n_miss = 16;
  std::printf("Conditional of a %d-frame tail block; laplace l = 128; ms per run (repeats in parentheses)\n", n_miss);
  std::printf("build = factorisation + Sigma_cond factors + kappa_cond; mean = conditional means of %d sequences\n\n",
              n_seq);
  std::printf("%4s %3s %6s | %19s %17s | %19s %17s | %8s %8s | %8s %9s\n", "H", "d", "Hd", "kron build",
              "kron mean", "dense build", "dense mean", "ratio", "ratio", "kappa", "rel diff");
  std::printf("%4s %3s %6s | %19s %17s | %19s %17s | %8s %8s | %8s %9s\n", "", "", "", "", "", "", "", "build",
              "total", "", "");
  for (const auto& hd : sizes) {
    const int H = hd[0], d = hd[1];
    Rng rng(2024);
    Kernel k;
    k.lengthscale = 128.0;
    const GaussianProcess gp(kernel_matrix(k, H), random_spd(d, rng), RowMatrix::Zero(H, d));
    std::vector<int> tail;
    for (int h = H - n_miss; h < H; ++h) tail.push_back(h);
    const Mask mask = Mask::from_missing_frames(H, d, tail);
    const Batch x = gp.simulate(n_seq, rng);

    const Timing kr = time_path(gp, mask, x, false);
    std::printf("%4d %3d %6d | %12.3f (%4d) %10.3f (%4d) | ", H, d, H * d, kr.build_ms, kr.build_reps, kr.mean_ms,
                kr.mean_reps);
    if (H > max_dense_H) {
      std::printf("%19s %17s | %8s %8s | %8.1f %9s\n", "skipped", "", "-", "-", kr.kappa, "-");
      continue;
    }
    std::fflush(stdout);
    const Timing de = time_path(gp, mask, x, true);
    const double diff = std::max((kr.mean - de.mean).norm() / de.mean.norm(), std::abs(kr.kappa - de.kappa) / de.kappa);
    std::printf("%12.1f (%4d) %10.2f (%4d) | %8.0f %8.0f | %8.1f %9.1e\n", de.build_ms, de.build_reps, de.mean_ms,
                de.mean_reps, de.build_ms / kr.build_ms, (de.build_ms + de.mean_ms) / (kr.build_ms + kr.mean_ms),
                kr.kappa, diff);
    std::fflush(stdout);
  }
  return 0;
}
