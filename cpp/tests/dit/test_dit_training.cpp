// The training recipe: EMA warm-up, learning-rate schedule, time limit,
// early stopping and restoring the best validation weights.
#include "test_dit_helpers.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

using namespace ditimpute;
using namespace ditimpute::testing;

namespace {

TrainOptions base_options(int steps) {
  TrainOptions o = cpu_train_options(steps, 32, 11);
  o.lr = 1e-3;
  o.val_every = 25;
  return o;
}

std::string input_arg(const TrainOptions& o) {
  try {
    o.validate();
  } catch (const input_error& e) {
    return e.arg();
  }
  return "(none)";
}

}  // namespace

// The raw weights follow the same path in all three runs (same seed; the EMA
// draws no random numbers), so the three held-out losses are paired: the same
// masks, times and noise (seed 77) on 300 held-out sequences, and their
// differences measure the weights, not the Monte Carlo draw.
TEST_CASE("The warmed-up EMA samples no worse than the raw weights after a short run", "[dit][learning]") {
  const int H = 16, d = 2;
  const GpSplit data = small_gp_split(H, d, 1500, 300, 99);
  const Batch& train = data.train;
  const Batch& held_out = data.held_out;
  auto strategy = mixed_strategy(H);
  DiTConfig c = tiny_config(H, d);
  c.width = 32;
  c.depth = 2;
  auto loss_after = [&](double ema, bool warm) {
    auto m = DiTModel::create(c, 5, "cpu");
    auto o = base_options(300);
    o.ema = ema;
    o.ema_warmup = warm;
    m.fit(train, nullptr, strategy, o);
    return m.denoising_loss(held_out, strategy, "log_uniform", 77, 1, "v");
  };
  const double untrained = DiTModel::create(c, 5, "cpu").denoising_loss(held_out, strategy, "log_uniform", 77, 1, "v");
  const double raw = loss_after(0.0, true);
  const double warm = loss_after(0.999, true);
  const double cold = loss_after(0.999, false);
  std::cout << "[dit ema] held-out loss: untrained " << untrained << ", raw " << raw << ", EMA warmed up " << warm
            << ", EMA without warm-up " << cold << "\n";
  // Training must have done something for the comparison to mean anything.
  REQUIRE(raw < 0.8 * untrained);
  // At step 300 the warmed-up decay is 301/310 = 0.97: the average spans the
  // last ~35 steps, whose loss can only lag the last step's by the progress
  // of ~17 steps (small here: the loss falls by well under 1% per 17 steps
  // late in the run). 3% is that lag with room for the averaging's own effect
  // either way; the un-warmed average (74% of the initial network left,
  // 0.999^300) misses it by far, which is what this test must catch.
  CHECK(warm <= 1.03 * raw);
  // Without warm-up the EMA is the bug this test guards against: it must be
  // measurably worse, or the test above could not fail.
  CHECK(cold > 1.03 * raw);
}

TEST_CASE("Learning-rate schedule, time limit and early stopping options are validated", "[dit]") {
  TrainOptions o;
  o.warmup_steps = -1;
  CHECK(input_arg(o) == "warmup_steps");
  o = TrainOptions();
  o.lr_schedule = "step";
  CHECK(input_arg(o) == "lr_schedule");
  o = TrainOptions();
  o.lr_min = 1.5;
  CHECK(input_arg(o) == "lr_min");
  o = TrainOptions();
  o.time_limit = -1;
  CHECK(input_arg(o) == "time_limit");
  o = TrainOptions();
  o.patience = -2;
  CHECK(input_arg(o) == "patience");
}

TEST_CASE("time_limit stops training after about that many seconds", "[dit]") {
  const int H = 12, d = 2;
  auto gp = small_gp(H, d, 3.0);
  Rng rng(3);
  Batch train = gp.simulate(200, rng);
  auto m = DiTModel::create(tiny_config(H, d), 1, "cpu");
  auto o = base_options(1000000);
  o.time_limit = 1.0;
  o.lr_schedule = "cosine";
  const auto t0 = std::chrono::steady_clock::now();
  auto res = m.fit(train, nullptr, mixed_strategy(H), o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(res.stop_reason == "time_limit");
  CHECK(res.steps_done > 0);
  CHECK(res.steps_done < 1000000);
  // One step of this tiny model takes milliseconds; a second of slack covers
  // a loaded machine.
  CHECK(secs < 2.5);
}

// With a constant learning rate a run of k steps is the first k steps of a
// longer one (same seed): the restored best weights must be exactly the
// weights of a fresh run stopped at the best step.
TEST_CASE("restore_best returns the weights of the best validation record and patience stops early", "[dit]") {
  const int H = 12, d = 2;
  auto gp = small_gp(H, d, 3.0);
  Rng rng(8);
  Batch train = gp.simulate(300, rng), val = gp.simulate(40, rng);
  auto strategy = mixed_strategy(H);
  auto o = base_options(400);
  o.lr = 1e-2;  // noisy enough that the last record is not the best
  o.val_every = 20;
  o.restore_best = true;
  auto m = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto res = m.fit(train, &val, strategy, o);
  REQUIRE(res.best_step > 0);
  double best = 1e300;
  int best_step = -1;
  for (const auto& r : m.loss_history())
    if (r.val_loss < best) best = r.val_loss, best_step = r.step;
  CHECK(res.best_step == best_step);
  CHECK(res.best_val_loss == best);
  REQUIRE(res.restored_best);  // this seed's curve ends above its best (checked once, fixed seeds)
  auto prefix = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto po = o;
  po.steps = res.best_step;
  po.restore_best = false;
  prefix.fit(train, &val, strategy, po);
  Batch probe = gp.simulate(3, rng);
  Mask mask = strategy.draw(H, d, rng);
  const Batch a = m.predict_noise(probe, mask, 0.5, 1), b = prefix.predict_noise(probe, mask, 0.5, 1);
  double diff = 0;
  for (std::size_t k = 0; k < a.data.size(); ++k) diff = std::max(diff, std::abs(a.data[k] - b.data[k]));
  CHECK(diff < 1e-6);

  // Early stopping: patience 1 stops at the first record that is not a new
  // best, which this curve has before step 400.
  auto es = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto eo = o;
  eo.patience = 1;
  auto eres = es.fit(train, &val, strategy, eo);
  CHECK(eres.stop_reason == "early_stop");
  CHECK(eres.steps_done < 400);
  CHECK(eres.steps_done == eres.best_step + eo.val_every);
}

TEST_CASE("A resumed run keeps the best validation record of the run it resumes, and needs steps left", "[dit]") {
  const int H = 12, d = 2;
  auto gp = small_gp(H, d, 3.0);
  Rng rng(8);
  Batch train = gp.simulate(300, rng), val = gp.simulate(40, rng);
  auto strategy = mixed_strategy(H);
  auto o = base_options(200);
  o.lr = 3e-2;  // noisy, so that the best record is not simply the last one
  o.val_every = 20;
  const std::string ckpt = (std::filesystem::temp_directory_path() / "ditimpute_resume_best.ckpt").string();
  std::remove(ckpt.c_str());
  o.checkpoint_path = ckpt;
  auto m = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto first = m.fit(train, &val, strategy, o);
  // this seed's best record comes early and is never beaten (checked once, fixed seeds)
  REQUIRE(first.best_step > 0);
  REQUIRE(first.best_step < 200);
  auto resumed = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto ro = o;
  ro.steps = 260;
  ro.resume_from = ckpt;
  ro.checkpoint_path = "";
  ro.restore_best = true;
  auto second = resumed.fit(train, &val, strategy, ro);
  // the best over the whole record, before and after the resume (it was the
  // best of the resumed part only, and restore_best returned its weights)
  double best = 1e300;
  int best_step = -1;
  for (const auto& r : resumed.loss_history())
    if (std::isfinite(r.val_loss) && r.val_loss < best) best = r.val_loss, best_step = r.step;
  REQUIRE(best_step == first.best_step);
  CHECK(second.best_step == best_step);
  CHECK(second.best_val_loss == best);
  CHECK_FALSE(second.restored_best);  // that record's weights are not in the checkpoint
  // patience counts on from the records before the resume: the first record
  // after it, not a new best, stops a run with patience 1
  auto again = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto po = ro;
  po.patience = 1;
  auto stopped = again.fit(train, &val, strategy, po);
  CHECK(stopped.stop_reason == "early_stop");
  CHECK(stopped.steps_done == 220);
  // nothing left to train: an input error naming steps (it returned the checkpoint's model silently)
  auto none = DiTModel::create(tiny_config(H, d), 4, "cpu");
  auto no = ro;
  no.steps = 200;
  std::string arg = "(none)";
  try {
    none.fit(train, &val, strategy, no);
  } catch (const input_error& e) {
    arg = e.arg();
  }
  CHECK(arg == "steps");
  std::remove(ckpt.c_str());
}
