// The nested gradient descent of the paper's Algorithm 2 for the conditional
// score (eq. 9), and the iteration counts and step sizes of Lemma 1. This is a
// reference that shows how kappa(Sigma_cond) and kappa(Sigma_obs) drive the
// cost of representing the score; the fast exact score is Conditional::score.
//
// Notation (section 3.1): Sigma_obs = Cov(x_obs), Sigma_cor = Cov(x_obs,
// x_miss), Sigma_miss = Cov(x_miss), Sigma_cond = Sigma_miss - Sigma_cor^T
// Sigma_obs^{-1} Sigma_cor, M_t = alpha_t^2 Sigma_cond + sigma_t^2 I.
// Vectors of missing / observed entries are in vec order (Mask::missing_entries()).
#pragma once

#include "ditimpute/gaussian.hpp"

namespace ditimpute {

// Step sizes and predicted counts of Lemma 1 for one pattern at time t and
// tolerance eps (appendix "Proof of Lemma 1"):
//   theta   = 2 / (lambda_min + lambda_max)(Sigma_obs)          (auxiliary GD)
//   eta     = 2 / (lambda_min + lambda_max)(M_t)                 (major GD)
//   kappa_t = kappa(M_t) <= kappa(Sigma_cond)
//   K_aux   = ceil((kappa_obs + 1) / 2 * log(H d kappa_obs / (sigma_t eps)))
//   K       = ceil(kappa_t * log(H d kappa_t kappa_obs / eps))
// The paper states K and the log factors only up to O(); we take every hidden
// constant as 1 (and a log below 1 as 1), so the counts show the scaling in
// kappa, not a sharp bound. GD with these step sizes contracts the error by
// (kappa - 1) / (kappa + 1) a step (Bubeck 2015, Thm 3.12).
struct Lemma1Counts {
  double t = 0.0, eps = 0.0;
  double alpha = 0.0, sigma2 = 0.0;                  // alpha_t, sigma_t^2
  double lambda_min_cond = 0.0, lambda_max_cond = 0.0, kappa_cond = 0.0;
  double lambda_min_obs = 0.0, lambda_max_obs = 0.0, kappa_obs = 0.0;
  double lambda_min_t = 0.0, lambda_max_t = 0.0, kappa_t = 0.0;
  double eta = 0.0;    // major step size eta_t
  double theta = 0.0;  // auxiliary step size
  long long K = 0;      // predicted major iterations
  long long K_aux = 0;  // predicted auxiliary iterations per major step
};

// Needs t > 0 ("t") and 0 < eps < 1 ("eps"); the pattern as for
// make_conditional ("pattern"). Frame- and entry-level masks.
Lemma1Counts lemma1_counts(const GaussianProcess& gp, const Mask& mask, double t, double eps);

struct NestedGDOptions {
  // Target relative error ||s - s*|| / ||s*|| of the returned score.
  double tol = 1e-6;
  // Fixed counts: when both are > 0, run Algorithm 2 verbatim for K major
  // steps of K_aux auxiliary steps each (no early stopping, tol unused).
  long long K = 0, K_aux = 0;
  // Caps for the adaptive mode (tol-driven stopping); hitting one leaves
  // converged = false.
  long long max_major = 1000000;
  long long max_aux = 10000000;  // per auxiliary solve
};

struct NestedGDResult {
  Vector score;                            // s^(K), n_missing values
  long long major_iterations = 0;          // major GD updates done
  std::vector<long long> aux_iterations;   // auxiliary steps of each major gradient evaluation
  long long aux_iterations_total = 0;      // sum of the above plus mean_aux_iterations
  long long mean_aux_iterations = 0;       // auxiliary steps for Sigma_obs^{-1}(x_obs - mu_obs)
  double eta = 0.0, theta = 0.0;           // step sizes used (Lemma 1's)
  double rel_error = 0.0;                  // ||s - s*|| / ||s*|| against Conditional::score
  // Adaptive mode: the stopping rule fired before a cap. Fixed mode:
  // rel_error <= tol.
  bool converged = false;
  Lemma1Counts lemma;                      // Lemma 1's prediction for (t, tol)
};

// Algorithm 2 at state v (n_missing values) and time t > 0 for the sequence x
// (full vec, H*d values, only observed entries read). mu_cond is also found
// by auxiliary GD, as in the proof of Lemma 1 (it needs Sigma_obs^{-1} too).
//
// Adaptive mode stops on computable bounds, using the exact spectra that
// Lemma 1's step sizes assume anyway: ||s - s*|| <= ||grad L_t(s)|| /
// lambda_min(M_t), and an auxiliary residual rho moves the gradient by at
// most alpha_t^2 ||Sigma_cor^T Sigma_obs^{-1}|| ||rho||. Each auxiliary solve
// stops when its effect is below tol/4 of ||s||; the major loop when its own
// bound is below tol/2.
//
// Note: the paper's eq. (outer_gd_step) prints "+ alpha_t^2 Sigma_cor^T
// Sigma_obs^{-1} Sigma_cor s"; the gradient of L_t has a minus there, since
// Sigma_cond = Sigma_miss - Sigma_cor^T Sigma_obs^{-1} Sigma_cor. We use minus.
NestedGDResult score_nested_gd(const GaussianProcess& gp, const Mask& mask, const double* x, const Vector& v,
                               double t, const NestedGDOptions& options = NestedGDOptions());

}  // namespace ditimpute
