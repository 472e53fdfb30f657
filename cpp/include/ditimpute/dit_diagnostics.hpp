// A trained DiT measured against a Gaussian-process truth: its expected
// denoising loss at given observed values, the quantity behind the paper's
// distribution-shift coefficient (section 5, Definition 1):
//   DS(P_{x*_obs}, P_{x_obs}; G) = sup_g g(x*_obs) / E_{x_obs ~ P_train} g(x_obs),
//   G = { g(y) = E_{x_miss | y} l(x_miss, y; s) : s a transformer }.
// We evaluate g at the trained network's own score s_hat (one member of G, so
// the ratio is a lower bound of the supremum; it is the member the paper's
// Corollary 1 applies to). Torch-free header; defined in dit/diagnostics.cpp.
#pragma once

#include "ditimpute/dit.hpp"
#include "ditimpute/gaussian.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ditimpute {

// Per case: the mean over K replicates and its standard error.
struct DenoisingRisk {
  // g(x_obs) = E_{x_miss | x_obs} E_t E_eps [w(t) mean_j (eps_hat_j - eps_j)^2],
  // mean over the case's missing entries j, t log-uniform on the model's
  // [t0, T], x_miss drawn from the exact conditional of `gp`.
  std::vector<double> loss, loss_se;
  // The same with eps_j replaced by eps*_j = E[eps_j | v_t, x_obs] = -sigma_t
  // times the exact score (eq. 9): the score-error part of the loss, which is
  // loss minus an irreducible term that no network can remove.
  std::vector<double> excess, excess_se;
};

// Every case of `x` (NaN = missing, its pattern from masks_to_impute; the
// observed values are the x_obs at which g is evaluated). A complete case
// (no missing entry, which impute() passes through) has no loss: NaN in
// every field and no replicates (it takes no draws, so the other cases' draws
// are unchanged); every case complete is input_error "x". K >= 1 replicates
// per case ("K"); weight "eps" (w = 1: the loss the network was trained on,
// eq. 13 in noise form) or "score" (w = t / sigma_t^2: eq. 14's integral of
// ||s - target||^2 dt, up to the constant log(T / t0), under log-uniform t)
// ("weight"). Case i draws from Rng(case_seed(seed, i)): K conditional
// draws, K times, then the noise; the network sees all cases at once.
DenoisingRisk denoising_risk(const DiTModel& model, const GaussianProcess& gp, const Batch& x, int K,
                             const std::string& weight, std::uint64_t seed, int threads = 0);

}  // namespace ditimpute
