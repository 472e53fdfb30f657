// DiT benchmarks and the GP learning demonstration.
//
//   bench_dit [speed] [threads] [reps] [device]  ms per training step (batch
//       64, inside a fit() of 1 + K steps, less a fit() of 1; the per-call
//       setup in its own column) and per sampling step (one network call at
//       batch 100) for the small
//       (128/4/4) and the paper-size (256/12/16) DiT at H = 96, d = 8, against
//       the same network in Python PyTorch (bench/dit_pytorch.py, run by
//       $DITIMPUTE_PYTHON or /usr/bin/python3, on the same device) timed in the
//       same run; then seconds to impute one 96 x 8 sequence with 100 samples
//       through the public API. device: "cpu" (default) or "cuda".
//   bench_dit sampler [threads] [reps]  the sampling path alone, for the small
//       (128/4/4) DiT at H = 96, d = 8, 100 samples: one network call through
//       the general path (one time per row) against the folded one-time path the
//       sampler uses, then one imputation with the default sampler against a
//       one-call run, the 20-step UniPC and 20 batched cases; wall and CPU
//       seconds (CPU time / threads is what an idle machine's wall clock shows
//       when other jobs share the cores).
//   bench_dit entry [threads] [reps]  one network call of an entry-token DiT
//       (dit_config(tokens = "entry"), 32/2/2) at BeijingAir's window size
//       (H = 30, d = 132) on 50 rows: the general path (one time per row, the
//       training path) against the folded one-time path the sampler uses;
//       medians of alternating calls, wall and CPU seconds.
//   bench_dit gp [threads] [steps] [prediction] [loss_weight] [lr]   the full demonstration of the issue: a
//       128/4/4 DiT trained on 5,000 GP sequences (H = 32, d = 4, RBF with
//       lengthscale 8, correlated Lambda); held-out denoising loss before/after
//       and the MSE of the sample mean against the exact conditional mean.
//   bench_dit learning [threads] [device] [steps,...] [n_test] [width/depth/heads]
//       the setting of bench/dit_learning.R (H = 48, d = 8, Laplace lengthscale
//       64, S4 masks, 4,000 training + 400 validation sequences) with the
//       default recipe of dit_fit() (lr 2e-3, 200 warm-up steps, cosine decay
//       to 0.1, warmed EMA 0.999, patience 10, best weights restored), one
//       training run per step budget; each model scored on n_test sequences
//       per paper pattern P1-P4 (halved to H = 48): W2 to the exact
//       conditional law against exact draws of the same size (the null) and
//       the raw 95% region's coverage of 1,000 exact draws. For budgets that
//       a CPU cannot buy (a GPU's): is P1's W2 a matter of steps? Further
//       arguments key=value change the recipe: lr, batch, warmup, ema,
//       schedule, lr_min, loss_weight, prediction, patience, restore_best (0/1), grad_clip,
//       t_sampling, seed
//       (of the weights and the training draws, 7 by default), gp=residual,
//       gp=score or gp=channels (informed by the true GP, or with
//       gp_lengthscale=L by a Laplace GP of lengthscale L; prints the
//       v-weighted validation loss before and after training, to see whether
//       training adds to it); and
//       samplers=method:steps,... (method alone: its default_steps) scores each model with each sampler
//       (default: the library's default sampler); patterns=1,... scores only those of P1-P4;
//       save=PATH keeps the trained model, load=PATH scores a saved one (no training).
//   bench_dit latent threads device data_dir out_file width/depth/heads [key=value...]
//       the latent GP of bench/reproduce_paper_latent.R (section 6.2) trained
//       here (a lent GPU's budgets) on the data that bench exports, and the
//       imputations written back for it to score (see latent() below); the
//       recipe keys of `learning` (gp= then uses the GP the bench fitted) plus
//       steps, time_limit, gp_pool, n_train and samples.

#include "ditimpute/backend.hpp"
#include "ditimpute/dit.hpp"
#include "ditimpute/gaussian.hpp"
#include "ditimpute/patterns.hpp"
#include "ditimpute/theory.hpp"
// Internal: the network itself, for the general-vs-folded call comparison.
#include "../cpp/src/dit/model_impl.hpp"
#include "../cpp/src/dit/network.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace ditimpute;
using clock_type = std::chrono::steady_clock;

namespace {

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

DiTConfig make_config(int H, int d, int width, int depth, int heads) {
  DiTConfig c;
  c.H = H;
  c.d = d;
  c.width = width;
  c.depth = depth;
  c.heads = heads;
  return c;
}

// A training step (batch 64) and a sampling call (batch 100) through the
// public API, the twins of what dit_pytorch.py times: predict_noise() on 100
// states, and fit() timed at 1 and 1 + K steps a call, so that a step's cost
// inside a training run ((t(1 + K) - t(1)) / K, with its example drawing,
// EMA and NaN checks) is told apart from what each fit() call adds once
// (optimizer, EMA copy, moving the model). Returns {step, sampling call,
// per-call setup} in ms.
struct NetworkTimes {
  double step_ms, sample_ms, call_ms;
};
NetworkTimes time_network(const DiTConfig& c, int reps, const std::string& device) {
  auto model = DiTModel::create(c, 0, device);
  Rng rng(1);
  Batch data(256, c.H, c.d);
  fill_standard_normal(rng, data.data.data(), data.data.size());
  MaskStrategy strategy;
  strategy.generators = {PatternGenerator::random_frames(std::max(1, c.H / 6))};
  strategy.weights = {1};
  TrainOptions o;
  o.batch_size = 64;
  o.val_every = 1000000;
  o.threads = 0;
  o.steps = 1;
  o.device = device;
  model.fit(data, nullptr, strategy, o);  // warm-up
  auto timed_fit = [&](int steps) {
    const auto start = clock_type::now();
    for (int r = 0; r < reps; ++r) {
      o.steps = steps;
      o.seed = 2 + r;
      model.fit(data, nullptr, strategy, o);
    }
    return 1000.0 * seconds_since(start) / reps;
  };
  const int K = device == "cuda" ? 20 : 4;
  const double one = timed_fit(1);
  const double many = timed_fit(1 + K);
  const double step_ms = (many - one) / K;
  Batch states(100, c.H, c.d);
  fill_standard_normal(rng, states.data.data(), states.data.size());
  const Mask mask = strategy.draw(c.H, c.d, rng);
  model.predict_noise(states, mask, 0.5);  // warm-up
  const auto start = clock_type::now();
  for (int r = 0; r < reps; ++r) model.predict_noise(states, mask, 0.5);
  return {step_ms, 1000.0 * seconds_since(start) / reps, one - step_ms};
}

std::pair<double, double> time_python(const DiTConfig& c, int threads, int reps, const std::string& device) {
  // The script sits next to this source file.
  const std::string here = __FILE__;
  const std::string dir = here.substr(0, here.find_last_of('/') + 1);
  const char* py = std::getenv("DITIMPUTE_PYTHON");
  const std::string cmd = std::string(py && *py ? py : "/usr/bin/python3") + " " + dir + "dit_pytorch.py " +
                          std::to_string(c.width) + " " + std::to_string(c.depth) + " " + std::to_string(c.heads) +
                          " " + std::to_string(c.H) + " " + std::to_string(c.d) + " " + std::to_string(threads) +
                          " " + std::to_string(reps) + " " + device;
  FILE* p = popen(cmd.c_str(), "r");
  double tr = NAN, sa = NAN;
  if (p) {
    if (std::fscanf(p, "train_ms=%lf sample_ms=%lf", &tr, &sa) != 2) tr = sa = NAN;
    pclose(p);
  }
  return {tr, sa};
}

void speed(int threads, int reps, const std::string& device) {
  set_threads(threads);
  std::printf("DiT speed, H = 96, d = 8, device %s, %d threads, float32, %d reps (ms)\n", device.c_str(), threads,
              reps);
  std::printf("%-10s %8s %12s %12s %8s %12s %12s %8s %12s\n", "model", "params", "train C++", "train Py", "C++/Py",
              "sample C++", "sample Py", "C++/Py", "fit() call");
  struct Size {
    const char* name;
    int width, depth, heads;
  };
  for (Size s : {Size{"small", 128, 4, 4}, Size{"paper", 256, 12, 16}}) {
    auto c = make_config(96, 8, s.width, s.depth, s.heads);
    const int r = s.depth > 4 ? std::max(1, reps / 3) : reps;
    auto cpp = time_network(c, r, device);
    auto py = time_python(c, threads, r, device);
    auto n = DiTModel::create(c, 1, "cpu").n_parameters();
    std::printf("%-10s %8.2fM %12.1f %12.1f %8.2f %12.1f %12.1f %8.2f %12.1f\n", s.name, n / 1e6, cpp.step_ms,
                py.first, cpp.step_ms / py.first, cpp.sample_ms, py.second, cpp.sample_ms / py.second, cpp.call_ms);
  }

  // Imputation of one 96 x 8 sequence, 100 samples, public API, for the
  // small model and a tiny one (64 wide, 2 deep): the default sampler (UniPC,
  // 20 calls) against a one-call Euler run measured in the same process, and
  // the former default (200 Heun-SDE steps) for the record; then 20 cases
  // through the batched pipeline, per case.
  std::vector<double> x(96 * 8, 0.3);
  for (int h : paper_pattern(1))
    for (int j = 0; j < 8; ++j) x[h * 8 + j] = NAN;
  struct Net {
    const char* name;
    int width, depth, heads;
  };
  for (Net net : {Net{"small 128/4", 128, 4, 4}, Net{"tiny 64/2", 64, 2, 4}}) {
    auto model = DiTModel::create(make_config(96, 8, net.width, net.depth, net.heads), 1, device);
    SamplerOptions one;
    one.method = SamplerOptions::Method::euler_maruyama;
    one.steps = 1;
    model.sample(x, 100, one, 1, threads);  // warm-up
    auto start = clock_type::now();
    model.sample(x, 100, one, 1, threads);
    const double t_one = seconds_since(start);
    const SamplerOptions def;
    start = clock_type::now();
    model.sample(x, 100, def, 1, threads);
    const double t_def = seconds_since(start);
    std::printf("impute one 96 x 8 sequence, %s DiT, Z = 100: default %s %d steps (%d calls) %.2f s = %.1f one-call "
                "times (one call %.3f s)\n",
                net.name, to_string(def.method).c_str(), def.steps, score_evaluations(def), t_def, t_def / t_one,
                t_one);
    Batch cases(20, 96, 8);
    for (int i = 0; i < 20; ++i) std::copy(x.begin(), x.end(), cases.seq(i));
    const std::vector<Mask> masks = masks_from_nan(cases);
    start = clock_type::now();
    model.sample_missing(cases, masks, 100, def, 1, threads);
    const double t20 = seconds_since(start) / 20;
    std::printf("  20 cases in one call: %.2f s per case (%.2fx the single case)\n", t20, t20 / t_def);
    if (net.depth <= 2) {
      SamplerOptions old;
      old.method = SamplerOptions::Method::heun_sde;
      old.steps = 200;
      start = clock_type::now();
      model.sample(x, 100, old, 1, threads);
      std::printf("  former default sde 200 steps (400 calls): %.2f s\n", seconds_since(start));
    }
  }
}

// Wall and CPU seconds of f(), the best of `reps` runs (after one warm-up).
std::pair<double, double> time_best(int reps, const std::function<void()>& f) {
  f();
  double wall = INFINITY, cpu = INFINITY;
  for (int r = 0; r < reps; ++r) {
    const auto start = clock_type::now();
    const std::clock_t c0 = std::clock();
    f();
    wall = std::min(wall, seconds_since(start));
    cpu = std::min(cpu, static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
  }
  return {wall, cpu};
}

// A network of config c with random weights (untrained modulations are 0 and
// would skip nothing), Z rows of random inputs and masks (seed 1).
struct RandomNetwork {
  ditimpute::detail::DiTNet net;
  torch::Tensor x, mask;
};
RandomNetwork random_network(const DiTConfig& c, int Z) {
  torch::manual_seed(1);
  ditimpute::detail::DiTNet net(c);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : net->parameters()) p.normal_(0.0, 0.05);
  }
  auto x = torch::randn({Z, c.H, c.d});
  auto mask = (torch::rand({Z, c.H, c.d}) > 0.5).to(torch::kFloat32);
  return {net, x, mask};
}

void sampler_speed(int threads, int reps) {
  set_threads(threads);
  const int H = 96, d = 8, Z = 100;
  const DiTConfig c = make_config(H, d, 128, 4, 4);
  std::printf("DiT sampling path, small 128/4/4, H = %d, d = %d, Z = %d, %d threads, best of %d (wall s / cpu s)\n", H,
              d, Z, threads, reps);
  {
    RandomNetwork rn = random_network(c, Z);
    auto& net = rn.net;  // references, not a structured binding: the lambdas below capture them (C++17)
    const auto &x = rn.x, &mask = rn.mask;
    c10::InferenceMode inference;
    auto t = torch::full({Z}, 0.5);
    const auto general = time_best(reps, [&] { net->noise(x, mask, t); });
    const auto folded = time_best(reps, [&] { net->noise_at(x, mask, 0.5); });
    std::printf("network call: general %.3f / %.3f, folded %.3f / %.3f: %.2fx wall, %.2fx cpu\n", general.first,
                general.second, folded.first, folded.second, general.first / folded.first,
                general.second / folded.second);
    // Baseline of the CPU MLP path: the same folded call with the former
    // whole-tensor torch::gelu chain in every block. The two alternate call
    // by call and medians are compared: on this shared VM the speed drifts
    // by 1.3x within minutes, which a best-of-3 of each in turn mistakes for
    // a difference.
    auto set_chunked = [&](bool on) {
      for (auto& b : *net->blocks) b->as<ditimpute::detail::DiTBlockImpl>()->cpu_chunked_mlp = on;
    };
    const int rounds = 10 * reps;
    std::vector<double> wall[2], cpu[2];
    for (int r = 0; r < rounds; ++r)
      for (int on : {0, 1}) {
        set_chunked(on == 1);
        const auto s = time_best(1, [&] { net->noise_at(x, mask, 0.5); });
        wall[on].push_back(s.first);
        cpu[on].push_back(s.second);
      }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    set_chunked(false);
    const auto former_out = net->noise_at(x, mask, 0.5);
    set_chunked(true);
    const double diff = (net->noise_at(x, mask, 0.5) - former_out).abs().max().item<double>();
    std::printf("folded call, median of %d alternating calls (wall / cpu): former whole-tensor MLP %.3f / %.3f, "
                "chunked MLP with in-place GELU (default) %.3f / %.3f: %.2fx wall, %.2fx cpu (max |difference| %.1e)\n",
                rounds, median(wall[0]), median(cpu[0]), median(wall[1]), median(cpu[1]),
                median(wall[0]) / median(wall[1]), median(cpu[0]) / median(cpu[1]), diff);
  }
  auto model = DiTModel::create(c, 1, "cpu");
  std::vector<double> x(H * d, 0.3);
  for (int h : paper_pattern(1))
    for (int j = 0; j < d; ++j) x[h * d + j] = NAN;
  SamplerOptions one;
  one.method = SamplerOptions::Method::euler_maruyama;
  one.steps = 1;
  const SamplerOptions def;
  SamplerOptions former;  // the default until session 7: UniPC-3 on 12 geometric steps
  former.method = SamplerOptions::Method::unipc;
  former.steps = 12;
  former.grid = SamplerOptions::Grid::geometric;
  const auto t1 = time_best(reps, [&] { model.sample(x, Z, one, 1, threads); });
  const auto td = time_best(reps, [&] { model.sample(x, Z, def, 1, threads); });
  const auto tf = time_best(reps, [&] { model.sample(x, Z, former, 1, threads); });
  std::printf("one call (Euler, 1 step)      %.3f / %.3f\n", t1.first, t1.second);
  std::printf("default %s %s %d steps (%d calls) %.3f / %.3f = %.1f one-call times (cpu %.1f)\n",
              to_string(def.method).c_str(), to_string(resolved_grid(def)).c_str(), def.steps, score_evaluations(def),
              td.first, td.second, td.first / t1.first, td.second / t1.second);
  std::printf("former default unipc geometric 12 steps (12 calls) %.3f / %.3f = %.1f one-call times: %.2fx the default\n",
              tf.first, tf.second, tf.first / t1.first, tf.first / td.first);
  Batch cases(20, H, d);
  for (int i = 0; i < 20; ++i) std::copy(x.begin(), x.end(), cases.seq(i));
  const std::vector<Mask> masks = masks_from_nan(cases);
  const auto tc = time_best(1, [&] { model.sample_missing(cases, masks, Z, def, 1, threads); });
  std::printf("20 cases in one call: %.3f / %.3f per case (%.2fx the single case)\n", tc.first / 20, tc.second / 20,
              tc.first / 20 / td.first);
}

// Per-time diagnosis of a trained model against the exact GP: states x_t
// drawn from the conditional's forward marginal, the network's eps_hat
// against the noise (its loss), the Bayes-optimal eps* = -sigma_t s* (the
// least loss any network can reach) and the excess |eps_hat - eps*|^2.
void per_time_table(const DiTModel& model, const GaussianProcess& gp, const MaskStrategy& strategy,
                    const Batch& test, Rng& rng, int threads) {
  const auto& c = model.config();
  std::printf("  %8s %10s %10s %10s\n", "t", "net loss", "Bayes", "excess");
  for (double t : {1e-4, 1e-3, 1e-2, 0.1, 0.3, 1.0, 3.0, 10.0}) {
    const double a = vp_alpha(t), s = vp_sigma(t);
    double net = 0, bayes = 0, excess = 0;
    long count = 0;
    for (int i = 0; i < test.n; ++i) {
      Mask mask = strategy.draw(c.H, c.d, rng);
      auto cond = make_conditional(gp, mask);
      const Vector mu = cond->mean(test.seq(i));
      const int Z = 32, m = cond->n_missing();
      const Matrix x0 = cond->sample(mu, Z, rng);
      Matrix eps(Z, m), xt(Z, m);
      std::normal_distribution<double> nd;
      for (int z = 0; z < Z; ++z)
        for (int e = 0; e < m; ++e) eps(z, e) = nd(rng), xt(z, e) = a * x0(z, e) + s * eps(z, e);
      const Matrix star = -s * cond->score(xt, mu, t);
      Batch states(Z, c.H, c.d);
      const auto& miss = cond->missing_entries();
      for (int z = 0; z < Z; ++z) {
        std::copy(test.seq(i), test.seq(i) + test.seq_size(), states.seq(z));
        for (int e = 0; e < m; ++e) states.seq(z)[miss[e]] = xt(z, e);
      }
      const Batch hat = model.predict_noise(states, mask, t, threads);
      for (int z = 0; z < Z; ++z)
        for (int e = 0; e < m; ++e) {
          const double h = hat.seq(z)[miss[e]];
          net += (h - eps(z, e)) * (h - eps(z, e));
          bayes += (star(z, e) - eps(z, e)) * (star(z, e) - eps(z, e));
          excess += (h - star(z, e)) * (h - star(z, e));
          ++count;
        }
    }
    std::printf("  %8.0e %10.4f %10.4f %10.4f\n", t, net / count, bayes / count, excess / count);
  }
}

void gp_demo(int threads, int steps, const std::string& prediction, const std::string& loss_weight, double lr) {
  const int H = 32, d = 4;
  Kernel k;
  k.type = KernelType::rbf;
  k.lengthscale = 8.0;
  Matrix Lambda(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) Lambda(i, j) = std::pow(0.6, std::abs(i - j));
  // Nugget 1e-4: the RBF Gamma is numerically singular without it.
  GaussianProcess gp(kernel_matrix(k, H) + 1e-4 * Matrix::Identity(H, H), Lambda, RowMatrix::Zero(H, d));
  Rng rng(42);
  Batch train = gp.simulate(5000, rng), val = gp.simulate(500, rng), test = gp.simulate(30, rng);
  // Mixed masking (8 of 32 frames): random frames, blocks of 2, blocks of 4, tail.
  MaskStrategy strategy;
  strategy.generators = {PatternGenerator::random_frames(8), PatternGenerator::block_frames(4, 2),
                         PatternGenerator::block_frames(2, 4), PatternGenerator::tail_frames(8)};
  strategy.weights = {1, 1, 1, 1};

  auto config = make_config(H, d, 128, 4, 4);
  config.prediction = prediction;
  auto model = DiTModel::create(config, 1, "cpu");
  const double untrained = model.denoising_loss(val, strategy, "log_uniform", 9, threads);
  TrainOptions o;
  o.steps = steps;
  o.batch_size = 64;
  o.lr = lr;
  o.loss_weight = loss_weight;
  o.ema = 0.995;
  o.val_every = std::max(1, steps / 10);
  o.threads = threads;
  o.seed = 3;
  o.device = "cpu";
  auto res = model.fit(train, &val, strategy, o, [&](const TrainProgress& p) {
    if (p.step % o.val_every == 0)
      std::printf("  step %5d  train %.4f  val %.4f  %.0f s\n", p.step, p.loss_avg, p.val_loss, p.seconds);
    return true;
  });
  const double trained = model.denoising_loss(val, strategy, "log_uniform", 9, threads);
  std::printf("GP demo (H = %d, d = %d, n = 5000, DiT 128/4/4, prediction %s, loss weight %s, lr %g, %d steps, "
              "%d threads)\n", H, d, prediction.c_str(), loss_weight.c_str(), lr, steps, threads);
  std::printf("  training time %.1f s; held-out eps loss (eq. 13) untrained %.4f, trained %.4f\n", res.seconds,
              untrained, trained);
  per_time_table(model, gp, strategy, test, rng, threads);

  SamplerOptions so;
  so.steps = 100;
  double mse = 0, prior = 0, var_s = 0, var_e = 0;
  int count = 0;
  auto start = clock_type::now();
  std::vector<Mask> masks;
  for (int i = 0; i < test.n; ++i) masks.push_back(strategy.draw(H, d, rng));
  const std::vector<Matrix> samples = model.sample_missing(test, masks, 100, so, 1000, threads);
  for (int i = 0; i < test.n; ++i) {
    auto cond = make_conditional(gp, masks[i]);
    Vector mu = cond->mean(test.seq(i));
    const Matrix C = cond->covariance();
    const Matrix& s = samples[i];
    for (Eigen::Index e = 0; e < s.cols(); ++e) {
      const double mean = s.col(e).mean();
      const double sq = (s.col(e).array() - mean).square().sum() / (s.rows() - 1);
      mse += (mean - mu(e)) * (mean - mu(e));
      prior += mu(e) * mu(e);
      var_s += sq;
      var_e += C(e, e);
      ++count;
    }
  }
  std::printf("  %d test cases, Z = 100, %d-step sampler: MSE(sample mean, exact cond. mean) %.4f, "
              "prior-mean MSE %.4f, ratio %.3f; mean sample variance %.4f vs exact %.4f (%.1f s)\n",
              test.n, so.steps, mse / count, prior / count, mse / prior, var_s / count, var_e / count,
              seconds_since(start));
}

// One row of the learning table: W2 / null, Mahalanobis and raw 95% region
// coverage on each pattern (every frame of it missing in every test sequence).
// `numbers`: the paper's number (1-4) of each of `patterns`, for the labels
// and the seeds.
std::string score_patterns(const DiTModel& model, const GaussianProcess& gp, const Batch& truth,
                           const std::vector<std::vector<int>>& patterns, const SamplerOptions& so, int threads,
                           const std::vector<int>& numbers) {
  std::ostringstream row;
  row << " " << to_string(so.method) << ":" << so.steps;
  const DiTSampler sampler(model, so);
  for (std::size_t q = 0; q < patterns.size(); ++q) {
    const std::size_t p = static_cast<std::size_t>(numbers[q] - 1);
    Batch x = truth;
    for (int i = 0; i < x.n; ++i)
      for (int h : patterns[q])
        for (int j = 0; j < x.d; ++j) x.seq(i)[h * x.d + j] = NAN;
    ImputeOptions io;
    io.n_samples = 100;
    io.seed = 1 + p;
    io.threads = threads;
    const Imputation imp = impute(sampler, x, io);
    const auto de = distribution_error(gp, x, imp.samples, 100, 50 + p, threads);
    const auto cov = region_coverage(gp, x, imp.centre, imp.radius, 1000, 60 + p, threads);
    double w2 = 0, w2n = 0, mah = 0, cv = 0;
    for (int i = 0; i < x.n; ++i) {
      w2 += de[i].samples.w2;
      w2n += de[i].null.w2;
      mah += de[i].samples.mahalanobis;
      cv += cov[i];
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, " P%zu %.2f/%.2f=%.2f %.2f %.1f%%", p + 1, w2 / x.n, w2n / x.n, w2 / w2n, mah / x.n,
                  100 * cv / x.n);
    row << buf;
  }
  return row.str();
}

// The paper's S4 at H = 48: "8x1", "8x1", "4x2", "1x8" with equal weights.
MaskStrategy s4_strategy() {
  MaskStrategy s4;
  s4.generators = {PatternGenerator::random_frames(8), PatternGenerator::random_frames(8),
                   PatternGenerator::block_frames(4, 2), PatternGenerator::block_frames(1, 8)};
  s4.weights = {0.25, 0.25, 0.25, 0.25};
  return s4;
}

// The paper's patterns P1-P4 (H = 96) halved to H = 48: each run of missing
// frames starts at half its start and keeps half its length.
std::vector<std::vector<int>> half_paper_patterns() {
  std::vector<std::vector<int>> patterns;
  for (int p = 1; p <= 4; ++p) {
    const std::vector<int> f = paper_pattern(p);
    std::vector<int> starts;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (i == 0 || f[i] != f[i - 1] + 1) starts.push_back(f[i]);
    const int len = static_cast<int>(f.size() / starts.size());
    std::vector<int> half;
    for (int st : starts)
      for (int j = 0; j < len / 2; ++j) half.push_back(st / 2 + j);
    patterns.push_back(half);
  }
  return patterns;
}

// dit_fit()'s default recipe (its defaults live in R) for config `c`, then
// the key=value changes of the command line (see the header comment);
// samplers=... fills `samplers` (the library's default sampler when none).
// Keys the caller handles itself are in `extra` (they are left alone here).
TrainOptions default_recipe(DiTConfig& c, int threads, const std::string& device,
                            const std::vector<std::string>& changes, std::vector<SamplerOptions>& samplers,
                            const std::vector<std::string>& extra = {}) {
  TrainOptions o;
  o.batch_size = 64;
  o.lr = 2e-3;
  o.lr_schedule = "cosine";
  o.warmup_steps = 200;
  o.lr_min = 0.1;
  o.patience = 10;
  o.restore_best = true;
  o.ema = 0.999;
  o.ema_warmup = true;
  o.val_every = 100;
  o.seed = 7;
  o.threads = threads;
  o.device = device;
  for (const std::string& kv : changes) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (std::find(extra.begin(), extra.end(), key) != extra.end()) continue;
    if (key == "lr") o.lr = std::stod(v);
    else if (key == "batch") o.batch_size = std::stoi(v);
    else if (key == "warmup") o.warmup_steps = std::stoi(v);
    else if (key == "ema") o.ema = std::stod(v);
    else if (key == "schedule") o.lr_schedule = v;
    else if (key == "lr_min") o.lr_min = std::stod(v);
    else if (key == "loss_weight") o.loss_weight = v;
    else if (key == "patience") o.patience = std::stoi(v);
    else if (key == "t_sampling") o.t_sampling = v;
    else if (key == "prediction") c.prediction = v;
    else if (key == "gp") c.gp = v;
    else if (key == "seed") o.seed = std::stoull(v);
    else if (key == "restore_best") o.restore_best = v == "1" || v == "true";
    else if (key == "time_limit") o.time_limit = std::stod(v);
    else if (key == "steps") o.steps = std::stoi(v);
    else if (key == "gp_pool") o.gp_pool = std::stoi(v);
    else if (key == "grad_clip") o.grad_clip = std::stod(v);
    else if (key == "samplers") {
      std::stringstream list(v);
      for (std::string item; std::getline(list, item, ',');) {
        SamplerOptions so;
        const auto colon = item.find(':');
        so.method = sampler_method_from_string(item.substr(0, colon));
        so.steps = colon != std::string::npos ? std::stoi(item.substr(colon + 1)) : default_steps(so.method);
        samplers.push_back(so);
      }
    } else throw std::invalid_argument("unknown recipe change: " + kv);
  }
  if (samplers.empty()) samplers.push_back(SamplerOptions{});
  return o;
}

// bench/dit_learning.R's setting in C++ (see the header comment).
void learning(int threads, const std::string& device, const std::vector<int>& budgets, int n_test, int width,
              int depth, int heads, const std::vector<std::string>& changes) {
  set_threads(threads);
  const int H = 48, d = 8;
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 64;
  GaussianProcess gp(kernel_matrix(k, H), Matrix::Identity(d, d), RowMatrix::Zero(H, d));
  Rng r_train(104000), r_val(204000), r_test(5);
  const Batch train = gp.simulate(4000, r_train), val = gp.simulate(400, r_val), truth = gp.simulate(n_test, r_test);
  const MaskStrategy s4 = s4_strategy();
  const std::vector<std::vector<int>> all_patterns = half_paper_patterns();
  // patterns=1,3: score only these of P1-P4 (same test sequences and seeds).
  std::vector<int> numbers;
  for (const std::string& kv : changes)
    if (kv.rfind("patterns=", 0) == 0) {
      std::stringstream list(kv.substr(9));
      for (std::string item; std::getline(list, item, ',');) {
        const int p = std::stoi(item);
        if (p < 1 || p > 4) throw std::runtime_error("patterns: 1 to 4, not " + item);
        numbers.push_back(p);
      }
    }
  if (numbers.empty()) numbers = {1, 2, 3, 4};
  std::vector<std::vector<int>> patterns;
  for (int p : numbers) patterns.push_back(all_patterns[static_cast<std::size_t>(p - 1)]);

  DiTConfig c = make_config(H, d, width, depth, heads);
  std::vector<SamplerOptions> samplers;
  TrainOptions o = default_recipe(c, threads, device, changes, samplers,
                                  {"gp_lengthscale", "patterns", "save", "load"});
  // gp_lengthscale=L: the GP-informed model gets the Laplace GP of lengthscale
  // L instead of the data's 64 (a misspecified GP: a correction to learn).
  GaussianProcess informed = gp;
  for (const std::string& kv : changes)
    if (kv.rfind("gp_lengthscale=", 0) == 0) {
      Kernel kg = k;
      kg.lengthscale = std::stod(kv.substr(15));
      informed = GaussianProcess(kernel_matrix(kg, H), Matrix::Identity(d, d), RowMatrix::Zero(H, d));
    }

  std::printf("DiT learning (bench/dit_learning.R's setting): H = %d, d = %d, Laplace 64, S4, 4,000 + 400 sequences, "
              "DiT %d/%d/%d, device %s, %d threads, dit_fit()'s default recipe; %d test sequences x 100 samples per "
              "pattern\n", H, d, width, depth, heads, device.c_str(), threads, n_test);
  std::printf("recipe changes:");
  for (const std::string& kv : changes) std::printf(" %s", kv.c_str());
  std::printf("%s\n", changes.empty() ? " none" : "");
  std::printf("%7s %7s %7s %7s %8s %8s | %s\n", "budget", "steps", "best", "train_s", "val_best", "stop",
              "P1-P4: W2 / null, Mahalanobis, coverage");
  // save=PATH keeps the trained model (the budget is appended when there are
  // several); load=PATH scores a saved one instead of training (the budget
  // then only labels the rows).
  std::string save_path, load_path;
  for (const std::string& kv : changes) {
    if (kv.rfind("save=", 0) == 0) save_path = kv.substr(5);
    if (kv.rfind("load=", 0) == 0) load_path = kv.substr(5);
  }
  for (int steps : budgets) {
    o.steps = steps;
    auto model = load_path.empty() ? DiTModel::create(c, o.seed, device) : DiTModel::load(load_path, device);
    if (!c.gp.empty() && load_path.empty()) model.set_gp(informed);  // the true law unless gp_lengthscale= says otherwise
    const double untrained = model.denoising_loss(val, s4, o.t_sampling, 99, threads, "v");
    TrainResult res;
    if (load_path.empty()) {
      res = model.fit(train, &val, s4, o);
      if (!save_path.empty())
        model.save(budgets.size() > 1 ? save_path + "." + std::to_string(steps) : save_path);
    } else {
      res.stop_reason = "loaded";
    }
    if (load_path.empty())
      std::printf("%7s untrained validation loss %.4f (v-weighted; masks, times and noise of seed 99), after training "
                  "%.4f\n", "", untrained, model.denoising_loss(val, s4, o.t_sampling, 99, threads, "v"));
    else
      std::printf("%7s loaded %s: validation loss %.4f (v-weighted; masks, times and noise of seed 99)\n", "",
                  load_path.c_str(), untrained);
    for (const SamplerOptions& so : samplers) {
      std::printf("%7d %7d %7d %7.0f %8.4f %8s |%s\n", steps, res.steps_done, res.best_step, res.seconds,
                  res.best_val_loss, res.stop_reason.c_str(),
                  score_patterns(model, gp, truth, patterns, so, threads, numbers).c_str());
      std::fflush(stdout);
    }
  }
}

// Little-endian float64 files (bench/reproduce_paper_latent.R writes them):
// a whole file as doubles, and doubles written to one.
std::vector<double> read_doubles(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error("cannot read " + path);
  const std::streamsize bytes = f.tellg();
  std::vector<double> v(static_cast<std::size_t>(bytes) / sizeof(double));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  return v;
}
Batch read_batch(const std::string& path, int H, int d) {
  std::vector<double> v = read_doubles(path);
  if (v.size() % (static_cast<std::size_t>(H) * d) != 0) throw std::runtime_error(path + ": not n x H x d values");
  Batch b(static_cast<int>(v.size() / (static_cast<std::size_t>(H) * d)), H, d);
  b.data = std::move(v);
  return b;
}
void write_doubles(const std::string& path, const std::vector<double>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  if (!f) throw std::runtime_error("cannot write " + path);
}

// The latent GP of bench/reproduce_paper_latent.R (section 6.2) for budgets
// a CPU cannot buy: `dir` holds what that bench writes with
// DITIMPUTE_BENCH_EXPORT (train.bin: its training sequences, test.bin: its
// test sequences, gp.bin: the fitted GP's Gamma, Lambda and mean), so the
// imputations written to `out` (P1-P4, each n_test x H x d: the test
// sequences with their missing frames filled by the mean of n_samples draws)
// are scored there by DITIMPUTE_BENCH_IMPORT against the same conditional
// means. Keys beyond the recipe's: n_train=N (0: the file's sequences; N > 0:
// N fresh latent-GP sequences drawn here), gp=residual|score|channels (the fitted
// GP informs the network), samples=Z (200).
void latent(int threads, const std::string& device, const std::string& dir, const std::string& out, int width,
            int depth, int heads, const std::vector<std::string>& changes) {
  set_threads(threads);
  const int H = 48, d = 8;
  const double noise_var = 0.1;
  int n_train = 0, n_samples = 200;
  DiTConfig c = make_config(H, d, width, depth, heads);
  for (const std::string& kv : changes) {
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "n_train") n_train = std::stoi(v);
    else if (key == "samples") n_samples = std::stoi(v);
  }
  std::vector<SamplerOptions> samplers;
  const TrainOptions o0 = default_recipe(c, threads, device, changes, samplers, {"n_train", "samples"});
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 64;
  const GaussianProcess law(kernel_matrix(k, H), Matrix::Identity(d, d), RowMatrix::Zero(H, d));
  Rng r_train(314000), r_val(315000);
  const Batch train = n_train > 0 ? latent_transform(law.simulate(n_train, r_train), noise_var, r_train)
                                  : read_batch(dir + "/train.bin", H, d);
  const Batch val = latent_transform(law.simulate(400, r_val), noise_var, r_val);
  const Batch test = read_batch(dir + "/test.bin", H, d);
  auto model = DiTModel::create(c, o0.seed, device);
  if (!c.gp.empty()) {
    const std::vector<double> g = read_doubles(dir + "/gp.bin");
    if (g.size() != static_cast<std::size_t>(H * H + d * d + H * d)) throw std::runtime_error("gp.bin: wrong size");
    const Matrix Gamma = Eigen::Map<const Matrix>(g.data(), H, H);
    const Matrix Lambda = Eigen::Map<const Matrix>(g.data() + H * H, d, d);
    const RowMatrix mean = Eigen::Map<const RowMatrix>(g.data() + H * H + d * d, H, d);
    model.set_gp(GaussianProcess(Gamma, Lambda, mean));
  }
  const MaskStrategy s4 = s4_strategy();
  TrainOptions o = o0;
  const bool steps_given = std::any_of(changes.begin(), changes.end(),
                                      [](const std::string& kv) { return kv.rfind("steps=", 0) == 0; });
  if (o.time_limit > 0 && !steps_given) o.steps = 10000000;  // the time decides
  const TrainResult res = model.fit(train, &val, s4, o);
  std::printf("latent GP, H = %d, d = %d: DiT %d/%d/%d%s, device %s, %d training sequences (%s), %d test; "
              "steps %d, best %d, %.0f s, stop %s, best validation loss %.4f (first %.4f)\n",
              H, d, width, depth, heads, c.gp.empty() ? "" : (", gp " + c.gp).c_str(), device.c_str(), train.n,
              n_train > 0 ? "drawn here" : "the bench's", test.n, res.steps_done, res.best_step, res.seconds,
              res.stop_reason.c_str(), res.best_val_loss,
              model.loss_history().empty() ? NAN : model.loss_history().front().val_loss);
  std::fflush(stdout);
  const DiTSampler sampler(model, samplers.front());
  std::vector<double> points;
  const auto patterns = half_paper_patterns();
  const auto t0 = clock_type::now();
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    Batch x = test;
    for (int i = 0; i < x.n; ++i)
      for (int h : patterns[p])
        for (int j = 0; j < d; ++j) x.at(i, h, j) = NAN;
    ImputeOptions io;
    io.n_samples = n_samples;
    io.region = "quantile";  // only the point comes back; any Z will do
    io.seed = 20 + p;
    io.threads = threads;
    const Imputation imp = impute(sampler, x, io);
    points.insert(points.end(), imp.point.data.begin(), imp.point.data.end());
  }
  write_doubles(out, points);
  std::printf("imputed P1-P4 (%d samples each) in %.1f s: %s\n", n_samples, seconds_since(t0), out.c_str());
}
}  // namespace

void entry_speed(int threads, int reps) {
  set_threads(threads);
  const int H = 30, d = 132, Z = 50;
  DiTConfig c = make_config(H, d, 32, 2, 2);
  c.tokens = "entry";
  RandomNetwork rn = random_network(c, Z);
  auto& net = rn.net;  // references, not a structured binding: the lambdas below capture them (C++17)
  const auto &x = rn.x, &mask = rn.mask;
  c10::InferenceMode inference;
  auto t = torch::full({Z}, 0.5);
  // The sampler's CPU path: the folded network in row chunks of at most
  // detail::kCpuTokensPerCall tokens (sampling.cpp).
  const int64_t rows = ditimpute::detail::network_chunk_rows(Z, Z, int64_t{H} * d, false);
  auto chunked = [&](int64_t per_call) {
    std::vector<torch::Tensor> parts;
    for (int64_t r0 = 0; r0 < Z; r0 += per_call) {
      const int64_t n = std::min<int64_t>(per_call, Z - r0);
      parts.push_back(net->noise_at(x.narrow(0, r0, n), mask.narrow(0, r0, n), 0.5));
    }
    return torch::cat(parts, 0);
  };
  std::vector<double> wall[3], cpu[3];
  for (int r = 0; r < 5 * reps; ++r) {
    const auto g = time_best(1, [&] { net->noise(x, mask, t); });
    const auto f = time_best(1, [&] { net->noise_at(x, mask, 0.5); });
    const auto k = time_best(1, [&] { chunked(rows); });
    wall[0].push_back(g.first), cpu[0].push_back(g.second);
    wall[1].push_back(f.first), cpu[1].push_back(f.second);
    wall[2].push_back(k.first), cpu[2].push_back(k.second);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double diff = (net->noise(x, mask, t) - net->noise_at(x, mask, 0.5)).abs().max().item<double>();
  const double diff_chunked = (chunked(rows) - net->noise_at(x, mask, 0.5)).abs().max().item<double>();
  std::printf("entry-token DiT 32/2/2, H = %d, d = %d, %d rows (%d tokens), %d threads, median of %d alternating calls "
              "(wall / cpu s): general %.3f / %.3f, folded %.3f / %.3f: %.2fx wall, %.2fx cpu (max |difference| %.1e)\n",
              H, d, Z, Z * H * d, threads, 5 * reps, median(wall[0]), median(cpu[0]), median(wall[1]), median(cpu[1]),
              median(wall[0]) / median(wall[1]), median(cpu[0]) / median(cpu[1]), diff);
  std::printf("folded in chunks of %lld rows (%lld tokens, the sampler's CPU path): %.3f / %.3f: %.2fx wall, %.2fx cpu "
              "against the folded call on all %d rows (max |difference| %.1e)\n",
              static_cast<long long>(rows), static_cast<long long>(rows) * H * d, median(wall[2]), median(cpu[2]),
              median(wall[1]) / median(wall[2]), median(cpu[1]) / median(cpu[2]), Z, diff_chunked);
  // Other chunk sizes, for the choice of kCpuTokensPerCall (same run).
  for (int64_t other : {1, 5, 10, 25}) {
    std::vector<double> w, u;
    for (int r = 0; r < 5 * reps; ++r) {
      const auto k = time_best(1, [&] { chunked(other); });
      w.push_back(k.first), u.push_back(k.second);
    }
    std::printf("  chunks of %lld rows (%lld tokens): %.3f / %.3f: %.2fx wall against all %d rows\n",
                static_cast<long long>(other), static_cast<long long>(other) * H * d, median(w), median(u),
                median(wall[1]) / median(w), Z);
  }
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "speed";
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = argc > 2 ? std::stoi(argv[2]) : cores;
  if (mode == "gp")
    gp_demo(threads, argc > 3 ? std::stoi(argv[3]) : 3000, argc > 4 ? argv[4] : "v", argc > 5 ? argv[5] : "auto",
            argc > 6 ? std::stod(argv[6]) : 5e-4);
  else if (mode == "sampler")
    sampler_speed(threads, argc > 3 ? std::stoi(argv[3]) : 3);
  else if (mode == "entry")
    entry_speed(threads, argc > 3 ? std::stoi(argv[3]) : 3);
  else if (mode == "learning") {
    std::vector<int> budgets;
    std::stringstream list(argc > 4 ? argv[4] : "800,2400,8000");
    for (std::string b; std::getline(list, b, ',');) budgets.push_back(std::stoi(b));
    int width = 64, depth = 3, heads = 4;
    if (argc > 6 && std::sscanf(argv[6], "%d/%d/%d", &width, &depth, &heads) != 3) {
      std::fprintf(stderr, "width/depth/heads: e.g. 64/3/4\n");
      return 1;
    }
    learning(threads, argc > 3 ? argv[3] : "cpu", budgets, argc > 5 ? std::stoi(argv[5]) : 50, width, depth, heads,
             std::vector<std::string>(argv + std::min(argc, 7), argv + argc));
  } else if (mode == "latent") {
    int width = 64, depth = 3, heads = 4;
    if (argc < 7 || std::sscanf(argv[6], "%d/%d/%d", &width, &depth, &heads) != 3) {
      std::fprintf(stderr, "bench_dit latent threads device data_dir out_file width/depth/heads [key=value...]\n");
      return 1;
    }
    latent(threads, argv[3], argv[4], argv[5], width, depth, heads,
           std::vector<std::string>(argv + 7, argv + argc));
  } else
    speed(threads, argc > 3 ? std::stoi(argv[3]) : 6, argc > 4 ? argv[4] : "cpu");
  return 0;
}
