// Diagnostics of a trained DiT against a Gaussian-process truth
// (dit_diagnostics.hpp): batched noise predictions with per-example masks and
// times, and the expected denoising loss behind the distribution-shift
// coefficient.
#include "model_impl.hpp"

#include "ditimpute/dit_diagnostics.hpp"
#include "ditimpute/impute.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ditimpute {

Batch DiTModel::predict_noise(const Batch& x, const std::vector<Mask>& masks, const std::vector<double>& t,
                              int threads) const {
  const auto& m = *impl_;
  const auto& c = m.config;
  if (x.H != c.H || x.d != c.d || x.n < 1)
    throw input_error("x", "x must hold at least one " + std::to_string(c.H) + " x " + std::to_string(c.d) + " state.");
  if (masks.size() != static_cast<std::size_t>(x.n) || t.size() != masks.size())
    throw input_error("masks", "there must be one mask and one time per state.");
  for (std::size_t i = 0; i < masks.size(); ++i) {
    if (masks[i].H != c.H || masks[i].d != c.d) throw input_error("masks", "a mask does not match the model's H x d.");
    if (!(t[i] > 0) || !std::isfinite(t[i])) throw input_error("t", "every t must be positive and finite.");
  }
  const TorchCallScope torch_call(threads);
  torch::NoGradGuard no_grad;
  auto net = m.sampling_net();
  const std::size_t S = x.seq_size();
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  Batch out(x.n, c.H, c.d);
  const int chunk = 256;
  for (int from = 0; from < x.n; from += chunk) {
    check_cancelled();
    const int B = std::min(x.n, from + chunk) - from;
    std::vector<float> xs(x.data.begin() + from * S, x.data.begin() + (from + B) * S), ob(B * S), tt(B);
    for (int b = 0; b < B; ++b) {
      tt[b] = static_cast<float>(t[from + b]);
      for (std::size_t k = 0; k < S; ++k) ob[b * S + k] = masks[from + b].observed[k] ? 1.0f : 0.0f;
    }
    auto xt = torch::from_blob(xs.data(), {B, c.H, c.d}, f32).clone().to(m.device);
    auto mk = torch::from_blob(ob.data(), {B, c.H, c.d}, f32).clone().to(m.device);
    auto tv = torch::from_blob(tt.data(), {B}, f32).clone().to(m.device);
    torch::Tensor mu, sd, U, lambda;
    if (!c.gp.empty()) {
      // The GP's conditionals of each state given its observed entries.
      if (!m.gp) throw input_error("object", "a GP-informed DiT needs its GP (set_gp).");
      std::vector<float> muf(B * S), sdf(B * S);
      std::vector<double> mu_d(S), sd_d(S);
      std::vector<detail::GpEigen> eig;
      for (int b = 0; b < B; ++b) {
        detail::gp_case(*m.gp, x.seq(from + b), masks[from + b], mu_d.data(), sd_d.data(),
                        c.gp == "score" ? &eig.emplace_back() : nullptr);
        std::copy(mu_d.begin(), mu_d.end(), muf.begin() + b * S);
        std::copy(sd_d.begin(), sd_d.end(), sdf.begin() + b * S);
      }
      mu = torch::from_blob(muf.data(), {B, c.H, c.d}, f32).clone().to(m.device);
      sd = torch::from_blob(sdf.data(), {B, c.H, c.d}, f32).clone().to(m.device);
      if (!eig.empty()) {
        auto ul = detail::gp_eigen_tensors(eig, static_cast<int64_t>(S));
        U = ul.first.to(m.device);
        lambda = ul.second.to(m.device);
      }
    }
    auto eps = net->noise(xt, mk, tv, mu, sd, U, lambda).to(torch::kCPU, torch::kFloat64).contiguous();
    std::copy(eps.data_ptr<double>(), eps.data_ptr<double>() + B * S, out.data.begin() + from * S);
  }
  return out;
}

namespace {

// Mean and standard error of the mean of K values.
void mean_se(const std::vector<double>& v, double& mean, double& se) {
  const double K = static_cast<double>(v.size());
  double s = 0;
  for (double a : v) s += a;
  mean = s / K;
  double ss = 0;
  for (double a : v) ss += (a - mean) * (a - mean);
  se = K > 1 ? std::sqrt(ss / (K - 1) / K) : std::nan("");
}

}  // namespace

DenoisingRisk denoising_risk(const DiTModel& model, const GaussianProcess& gp, const Batch& x, int K,
                             const std::string& weight, std::uint64_t seed, int threads) {
  const DiTConfig& c = model.config();
  if (x.H != c.H || x.d != c.d) throw input_error("x", "x must hold sequences of the model's H x d.");
  if (gp.H() != c.H || gp.d() != c.d) throw input_error("gp", "the process must have the model's H and d.");
  if (K < 1) throw input_error("K", "K must be at least 1.");
  if (weight != "eps" && weight != "score") throw input_error("weight", "weight must be \"eps\" or \"score\".");
  // A complete case (no missing entry, which impute() passes through) has
  // no loss to measure: NaN, no replicates. Every case complete is an input
  // error, as for impute().
  const std::vector<Mask> masks = masks_to_impute(x, "x");
  const int n = x.n;
  const std::size_t S = x.seq_size();
  std::vector<int> slot(n, -1);  // the index of a case among those with a gap
  int n_gappy = 0;
  for (int i = 0; i < n; ++i)
    if (masks[i].n_missing() > 0) slot[i] = n_gappy++;
  check_memory(8.0 * 3.0 * n_gappy * static_cast<double>(K) * S, "K", "the noisy states of every replicate");

  // Example e = slot[i] * K + k: its state, mask, time, and (on the missing
  // entries) the noise and the exact conditional noise eps*.
  Batch states(n_gappy * K, c.H, c.d);
  std::vector<Mask> ex_masks(static_cast<std::size_t>(n_gappy) * K);
  std::vector<double> ex_t(ex_masks.size());
  std::vector<Matrix> noise(n), eps_star(n);
  const double lt0 = std::log(c.t0), lT = std::log(c.T);
  for (const auto& group : group_by_pattern(masks)) {
    if (masks[group.front()].n_missing() == 0) continue;  // complete cases
    check_cancelled();
    const auto cond = make_conditional(gp, masks[group.front()]);
    const std::vector<int>& miss = cond->missing_entries();
    const int m = cond->n_missing();
    parallel_for(static_cast<int>(group.size()), threads, [&](int g) {
      const int i = group[g];
      Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
      const Vector mu = cond->mean(x.seq(i));
      const Matrix x0 = cond->sample(mu, K, rng);
      std::uniform_real_distribution<double> unif(0.0, 1.0);
      std::vector<double> tk(K);
      for (int k = 0; k < K; ++k) tk[k] = std::exp(lt0 + (lT - lt0) * unif(rng));
      noise[i].resize(K, m);
      fill_standard_normal(rng, noise[i].data(), static_cast<std::size_t>(noise[i].size()));
      eps_star[i].resize(K, m);
      for (int k = 0; k < K; ++k) {
        const double a = vp_alpha(tk[k]), s = vp_sigma(tk[k]);
        const Matrix v = a * x0.row(k) + s * noise[i].row(k);
        eps_star[i].row(k) = -s * cond->score(v, mu, tk[k]);
        const std::size_t e = static_cast<std::size_t>(slot[i]) * K + k;
        double* st = states.seq(static_cast<int>(e));
        std::copy(x.seq(i), x.seq(i) + S, st);
        for (int j = 0; j < m; ++j) st[miss[j]] = v(0, j);
        ex_masks[e] = masks[i];
        ex_t[e] = tk[k];
      }
    });
  }
  const Batch eps_hat = model.predict_noise(states, ex_masks, ex_t, threads);

  DenoisingRisk out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.loss.assign(n, nan);
  out.loss_se.assign(n, nan);
  out.excess.assign(n, nan);
  out.excess_se.assign(n, nan);
  for (int i = 0; i < n; ++i) {
    if (slot[i] < 0) continue;  // complete: NaN
    const std::vector<int> miss = masks[i].missing_entries();
    const int m = static_cast<int>(miss.size());
    std::vector<double> l(K), ex(K);
    for (int k = 0; k < K; ++k) {
      const std::size_t e = static_cast<std::size_t>(slot[i]) * K + k;
      const double t = ex_t[e];
      const double w = weight == "score" ? t / vp_sigma2(t) : 1.0;
      const double* eh = eps_hat.seq(static_cast<int>(e));
      double sl = 0, se = 0;
      for (int j = 0; j < m; ++j) {
        sl += std::pow(eh[miss[j]] - noise[i](k, j), 2);
        se += std::pow(eh[miss[j]] - eps_star[i](k, j), 2);
      }
      l[k] = w * sl / m;
      ex[k] = w * se / m;
    }
    mean_se(l, out.loss[i], out.loss_se[i]);
    mean_se(ex, out.excess[i], out.excess_se[i]);
  }
  return out;
}

}  // namespace ditimpute
