// Shared fixtures of the DiT tests: a small separable GP and a mixed strategy.
#pragma once

#include "ditimpute/dit.hpp"
#include "ditimpute/gaussian.hpp"
#include "ditimpute/patterns.hpp"

#include <cstdint>
#include <vector>

namespace ditimpute {
namespace testing {

// RBF kernel in time (lengthscale in frames) and a correlated Lambda
// (off-diagonals 0.5^|i-j|), zero mean.
inline GaussianProcess small_gp(int H, int d, double lengthscale) {
  Kernel k;
  k.type = KernelType::rbf;
  k.lengthscale = lengthscale;
  Matrix Lambda(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) Lambda(i, j) = std::pow(0.5, std::abs(i - j));
  // A small nugget keeps the RBF Gamma well conditioned (its smallest
  // eigenvalues fall below 1e-10 otherwise).
  Matrix Gamma = kernel_matrix(k, H) + 1e-4 * Matrix::Identity(H, H);
  return GaussianProcess(Gamma, Lambda, RowMatrix::Zero(H, d));
}

// Training and held-out sequences drawn from small_gp(H, d, 3.0) with one
// seed: the paired-loss tests compare losses on the same held-out draws.
struct GpSplit {
  GaussianProcess gp;
  Batch train, held_out;
};
inline GpSplit small_gp_split(int H, int d, int n_train, int n_held, std::uint64_t seed) {
  GaussianProcess gp = small_gp(H, d, 3.0);
  Rng rng(seed);
  Batch train = gp.simulate(n_train, rng);
  Batch held_out = gp.simulate(n_held, rng);
  return GpSplit{gp, train, held_out};
}

// Mixed masking in the paper's spirit, scaled to short sequences: random
// frames, blocks of 2 and a tail block, a quarter of the frames missing.
inline MaskStrategy mixed_strategy(int H) {
  const int m = std::max(2, H / 4);
  MaskStrategy s;
  s.generators = {PatternGenerator::random_frames(m), PatternGenerator::block_frames(m / 2, 2),
                  PatternGenerator::tail_frames(m)};
  s.weights = {1, 1, 1};
  return s;
}

// Training options of the tests: a fixed seed on the CPU; each test sets
// the learning rate, EMA and validation it needs on top.
inline TrainOptions cpu_train_options(int steps, int batch_size, std::uint64_t seed, int threads = 1) {
  TrainOptions o;
  o.steps = steps;
  o.batch_size = batch_size;
  o.seed = seed;
  o.threads = threads;
  o.device = "cpu";
  return o;
}

// The learning tests' score: a mask from `strategy` for each test sequence,
// Z = 100 samples of every case in one batched call (the imputation
// pipeline's path, 50 sampler steps), and the mean squared distance of the
// sample means from the exact conditional means, beside the same for the
// prior mean (zero).
struct SampleMeanError {
  double mse = 0, prior = 0;
};
inline SampleMeanError sample_mean_error(const DiTModel& model, const GaussianProcess& gp, const Batch& test,
                                         const MaskStrategy& strategy, Rng& rng) {
  SamplerOptions so;
  so.steps = 50;
  std::vector<Mask> masks;
  for (int i = 0; i < test.n; ++i) masks.push_back(strategy.draw(test.H, test.d, rng));
  const std::vector<Matrix> samples = model.sample_missing(test, masks, 100, so, 500, 2);
  SampleMeanError e;
  long count = 0;
  for (int i = 0; i < test.n; ++i) {
    const Vector mu = make_conditional(gp, masks[i])->mean(test.seq(i));
    const Vector mean = samples[i].colwise().mean().transpose();
    e.mse += (mean - mu).squaredNorm();
    e.prior += mu.squaredNorm();
    count += mean.size();
  }
  e.mse /= count;
  e.prior /= count;
  return e;
}

// The learning tests' setting (test_dit_learning.cpp, test_dit_entry.cpp):
// 3,000 sequences of small_gp(16, 2, 3.0) and 200 for validation, mixed
// masking, 800 steps of batch 64 at lr 1e-3 on 2 threads; the validation
// denoising loss before and after, and the sample-mean error on 12 test
// sequences. `c` gives the architecture (its H and d are set here).
struct LearningRun {
  double untrained = 0, trained = 0, final_val = 0, seconds = 0;
  SampleMeanError error;
};
inline LearningRun learn_small_gp(DiTConfig c) {
  const int H = 16, d = 2;
  c.H = H;
  c.d = d;
  auto gp = small_gp(H, d, 3.0);
  Rng rng(2024);
  Batch train = gp.simulate(3000, rng), val = gp.simulate(200, rng), test = gp.simulate(12, rng);
  auto strategy = mixed_strategy(H);
  auto model = DiTModel::create(c, 1, "cpu");
  LearningRun r;
  r.untrained = model.denoising_loss(val, strategy, "log_uniform", 77, 2);
  TrainOptions o = cpu_train_options(800, 64, 3, 2);
  o.lr = 1e-3;
  o.val_every = 200;
  auto res = model.fit(train, &val, strategy, o);
  r.final_val = res.final_val_loss;
  r.seconds = res.seconds;
  r.trained = model.denoising_loss(val, strategy, "log_uniform", 77, 2);
  r.error = sample_mean_error(model, gp, test, strategy, rng);
  return r;
}

inline DiTConfig tiny_config(int H, int d) {
  DiTConfig c;
  c.H = H;
  c.d = d;
  c.width = 32;
  c.depth = 2;
  c.heads = 4;
  return c;
}

}  // namespace testing
}  // namespace ditimpute
