// The diffusion schedule: the forward VP-SDE dx = -x/2 dt + dW of the paper's
// eq. 4, x_t = alpha_t x_0 + sigma_t eps with alpha_t = exp(-t/2) and
// sigma_t^2 = 1 - exp(-t). The one place these formulas live: the exact score
// (doubles), the network's v-parametrisation and its training loss (torch
// tensors, through argument-dependent lookup of exp/expm1/sqrt) all call these.
// See cpp/DESIGN.md.
#pragma once

#include <cmath>

namespace ditimpute {

// alpha_t = exp(-t/2).
template <class T>
T vp_alpha(const T& t) {
  using std::exp;
  return exp(-0.5 * t);
}

// sigma_t^2 = 1 - exp(-t), accurate for small t.
template <class T>
T vp_sigma2(const T& t) {
  using std::expm1;
  return -expm1(-t);
}

// sigma_t.
template <class T>
T vp_sigma(const T& t) {
  using std::sqrt;
  return sqrt(vp_sigma2(t));
}

// The score s(x, t) from a noise prediction eps_hat: s = -eps_hat / sigma_t
// (eq. 13's noise-prediction form).
template <class T>
T score_from_noise(const T& eps_hat, double t) {
  return eps_hat * (-1.0 / std::sqrt(vp_sigma2(t)));
}

}  // namespace ditimpute
