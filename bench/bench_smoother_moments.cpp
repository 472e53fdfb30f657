// The smoothed moments alone (means and sds of the missing entries, no
// draws: what impute_series()'s class and rate steps ask for, hundreds of
// times per fit) by the smoother's information form against the RTS pass it
// replaced, timed in the same run on the same series, with the largest
// differences of their results.
//
// The model: a local level with a daily season (3 harmonics, envelope 1), a
// smooth Matern 5/2 part and a nugget, as impute_series() fits hourly data;
// state 10 per variable; a random full-rank Lambda; H = 3,000 frames; 10% of
// each variable hidden in gaps of heavy-tailed lengths (1 to 100 frames).
// d = 1 (state 10: both take the fixed-capacity RTS pass, a control), 3, 7
// and 12 variables. One thread (OMP_NUM_THREADS=1 keeps Eigen's products on
// it too).
// Usage: bench_smoother_moments [reps]
#include "ditimpute/state_space.hpp"
#include "ditimpute/structural.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace ditimpute;

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 3;
  const int H = 3000;
  StructuralSpec s;
  s.trend = StructuralSpec::Trend::level;
  s.level_rate = 0.01;
  s.seasonal = true;
  s.period = 24;
  s.season_var = 0.5;
  s.periodic_lengthscale = 1.0;
  s.season_decay = 200;
  s.smooth_var = 0.3;
  s.smooth_lengthscale = 5;
  s.nugget = 0.05;
  const LatentProcess process = structural_process(s);
  std::ifstream la("/proc/loadavg");
  std::string l1, l5, l15;
  la >> l1 >> l5 >> l15;
  std::printf("H = %d, level + season (3 harmonics) + Matern 5/2 + nugget, state %d per variable, %d reps, "
              "load average %s %s %s\n",
              H, process.dimension(), reps, l1.c_str(), l5.c_str(), l15.c_str());
  std::printf("| d | state | missing | RTS s | information s | ratio | max |mean diff| | max rel sd diff |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int d : {1, 3, 7, 12}) {
    std::mt19937_64 g(static_cast<std::uint64_t>(d));
    std::normal_distribution<double> nd;
    Matrix B(d, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) B(i, j) = nd(g);
    const Matrix Lambda = B * B.transpose() / d + Matrix::Identity(d, d);
    const StateSpaceGP ss(process, s.nugget, Lambda, RowMatrix::Zero(H, d));
    Mask mask(H, d, true);
    std::uniform_real_distribution<double> u(0, 1);
    for (int j = 0; j < d; ++j) {
      int hidden = 0;
      while (hidden < H / 10) {
        const int len = 1 + static_cast<int>(std::pow(u(g), -1.0)) % 100;
        const int st = static_cast<int>(u(g) * (H - len));
        for (int t = st; t < st + len; ++t) {
          if (mask.is_observed(t, j)) ++hidden;
          mask.observed[static_cast<std::size_t>(t) * d + j] = 0;
        }
      }
    }
    std::vector<double> x(static_cast<std::size_t>(H) * d);
    for (auto& v : x) v = nd(g);
    Rng rng(1);
    SmoothedConditional a, b;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) b = ss.conditional(mask, x.data(), 0, rng, true);
    const auto t1 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) a = ss.conditional(mask, x.data(), 0, rng);
    const auto t2 = std::chrono::steady_clock::now();
    const double rts = std::chrono::duration<double>(t1 - t0).count() / reps;
    const double info = std::chrono::duration<double>(t2 - t1).count() / reps;
    std::printf("| %d | %d | %d | %.4f | %.4f | %.2f | %.2g | %.2g |\n", d, process.dimension() * d,
                static_cast<int>(a.mean.size()), rts, info, info / rts, (a.mean - b.mean).cwiseAbs().maxCoeff(),
                ((a.sd - b.sd).array() / b.sd.array()).abs().maxCoeff());
  }
  return 0;
}
