// gp_entry_marginals (dit.hpp): the GP's conditional mean and sd of every
// entry of one sequence, the inputs of a GP-informed DiT. Torch-free, so it
// lives in the Gaussian layer and is there in builds without LibTorch.
#include "ditimpute/dit.hpp"

#include <cmath>

namespace ditimpute {

void gp_entry_marginals(const GaussianProcess& gp, const double* x, const Mask& mask, double* mu, double* sd) {
  const int H = gp.H(), d = gp.d();
  if (mask.H != H || mask.d != d) throw input_error("mask", "the mask does not match the GP's H x d.");
  const std::size_t S = static_cast<std::size_t>(H) * d;
  // Observed = observed under the mask and finite in x.
  Mask eff(H, d, true);
  int n_obs = 0;
  for (std::size_t k = 0; k < S; ++k) {
    eff.observed[k] = mask.observed[k] && std::isfinite(x[k]) ? 1 : 0;
    n_obs += eff.observed[k];
  }
  for (std::size_t k = 0; k < S; ++k) {
    mu[k] = eff.observed[k] ? x[k] : 0.0;
    sd[k] = 0.0;
  }
  if (n_obs == static_cast<int>(S)) return;
  if (n_obs == 0) {  // the prior's marginals
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < d; ++j) {
        const std::size_t k = static_cast<std::size_t>(h) * d + j;
        mu[k] = gp.mean()(h, j);
        sd[k] = std::sqrt(gp.Gamma()(h, h) * gp.Lambda()(j, j));
      }
    return;
  }
  const auto cond = make_conditional(gp, eff);
  const Vector m = cond->mean(x);
  const Vector s = cond->marginal_sd();
  if (s.size() != m.size())
    throw numeric_error("the GP conditional gives no marginal sd on this path (CG); gp_entry_marginals needs one.");
  const auto& miss = cond->missing_entries();
  for (std::size_t e = 0; e < miss.size(); ++e) {
    mu[miss[e]] = m(static_cast<Eigen::Index>(e));
    sd[miss[e]] = s(static_cast<Eigen::Index>(e));
  }
}

}  // namespace ditimpute
