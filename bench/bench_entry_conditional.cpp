// Entry-level conditionals (some variables missing at a time step): the dense
// reference (Cholesky of the covariance of all entries in [observed; missing]
// order, plus the eigenvalues of Sigma_cond) against the precision path
// (Cholesky of Q_mm) and the matrix-free CG path (gaussian.hpp), timed in the
// same run. Work timed per path: build the conditional for the pattern, the
// conditional mean of one sequence and 100 conditional draws.
//
// Part 1: BeijingAir size, H = 48, d = 132, Matern 3/2 (lengthscale 6, nugget
//   0.01), a random full-rank Lambda (fixed seed), 30% of entries missing
//   completely at random; plus 10% and 50%.
// Part 2: the dense/precision crossover on small problems (d = 4).
// Part 3: scaling of the CG path in the length of the series, d = 8,
//   H d = 1e4, 3e4, 1e5 (argument: the largest H d to run, default 3e4),
//   10 draws, time and peak resident memory; no Hd x Hd matrix is formed
//   (but the H x H Gamma, its factor and inverse are: O(H^2) memory, O(H^3)
//   time, and every product with Q costs O(H^2 d)).
// Part 4 (`bench_entry_conditional state-space`): the state-space path
//   (state_space.hpp: Kalman filter, RTS smoother, backward sampling; memory
//   and time linear in H, no H x H matrix), d = 8, Matern 3/2 l = 10, nugget
//   0.01, full-rank Lambda, 30% MCAR, H d = 1e4, 1e5, 1e6. Each size runs in a
//   fresh process (this program re-run with `state-space-one H`), so its peak
//   RSS (VmHWM) is its own. The series is one prior draw made by the same path
//   (every entry missing, one draw); timed: the conditional means and sds of
//   the hidden entries, and the same plus 100 joint draws. At 1e4 the same
//   run also times the default entry-level path (make_conditional: precision)
//   for a ratio, and compares the means.
// Part 6 (`bench_entry_conditional gp-inputs`): a score GP-DiT's inputs of an
//   entry-level case from one conditional against two (see gp_inputs()).
// Usage: bench_entry_conditional [max_entries]
//        bench_entry_conditional state-space | covariance [method] | gp-inputs
#include "ditimpute/dit.hpp"  // gp_entry_marginals, gp_conditional_eigen (torch-free)
#include "ditimpute/gaussian.hpp"
#include "ditimpute/state_space.hpp"
#include "../cpp/src/lapack.hpp"  // the reference: dpotrf + dpotri, as R's chol2inv(chol(A))

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <memory>
#include <string>

using namespace ditimpute;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

Matrix random_spd(int d, Rng& rng) {
  Matrix M(d, d);
  fill_standard_normal(rng, M.data(), static_cast<std::size_t>(M.size()));
  return M * M.transpose() / d + 0.1 * Matrix::Identity(d, d);
}

GaussianProcess make_gp(int H, int d, Rng& rng, double lengthscale) {
  Kernel k;
  k.type = KernelType::matern32;
  k.lengthscale = lengthscale;
  Matrix G = kernel_matrix(k, H);
  G.diagonal().array() += 0.01;
  return GaussianProcess(G, random_spd(d, rng), RowMatrix::Zero(H, d));
}

Mask mcar(int H, int d, double rate, Rng& rng) {
  Mask m(H, d, true);
  Vector u(static_cast<Eigen::Index>(H) * d);
  fill_standard_normal(rng, u.data(), static_cast<std::size_t>(u.size()));
  // P(N(0,1) < q) = rate: the normal quantile by bisection on erfc.
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < rate ? lo : hi) = mid;
  }
  for (Eigen::Index k = 0; k < u.size(); ++k) m.observed[k] = u(k) < lo ? 0 : 1;
  return m;
}

struct Run {
  double build = 0, mean = 0, sample = 0;
  Vector mu;
  std::string method;
};

Run run(const GaussianProcess& gp, const Mask& mask, const Batch& x, ConditionalMethod method, int Z) {
  Run r;
  double t0 = now_s();
  ConditionalOptions o;
  o.method = method;
  auto c = make_conditional(gp, mask, o);
  r.build = now_s() - t0;
  t0 = now_s();
  r.mu = c->mean(x.seq(0));
  r.mean = now_s() - t0;
  Rng rng(7);
  t0 = now_s();
  if (Z > 0) c->sample(r.mu, Z, rng);
  r.sample = now_s() - t0;
  r.method = c->method();
  return r;
}

double rel(const Vector& a, const Vector& b) { return (a - b).norm() / b.norm(); }

// A line "Key:   123 kB" of /proc/self/status, in MB.
double proc_status_mb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, key.size() + 1, key + ":") == 0) return std::atof(line.c_str() + key.size() + 1) / 1024.0;
  return -1.0;
}

// One size of Part 4, in this (fresh) process; prints one line of numbers.
int state_space_one(int H) {
  const int d = 8, Z = 100;
  const double base_mb = proc_status_mb("VmRSS");
  Rng rng(5);
  Kernel k;
  k.type = KernelType::matern32;
  k.lengthscale = 10.0;
  const double nugget = 0.01;
  const Matrix Lambda = random_spd(d, rng);
  const StateSpaceGP ss(k, nugget, Lambda, RowMatrix::Zero(H, d));
  // The series: one prior draw, by the same path with every entry missing.
  std::vector<double> x(static_cast<std::size_t>(H) * d, 0.0);
  const SmoothedConditional prior = ss.conditional(Mask(H, d, false), x.data(), 1, rng);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = prior.samples(0, static_cast<Eigen::Index>(i));
  const Mask mask = mcar(H, d, 0.3, rng);
  double t0 = now_s();
  const SmoothedConditional a = ss.conditional(mask, x.data(), 0, rng);
  const double t_mean = now_s() - t0;
  t0 = now_s();
  const SmoothedConditional b = ss.conditional(mask, x.data(), Z, rng);
  const double t_draws = now_s() - t0;
  // Sanity at every size: the hidden true values inside mean +/- 1.96 sd.
  int inside = 0;
  for (std::size_t i = 0; i < a.missing.size(); ++i)
    inside += std::abs(x[a.missing[i]] - a.mean(i)) <= 1.959964 * a.sd(i) ? 1 : 0;
  const double peak_mb = proc_status_mb("VmHWM");
  double t_prec = -1.0, rel_prec = -1.0;
  if (static_cast<double>(H) * d <= 1e4) {
    // The default entry-level path on the same model and data (dense Gamma).
    Kernel kk = k;
    Matrix G = kernel_matrix(kk, H);
    G.diagonal().array() += nugget;
    t0 = now_s();
    const GaussianProcess gp(G, Lambda, RowMatrix::Zero(H, d));
    auto c = make_conditional(gp, mask);
    const Vector mu = c->mean(x.data());
    Rng r2(7);
    c->sample(mu, Z, r2);
    t_prec = now_s() - t0;
    rel_prec = rel(a.mean, mu);
  }
  std::printf("%d %d %.4f %.4f %.1f %.1f %.4f %.4f %.3e %d\n", H, static_cast<int>(a.missing.size()), t_mean,
              t_draws, peak_mb, base_mb, static_cast<double>(inside) / a.missing.size(), t_prec, rel_prec,
              static_cast<int>(b.samples.rows()));
  return 0;
}

// Part 4: each size in a fresh process.
int state_space_scaling() {
  std::printf("Part 4: state-space path (Kalman filter + RTS smoother + backward sampling), d = 8, Matern 3/2 l = 10,\n"
              "nugget 0.01, full-rank Lambda, 30%% MCAR; each size in a fresh process; peak RSS = VmHWM of that\n"
              "process (base = its RSS before any work); cover = share of hidden true values in mean +/- 1.96 sd\n");
  std::printf("%8s %7s %7s | %10s %12s | %8s %8s | %6s | %s\n", "Hd", "H", "m", "mean+sd s", "+100 draws s",
              "peak MB", "base MB", "cover", "growth vs previous size (time mean+sd, time draws, peak - base)");
  char path[4096] = {0};
  if (readlink("/proc/self/exe", path, sizeof(path) - 1) <= 0) return 1;
  const std::string self(path);  // this program (popen's shell has its own /proc/self)
  double prev[3] = {0, 0, 0};
  double prec_t = -1, prec_rel = -1, first_draws = 0;
  for (int H : {1250, 12500, 125000}) {
    const std::string cmd = "'" + self + "' state-space-one " + std::to_string(H);
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return 1;
    int h = 0, m = 0, z = 0;
    double tm = 0, td = 0, peak = 0, base = 0, cover = 0, tp = 0, rp = 0;
    const int got = std::fscanf(pipe, "%d %d %lf %lf %lf %lf %lf %lf %lf %d", &h, &m, &tm, &td, &peak, &base, &cover,
                                &tp, &rp, &z);
    pclose(pipe);
    if (got != 10) {
      std::printf("size H = %d failed\n", H);
      return 1;
    }
    std::printf("%8d %7d %7d | %10.3f %12.3f | %8.0f %8.0f | %5.1f%% |", h * 8, h, m, tm, td, peak, base, 100 * cover);
    if (prev[0] > 0)
      std::printf(" x%.1f, x%.1f, x%.1f", tm / prev[0], td / prev[1], (peak - base) / prev[2]);
    std::printf("\n");
    std::fflush(stdout);
    prev[0] = tm;
    prev[1] = td;
    prev[2] = peak - base;
    if (tp >= 0) {
      prec_t = tp;
      prec_rel = rp;
      first_draws = td;
    }
  }
  std::printf("At Hd = 1e4, same run: default entry-level path (precision: dense Gamma, Cholesky of Q_mm) mean + 100\n"
              "draws %.3f s vs state-space %.3f s (x%.0f); relative difference of the conditional means %.1e\n",
              prec_t, first_draws, prec_t / first_draws, prec_rel);
  return 0;
}

// Part 5 (`bench_entry_conditional covariance [method]`): where the time of
// R's gp_conditional(spec, x) with its covariance goes, at BeijingAir size
// (H = 48, d = 132, Matern 3/2 l = 6, nugget 0.01, full-rank Lambda, 30%
// MCAR): each call the glue makes, timed on its own, in the glue's order.
int covariance_profile(ConditionalMethod method) {
  Rng rng(2024);
  const GaussianProcess gp = make_gp(48, 132, rng, 6.0);
  const Mask mask = mcar(48, 132, 0.3, rng);
  const Batch x = gp.simulate(1, rng);
  ConditionalOptions o;
  o.method = method;
  double t0 = now_s();
  auto c = make_conditional(gp, mask, o);
  const double t_build = now_s() - t0;
  t0 = now_s();
  const Matrix mu = c->mean(x);
  const double t_mean = now_s() - t0;
  // As the glue: the covariance written into a fresh buffer (R's matrix).
  t0 = now_s();
  Matrix S(c->n_missing(), c->n_missing());
  c->covariance_into(S);
  const double t_cov = now_s() - t0;
  t0 = now_s();
  const Vector sd = c->marginal_sd();
  const double t_sd = now_s() - t0;
  t0 = now_s();
  const double kc = c->kappa_cond();
  const double t_kc = now_s() - t0;
  t0 = now_s();
  const double ko = c->kappa_obs();
  const double t_ko = now_s() - t0;
  // The kappas again (the Krylov bases' memory is now the process's: no
  // first-touch page faults, ~12 us a 4 KB page on this project's VMs).
  t0 = now_s();
  const double kc2 = c->kappa_cond();
  const double ko2 = c->kappa_obs();
  const double t_k2 = now_s() - t0;
  std::printf("Part 5: gp_conditional's calls, %s path, m = %d of %d entries\n", c->method().c_str(),
              mask.n_missing(), 48 * 132);
  std::printf("  build %.3f s | mean %.3f s | covariance %.3f s | marginal_sd %.3f s | kappa_cond %.3f s (%.12g) |"
              " kappa_obs %.3f s (%.12g)\n",
              t_build, t_mean, t_cov, t_sd, t_kc, kc, t_ko, ko);
  const double total = t_build + t_mean + t_cov + t_kc + t_ko;  // the glue's calls (marginal_sd is not one)
  // Same run: chol2inv(chol(A)) on an SPD matrix of the same size (LAPACK
  // dpotrf + dpotri through lapack.hpp, both triangles written as R's).
  const Eigen::Index m = mask.n_missing();
  Matrix M(m, m);
  fill_standard_normal(rng, M.data(), static_cast<std::size_t>(M.size()));
  Matrix A = M * M.transpose() / static_cast<double>(m);
  A.diagonal().array() += 1.0;
  // R's chol2inv(chol(A)) writes each result into a new matrix: the same
  // here (each new buffer's first touch is part of R's cost), then in place.
  t0 = now_s();
  Matrix R1 = A;
  detail::cholesky_in_place(R1);
  Matrix R2 = R1;
  detail::inverse_from_cholesky_in_place(R2);
  const double t_ref = now_s() - t0;
  t0 = now_s();
  detail::cholesky_in_place(A);
  detail::inverse_from_cholesky_in_place(A);
  const double t_ref_inplace = now_s() - t0;
  std::printf("  kappas again: %.3f s (%.12g, %.12g)\n", t_k2, kc2, ko2);
  std::printf("  total (build + mean + covariance + kappas) %.3f s; same run, chol2inv(chol(A)) at m = %d with R's two"
              " new matrices: %.3f s (in place: %.3f s); ratio %.2f (%.2f)\n"
              "  checksums: sum(mean) %.12g, sum(cov) %.12g, sum(sd) %.12g, sum(R2 - A) %.3g\n",
              total, static_cast<int>(m), t_ref, t_ref_inplace, total / t_ref, total / t_ref_inplace, mu.sum(),
              S.sum(), sd.sum(), (R2 - A).sum());
  return 0;
}

// Part 6 (`bench_entry_conditional gp-inputs`): the inputs of a score GP-DiT
// (dit_fit(gp_mode = "score")) for one entry-level case: the conditional
// marginals and the eigen-decomposition of the conditional covariance. Before:
// gp_entry_marginals, then gp_conditional_eigen, each building the GP
// conditional; now one gp_conditional_eigen call gives both. H = 48, 20% MCAR,
// d = 8, 32, 132 (Matern 3/2 l = 6, nugget 0.01, full-rank Lambda); timed over
// the same cases in one run, the outputs compared.
int gp_inputs() {
  std::printf("Part 6: a score GP-DiT's inputs of one entry-level case (marginals + eigenpairs), H = 48, 20%% MCAR\n");
  std::printf("%5s %6s %6s | %12s %12s %7s | %10s\n", "d", "m", "cases", "two calls s", "one call s", "ratio", "max diff");
  for (int d : {8, 32, 132}) {
    Rng rng(7);
    const GaussianProcess gp = make_gp(48, d, rng, 6.0);
    const int cases = d == 132 ? 3 : 20;
    const std::size_t S = static_cast<std::size_t>(48) * d;
    std::vector<Mask> masks;
    for (int c = 0; c < cases; ++c) masks.push_back(mcar(48, d, 0.2, rng));
    const Batch x = gp.simulate(cases, rng);
    std::vector<double> mu(S), sd(S), mu2(S), sd2(S);
    Matrix U, U2;
    Vector lambda, lambda2;
    double t_two = 0, t_one = 0, diff = 0;
    for (int c = 0; c < cases; ++c) {
      double t0 = now_s();
      gp_entry_marginals(gp, x.seq(c), masks[static_cast<std::size_t>(c)], mu.data(), sd.data());
      gp_conditional_eigen(gp, x.seq(c), masks[static_cast<std::size_t>(c)], U, lambda);
      t_two += now_s() - t0;
      t0 = now_s();
      gp_conditional_eigen(gp, x.seq(c), masks[static_cast<std::size_t>(c)], U2, lambda2, mu2.data(), sd2.data());
      t_one += now_s() - t0;
      for (std::size_t k = 0; k < S; ++k) diff = std::max({diff, std::abs(mu[k] - mu2[k]), std::abs(sd[k] - sd2[k])});
      diff = std::max(diff, (lambda - lambda2).cwiseAbs().maxCoeff());
    }
    std::printf("%5d %6d %6d | %12.3f %12.3f %7.2f | %10.2e\n", d, masks[0].n_missing(), cases, t_two, t_one,
                t_two / t_one, diff);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "gp-inputs") return gp_inputs();
  if (argc > 2 && std::string(argv[1]) == "state-space-one") return state_space_one(std::atoi(argv[2]));
  if (argc > 1 && std::string(argv[1]) == "state-space") return state_space_scaling();
  if (argc > 1 && std::string(argv[1]) == "covariance")
    return covariance_profile(parse_conditional_method(argc > 2 ? argv[2] : "auto"));
  const double max_entries = argc > 1 ? std::atof(argv[1]) : 3e4;
  const int Z = 100;
  std::printf("Part 1: BeijingAir size, H = 48, d = 132, Matern 3/2 (l = 6, nugget 0.01), full-rank Lambda, MCAR\n");
  std::printf("seconds for build + mean of one sequence + %d draws; speedup = dense total / path total\n", Z);
  std::printf("%6s %6s | %26s | %26s %8s %9s | %26s %8s %9s\n", "hidden", "m", "dense (build/mean/draws)",
              "precision", "speedup", "rel diff", "CG", "speedup", "rel diff");
  for (double rate : {0.1, 0.3, 0.5}) {
    Rng rng(2024);
    const GaussianProcess gp = make_gp(48, 132, rng, 6.0);
    const Mask mask = mcar(48, 132, rate, rng);
    const Batch x = gp.simulate(1, rng);
    const Run de = run(gp, mask, x, ConditionalMethod::dense, Z);
    const Run pr = run(gp, mask, x, ConditionalMethod::precision, Z);
    const Run cg = run(gp, mask, x, ConditionalMethod::cg, Z);
    auto tot = [](const Run& r) { return r.build + r.mean + r.sample; };
    std::printf("%5.0f%% %6d | %8.3f %8.3f %8.3f | %8.3f %8.3f %8.3f %8.1f %9.1e | %8.3f %8.3f %8.3f %8.1f %9.1e\n",
                100 * rate, mask.n_missing(), de.build, de.mean, de.sample, pr.build, pr.mean, pr.sample,
                tot(de) / tot(pr), rel(pr.mu, de.mu), cg.build, cg.mean, cg.sample, tot(de) / tot(cg),
                rel(cg.mu, de.mu));
    std::fflush(stdout);
  }

  std::printf("\nPart 2: crossover, d = 4, 30%% MCAR, Matern 3/2 l = H/8; ms for build + mean + %d draws\n", Z);
  std::printf("%5s %6s | %10s %10s %10s\n", "H", "Hd", "dense", "precision", "CG");
  for (int H : {12, 25, 50, 100, 200}) {
    Rng rng(11);
    const GaussianProcess gp = make_gp(H, 4, rng, H / 8.0);
    const Mask mask = mcar(H, 4, 0.3, rng);
    const Batch x = gp.simulate(1, rng);
    double t[3];
    int i = 0;
    for (ConditionalMethod m : {ConditionalMethod::dense, ConditionalMethod::precision, ConditionalMethod::cg}) {
      int reps = 0;
      const double t0 = now_s();
      do {
        run(gp, mask, x, m, Z);
        ++reps;
      } while (now_s() - t0 < 0.3);
      t[i++] = 1e3 * (now_s() - t0) / reps;
    }
    std::printf("%5d %6d | %10.2f %10.2f %10.2f\n", H, 4 * H, t[0], t[1], t[2]);
  }

  const int Z3 = 10;
  std::printf("\nPart 3: long series, d = 8, Matern 3/2 l = 10, 30%% MCAR, CG path: mean + %d draws\n", Z3);
  std::printf("(process = kernel matrix, Cholesky of Gamma, GaussianProcess; peak RSS of the whole run so far)\n");
  std::printf("%8s %7s %7s | %9s %9s %9s %9s | %10s\n", "Hd", "H", "m", "process s", "build s", "mean s", "draws s",
              "peak MB");
  for (double entries : {1e4, 3e4, 1e5}) {
    if (entries > max_entries) break;
    const int d = 8, H = static_cast<int>(entries / d);
    Rng rng(5);
    double t0 = now_s();
    const GaussianProcess gp = make_gp(H, d, rng, 10.0);
    const double tp = now_s() - t0;
    const Mask mask = mcar(H, d, 0.3, rng);
    const Batch x = gp.simulate(1, rng);
    const Run cg = run(gp, mask, x, ConditionalMethod::cg, Z3);
    std::printf("%8.0f %7d %7d | %9.2f %9.3f %9.3f %9.3f | %10.0f\n", entries, H, mask.n_missing(), tp, cg.build,
                cg.mean, cg.sample, peak_rss_mb());
    std::fflush(stdout);
  }
  return 0;
}
