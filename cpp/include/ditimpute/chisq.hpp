// The law of Q = sum_k w_k chi^2_1 (independent terms, w_k >= 0): a weighted
// sum of chi-squares. If X ~ N(mu, Sigma) then ||X - mu||_2^2 = ||Sigma^{1/2} z||^2
// (z standard normal) has this law with w = the eigenvalues of Sigma, so
//   P(||X - mu||_2 <= r) = P(Q <= r^2)
// and the exact radius of an L2-ball confidence region of a Gaussian is the
// square root of a quantile of Q (gaussian_ball_radius). Eigen only.
//
// Method (chisq.cpp): Imhof's (1961) inversion formula, evaluated by adaptive
// Gauss-Legendre quadrature after the weights are scaled to sum to one; the
// slowly decaying oscillating tail that arises with few dominant weights is
// summed cycle by cycle with Wynn's epsilon acceleration. The cdf is aimed at an
// absolute error of about 1e-11; numeric_error when the error estimate exceeds
// 1e-8. Cost: a few hundred to a few thousand integrand evaluations per cdf,
// each one pass over the weights that are not tiny (tiny ones are folded into
// power sums): about 0.1-2 ms per cdf and 1-10 ms per quantile for 96 to
// 10,000 weights.
#pragma once

#include "ditimpute/common.hpp"

namespace ditimpute {

// P(Q <= q). weights: >= 0 and finite (input_error "weights" otherwise, or when
// empty); zero weights are dropped, and with all weights zero Q = 0, so the cdf
// is 1 for q >= 0. q < 0 gives 0; q NaN is input_error "q". Exact (erf) for a
// single non-zero weight. Invariant under scaling weights and q together.
double weighted_chisq_cdf(const Vector& weights, double q);

// The q with P(Q <= q) = p, for p in (0, 1) (input_error "level" otherwise),
// |cdf(result) - p| <= 1e-9 or so (Brent's root search stops at 1e-10).
// All weights zero gives 0.
double weighted_chisq_quantile(const Vector& weights, double p);

// Radius r with P(||X - mu||_2 <= r) = level for X ~ N(mu, Sigma), given the
// eigenvalues of Sigma: sqrt(weighted_chisq_quantile(eigenvalues, level)).
// Negative eigenvalues of round-off size (>= -1e-10 * the largest) are read as
// zero; larger negative, non-finite or empty input is input_error "eigenvalues".
double gaussian_ball_radius(const Vector& eigenvalues, double level);

}  // namespace ditimpute
