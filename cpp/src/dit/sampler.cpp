// Reverse-time samplers of the VP-SDE (the paper's eq. 6 and its probability-
// flow ODE) and the oracle mode that drives them with the exact GP score.
// Choice of defaults: see ditimpute/sampler.hpp.
#include "sampler_impl.hpp"

#include "ditimpute/backend.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

namespace ditimpute {

void SamplerOptions::validate() const {
  if (steps < 1) throw input_error("steps", "steps must be at least 1, not " + std::to_string(steps) + ".");
  if (!(std::isfinite(t0) && t0 > 0.0))
    throw input_error("t0", "t0 must be a positive finite time, not " + std::to_string(t0) + ".");
  if (!(std::isfinite(T) && T > t0))
    throw input_error("T", "T must be finite and greater than t0 (" + std::to_string(t0) + "), not " +
                               std::to_string(T) + ".");
}

SamplerOptions::Method sampler_method_from_string(const std::string& name) {
  using M = SamplerOptions::Method;
  if (name == "sde" || name == "heun_sde") return M::heun_sde;
  if (name == "euler" || name == "euler_maruyama" || name == "em") return M::euler_maruyama;
  if (name == "ode" || name == "heun_ode") return M::heun_ode;
  throw input_error("method", "method must be \"sde\", \"euler\" or \"ode\", not \"" + name + "\".");
}

std::string to_string(SamplerOptions::Method method) {
  switch (method) {
    case SamplerOptions::Method::euler_maruyama: return "euler";
    case SamplerOptions::Method::heun_sde: return "sde";
    case SamplerOptions::Method::heun_ode: return "ode";
  }
  return "?";
}

SamplerOptions::Grid time_grid_from_string(const std::string& name) {
  if (name == "geometric") return SamplerOptions::Grid::geometric;
  if (name == "uniform") return SamplerOptions::Grid::uniform;
  throw input_error("grid", "grid must be \"geometric\" or \"uniform\", not \"" + name + "\".");
}

std::string to_string(SamplerOptions::Grid grid) {
  return grid == SamplerOptions::Grid::geometric ? "geometric" : "uniform";
}

int score_evaluations(const SamplerOptions& options) {
  return options.method == SamplerOptions::Method::euler_maruyama ? options.steps : 2 * options.steps;
}

std::vector<double> time_grid(const SamplerOptions& options) {
  options.validate();
  const int n = options.steps;
  std::vector<double> t(static_cast<std::size_t>(n) + 1);
  for (int k = 0; k <= n; ++k) {
    const double u = static_cast<double>(k) / n;
    t[k] = options.grid == SamplerOptions::Grid::geometric ? options.T * std::pow(options.t0 / options.T, u)
                                                           : options.T + (options.t0 - options.T) * u;
  }
  t.front() = options.T;  // exact end points whatever pow rounds to
  t.back() = options.t0;
  return t;
}

namespace detail {

torch::Tensor reverse_sample(const ScoreFn& score, const torch::Tensor& x_obs, const torch::Tensor& observed,
                             int Z, const SamplerOptions& options, torch::Generator& gen) {
  options.validate();
  if (Z < 1) throw input_error("Z", "the number of samples Z must be at least 1, not " + std::to_string(Z) + ".");
  if (x_obs.dim() != 2) throw input_error("x", "the observed sequence must be an H x d matrix.");
  if (!observed.sizes().equals(x_obs.sizes()))
    throw input_error("observed", "the mask must have the shape of the sequence (H x d).");
  const int64_t H = x_obs.size(0), d = x_obs.size(1);
  const auto opts = x_obs.options();
  // [1, H, d], broadcast over the batch. torch::where (not products with the
  // mask) keeps NaN on missing entries of x_obs from leaking in.
  const torch::Tensor obs = (observed.to(x_obs.device()) != 0).unsqueeze(0);
  const torch::Tensor x1 = x_obs.unsqueeze(0);
  const torch::Tensor held = torch::where(obs, x1, torch::zeros_like(x1));
  auto hold = [&](const torch::Tensor& x) { return torch::where(obs, held, x); };
  // Noise on the CPU from `gen`, then to the device: the same seed gives the
  // same draws on every device.
  auto noise = [&]() {
    return torch::randn({Z, H, d}, gen, torch::TensorOptions().dtype(opts.dtype())).to(opts.device());
  };

  using M = SamplerOptions::Method;
  const std::vector<double> t = time_grid(options);
  torch::Tensor x = hold(noise());  // x_T ~ N(0, I): the prior at T (alpha_T^2 = e^-T ~ 0)
  for (int k = 0; k < options.steps; ++k) {
    const double tk = t[k], tn = t[k + 1], h = tk - tn;  // reverse time advances by h
    switch (options.method) {
      case M::euler_maruyama: {
        // Eq. 6 by Euler-Maruyama: v <- v + h (v/2 + s) + sqrt(h) z.
        x = hold(x + h * (0.5 * x + score(x, tk)) + std::sqrt(h) * noise());
        break;
      }
      case M::heun_sde: {
        // Stochastic Heun for additive noise (weak order 2): predictor by
        // Euler-Maruyama, corrector with the mean drift of both ends and the
        // same increment of the Wiener process.
        const torch::Tensor dw = std::sqrt(h) * noise();
        const torch::Tensor f1 = 0.5 * x + score(x, tk);
        const torch::Tensor xp = hold(x + h * f1 + dw);
        const torch::Tensor f2 = 0.5 * xp + score(xp, tn);
        x = hold(x + (0.5 * h) * (f1 + f2) + dw);
        break;
      }
      case M::heun_ode: {
        // PF ODE dx/dt = -(x + s)/2 integrated from tk back to tn: the
        // reverse-time velocity is (x + s)/2; Heun = trapezoid with an Euler predictor.
        const torch::Tensor f1 = 0.5 * (x + score(x, tk));
        const torch::Tensor xp = hold(x + h * f1);
        const torch::Tensor f2 = 0.5 * (xp + score(xp, tn));
        x = hold(x + (0.5 * h) * (f1 + f2));
        break;
      }
    }
  }
  if (!torch::isfinite(x).all().item<bool>())
    throw numeric_error("the reverse-time sampler produced non-finite values (score function returned NaN/Inf?).");
  return x;
}

}  // namespace detail

Matrix sample_oracle(const Conditional& cond, const double* x, int Z, const SamplerOptions& options,
                     std::uint64_t seed, int threads) {
  options.validate();
  if (Z < 1) throw input_error("Z", "the number of samples Z must be at least 1, not " + std::to_string(Z) + ".");
  set_threads(threads);
  const int m = cond.n_missing();
  const Vector mu = cond.mean(x);  // validates the observed entries of x

  // The state holds the missing entries only, as a [Z, 1, m] "sequence" with
  // nothing observed: the exact score needs nothing else, and the tensor work
  // shrinks by H d / m against the full [Z, H, d] layout the network needs.
  // The update rules are the same code as for the network.
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  const torch::Tensor x_obs = torch::zeros({1, m}, f64), observed = torch::zeros({1, m}, torch::kUInt8);
  auto to_eigen = [&](const torch::Tensor& xs) {
    const torch::Tensor c = xs.contiguous();
    return Matrix(Eigen::Map<const RowMatrix>(c.data_ptr<double>(), Z, m));
  };
  const detail::ScoreFn oracle = [&](const torch::Tensor& xs, double t) {
    torch::Tensor out = torch::empty({Z, 1, m}, f64);
    Eigen::Map<RowMatrix>(out.data_ptr<double>(), Z, m) = cond.score(to_eigen(xs), mu, t);  // eq. 9
    return out;
  };
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  return to_eigen(detail::reverse_sample(oracle, x_obs, observed, Z, options, gen));
}

}  // namespace ditimpute
