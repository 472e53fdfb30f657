// The stepping code of every reverse-time sampler, written once for any state
// type: Eigen matrices in the oracle (exact GP score, cpp/src/sampler.cpp) and
// torch tensors for the DiT (cpp/src/dit/sampling.cpp). Each caller supplies
// the score through `Ops`; the update rules below never know which it is.
// Options, defaults and their reasons: sampler.hpp. See cpp/DESIGN.md.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/sampler.hpp"
#include "ditimpute/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ditimpute {

// One UniPC step (Zhao et al. 2023) in data prediction with B(h) = h
// ("bh1"): from x, at the last point of the history (ms: data predictions, ls:
// their lambda = log(alpha / sigma), most recent last), to time tt at order
// `ord` (the predictor UniP); given m_t, the data prediction at tt, it is
// instead the corrector UniC of that step, which reuses the next step's score
// call and so costs nothing extra. bh2 = true takes B(h) = e^h - 1 (diffusers'
// default): the library's unipc2 (order 2) uses it; at order 3 and 12
// geometric steps bh2 loses 6.5% of P1's variance where bh1 is within 1.5%
// (bench/results/sampler.md).
template <class State>
State unipc_update(const State& x, const std::vector<State>& ms, const std::vector<double>& ls, double tt, int ord,
                   const State* m_t, bool bh2 = false) {
  const double ls0 = ls.back(), h = std::log(vp_alpha(tt) / vp_sigma(tt)) - ls0;
  const double s0 = 1.0 / std::sqrt(1.0 + std::exp(2.0 * ls0));  // sigma at ls0
  const double at = vp_alpha(tt), st = vp_sigma(tt), hphi1 = std::expm1(-h), B = bh2 ? hphi1 : -h;
  const State& m0 = ms.back();
  const int n = static_cast<int>(ms.size());
  std::vector<double> rk;
  std::vector<State> D1;
  for (int i = 1; i < ord; ++i) {
    rk.push_back((ls[n - 1 - i] - ls0) / h);
    D1.push_back((ms[n - 1 - i] - m0) * (1.0 / rk.back()));
  }
  rk.push_back(1.0);
  Eigen::MatrixXd R(ord, ord);
  Eigen::VectorXd b(ord);
  double phi = hphi1 / -h - 1.0, fact = 1.0;
  for (int i = 1; i <= ord; ++i) {
    for (int j = 0; j < ord; ++j) R(i - 1, j) = std::pow(rk[j], i - 1);
    b(i - 1) = phi * fact / B;
    fact *= i + 1;
    phi = phi / -h - 1.0 / fact;
  }
  State out = (st / s0) * x - (at * hphi1) * m0;
  const int nr = m_t ? ord : ord - 1;  // UniC also weighs the new prediction
  if (nr == 0) return out;
  Eigen::VectorXd rho(nr);
  if (nr == 1) {
    rho(0) = 0.5;  // diffusers' choice for UniP-2 and UniC-1
  } else {
    rho = R.topLeftCorner(nr, nr).partialPivLu().solve(b.head(nr));
  }
  for (int j = 0; j < ord - 1; ++j) out = out - (at * B * rho(j)) * D1[j];
  if (m_t) out = out - (at * B * rho(nr - 1)) * (*m_t - m0);
  return out;
}

// Ops must provide, for states of type State:
//   State noise();                        standard normal, the state's shape
//   State hold(const State& x);           observed entries reset to their values
//   State score(const State& x, double t) the score s(x, t) of the conditional law
//   bool finite(const State& x);          every value finite
// The sampler starts from x_T = hold(noise()) (alpha_T^2 = e^-T ~ 0, so the
// prior at T is N(0, I)) and returns the state at t0.
//
// The grid t (decreasing, options.steps + 1 times from T to t0) is
// time_grid(options) unless given (bench/bench_sampler.cpp tries others).
template <class State, class Ops>
State run_reverse_sampler(Ops& ops, const SamplerOptions& options, const std::vector<double>& t) {
  using M = SamplerOptions::Method;
  options.validate();
  if (t.size() != static_cast<std::size_t>(options.steps) + 1)
    throw input_error("grid", "the time grid must have steps + 1 points.");
  State x = ops.hold(ops.noise());
  // Multistep solvers remember the previous data predictions and steps.
  State x0_prev, x_last;
  double h_prev = 0.0;
  std::vector<State> hist;    // UniPC: last (up to 3) data predictions
  std::vector<double> lams;   // and their lambdas
  int last_order = 0;
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
      case M::unipc:
      case M::unipc2: {
        // UniPC-3 (bh1) or UniPC-2 (bh2): the step's one score call gives the
        // data prediction at the predicted state; it corrects the last step
        // (UniC), then predicts the next (UniP) at order min(p, k + 1, steps - k).
        const bool bh2 = options.method == M::unipc2;
        const int p = bh2 ? 2 : 3;
        const State m = denoise(x, tk);
        if (k > 0) x = ops.hold(unipc_update(x_last, hist, lams, tk, last_order, &m, bh2));
        hist.push_back(m);
        lams.push_back(lambda(tk));
        if (hist.size() > static_cast<std::size_t>(p)) {
          hist.erase(hist.begin());
          lams.erase(lams.begin());
        }
        const int ord = std::min({p, k + 1, options.steps - k});
        x_last = x;
        x = ops.hold(unipc_update(x, hist, lams, tn, ord, static_cast<const State*>(nullptr), bh2));
        last_order = ord;
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

template <class State, class Ops>
State run_reverse_sampler(Ops& ops, const SamplerOptions& options) {
  return run_reverse_sampler<State>(ops, options, time_grid(options));
}

}  // namespace ditimpute
