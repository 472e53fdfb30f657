// gp_entry_marginals and gp_conditional_eigen (dit.hpp): the GP's conditional
// mean and sd of every entry of one sequence, and the eigen-decomposition of
// the missing entries' conditional covariance, the inputs of a GP-informed DiT. Torch-free, so it
// lives in the Gaussian layer and is there in builds without LibTorch.
#include "ditimpute/dit.hpp"

#include <Eigen/Eigenvalues>

#include <cmath>

namespace ditimpute {

namespace {
// Observed for the GP = observed under the mask and finite in x.
Mask gp_observed(const GaussianProcess& gp, const double* x, const Mask& mask) {
  const int H = gp.H(), d = gp.d();
  if (mask.H != H || mask.d != d) throw input_error("mask", "the mask does not match the GP's H x d.");
  Mask eff(H, d, true);
  for (std::size_t k = 0; k < eff.observed.size(); ++k) eff.observed[k] = mask.observed[k] && std::isfinite(x[k]) ? 1 : 0;
  return eff;
}
// mu = x and sd = 0 on the observed entries, zero on the missing ones.
void write_observed(const Mask& eff, const double* x, double* mu, double* sd) {
  for (std::size_t k = 0; k < eff.observed.size(); ++k) {
    mu[k] = eff.observed[k] ? x[k] : 0.0;
    sd[k] = 0.0;
  }
}
// The conditional's m and s on the missing entries (`miss`, in the
// conditional's order).
void write_missing(const std::vector<int>& miss, const Vector& m, const Vector& s, double* mu, double* sd) {
  for (std::size_t e = 0; e < miss.size(); ++e) {
    mu[miss[e]] = m(static_cast<Eigen::Index>(e));
    sd[miss[e]] = s(static_cast<Eigen::Index>(e));
  }
}
}  // namespace

void gp_entry_marginals(const GaussianProcess& gp, const double* x, const Mask& mask, double* mu, double* sd) {
  const int H = gp.H(), d = gp.d();
  const Mask eff = gp_observed(gp, x, mask);
  const std::size_t S = static_cast<std::size_t>(H) * d;
  const int n_obs = static_cast<int>(S) - eff.n_missing();
  write_observed(eff, x, mu, sd);
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
  write_missing(cond->missing_entries(), m, s, mu, sd);
}

void gp_conditional_eigen(const GaussianProcess& gp, const double* x, const Mask& mask, Matrix& U, Vector& lambda,
                          double* mu, double* sd) {
  if ((mu == nullptr) != (sd == nullptr)) throw input_error("mu", "give both mu and sd, or neither.");
  const int H = gp.H(), d = gp.d();
  const Mask eff = gp_observed(gp, x, mask);
  const std::vector<int> miss = eff.missing_entries();
  const Eigen::Index S = static_cast<Eigen::Index>(H) * d, m = static_cast<Eigen::Index>(miss.size());
  U = Matrix::Zero(S, m);
  lambda = Vector::Zero(m);
  // Frame-level masks (and nothing missing): the marginals take the cheap
  // Kronecker path of their own.
  if (mu && (m == 0 || eff.frame_level())) gp_entry_marginals(gp, x, mask, mu, sd);
  if (m == 0) return;
  if (eff.frame_level()) {
    // Sigma_cond = Gamma_cond (x) Lambda, Gamma_cond the Schur complement of
    // the observed frames: its eigenpairs are the products of the two
    // factors' (frame-major missing order = the Kronecker product's order).
    const std::vector<int> mf = eff.missing_frames(), of = eff.observed_frames();
    const Eigen::Index a = static_cast<Eigen::Index>(mf.size()), b = static_cast<Eigen::Index>(of.size());
    const Matrix& G = gp.Gamma();
    Matrix Gmm(a, a), Gmo(a, b), Goo(b, b);
    for (Eigen::Index i = 0; i < a; ++i) {
      for (Eigen::Index j = 0; j < a; ++j) Gmm(i, j) = G(mf[i], mf[j]);
      for (Eigen::Index j = 0; j < b; ++j) Gmo(i, j) = G(mf[i], of[j]);
    }
    for (Eigen::Index i = 0; i < b; ++i)
      for (Eigen::Index j = 0; j < b; ++j) Goo(i, j) = G(of[i], of[j]);
    Matrix Gc = Gmm;
    if (b > 0) {
      const Eigen::LLT<Matrix> llt(Goo);
      if (llt.info() != Eigen::Success) throw numeric_error("Gamma of the observed frames is not positive definite.");
      Gc -= Gmo * llt.solve(Gmo.transpose());
    }
    Gc = 0.5 * (Gc + Gc.transpose()).eval();
    const Eigen::SelfAdjointEigenSolver<Matrix> eg(Gc), el(gp.Lambda());
    if (eg.info() != Eigen::Success || el.info() != Eigen::Success)
      throw numeric_error("the eigen-decomposition of the GP's conditional covariance failed.");
    const Matrix& P = eg.eigenvectors();
    const Matrix& Q = el.eigenvectors();
    for (Eigen::Index i = 0; i < a; ++i)
      for (Eigen::Index j = 0; j < d; ++j) {
        const Eigen::Index row = static_cast<Eigen::Index>(mf[i]) * d + j;
        for (Eigen::Index p = 0; p < a; ++p)
          for (Eigen::Index q = 0; q < d; ++q) U(row, p * d + q) = P(i, p) * Q(j, q);
      }
    for (Eigen::Index p = 0; p < a; ++p)
      for (Eigen::Index q = 0; q < d; ++q)
        lambda(p * d + q) = std::max(0.0, eg.eigenvalues()(p)) * std::max(0.0, el.eigenvalues()(q));
    return;
  }
  // Entry-level (nothing observed is frame-level): the dense covariance; the
  // marginals, when asked, from the same conditional (one factorisation).
  const auto cond = make_conditional(gp, eff);
  Matrix C = cond->covariance();
  C = 0.5 * (C + C.transpose()).eval();
  if (mu) {
    write_observed(eff, x, mu, sd);
    write_missing(miss, cond->mean(x), C.diagonal().cwiseMax(0.0).cwiseSqrt(), mu, sd);
  }
  const Eigen::SelfAdjointEigenSolver<Matrix> es(C);
  if (es.info() != Eigen::Success) throw numeric_error("the eigen-decomposition of the GP's conditional covariance failed.");
  for (Eigen::Index e = 0; e < m; ++e) U.row(miss[e]) = es.eigenvectors().row(e);
  lambda = es.eigenvalues().cwiseMax(0.0);
}

}  // namespace ditimpute
