// DiTModel sampling: the reverse-time samplers of reverse_sampler.hpp on torch
// tensors, driven by the network's score s = -eps_hat / sigma_t (eq. 13), with
// the cases of a call batched through the network; and predict_noise() for
// diagnostics. See cpp/DESIGN.md.
#include "model_impl.hpp"

#include "ditimpute/reverse_sampler.hpp"

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cmath>

namespace ditimpute {

namespace {

// bf16 autocast of the network's forward on CUDA (the GPU path of
// cpp/DESIGN.md): matrix products in bf16, the LayerNorms and softmax in
// float32 (autocast's own lists); noise_at returns float32, so the sampler's
// diffusion arithmetic stays float32. Does nothing on the CPU.
class CudaBf16Autocast {
 public:
  explicit CudaBf16Autocast(bool cuda) : on_(cuda) {
    if (!on_) return;
    was_enabled_ = detail::cuda_autocast_enabled();
    was_dtype_ = detail::cuda_autocast_dtype();
    detail::set_cuda_autocast(true, at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~CudaBf16Autocast() {
    if (!on_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    detail::set_cuda_autocast(was_enabled_, was_dtype_);
  }
  CudaBf16Autocast(const CudaBf16Autocast&) = delete;
  CudaBf16Autocast& operator=(const CudaBf16Autocast&) = delete;

 private:
  bool on_, was_enabled_ = false;
  at::ScalarType was_dtype_ = at::kHalf;
};

// The state is [B, H, d] for the cases [first, first + k) of a chunk, Z rows
// each; observed entries are held at the data. Noise comes from one Rng per
// case, drawn on the CPU in float64 and moved, so a case's draws depend only
// on its seed (not on the chunk, the device or the thread count).
struct NetOps {
  detail::DiTNet net;
  torch::Device device;
  int64_t B, H, d;
  int Z;
  std::vector<Rng> rngs;  // one per case of the chunk
  torch::Tensor held, observed, mask;  // [B, H, d]: data values, bool, float
  torch::Tensor mu, sd;  // [B, H, d]: the GP's conditional mean and sd (GP-informed models)
  torch::Tensor U, lambda;  // gp = "score": [cases, S, K], [cases, K] (gp_eigen_tensors)
  std::vector<double> buffer;
  int64_t chunk_rows = 0;  // rows per network call (detail::network_chunk_rows); B = one call
  bool base_only = false;  // the GP base alone, no network (SamplerOptions::gp_control's path)

  torch::Tensor noise() {
    const std::size_t per_case = static_cast<std::size_t>(Z) * H * d;
    buffer.resize(per_case * rngs.size());
    for (std::size_t c = 0; c < rngs.size(); ++c) fill_standard_normal(rngs[c], buffer.data() + c * per_case, per_case);
    return torch::from_blob(buffer.data(), {B, H, d}, torch::kFloat64).to(device, torch::kFloat32);
  }
  torch::Tensor hold(const torch::Tensor& x) { return torch::where(observed, held, x); }
  // No host round trip in here (no .item(), no copy to the CPU): on a GPU the
  // calls of a sampling run queue up; the one sync is the finiteness check
  // and the copy of the result after the loop. (Noise for the SDE samplers is
  // drawn on the CPU, per case, and copied in: see above.)
  torch::Tensor score(const torch::Tensor& x, double t) {
    check_cancelled();  // between network calls: Ctrl-C stops a long imputation
    torch::Tensor eps;
    if (base_only) {
      eps = net->base_noise_at(x, t, mu, sd, U, lambda);
    } else {
      CudaBf16Autocast autocast(device.is_cuda());
      eps = chunk_rows <= 0 || chunk_rows >= B ? net->noise_at(x, mask, t, mu, sd, U, lambda) : chunked_noise(x, t);
    }
    return score_from_noise(eps, t);
  }
  // The network row chunk by row chunk (rows are independent): a chunk is
  // whole cases or lies inside one, so it takes those cases' eigenvectors.
  torch::Tensor chunked_noise(const torch::Tensor& x, double t) {
    std::vector<torch::Tensor> parts;
    for (int64_t r0 = 0; r0 < B; r0 += chunk_rows) {
      const int64_t n = std::min(chunk_rows, B - r0);
      auto rows = [&](const torch::Tensor& a) { return a.defined() ? a.narrow(0, r0, n) : a; };
      torch::Tensor u, l;
      if (U.defined()) {
        const int64_t c0 = r0 / Z, c1 = (r0 + n - 1) / Z + 1;
        u = U.narrow(0, c0, c1 - c0);
        l = lambda.narrow(0, c0, c1 - c0);
      }
      parts.push_back(net->noise_at(rows(x), rows(mask), t, rows(mu), rows(sd), u, l));
    }
    return torch::cat(parts, 0);
  }
  bool finite(const torch::Tensor& x) { return torch::isfinite(x).all().item<bool>(); }
};

// SamplerOptions::gp_control for one case: s holds its Z x m samples of the
// missing entries miss (positions in the S = H*d values of a row), b its Z
// rows of S values drawn from the GP base with the same random numbers, mu
// the base's exact mean (S values). Each column moves by beta (mean(b) - mu),
// beta the least-squares slope of the column on b (1 with fewer than 3 draws
// or a constant b).
void gp_control_shift(Matrix& s, const double* b, std::size_t S, const std::vector<int>& miss, const float* mu) {
  const Eigen::Index Z = s.rows();
  for (std::size_t e = 0; e < miss.size(); ++e) {
    const auto col = static_cast<Eigen::Index>(e);
    double mb = 0.0;
    for (Eigen::Index z = 0; z < Z; ++z) mb += b[z * S + miss[e]];
    mb /= static_cast<double>(Z);
    double beta = 1.0;
    if (Z >= 3) {
      const double mx = s.col(col).mean();
      double sxb = 0.0, sbb = 0.0;
      for (Eigen::Index z = 0; z < Z; ++z) {
        const double db = b[z * S + miss[e]] - mb;
        sxb += (s(z, col) - mx) * db;
        sbb += db * db;
      }
      if (sbb > 0.0) beta = sxb / sbb;
    }
    s.col(col).array() -= beta * (mb - static_cast<double>(mu[miss[e]]));
  }
}

}  // namespace

int64_t detail::network_chunk_rows(int64_t B, int64_t Z, int64_t tokens_per_row, bool cuda) {
  if (cuda || B * tokens_per_row <= kCpuTokensPerCall) return B;
  const int64_t cap = std::max<int64_t>(1, kCpuTokensPerCall / tokens_per_row);
  if (cap >= Z) return std::min(B, cap / Z * Z);
  int64_t r = cap;
  while (Z % r != 0) --r;
  return r;
}

std::vector<Matrix> DiTModel::sample_missing(const Batch& x, const std::vector<Mask>& masks, int Z,
                                             const SamplerOptions& options, std::uint64_t seed, int threads,
                                             int batch_size) const {
  const auto& m = *impl_;
  const auto& c = m.config;
  if (x.H != c.H || x.d != c.d)
    throw input_error("x", "the sequences are " + std::to_string(x.H) + " x " + std::to_string(x.d) +
                               " but the model expects " + std::to_string(c.H) + " x " + std::to_string(c.d) + ".");
  if (masks.size() != static_cast<std::size_t>(x.n))
    throw input_error("mask", "there must be one mask per sequence.");
  // A complete case (no missing entry; the pipeline passes it through,
  // impute.hpp) draws nothing: a Z x 0 matrix, no network rows.
  std::vector<int> active;  // the cases with a missing entry, in order
  for (int i = 0; i < x.n; ++i) {
    const Mask& mk = masks[i];
    if (mk.H != c.H || mk.d != c.d) throw input_error("mask", "a mask does not match the model's H x d.");
    if (mk.n_missing() == 0) continue;
    mk.require_proper("mask");
    active.push_back(i);
  }
  if (Z < 1) throw input_error("n_samples", "the number of samples must be at least 1.");
  {
    // The draws (Z x m doubles per case) and one case's float buffers of Z
    // rows, before they are allocated (a code review: the GP samplers had this
    // check, the DiT's n_samples = 1e9 did not).
    double entries = 0.0;
    for (int i : active) entries += masks[i].n_missing();
    const double S_all = static_cast<double>(c.H) * c.d;
    check_memory(8.0 * Z * entries + 4.0 * 4.0 * Z * S_all, "n_samples",
                 std::to_string(Z) + " DiT draws of " + std::to_string(static_cast<long long>(entries)) +
                     " missing entries");
  }
  if (batch_size < 0) throw input_error("batch_size", "batch_size must be >= 0 (0 = automatic).");
  options.validate();
  // The network never saw times outside [t0, T]; extrapolating is unsafe.
  if (options.t0 < c.t0 * (1 - 1e-12) || options.T > c.T * (1 + 1e-12))
    throw input_error("options", "the sampler's time range [" + std::to_string(options.t0) + ", " +
                                     std::to_string(options.T) + "] must lie inside the model's [" +
                                     std::to_string(c.t0) + ", " + std::to_string(c.T) + "].");
  const std::size_t S = static_cast<std::size_t>(c.H) * c.d;
  for (int i = 0; i < x.n; ++i)
    for (std::size_t k = 0; k < S; ++k)
      if (masks[i].observed[k] && !std::isfinite(x.seq(i)[k]))
        throw input_error("x", "observed entry " + std::to_string(k + 1) + " of sequence " + std::to_string(i + 1) +
                                   " is not finite.");
  const GaussianProcess* gp = m.gp.get();
  if (!c.gp.empty() && !gp) throw input_error("object", "a GP-informed DiT needs its GP (set_gp) to sample.");
  if (options.gp_control && c.gp != "residual" && c.gp != "score")
    throw input_error("control_variate",
                      "the GP control variate needs a GP-informed DiT whose GP is its base (gp_mode \"residual\" or "
                      "\"score\"); this model's gp_mode is " +
                          (c.gp.empty() ? std::string("none (not GP-informed)") : "\"" + c.gp + "\"") + ".");
  const TorchCallScope torch_call(threads);
  c10::InferenceMode inference;  // no autograd bookkeeping on the sampler's tensors
  // CPU: small batches stay in cache (100-row batches ran 2.8x faster per
  // case than 1024-row ones on 2 cores, bench/pipeline.R); a GPU wants many rows.
  const int rows = batch_size > 0 ? batch_size : (m.device.is_cuda() ? 4096 : 128);
  const int per_chunk = std::max(1, rows / Z);  // whole cases per network batch

  std::vector<Matrix> out(x.n, Matrix(Z, 0));
  const int n_active = static_cast<int>(active.size());
  // Case i keeps case_seed(seed, i) whichever chunk it lands in, so leaving
  // the complete cases out changes no other case's draws.
  for (int first = 0; first < n_active; first += per_chunk) {
    const int k = std::min(per_chunk, n_active - first);
    const int64_t B = static_cast<int64_t>(k) * Z;
    std::vector<float> held(B * S), obs(B * S);
    std::vector<float> gmu(gp ? B * S : 0), gsd(gp ? B * S : 0);
    std::vector<double> mu_d(gp ? S : 0), sd_d(gp ? S : 0);
    NetOps ops{m.sampling_net(), m.device, B, c.H, c.d, Z, {}, {}, {}, {}, {}, {}, {}, {}, {}};
    ops.chunk_rows = detail::network_chunk_rows(B, Z, c.tokens == "entry" ? int64_t{c.H} * c.d : int64_t{c.H},
                                                m.device.is_cuda());
    std::vector<detail::GpEigen> eig;
    for (int a = 0; a < k; ++a) {
      const int i = active[first + a];
      ops.rngs.emplace_back(case_seed(seed, static_cast<std::uint64_t>(i)));
      if (gp)
        detail::gp_case(*gp, x.seq(i), masks[i], mu_d.data(), sd_d.data(), c.gp == "score" ? &eig.emplace_back() : nullptr);
      for (int z = 0; z < Z; ++z) {
        const std::size_t row = (static_cast<std::size_t>(a) * Z + z) * S;
        float* hv = held.data() + row;
        float* ov = obs.data() + row;
        for (std::size_t e = 0; e < S; ++e) {
          const bool o = masks[i].observed[e] != 0;
          hv[e] = o ? static_cast<float>(x.seq(i)[e]) : 0.0f;
          ov[e] = o ? 1.0f : 0.0f;
        }
        if (gp)
          for (std::size_t e = 0; e < S; ++e) {
            gmu[row + e] = static_cast<float>(mu_d[e]);
            gsd[row + e] = static_cast<float>(sd_d[e]);
          }
      }
    }
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
    ops.held = torch::from_blob(held.data(), {B, c.H, c.d}, f32).to(m.device);
    ops.mask = torch::from_blob(obs.data(), {B, c.H, c.d}, f32).to(m.device);
    if (gp) {
      ops.mu = torch::from_blob(gmu.data(), {B, c.H, c.d}, f32).to(m.device);
      ops.sd = torch::from_blob(gsd.data(), {B, c.H, c.d}, f32).to(m.device);
    }
    if (!eig.empty()) {
      auto ul = detail::gp_eigen_tensors(eig, static_cast<int64_t>(S));
      ops.U = ul.first.to(m.device);
      ops.lambda = ul.second.to(m.device);
    }
    ops.observed = ops.mask != 0;
    const std::vector<Rng> rngs0 = options.gp_control ? ops.rngs : std::vector<Rng>{};
    const torch::Tensor xs =
        run_reverse_sampler<torch::Tensor>(ops, options).to(torch::kCPU, torch::kFloat64).contiguous();
    const double* p = xs.data_ptr<double>();
    torch::Tensor bs;  // gp_control: the same random numbers through the GP base alone
    if (options.gp_control) {
      ops.rngs = rngs0;
      ops.base_only = true;
      bs = run_reverse_sampler<torch::Tensor>(ops, options).to(torch::kCPU, torch::kFloat64).contiguous();
    }
    for (int a = 0; a < k; ++a) {
      const int i = active[first + a];
      const std::vector<int> miss = masks[i].missing_entries();
      Matrix s(Z, static_cast<Eigen::Index>(miss.size()));
      for (int z = 0; z < Z; ++z) {
        const double* row = p + (static_cast<std::size_t>(a) * Z + z) * S;
        for (std::size_t e = 0; e < miss.size(); ++e) s(z, static_cast<Eigen::Index>(e)) = row[miss[e]];
      }
      if (bs.defined()) gp_control_shift(s, bs.data_ptr<double>() + static_cast<std::size_t>(a) * Z * S, S, miss,
                                         gmu.data() + static_cast<std::size_t>(a) * Z * S);
      out[i] = std::move(s);
    }
  }
  return out;
}

Batch DiTModel::sample(const std::vector<double>& x, int Z, const SamplerOptions& options, std::uint64_t seed,
                       int threads) const {
  const auto& c = impl_->config;
  if (x.size() != static_cast<std::size_t>(c.H) * c.d)
    throw input_error("x", "x has " + std::to_string(x.size()) + " values, not H * d = " +
                               std::to_string(c.H * c.d) + ".");
  Batch one(1, c.H, c.d);
  std::copy(x.begin(), x.end(), one.data.begin());
  const std::vector<Mask> masks = masks_from_nan(one, "x");
  const Matrix s = sample_missing(one, masks, Z, options, seed, threads).front();
  const std::vector<int> miss = masks[0].missing_entries();
  Batch res(Z, c.H, c.d);
  for (int z = 0; z < Z; ++z) {
    std::copy(x.begin(), x.end(), res.seq(z));  // observed entries exactly as given
    for (std::size_t e = 0; e < miss.size(); ++e) res.seq(z)[miss[e]] = s(z, static_cast<Eigen::Index>(e));
  }
  return res;
}

Batch DiTModel::predict_noise(const Batch& x, const Mask& mask, double t, int threads) const {
  const auto& m = *impl_;
  const auto& c = m.config;
  if (x.H != c.H || x.d != c.d || x.n < 1)
    throw input_error("x", "x must hold at least one " + std::to_string(c.H) + " x " + std::to_string(c.d) + " state.");
  if (mask.H != c.H || mask.d != c.d) throw input_error("mask", "the mask does not match the model's H x d.");
  if (!(t > 0) || !std::isfinite(t)) throw input_error("t", "t must be positive and finite.");
  const TorchCallScope torch_call(threads);
  torch::NoGradGuard no_grad;
  auto net = m.sampling_net();
  const std::size_t S = x.seq_size();
  std::vector<float> xs(x.data.begin(), x.data.end()), ob(x.data.size());
  for (int i = 0; i < x.n; ++i)
    for (std::size_t k = 0; k < S; ++k) ob[i * S + k] = mask.observed[k] ? 1.0f : 0.0f;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto xt = torch::from_blob(xs.data(), {x.n, c.H, c.d}, f32).clone().to(m.device);
  auto mk = torch::from_blob(ob.data(), {x.n, c.H, c.d}, f32).clone().to(m.device);
  torch::Tensor mu, sd, U, lambda;
  if (!c.gp.empty()) {
    // The GP's conditionals given the observed entries of the first state
    // (they are the same in every state).
    if (!m.gp) throw input_error("object", "a GP-informed DiT needs its GP (set_gp).");
    std::vector<double> mu_d(S), sd_d(S);
    detail::GpEigen eig;
    detail::gp_case(*m.gp, x.seq(0), mask, mu_d.data(), sd_d.data(), c.gp == "score" ? &eig : nullptr);
    std::vector<float> muf(mu_d.begin(), mu_d.end()), sdf(sd_d.begin(), sd_d.end());
    mu = torch::from_blob(muf.data(), {1, c.H, c.d}, f32).to(m.device).expand({x.n, c.H, c.d});
    sd = torch::from_blob(sdf.data(), {1, c.H, c.d}, f32).to(m.device).expand({x.n, c.H, c.d});
    if (c.gp == "score") {  // one case shared by every row
      auto ul = detail::gp_eigen_tensors({std::move(eig)}, static_cast<int64_t>(S));
      U = ul.first.to(m.device);
      lambda = ul.second.to(m.device);
    }
  }
  auto eps = net->noise(xt, mk, torch::full({x.n}, t, f32.device(m.device)), mu, sd, U, lambda)
                 .to(torch::kCPU, torch::kFloat64)
                 .contiguous();
  Batch out(x.n, c.H, c.d);
  std::copy(eps.data_ptr<double>(), eps.data_ptr<double>() + out.data.size(), out.data.begin());
  return out;
}

}  // namespace ditimpute
