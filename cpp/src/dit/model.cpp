// DiTModel: configuration checks, creation, accessors and the file/bytes
// round trip (the format itself: serialize.cpp). Training: training.cpp;
// sampling: sampling.cpp. See cpp/DESIGN.md.
#include "model_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace ditimpute {

// ------------------------------------------------------------ validation --
void DiTConfig::validate() const {
  if (H < 1) throw input_error("H", "H must be at least 1 frame, not " + std::to_string(H) + ".");
  if (d < 1) throw input_error("d", "d must be at least 1 variable, not " + std::to_string(d) + ".");
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
  if (!gp.empty() && gp != "residual" && gp != "channels" && gp != "score")
    throw input_error("gp", "gp must be \"\" (none), \"residual\", \"score\" or \"channels\", not \"" + gp + "\".");
  if (tokens != "frame" && tokens != "entry")
    throw input_error("tokens", "tokens must be \"frame\" or \"entry\", not \"" + tokens + "\".");
}

// A new model's configuration: validate() and what a model can be trained
// with (not asked of a saved model on load, which trained as it is).
void DiTConfig::validate_new() const {
  validate();
  // alpha_T = exp(-T / 2) is the data's share at time T: below float32's
  // precision from T = 33, and a v-weighted loss's weight 1 / alpha^2 = e^T
  // overflows float32 at T = 88 (T = 100 trained to a NaN loss at its first
  // steps, and the error blamed the learning rate: a user review).
  if (T > 50.0)
    throw input_error("T", "T must be at most 50, not " + std::to_string(T) +
                               ": the noising keeps exp(-T / 2) of the data (below float32's precision from T = 33) and "
                               "with a v-weighted loss the weight exp(T) overflows float32 at T = 88; the default 15 leaves 5.5e-4.");
  // The weights (attention 4 width^2, MLP 2 mlp_ratio width^2 and the
  // adaptive norms' 6 width^2 per block), in float32, before the optimiser's
  // two moments: refused past 2e9 (8 GB),
  // rather than an allocation failure deep in LibTorch (a user review:
  // width = 1e6, then depth = 1e9, crashed R).
  const double per_block = (10.0 + 2.0 * mlp_ratio) * static_cast<double>(width) * width;
  if (per_block * depth > 2e9) {
    std::ostringstream msg;
    msg << "width " << width << " and depth " << depth << " give about " << per_block * depth
        << " weights (float32: " << per_block * depth * 4 / 1e9
        << " GB, three times that in training); at most 2e9: a smaller width or depth.";
    throw input_error(per_block > 2e9 ? "width" : "depth", msg.str());
  }
}

bool DiTConfig::operator==(const DiTConfig& o) const {
  return H == o.H && d == o.d && width == o.width && depth == o.depth && heads == o.heads &&
         mlp_ratio == o.mlp_ratio && t0 == o.t0 && T == o.T && prediction == o.prediction && gp == o.gp &&
         tokens == o.tokens;
}

void TrainOptions::validate() const {
  if (steps < 0) throw input_error("steps", "steps must be >= 0.");
  if (batch_size < 1) throw input_error("batch_size", "batch_size must be at least 1.");
  if (!(lr > 0) || !std::isfinite(lr)) throw input_error("lr", "lr must be positive and finite.");
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay))
    throw input_error("weight_decay", "weight_decay must be >= 0.");
  if (optimizer != "adam" && optimizer != "adamw")
    throw input_error("optimizer", "optimizer must be \"adam\" or \"adamw\", not \"" + optimizer + "\".");
  if (!(ema >= 0 && ema < 1)) throw input_error("ema", "ema must lie in [0, 1) (0 = off).");
  if (!(grad_clip >= 0)) throw input_error("grad_clip", "grad_clip must be >= 0 (0 = off).");
  if (t_sampling != "log_uniform" && t_sampling != "uniform")
    throw input_error("t_sampling", "t_sampling must be \"log_uniform\" or \"uniform\", not \"" + t_sampling + "\".");
  if (loss_weight != "auto" && loss_weight != "eps" && loss_weight != "v")
    throw input_error("loss_weight", "loss_weight must be \"auto\", \"eps\" or \"v\", not \"" + loss_weight + "\".");
  if (val_every < 1) throw input_error("val_every", "val_every must be at least 1.");
  if (warmup_steps < 0) throw input_error("warmup_steps", "warmup_steps must be >= 0.");
  if (lr_schedule != "constant" && lr_schedule != "linear" && lr_schedule != "cosine")
    throw input_error("lr_schedule",
                      "lr_schedule must be \"constant\", \"linear\" or \"cosine\", not \"" + lr_schedule + "\".");
  if (!(lr_min >= 0 && lr_min <= 1)) throw input_error("lr_min", "lr_min must be in [0, 1].");
  if (!(time_limit >= 0) || !std::isfinite(time_limit))
    throw input_error("time_limit", "time_limit must be >= 0 seconds (0 = none).");
  if (patience < 0) throw input_error("patience", "patience must be >= 0 (0 = no early stop).");
  if (checkpoint_every < 0) throw input_error("checkpoint_every", "checkpoint_every must be >= 0.");
  if (threads < 0) throw input_error("threads", "threads must be >= 0 (0 = all cores).");
  if (gp_pool < 0) throw input_error("gp_pool", "gp_pool must be >= 0 (0 = fresh GP conditionals per example).");
  detail::parse_device(device);
}


namespace detail {

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


std::string read_file(const std::string& path, const std::string& arg) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw input_error(arg, "cannot open \"" + path + "\" for reading.");
  if (!S_ISREG(st.st_mode)) throw input_error(arg, "\"" + path + "\" is not a regular file.");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(arg, "cannot open \"" + path + "\" for reading.");
  try {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception& e) {
    throw input_error(arg, "reading \"" + path + "\" failed: " + e.what());
  }
}

// Writes a temporary file beside `path` (its name carries the process id, so
// concurrent savers do not share it), flushes it to the disk and renames it
// over `path`: a crash, a kill or a full disk at any point leaves the old file
// as it was. On failure the temporary file is removed and the error says why.
void write_file(const std::string& path, const std::string& bytes, const std::string& arg) {
  const std::string tmp = path + ".tmp" + std::to_string(static_cast<long>(::getpid()));
  auto fail = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    throw input_error(arg, what + " (" + std::strerror(err) + "); \"" + path + "\" is unchanged.");
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("cannot open \"" + tmp + "\" for writing", errno);
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                     ::fsync(::fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !wrote) fail("writing \"" + tmp + "\" failed", wrote ? errno : err);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename \"" + tmp + "\" to \"" + path + "\"", errno);
}


}  // namespace detail

// ------------------------------------------------------------- the model --
DiTModel::DiTModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DiTModel::DiTModel(DiTModel&&) noexcept = default;
DiTModel& DiTModel::operator=(DiTModel&&) noexcept = default;
DiTModel::~DiTModel() = default;

DiTModel DiTModel::create(const DiTConfig& config, std::uint64_t seed, const std::string& device) {
  config.validate_new();
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

const GaussianProcess* DiTModel::gp() const { return impl_->gp.get(); }

void DiTModel::set_gp(const GaussianProcess& gp) {
  const auto& c = impl_->config;
  if (c.gp.empty()) throw input_error("gp", "this DiT was configured without a GP (DiTConfig::gp is empty).");
  if (gp.H() != c.H || gp.d() != c.d)
    throw input_error("gp", "the GP is for " + std::to_string(gp.H()) + " x " + std::to_string(gp.d()) +
                                " sequences but the model for " + std::to_string(c.H) + " x " + std::to_string(c.d) + ".");
  impl_->gp = std::make_shared<GaussianProcess>(gp);
}

namespace detail {

void gp_case(const GaussianProcess& gp, const double* x, const Mask& mask, double* mu, double* sd, GpEigen* eig) {
  if (!eig) {
    gp_entry_marginals(gp, x, mask, mu, sd);
    return;
  }
  Matrix U;
  Vector lambda;
  gp_conditional_eigen(gp, x, mask, U, lambda, mu, sd);
  eig->U = U.cast<float>();
  eig->lambda = lambda.cast<float>();
}

std::pair<torch::Tensor, torch::Tensor> gp_eigen_tensors(const std::vector<GpEigen>& cases, int64_t S) {
  const int64_t C = static_cast<int64_t>(cases.size());
  int64_t K = 1;
  for (const auto& e : cases) K = std::max<int64_t>(K, e.U.cols());
  auto U = torch::zeros({C, S, K}, torch::kFloat32);
  auto lambda = torch::ones({C, K}, torch::kFloat32);
  for (int64_t c = 0; c < C; ++c) {
    const auto& e = cases[c];
    const int64_t m = e.U.cols();
    if (m == 0) continue;
    // Eigen is column-major: its transpose is the row-major [S, m] block.
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows = e.U;
    U[c].narrow(1, 0, m).copy_(torch::from_blob(const_cast<float*>(rows.data()), {S, m}, torch::kFloat32));
    lambda[c].narrow(0, 0, m).copy_(torch::from_blob(const_cast<float*>(e.lambda.data()), {m}, torch::kFloat32));
  }
  return {U, lambda};
}

}  // namespace detail

const std::string& DiTModel::notes() const { return impl_->notes; }
void DiTModel::set_notes(std::string notes) { impl_->notes = std::move(notes); }

void DiTModel::set_device(const std::string& device) {
  impl_->device = detail::parse_device(device);
  impl_->net->to(impl_->device);
  if (impl_->ema) impl_->ema->to(impl_->device);
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
  impl->notes = std::move(a.notes);
  impl->net = detail::DiTNet(a.config);
  detail::load_weights(impl->net, a.weights, arg);
  if (!a.config.gp.empty()) {
    if (!a.gp) throw input_error(arg, "not a valid ditimpute DiT model: a GP-informed model without its GP.");
    impl->gp = a.gp;
  }
  impl->net->to(impl->device);
  if (!a.ema.empty()) {
    impl->ema = detail::DiTNet(a.config);
    detail::load_weights(impl->ema, a.ema, arg);
    impl->ema->to(impl->device);
  }
  return DiTModel(std::move(impl));
}

}  // namespace ditimpute
