// DiTModel: creation, training by denoising score matching with mixed
// masking (the paper's eq. 13 in noise-prediction form), sampling through the
// shared reverse-time sampler, and the file/bytes round trip.
#include "model_impl.hpp"
#include "sampler_impl.hpp"

#include "ditimpute/gaussian.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace ditimpute {

// ------------------------------------------------------------ validation --
void DiTConfig::validate() const {
  if (H < 1) throw input_error("H", "H (frames) must be at least 1, not " + std::to_string(H) + ".");
  if (d < 1) throw input_error("d", "d (variables) must be at least 1, not " + std::to_string(d) + ".");
  if (width < 2 || width % 2 != 0)
    throw input_error("width", "width must be an even number >= 2 (sin/cos positions), not " +
                                   std::to_string(width) + ".");
  if (depth < 1) throw input_error("depth", "depth must be at least 1, not " + std::to_string(depth) + ".");
  if (heads < 1 || width % heads != 0)
    throw input_error("heads", "heads must be a positive divisor of width (" + std::to_string(width) + "), not " +
                                   std::to_string(heads) + ".");
  if (!(mlp_ratio > 0) || !std::isfinite(mlp_ratio) || std::lround(mlp_ratio * width) < 1)
    throw input_error("mlp_ratio", "mlp_ratio must be positive and give an MLP width of at least 1.");
  if (!(t0 > 0) || !std::isfinite(t0)) throw input_error("t0", "t0 must be positive and finite.");
  if (!(T > t0) || !std::isfinite(T)) throw input_error("T", "T must be finite and larger than t0.");
  if (prediction != "v" && prediction != "eps")
    throw input_error("prediction", "prediction must be \"v\" or \"eps\", not \"" + prediction + "\".");
}

bool DiTConfig::operator==(const DiTConfig& o) const {
  return H == o.H && d == o.d && width == o.width && depth == o.depth && heads == o.heads &&
         mlp_ratio == o.mlp_ratio && t0 == o.t0 && T == o.T && prediction == o.prediction;
}

void TrainOptions::validate() const {
  if (steps < 0) throw input_error("steps", "steps must be >= 0.");
  if (batch_size < 1) throw input_error("batch_size", "batch_size must be at least 1.");
  if (!(lr > 0) || !std::isfinite(lr)) throw input_error("lr", "lr must be positive and finite.");
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay))
    throw input_error("weight_decay", "weight_decay must be >= 0.");
  if (optimizer != "adam" && optimizer != "adamw")
    throw input_error("optimizer", "optimizer must be \"adam\" or \"adamw\", not \"" + optimizer + "\".");
  if (!(ema >= 0 && ema < 1)) throw input_error("ema", "ema must be in [0, 1) (0 = off).");
  if (!(grad_clip >= 0)) throw input_error("grad_clip", "grad_clip must be >= 0 (0 = off).");
  if (t_sampling != "log_uniform" && t_sampling != "uniform")
    throw input_error("t_sampling", "t_sampling must be \"log_uniform\" or \"uniform\", not \"" + t_sampling + "\".");
  if (loss_weight != "auto" && loss_weight != "eps" && loss_weight != "v")
    throw input_error("loss_weight", "loss_weight must be \"auto\", \"eps\" or \"v\", not \"" + loss_weight + "\".");
  if (val_every < 1) throw input_error("val_every", "val_every must be at least 1.");
  if (checkpoint_every < 0) throw input_error("checkpoint_every", "checkpoint_every must be >= 0.");
  if (threads < 0) throw input_error("threads", "threads must be >= 0 (0 = all cores).");
  detail::parse_device(device);
}

namespace detail {

namespace {

// Examples of one batch, drawn on the CPU: clean values (0 where the data are
// missing), data-observed flags, training masks, times and noise.
struct Examples {
  torch::Tensor x0, data_obs, mask, t, eps;
};

bool log_uniform_t(const std::string& t_sampling) { return t_sampling == "log_uniform"; }

// True when examples are weighted by 1 / alpha_t^2 (TrainOptions::loss_weight).
bool v_weighted(const std::string& loss_weight, const DiTConfig& c) {
  return loss_weight == "v" || (loss_weight == "auto" && c.prediction == "v");
}

// For each listed sequence: a mask from the strategy, a time, then (for the
// whole batch) the noise, all from `rng` in a fixed order.
Examples draw_examples(const Batch& data, const std::vector<int>& idx, const MaskStrategy& strategy, bool log_t,
                       const DiTConfig& c, Rng& rng) {
  const int B = static_cast<int>(idx.size());
  const std::size_t S = data.seq_size();
  std::vector<float> x0(B * S), dobs(B * S), mask(B * S), t(B);
  std::vector<double> noise(B * S);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  const double lt0 = std::log(c.t0), lT = std::log(c.T);
  for (int b = 0; b < B; ++b) {
    const double* x = data.seq(idx[b]);
    for (std::size_t k = 0; k < S; ++k) {
      const bool ok = std::isfinite(x[k]);
      x0[b * S + k] = ok ? static_cast<float>(x[k]) : 0.0f;
      dobs[b * S + k] = ok ? 1.0f : 0.0f;
    }
    const Mask m = strategy.draw(c.H, c.d, rng);
    for (std::size_t k = 0; k < S; ++k) mask[b * S + k] = m.observed[k] ? 1.0f : 0.0f;
    const double u = unif(rng);
    t[b] = static_cast<float>(log_t ? std::exp(lt0 + (lT - lt0) * u) : c.t0 + (c.T - c.t0) * u);
  }
  fill_standard_normal(rng, noise.data(), noise.size());
  const std::vector<int64_t> shape{B, c.H, c.d};
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  Examples e;
  e.x0 = torch::from_blob(x0.data(), shape, f32).clone();
  e.data_obs = torch::from_blob(dobs.data(), shape, f32).clone();
  e.mask = torch::from_blob(mask.data(), shape, f32).clone();
  e.t = torch::from_blob(t.data(), {B}, f32).clone();
  e.eps = torch::from_blob(noise.data(), shape, torch::kFloat64).to(torch::kFloat32);
  return e;
}

Examples slice(const Examples& e, int64_t from, int64_t to) {
  return {e.x0.slice(0, from, to), e.data_obs.slice(0, from, to), e.mask.slice(0, from, to),
          e.t.slice(0, from, to), e.eps.slice(0, from, to)};
}

// Sum of squared noise-prediction errors over the entries in the loss
// (missing under the training mask and observed in the data), each example
// weighted by 1 / alpha_t^2 = e^t when `v_weight`, and their count. x_t =
// alpha_t x0 + sigma_t eps on those entries (eq. 13's forward marginal); the
// token shows clean values wherever the entry counts as observed.
std::pair<torch::Tensor, torch::Tensor> squared_error(DiTNet& net, const Examples& e, torch::Device dev,
                                                      bool v_weight) {
  auto x0 = e.x0.to(dev), dobs = e.data_obs.to(dev), mask = e.mask.to(dev), t = e.t.to(dev), eps = e.eps.to(dev);
  auto alpha = torch::exp(-0.5 * t).view({-1, 1, 1});
  auto sigma = torch::sqrt(-torch::expm1(-t)).view({-1, 1, 1});
  auto seen = mask * dobs;
  auto target = (1 - mask) * dobs;
  auto token = seen * x0 + (1 - seen) * (alpha * x0 + sigma * eps);
  auto eps_hat = net->noise(token, seen, t);
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

void check_batch(const Batch& b, const DiTConfig& c, const std::string& arg) {
  if (b.n < 1) throw input_error(arg, arg + " holds no sequences.");
  if (b.H != c.H || b.d != c.d)
    throw input_error(arg, arg + " has sequences of " + std::to_string(b.H) + " x " + std::to_string(b.d) +
                               " but the model expects " + std::to_string(c.H) + " x " + std::to_string(c.d) + ".");
  if (b.data.size() != static_cast<std::size_t>(b.n) * b.seq_size())
    throw input_error(arg, arg + " has " + std::to_string(b.data.size()) + " values, not n * H * d.");
  for (double v : b.data)
    if (std::isinf(v)) throw input_error(arg, arg + " holds infinite values (NaN marks missing ones).");
  if (std::none_of(b.data.begin(), b.data.end(), [](double v) { return std::isfinite(v); }))
    throw input_error(arg, arg + " holds no observed value.");
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

std::string read_file(const std::string& path, const std::string& arg) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(arg, "cannot open \"" + path + "\" for reading.");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes to a temporary name and renames, so a crash never leaves a torn file.
void write_file(const std::string& path, const std::string& bytes, const std::string& arg) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw input_error(arg, "cannot open \"" + tmp + "\" for writing.");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw input_error(arg, "writing \"" + tmp + "\" failed.");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw input_error(arg, "cannot rename \"" + tmp + "\" to \"" + path + "\".");
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace
}  // namespace detail

// ------------------------------------------------------------- the model --
DiTModel::DiTModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DiTModel::DiTModel(DiTModel&&) noexcept = default;
DiTModel& DiTModel::operator=(DiTModel&&) noexcept = default;
DiTModel::~DiTModel() = default;

DiTModel DiTModel::create(const DiTConfig& config, std::uint64_t seed, const std::string& device) {
  config.validate();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->device = detail::parse_device(device);
  // Initial weights come from torch's global generator (xavier/normal init);
  // seeding it here makes create() repeatable. Built on the CPU, then moved.
  torch::manual_seed(seed);
  impl->net = detail::DiTNet(config);
  impl->net->to(impl->device);
  return DiTModel(std::move(impl));
}

const DiTConfig& DiTModel::config() const { return impl_->config; }
int DiTModel::steps_trained() const { return impl_->steps_trained; }
bool DiTModel::has_ema() const { return static_cast<bool>(impl_->ema); }
const std::vector<LossRecord>& DiTModel::loss_history() const { return impl_->history; }
std::string DiTModel::device() const { return impl_->device.is_cuda() ? "cuda" : "cpu"; }

std::int64_t DiTModel::n_parameters() const {
  std::int64_t n = 0;
  for (const auto& p : impl_->net->parameters()) n += p.numel();
  return n;
}

void DiTModel::set_device(const std::string& device) {
  impl_->device = detail::parse_device(device);
  impl_->net->to(impl_->device);
  if (impl_->ema) impl_->ema->to(impl_->device);
}

TrainResult DiTModel::fit(const Batch& train, const Batch* val, const MaskStrategy& strategy,
                          const TrainOptions& o, const ProgressCallback& callback) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto& m = *impl_;
  const auto& c = m.config;
  o.validate();
  strategy.validate();
  detail::check_batch(train, c, "train");
  if (val) detail::check_batch(*val, c, "val");
  set_threads(o.threads);
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
    Rng vrng(detail::splitmix64(o.seed ^ 0x76616c6964ull));
    std::vector<int> all(val->n);
    for (int i = 0; i < val->n; ++i) all[i] = i;
    val_ex = detail::draw_examples(*val, all, strategy, log_t, c, vrng);
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

  auto record = [&]() {
    if (window_n == 0) return;
    LossRecord r;
    r.step = m.steps_trained;
    r.train_loss = window_sum / window_n;
    if (val) {
      auto eval_net = m.sampling_net();
      r.val_loss = prog.val_loss = detail::fixed_loss(eval_net, val_ex, dev, v_weight);
    }
    m.history.push_back(r);
    window_sum = 0;
    window_n = 0;
  };

  while (st.step < o.steps) {
    // Sequences in shuffled epochs; a batch may straddle two epochs.
    for (auto& i : idx) {
      if (st.pos >= st.perm.size()) {
        std::shuffle(st.perm.begin(), st.perm.end(), rng);
        st.pos = 0;
      }
      i = st.perm[st.pos++];
    }
    auto ex = detail::draw_examples(train, idx, strategy, log_t, c, rng);
    auto se = detail::squared_error(m.net, ex, dev, v_weight);
    auto loss = se.first / se.second.clamp_min(1.0);
    const double lv = loss.item<double>();
    const std::string where = " at step " + std::to_string(m.steps_trained + 1) + " (learning rate " +
                              std::to_string(o.lr) + " too high?); the model keeps the weights of the last finite step" +
                              (last_checkpoint >= 0 ? " and \"" + o.checkpoint_path + "\" those of step " +
                                                          std::to_string(last_checkpoint)
                                                    : std::string()) + ".";
    if (!std::isfinite(lv)) throw numeric_error("DiT training loss became " + std::to_string(lv) + where);
    opt->zero_grad();
    loss.backward();
    const double gnorm = torch::nn::utils::clip_grad_norm_(params, clip);
    if (!std::isfinite(gnorm)) throw numeric_error("DiT training gradient became non-finite" + where);
    opt->step();
    if (m.ema) {
      torch::NoGradGuard no_grad;
      for (std::size_t k = 0; k < params.size(); ++k) ema_params[k].mul_(o.ema).add_(params[k], 1.0 - o.ema);
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
      record();
      break;
    }
  }
  if (st.step == o.steps || res.stopped) {
    if (last_checkpoint != m.steps_trained) save_checkpoint();
  }
  res.steps_done = m.steps_trained;
  res.final_val_loss = prog.val_loss;
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
  set_threads(threads);
  Rng rng(seed);
  std::vector<int> all(data.n);
  for (int i = 0; i < data.n; ++i) all[i] = i;
  auto ex = detail::draw_examples(data, all, strategy, detail::log_uniform_t(t_sampling), m.config, rng);
  auto net = m.sampling_net();
  return detail::fixed_loss(net, ex, m.device, detail::v_weighted(loss_weight, m.config));
}

Batch DiTModel::sample(const double* x, const Mask& mask, int Z, const SamplerOptions& options, std::uint64_t seed,
                       int threads) const {
  const auto& m = *impl_;
  const auto& c = m.config;
  if (mask.H != c.H || mask.d != c.d)
    throw input_error("mask", "the mask is " + std::to_string(mask.H) + " x " + std::to_string(mask.d) +
                                  " but the model expects " + std::to_string(c.H) + " x " + std::to_string(c.d) + ".");
  mask.require_proper("mask");
  if (Z < 1) throw input_error("Z", "Z (number of samples) must be at least 1.");
  options.validate();
  // The network never saw times outside [t0, T]; extrapolating is unsafe.
  if (options.t0 < c.t0 * (1 - 1e-12) || options.T > c.T * (1 + 1e-12))
    throw input_error("options", "the sampler's time range [" + std::to_string(options.t0) + ", " +
                                     std::to_string(options.T) + "] must lie inside the model's [" +
                                     std::to_string(c.t0) + ", " + std::to_string(c.T) + "].");
  const std::size_t S = static_cast<std::size_t>(c.H) * c.d;
  std::vector<float> xo(S), ob(S);
  for (std::size_t k = 0; k < S; ++k) {
    if (mask.observed[k] && !std::isfinite(x[k]))
      throw input_error("x", "observed entry " + std::to_string(k + 1) + " of x is not finite.");
    xo[k] = mask.observed[k] ? static_cast<float>(x[k]) : 0.0f;
    ob[k] = mask.observed[k] ? 1.0f : 0.0f;
  }
  set_threads(threads);
  torch::NoGradGuard no_grad;
  auto net = m.sampling_net();
  const auto dev = m.device;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto x_obs = torch::from_blob(xo.data(), {c.H, c.d}, f32).clone().to(dev);
  auto observed = torch::from_blob(ob.data(), {c.H, c.d}, f32).clone().to(dev);
  auto mask_z = observed.unsqueeze(0).expand({Z, c.H, c.d});

  // s = -eps_hat / sigma_t: the network predicts the noise (eq. 13).
  // States are viewed as [n, H, d] whatever leading shape the sampler uses.
  detail::ScoreFn score = [&](const torch::Tensor& xt, double t) {
    auto flat = xt.reshape({-1, c.H, c.d});
    const int64_t n = flat.size(0);
    if (n > Z) throw numeric_error("the sampler asked for the score of more than Z states.");
    auto eps_hat = net->noise(flat, mask_z.slice(0, 0, n), torch::full({n}, t, f32.device(dev)));
    return (eps_hat * (-1.0 / std::sqrt(vp_sigma2(t)))).view(xt.sizes());
  };
  // The sampler draws its noise on the CPU from this generator, so a seed
  // gives the same samples on every device.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto out = detail::reverse_sample(score, x_obs, observed, Z, options, gen)
                 .to(torch::kCPU, torch::kFloat64)
                 .reshape({Z, c.H, c.d})
                 .contiguous();

  Batch res(Z, c.H, c.d);
  std::copy(out.data_ptr<double>(), out.data_ptr<double>() + res.data.size(), res.data.begin());
  for (int z = 0; z < Z; ++z)  // observed entries exactly as given, not float-rounded
    for (std::size_t k = 0; k < S; ++k)
      if (mask.observed[k]) res.seq(z)[k] = x[k];
  return res;
}

Batch DiTModel::predict_noise(const Batch& x, const Mask& mask, double t, int threads) const {
  const auto& m = *impl_;
  const auto& c = m.config;
  if (x.H != c.H || x.d != c.d || x.n < 1)
    throw input_error("x", "x must hold at least one " + std::to_string(c.H) + " x " + std::to_string(c.d) + " state.");
  if (mask.H != c.H || mask.d != c.d) throw input_error("mask", "the mask does not match the model's H x d.");
  if (!(t > 0) || !std::isfinite(t)) throw input_error("t", "t must be positive and finite.");
  set_threads(threads);
  torch::NoGradGuard no_grad;
  auto net = m.sampling_net();
  const std::size_t S = x.seq_size();
  std::vector<float> xs(x.data.begin(), x.data.end()), ob(x.data.size());
  for (int i = 0; i < x.n; ++i)
    for (std::size_t k = 0; k < S; ++k) ob[i * S + k] = mask.observed[k] ? 1.0f : 0.0f;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto xt = torch::from_blob(xs.data(), {x.n, c.H, c.d}, f32).clone().to(m.device);
  auto mk = torch::from_blob(ob.data(), {x.n, c.H, c.d}, f32).clone().to(m.device);
  auto eps = net->noise(xt, mk, torch::full({x.n}, t, f32.device(m.device)))
                 .to(torch::kCPU, torch::kFloat64)
                 .contiguous();
  Batch out(x.n, c.H, c.d);
  std::copy(eps.data_ptr<double>(), eps.data_ptr<double>() + out.data.size(), out.data.begin());
  return out;
}

Batch DiTModel::sample(const std::vector<double>& x, int Z, const SamplerOptions& options, std::uint64_t seed,
                       int threads) const {
  const auto& c = impl_->config;
  if (x.size() != static_cast<std::size_t>(c.H) * c.d)
    throw input_error("x", "x has " + std::to_string(x.size()) + " values, not H * d = " +
                               std::to_string(c.H * c.d) + ".");
  Mask mask(c.H, c.d, true);
  for (std::size_t k = 0; k < x.size(); ++k) mask.observed[k] = std::isnan(x[k]) ? 0 : 1;
  return sample(x.data(), mask, Z, options, seed, threads);
}

std::vector<Batch> DiTModel::sample_cases(const Batch& cases, int Z, const SamplerOptions& options,
                                          std::uint64_t seed, int threads) const {
  const auto& c = impl_->config;
  if (cases.H != c.H || cases.d != c.d)
    throw input_error("cases", "cases are " + std::to_string(cases.H) + " x " + std::to_string(cases.d) +
                                   " but the model expects " + std::to_string(c.H) + " x " + std::to_string(c.d) + ".");
  std::vector<Batch> out;
  out.reserve(cases.n);
  for (int i = 0; i < cases.n; ++i) {
    std::vector<double> x(cases.seq(i), cases.seq(i) + cases.seq_size());
    out.push_back(sample(x, Z, options, detail::splitmix64(seed ^ detail::splitmix64(i)), threads));
  }
  return out;
}

// ------------------------------------------------------------ save / load --
std::string DiTModel::to_bytes() const { return detail::write_archive(*impl_, nullptr); }

DiTModel DiTModel::from_bytes(const std::string& bytes, const std::string& device) {
  return from_archive_bytes(bytes, device, "bytes");
}

void DiTModel::save(const std::string& path) const { detail::write_file(path, to_bytes(), "file"); }

DiTModel DiTModel::load(const std::string& path, const std::string& device) {
  return from_archive_bytes(detail::read_file(path, "file"), device, "file");
}

DiTModel DiTModel::from_archive_bytes(const std::string& bytes, const std::string& device, const std::string& arg) {
  auto a = detail::read_archive(bytes, arg);
  auto impl = std::make_unique<Impl>();
  impl->config = a.config;
  impl->device = detail::parse_device(device);
  impl->steps_trained = a.steps_trained;
  impl->history = std::move(a.history);
  impl->net = detail::DiTNet(a.config);
  detail::load_weights(impl->net, a.weights, arg);
  impl->net->to(impl->device);
  if (!a.ema.empty()) {
    impl->ema = detail::DiTNet(a.config);
    detail::load_weights(impl->ema, a.ema, arg);
    impl->ema->to(impl->device);
  }
  return DiTModel(std::move(impl));
}

}  // namespace ditimpute
