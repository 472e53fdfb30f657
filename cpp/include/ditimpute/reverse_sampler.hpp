// The stepping code of every reverse-time sampler, written once for any state
// type: Eigen matrices in the oracle (exact GP score, cpp/src/sampler.cpp) and
// torch tensors for the DiT (cpp/src/dit/sampling.cpp). Each caller supplies
// the score through `Ops`; the update rules below never know which it is.
// Options, defaults and their reasons: sampler.hpp. See cpp/DESIGN.md.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/sampler.hpp"
#include "ditimpute/schedule.hpp"

#include <cmath>
#include <vector>

namespace ditimpute {

// Ops must provide, for states of type State:
//   State noise();                        standard normal, the state's shape
//   State hold(const State& x);           observed entries reset to their values
//   State score(const State& x, double t) the score s(x, t) of the conditional law
//   bool finite(const State& x);          every value finite
// The sampler starts from x_T = hold(noise()) (alpha_T^2 = e^-T ~ 0, so the
// prior at T is N(0, I)) and returns the state at t0.
template <class State, class Ops>
State run_reverse_sampler(Ops& ops, const SamplerOptions& options) {
  using M = SamplerOptions::Method;
  const std::vector<double> t = time_grid(options);  // validates the options
  State x = ops.hold(ops.noise());
  // Multistep solvers remember the previous data prediction and step.
  State x0_prev;
  double h_prev = 0.0;
  // The data prediction x0_hat = (x + sigma_t^2 s) / alpha_t (Tweedie).
  auto denoise = [&](const State& xs, double tt) -> State {
    return (xs + vp_sigma2(tt) * ops.score(xs, tt)) * (1.0 / vp_alpha(tt));
  };
  auto lambda = [](double tt) { return std::log(vp_alpha(tt) / vp_sigma(tt)); };  // half log-SNR
  for (int k = 0; k < options.steps; ++k) {
    const double tk = t[k], tn = t[k + 1], h = tk - tn;  // reverse time advances by h
    switch (options.method) {
      case M::euler_maruyama: {
        // Eq. 6 by Euler-Maruyama: v <- v + h (v/2 + s) + sqrt(h) z.
        x = ops.hold(x + h * (0.5 * x + ops.score(x, tk)) + std::sqrt(h) * ops.noise());
        break;
      }
      case M::heun_sde: {
        // Stochastic Heun for additive noise (weak order 2): Euler-Maruyama
        // predictor, corrector with the mean drift of both ends and the same
        // Wiener increment.
        const State dw = std::sqrt(h) * ops.noise();
        const State f1 = 0.5 * x + ops.score(x, tk);
        const State xp = ops.hold(x + h * f1 + dw);
        const State f2 = 0.5 * xp + ops.score(xp, tn);
        x = ops.hold(x + (0.5 * h) * (f1 + f2) + dw);
        break;
      }
      case M::heun_ode: {
        // PF ODE dx/dt = -(x + s)/2 from tk back to tn: reverse-time velocity
        // (x + s)/2; Heun = trapezoid with an Euler predictor.
        const State f1 = 0.5 * (x + ops.score(x, tk));
        const State xp = ops.hold(x + h * f1);
        const State f2 = 0.5 * (xp + ops.score(xp, tn));
        x = ops.hold(x + (0.5 * h) * (f1 + f2));
        break;
      }
      case M::dpm2m:
      case M::dpm2m_sde: {
        // DPM-Solver++(2M) (Lu et al. 2022) in the VP parametrisation: exact
        // integration of the linear part in lambda = log(alpha / sigma), the
        // data prediction D extrapolated linearly from the last two steps
        // (first order on the first step and on the last one, where the
        // step in lambda is the largest and extrapolation least reliable).
        // The SDE variant adds the matching noise (DPM-Solver++(2M) SDE).
        const double hl = lambda(tn) - lambda(tk);
        const double an = vp_alpha(tn), sn = vp_sigma(tn), sk = vp_sigma(tk);
        const State x0 = denoise(x, tk);
        State D = x0;
        if (k > 0 && k + 1 < options.steps) {
          const double r = h_prev / hl;
          D = (1.0 + 0.5 / r) * x0 - (0.5 / r) * x0_prev;
        }
        if (options.method == M::dpm2m) {
          x = ops.hold((sn / sk) * x - (an * std::expm1(-hl)) * D);
        } else {
          x = ops.hold((sn / sk * std::exp(-hl)) * x + (an * -std::expm1(-2.0 * hl)) * D +
                       (sn * std::sqrt(-std::expm1(-2.0 * hl))) * ops.noise());
        }
        x0_prev = x0;
        h_prev = hl;
        break;
      }
    }
  }
  if (!ops.finite(x))
    throw numeric_error("the reverse-time sampler produced non-finite values (score function returned NaN/Inf?).");
  return x;
}

}  // namespace ditimpute
