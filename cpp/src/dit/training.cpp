// DiTModel::fit and denoising_loss: denoising score matching with mixed
// masking (the paper's eq. 13, noise-prediction form, optional 1/alpha^2
// weight), AdamW, EMA, checkpoints and exact resumption. See cpp/DESIGN.md.
#include "model_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <tuple>

namespace ditimpute {
namespace detail {

namespace {

// Examples of one batch, drawn on the CPU: clean values (0 where the data are
// missing), data-observed flags, training masks, times and noise.
// For GP-informed models also the GP's conditional mean and sd of every
// entry under the example's mask (undefined otherwise).
struct Examples {
  torch::Tensor x0, data_obs, mask, t, eps, mu, sd;
  torch::Tensor U, lambda;  // gp = "score": GpEigen of every example (gp_eigen_tensors)
};

// A fixed pool of GP-informed examples (TrainOptions::gp_pool): sequence,
// mask and the GP's conditional mean and sd, S = H * d floats each.
struct GpPool {
  std::vector<int> seq;
  std::vector<float> mask, mu, sd;
  std::vector<GpEigen> eigen;  // gp = "score"
};

bool log_uniform_t(const std::string& t_sampling) { return t_sampling == "log_uniform"; }

// True when examples are weighted by 1 / alpha_t^2 (TrainOptions::loss_weight).
bool v_weighted(const std::string& loss_weight, const DiTConfig& c) {
  return loss_weight == "v" || (loss_weight == "auto" && c.prediction == "v");
}

// For each listed sequence: a mask from the strategy, a time, then (for the
// whole batch) the noise, all from `rng` in a fixed order.
// With `gp`: the GP's conditional mean and sd under each drawn mask too
// (computed here, one factorisation per example, on `threads` threads after
// the draws); with `pool` (and gp): the examples are pool entries picked
// uniformly, idx unused except for its size.
Examples draw_examples(const Batch& data, const std::vector<int>& idx, const MaskStrategy& strategy, bool log_t,
                       const DiTConfig& c, Rng& rng, const GaussianProcess* gp = nullptr,
                       const GpPool* pool = nullptr, int threads = 1) {
  const int B = static_cast<int>(idx.size());
  const std::size_t S = data.seq_size();
  std::vector<float> x0(B * S), dobs(B * S), mask(B * S), t(B);
  std::vector<float> mu(gp ? B * S : 0), sd(gp ? B * S : 0);
  std::vector<double> noise(B * S);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  const double lt0 = std::log(c.t0), lT = std::log(c.T);
  const int pool_n = pool ? static_cast<int>(pool->seq.size()) : 0;
  const bool score = gp && c.gp == "score";
  std::vector<GpEigen> eig(score ? B : 0);
  std::vector<Mask> fresh(gp ? B : 0);  // masks whose GP conditionals are computed below
  std::vector<const double*> seq(B);
  for (int b = 0; b < B; ++b) {
    const int p = pool_n > 0 ? std::uniform_int_distribution<int>(0, pool_n - 1)(rng) : -1;
    const double* x = seq[b] = data.seq(p >= 0 ? pool->seq[p] : idx[b]);
    for (std::size_t k = 0; k < S; ++k) {
      const bool ok = std::isfinite(x[k]);
      x0[b * S + k] = ok ? static_cast<float>(x[k]) : 0.0f;
      dobs[b * S + k] = ok ? 1.0f : 0.0f;
    }
    if (p >= 0) {
      std::copy_n(pool->mask.begin() + p * S, S, mask.begin() + b * S);
      std::copy_n(pool->mu.begin() + p * S, S, mu.begin() + b * S);
      std::copy_n(pool->sd.begin() + p * S, S, sd.begin() + b * S);
      if (score) eig[b] = pool->eigen[p];
    } else {
      const Mask m = strategy.draw(c.H, c.d, rng);
      for (std::size_t k = 0; k < S; ++k) mask[b * S + k] = m.observed[k] ? 1.0f : 0.0f;
      if (gp) fresh[b] = m;
    }
    const double u = unif(rng);
    t[b] = static_cast<float>(log_t ? std::exp(lt0 + (lT - lt0) * u) : c.t0 + (c.T - c.t0) * u);
  }
  fill_standard_normal(rng, noise.data(), noise.size());
  if (gp && pool_n == 0)
    parallel_for(B, threads, [&](int b) {
      std::vector<double> mu_d(S), sd_d(S);
      gp_case(*gp, seq[b], fresh[b], mu_d.data(), sd_d.data(), score ? &eig[b] : nullptr);
      for (std::size_t k = 0; k < S; ++k) {
        mu[b * S + k] = static_cast<float>(mu_d[k]);
        sd[b * S + k] = static_cast<float>(sd_d[k]);
      }
    });
  const std::vector<int64_t> shape{B, c.H, c.d};
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  Examples e;
  e.x0 = torch::from_blob(x0.data(), shape, f32).clone();
  e.data_obs = torch::from_blob(dobs.data(), shape, f32).clone();
  e.mask = torch::from_blob(mask.data(), shape, f32).clone();
  e.t = torch::from_blob(t.data(), {B}, f32).clone();
  e.eps = torch::from_blob(noise.data(), shape, torch::kFloat64).to(torch::kFloat32);
  if (gp) {
    e.mu = torch::from_blob(mu.data(), shape, f32).clone();
    e.sd = torch::from_blob(sd.data(), shape, f32).clone();
  }
  if (score) std::tie(e.U, e.lambda) = gp_eigen_tensors(eig, static_cast<int64_t>(S));
  return e;
}

// The pool of TrainOptions::gp_pool: n entries, sequences in shuffled
// epochs, masks from the strategy, all from `rng`.
GpPool make_gp_pool(const Batch& data, int n, const MaskStrategy& strategy, const DiTConfig& c,
                    const GaussianProcess& gp, Rng& rng) {
  const std::size_t S = data.seq_size();
  GpPool pool;
  pool.seq.resize(n);
  pool.mask.resize(n * S);
  pool.mu.resize(n * S);
  pool.sd.resize(n * S);
  std::vector<int> perm(data.n);
  for (int i = 0; i < data.n; ++i) perm[i] = i;
  std::vector<double> mu(S), sd(S);
  if (c.gp == "score") pool.eigen.resize(n);
  for (int p = 0; p < n; ++p) {
    if (p % data.n == 0) std::shuffle(perm.begin(), perm.end(), rng);
    const int i = perm[p % data.n];
    pool.seq[p] = i;
    const Mask m = strategy.draw(c.H, c.d, rng);
    gp_case(gp, data.seq(i), m, mu.data(), sd.data(), c.gp == "score" ? &pool.eigen[p] : nullptr);
    for (std::size_t k = 0; k < S; ++k) {
      pool.mask[p * S + k] = m.observed[k] ? 1.0f : 0.0f;
      pool.mu[p * S + k] = static_cast<float>(mu[k]);
      pool.sd[p * S + k] = static_cast<float>(sd[k]);
    }
  }
  return pool;
}

Examples slice(const Examples& e, int64_t from, int64_t to) {
  auto part = [&](const torch::Tensor& v) { return v.defined() ? v.slice(0, from, to) : v; };
  return {part(e.x0),  part(e.data_obs), part(e.mask), part(e.t),     part(e.eps),
          part(e.mu),  part(e.sd),       part(e.U),    part(e.lambda)};
}

// Sum of squared noise-prediction errors over the entries in the loss
// (missing under the training mask and observed in the data), each example
// weighted by 1 / alpha_t^2 = e^t when `v_weight`, and their count. x_t =
// alpha_t x0 + sigma_t eps on those entries (eq. 13's forward marginal); the
// token shows clean values wherever the entry counts as observed.
std::pair<torch::Tensor, torch::Tensor> squared_error(DiTNet& net, const Examples& e, torch::Device dev,
                                                      bool v_weight) {
  auto x0 = e.x0.to(dev), dobs = e.data_obs.to(dev), mask = e.mask.to(dev), t = e.t.to(dev), eps = e.eps.to(dev);
  auto alpha = vp_alpha(t).view({-1, 1, 1});
  auto sigma = vp_sigma(t).view({-1, 1, 1});
  auto seen = mask * dobs;
  auto target = (1 - mask) * dobs;
  auto token = seen * x0 + (1 - seen) * (alpha * x0 + sigma * eps);
  torch::Tensor mu, sd, U, lambda;
  if (e.mu.defined()) {
    mu = e.mu.to(dev);
    sd = e.sd.to(dev);
  }
  if (e.U.defined()) {
    U = e.U.to(dev);
    lambda = e.lambda.to(dev);
  }
  auto eps_hat = net->noise(token, seen, t, mu, sd, U, lambda);
  auto err = (eps_hat - eps).square() * target;
  if (v_weight) err = err * torch::exp(t).view({-1, 1, 1});
  return {err.sum(), target.sum()};
}

// Mean loss over a fixed set of drawn examples, in chunks, without gradients.
double fixed_loss(DiTNet& net, const Examples& e, torch::Device dev, bool v_weight) {
  torch::NoGradGuard no_grad;
  double sum = 0, count = 0;
  const int64_t n = e.t.size(0), chunk = 256;
  for (int64_t from = 0; from < n; from += chunk) {
    auto se = squared_error(net, slice(e, from, std::min(n, from + chunk)), dev, v_weight);
    sum += se.first.item<double>();
    count += se.second.item<double>();
  }
  return count > 0 ? sum / count : std::numeric_limits<double>::quiet_NaN();
}


std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, std::vector<torch::Tensor> params) {
  if (o.optimizer == "adam")
    return std::make_unique<torch::optim::Adam>(std::move(params),
                                                torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  return std::make_unique<torch::optim::AdamW>(std::move(params),
                                               torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& opt, double lr) {
  for (auto& g : opt.param_groups()) g.options().set_lr(lr);
}

// TrainOptions' learning rate at run step k with `spent` of the budget used.
double scheduled_lr(const TrainOptions& o, int k, double spent) {
  const double warm = o.warmup_steps > 0 ? std::min(1.0, (k + 1.0) / o.warmup_steps) : 1.0;
  const double f = std::min(1.0, std::max(0.0, spent));
  double decay = 1.0;
  if (o.lr_schedule == "linear") decay = o.lr_min + (1 - o.lr_min) * (1 - f);
  if (o.lr_schedule == "cosine") decay = o.lr_min + (1 - o.lr_min) * 0.5 * (1 + std::cos(3.141592653589793 * f));
  return o.lr * warm * decay;
}

// Copies of a network's parameters and buffers (the best weights so far).
std::vector<torch::Tensor> snapshot(const DiTNet& net) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out;
  for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
  for (const auto& b : net->buffers()) out.push_back(b.detach().clone());
  return out;
}

void restore(DiTNet& net, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& p : net->parameters()) p.copy_(saved[i++]);
  for (auto& b : net->buffers()) b.copy_(saved[i++]);
}


}  // namespace
}  // namespace detail

TrainResult DiTModel::fit(const Batch& train, const Batch* val, const MaskStrategy& strategy,
                          const TrainOptions& o, const ProgressCallback& callback) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto& m = *impl_;
  const auto& c = m.config;
  o.validate();
  strategy.validate();
  if (c.H < strategy.min_H())
    throw input_error("strategy", "its largest pattern needs windows of at least " + std::to_string(strategy.min_H()) +
                                      " frames (keeping one frame observed), but the model's have H = " +
                                      std::to_string(c.H) + ": choose patterns with fewer missing frames, or longer "
                                      "windows.");
  detail::check_batch(train, c, "train");
  if (val) detail::check_batch(*val, c, "val");
  const GaussianProcess* gp = m.gp.get();
  if (!c.gp.empty() && !gp) throw input_error("gp", "a GP-informed DiT needs its GP (set_gp) before training.");
  if (c.gp == "score") {
    // Each example holds an H*d x m eigenvector matrix (float32); bound the
    // worst case (m = H*d) of the validation set, the pool and a batch.
    const double S = static_cast<double>(c.H) * c.d;
    const double held = (val ? val->n : 0) + std::max(o.gp_pool, 0) + o.batch_size;
    const double gib = 4.0 * S * S * held / (1024.0 * 1024.0 * 1024.0);
    if (gib > 4.0)
      throw input_error("gp", "the GP mode \"score\" keeps an H*d x H*d eigenvector matrix per example: up to " +
                                  std::to_string(gib).substr(0, 5) + " GiB here (H*d = " + std::to_string(c.H * c.d) +
                                  ", validation + pool + batch = " + std::to_string(static_cast<long>(held)) +
                                  "), over the 4 GiB allowed; use \"residual\" or \"channels\", a smaller "
                                  "gp_pool or validation set, or shorter windows.");
  }
  const TorchCallScope torch_call(o.threads);
  set_device(o.device);
  const auto dev = m.device;
  const bool log_t = detail::log_uniform_t(o.t_sampling);
  const bool v_weight = detail::v_weighted(o.loss_weight, c);

  // Training state of this run (or of the run being resumed).
  detail::TrainState st;
  st.optimizer = o.optimizer;
  Rng rng(o.seed);
  auto opt = detail::make_optimizer(o, m.net->parameters());
  if (!o.resume_from.empty()) {
    auto a = detail::read_archive(detail::read_file(o.resume_from, "resume_from"), "resume_from");
    if (a.config != c) throw input_error("resume_from", "the checkpoint's architecture differs from this model's.");
    if (!a.has_train_state)
      throw input_error("resume_from", "the file holds a fitted model, not a training checkpoint.");
    st = a.train_state;
    if (st.optimizer != o.optimizer)
      throw input_error("resume_from", "the checkpoint was trained with \"" + st.optimizer + "\", not \"" +
                                           o.optimizer + "\".");
    if (st.perm.size() != static_cast<std::size_t>(train.n))
      throw input_error("resume_from", "the checkpoint was trained on " + std::to_string(st.perm.size()) +
                                           " sequences, not " + std::to_string(train.n) + ".");
    detail::load_weights(m.net, a.weights, "resume_from");
    m.ema = nullptr;
    if (!a.ema.empty()) {
      m.ema = detail::DiTNet(c);
      detail::load_weights(m.ema, a.ema, "resume_from");
      m.ema->to(dev);
    }
    m.history = a.history;
    m.steps_trained = a.steps_trained;
    std::istringstream rs(st.rng);
    rs >> rng;
    std::istringstream os(st.optimizer_state);
    torch::serialize::InputArchive ar;
    ar.load_from(os, dev);
    opt->load(ar);
    detail::set_lr(*opt, o.lr);
    // Nothing left to train would return the checkpoint's model with an empty
    // record (a review: steps = 20 on a 30-step checkpoint, silently).
    if (st.step >= o.steps)
      throw input_error("steps", "is " + std::to_string(o.steps) + ", but the checkpoint has trained " +
                                     std::to_string(st.step) + " steps already: give more to continue its training.");
  } else {
    st.perm.resize(train.n);
    for (int i = 0; i < train.n; ++i) st.perm[i] = i;
    st.pos = st.perm.size();  // forces a shuffle before the first batch
  }
  if (o.ema > 0 && !m.ema) {
    m.ema = detail::DiTNet(c);
    m.ema->to(dev);
    detail::copy_weights(m.ema, m.net);
  } else if (o.ema == 0) {
    m.ema = nullptr;  // an old EMA would no longer follow the weights
  }

  // Validation examples fixed for the whole run, from their own stream.
  detail::Examples val_ex;
  if (val) {
    Rng vrng(splitmix64(o.seed ^ 0x76616c6964ull));
    std::vector<int> all(val->n);
    for (int i = 0; i < val->n; ++i) all[i] = i;
    val_ex = detail::draw_examples(*val, all, strategy, log_t, c, vrng, gp, nullptr, o.threads);
  }
  // GP-informed training from a fixed pool, from its own stream (so a
  // resumed run rebuilds the same pool).
  detail::GpPool pool;
  if (gp && o.gp_pool > 0) {
    Rng prng(splitmix64(o.seed ^ 0x67702d706f6f6cull));
    pool = detail::make_gp_pool(train, o.gp_pool, strategy, c, *gp, prng);
  }

  auto save_checkpoint = [&]() {
    if (o.checkpoint_path.empty()) return;
    std::ostringstream rs;
    rs << rng;
    st.rng = rs.str();
    torch::serialize::OutputArchive ar;
    opt->save(ar);
    std::ostringstream os;
    ar.save_to(os);
    st.optimizer_state = os.str();
    detail::write_file(o.checkpoint_path, detail::write_archive(m, &st), "checkpoint_path");
  };

  TrainResult res;
  TrainProgress prog;
  prog.total = o.steps;
  double window_sum = 0;
  int window_n = 0, last_checkpoint = -1;
  auto params = m.net->parameters();
  auto ema_params = m.ema ? m.ema->parameters() : std::vector<torch::Tensor>{};
  const double clip = o.grad_clip > 0 ? o.grad_clip : std::numeric_limits<double>::infinity();
  std::vector<int> idx(o.batch_size);
  m.net->train();
  // Best validation record (early stopping, restore_best). A resumed run
  // continues the record of the run it resumes: its best loss and the records
  // since (patience counts on); that best's weights are not in the checkpoint,
  // so restore_best returns only a better record reached after the resume (a
  // review: a resumed run called its step 40 the best where step 10's loss was
  // lower).
  double best_val = std::numeric_limits<double>::infinity();
  int since_best = 0;
  if (!o.resume_from.empty()) {
    for (const auto& r : m.history) {
      if (!std::isfinite(r.val_loss)) continue;
      if (r.val_loss < best_val) {
        best_val = r.val_loss;
        res.best_step = r.step;
        since_best = 0;
      } else {
        ++since_best;
      }
    }
  }
  std::vector<torch::Tensor> best_net, best_ema;
  bool early_stop = false;

  auto record = [&]() {
    if (window_n == 0) return;
    LossRecord r;
    r.step = m.steps_trained;
    r.train_loss = window_sum / window_n;
    if (val) {
      auto eval_net = m.sampling_net();
      r.val_loss = prog.val_loss = detail::fixed_loss(eval_net, val_ex, dev, v_weight);
      if (r.val_loss < best_val) {
        best_val = r.val_loss;
        res.best_step = m.steps_trained;
        since_best = 0;
        if (o.restore_best) {
          best_net = detail::snapshot(m.net);
          if (m.ema) best_ema = detail::snapshot(m.ema);
        }
      } else if (++since_best >= o.patience && o.patience > 0) {
        early_stop = true;
      }
    }
    m.history.push_back(r);
    window_sum = 0;
    window_n = 0;
  };

  double lr_now = o.lr;
  while (st.step < o.steps) {
    {
      const double secs = std::chrono::duration<double>(clock::now() - start).count();
      double spent = o.steps > 0 ? static_cast<double>(st.step) / o.steps : 1.0;
      if (o.time_limit > 0) spent = std::max(spent, secs / o.time_limit);
      lr_now = detail::scheduled_lr(o, st.step, spent);
      detail::set_lr(*opt, lr_now);
    }
    // Sequences in shuffled epochs; a batch may straddle two epochs.
    for (auto& i : idx) {
      if (st.pos >= st.perm.size()) {
        std::shuffle(st.perm.begin(), st.perm.end(), rng);
        st.pos = 0;
      }
      i = st.perm[st.pos++];
    }
    auto ex = detail::draw_examples(train, idx, strategy, log_t, c, rng, gp, pool.seq.empty() ? nullptr : &pool,
                                    o.threads);
    auto se = detail::squared_error(m.net, ex, dev, v_weight);
    auto loss = se.first / se.second.clamp_min(1.0);
    const double lv = loss.item<double>();
    const std::string where = " at step " + std::to_string(m.steps_trained + 1) + " (learning rate " +
                              std::to_string(lr_now) + " too high, or the data far from standardised?); training stopped" +
                              (last_checkpoint >= 0 ? " (\"" + o.checkpoint_path + "\" holds the weights of step " +
                                                          std::to_string(last_checkpoint) + ": resume_from)"
                                                    : std::string()) + ".";
    if (!std::isfinite(lv)) throw numeric_error("DiT training loss became " + std::to_string(lv) + where);
    opt->zero_grad();
    loss.backward();
    const double gnorm = torch::nn::utils::clip_grad_norm_(params, clip);
    if (!std::isfinite(gnorm)) throw numeric_error("DiT training gradient became non-finite" + where);
    opt->step();
    if (m.ema) {
      torch::NoGradGuard no_grad;
      const double k = m.steps_trained;
      const double decay = o.ema_warmup ? std::min(o.ema, (1.0 + k) / (10.0 + k)) : o.ema;
      for (std::size_t j = 0; j < params.size(); ++j) ema_params[j].mul_(decay).add_(params[j], 1.0 - decay);
    }
    ++st.step;
    ++m.steps_trained;
    window_sum += lv;
    ++window_n;
    prog.step = st.step;
    prog.loss = lv;
    prog.loss_avg = window_sum / window_n;
    res.final_loss = lv;

    if (st.step % o.val_every == 0 || st.step == o.steps) record();
    if (o.checkpoint_every > 0 && st.step % o.checkpoint_every == 0) {
      save_checkpoint();
      last_checkpoint = m.steps_trained;
    }
    prog.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (callback && !callback(prog)) {
      res.stopped = true;
      res.stop_reason = "callback";
      record();
      break;
    }
    if (early_stop) {
      res.stop_reason = "early_stop";
      break;
    }
    if (o.time_limit > 0 && prog.seconds >= o.time_limit && st.step < o.steps) {
      res.stop_reason = "time_limit";
      record();
      break;
    }
  }
  if (last_checkpoint != m.steps_trained) save_checkpoint();
  res.steps_done = m.steps_trained;
  res.final_val_loss = prog.val_loss;
  res.best_val_loss = res.best_step >= 0 ? best_val : std::numeric_limits<double>::quiet_NaN();
  // The best weights replace the last ones only after the checkpoint above
  // has saved the last ones (a resumed run continues from where it stopped).
  if (o.restore_best && !best_net.empty() && res.best_step != m.steps_trained && best_val < prog.val_loss) {
    detail::restore(m.net, best_net);
    if (m.ema && !best_ema.empty()) detail::restore(m.ema, best_ema);
    res.restored_best = true;
  }
  res.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return res;
}

double DiTModel::denoising_loss(const Batch& data, const MaskStrategy& strategy, const std::string& t_sampling,
                                std::uint64_t seed, int threads, const std::string& loss_weight) const {
  const auto& m = *impl_;
  detail::check_batch(data, m.config, "data");
  strategy.validate();
  TrainOptions probe;
  probe.t_sampling = t_sampling;
  probe.loss_weight = loss_weight;
  probe.validate();
  const TorchCallScope torch_call(threads);
  Rng rng(seed);
  std::vector<int> all(data.n);
  for (int i = 0; i < data.n; ++i) all[i] = i;
  if (!m.config.gp.empty() && !m.gp) throw input_error("gp", "a GP-informed DiT needs its GP (set_gp).");
  auto ex = detail::draw_examples(data, all, strategy, detail::log_uniform_t(t_sampling), m.config, rng, m.gp.get(),
                                  nullptr, threads);
  auto net = m.sampling_net();
  return detail::fixed_loss(net, ex, m.device, detail::v_weighted(loss_weight, m.config));
}


}  // namespace ditimpute
