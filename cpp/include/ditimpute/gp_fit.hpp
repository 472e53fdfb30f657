// Maximum-likelihood fit of the separable Gaussian process to windows with
// missing entries: vec(X_i) ~ N(1 (x) mu, Gamma(lengthscale) (x) Lambda), the
// kernel variance fixed at 1 (it is confounded with the scale of Lambda).
//
// The fit is an ECME algorithm (Liu & Rubin 1994), each step of which cannot
// lower the exact marginal log-likelihood of the observed entries:
//  * E-step: the exact conditional law of each window's missing entries, read
//    off the joint precision Gamma^{-1} (x) Lambda^{-1} (so the cost is
//    O(m^3 + H^2 d + H d^2) for m missing entries, never (Hd)^3);
//  * CM-step 1: mu (GLS) and Lambda = (1/(nH)) sum_i E[(X_i - 1 mu^T)^T
//    Gamma^{-1} (X_i - 1 mu^T)] in closed form;
//  * CM-step 2: the lengthscale maximising the exact marginal log-likelihood
//    with mu and Lambda fixed (golden-section search over log lengthscale,
//    kept only if it does not lower the likelihood).
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"

#include <vector>

namespace ditimpute {

struct GpFitOptions {
  // Kernel type, embedding and the starting lengthscale; variance is forced to 1.
  Kernel kernel;
  bool fit_lengthscale = true;
  double lengthscale_lower = 0.1;   // search interval of the lengthscale
  double lengthscale_upper = 1e3;
  double nugget = 0.0;              // fixed, added to the diagonal of Gamma
  int max_iter = 200;
  // Stop when an iteration raises the log-likelihood by less than
  // tol * (number of observed entries).
  double tol = 1e-7;
};

struct GpFitResult {
  Kernel kernel;                     // with the fitted lengthscale, variance 1
  Matrix Gamma;                      // H x H, kernel matrix plus nugget
  Matrix Lambda;                     // d x d
  Vector mean;                       // d, one mean per variable
  double loglik = 0.0;               // exact marginal log-likelihood at the fit
  std::vector<double> loglik_trace;  // at the start and after each iteration
  std::vector<double> lengthscale_trace;
  int iterations = 0;
  bool converged = false;
  long n_observed = 0;
};

// Exact marginal log-likelihood of the observed entries of every window of x
// (NaN = missing) under N(1 (x) mean, Gamma (x) Lambda). Windows with no
// observed entry contribute 0.
double gp_marginal_loglik(const Batch& x, const Matrix& Gamma, const Matrix& Lambda, const Vector& mean);

// Fits mean, Lambda and (optionally) the lengthscale by ECME. x holds the
// windows, NaN = missing; every variable needs observed values. Throws
// input_error "x" / "kernel" / "lengthscale_lower" ... on bad input and
// numeric_error when a factorisation breaks down.
GpFitResult gp_fit_em(const Batch& x, const GpFitOptions& options);

}  // namespace ditimpute
