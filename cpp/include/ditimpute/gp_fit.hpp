// Maximum-likelihood fit of the separable Gaussian process to windows with
// missing entries: vec(X_i) ~ N(1 (x) mu, Gamma(lengthscale) (x) Lambda), the
// kernel variance fixed at 1 (it is confounded with the scale of Lambda).
//
// The fit is an EM-type algorithm each step of which cannot lower the exact
// marginal log-likelihood of the observed entries:
//  * E-step: the exact conditional law of each window's missing entries, read
//    off the joint precision Gamma^{-1} (x) Lambda^{-1} (so the cost is
//    O(m^3 + H^2 d + H d^2) for m missing entries, never (Hd)^3); it also
//    gives the exact log-likelihood at the current parameters, which monitors
//    the fit and stops it. Windows with many missing entries are factorised
//    one at a time by the system LAPACK on every core, small ones spread
//    over the cores with Eigen (src/lapack.hpp). What it leaves is the
//    complete-data sufficient
//    statistic M = sum_i E[vec X_i vec X_i' | x_o] (Hd x Hd). With heavy
//    gaps the conditional covariances in M may be estimated from draws
//    (GpFitEStep::sampled), a third of the exact E-step's flops.
//  * CM-steps: mu (GLS) and Lambda = (1/(nH)) sum_i
//    E[(X_i - 1 mu^T)^T Gamma^{-1} (X_i - 1 mu^T)] (+ ridge I) in closed form
//    for any Gamma, from M; the lengthscale, then the nugget (fit_nugget), by
//    golden-section search over its log with mu and Lambda so profiled
//    (profiling matters: lengthscale and Lambda are strongly coupled and
//    alternating crawls). The search always includes the current value.
//    With search = expected (ECM, the default) it maximises the expected
//    complete-data log-likelihood, which by the Kronecker structure
//    (log|Gamma (x) Lambda| = d log|Gamma| + H log|Lambda|, the trace terms
//    through M) costs O(H^3 + H^2 d^2 + d^3) an evaluation whatever the gaps;
//    with search = exact (ECME, Liu & Rubin 1994) the exact marginal
//    likelihood, a full pass of O(m^3) factorisations an evaluation (about
//    47 of them an iteration): fewer iterations, each far dearer.
//    A nugget bounds Gamma away from singular: exact ties between variables
//    (below) otherwise pull the lengthscale to its upper bound.
// The objective is the log-likelihood minus (ridge n H / 2) tr(Lambda^{-1})
// and minus (nu / 2) [log|Lambda| + tr(D Lambda^{-1})] (an inverse-Wishart
// prior on Lambda, nu = shrinkage n H / (1 - shrinkage), D diagonal: each
// variable's observed variance over Gamma's mean diagonal at the start): with
// ridge = shrinkage = 0 plain maximum likelihood. A small ridge keeps Lambda
// invertible when variables are collinear (BeijingAir has sites that share
// identical weather columns, where the likelihood is unbounded); shrinkage s
// makes each CM-step's Lambda (1 - s) times the likelihood's plus s D, so it
// shrinks the correlations between variables towards zero, the Lambda of a
// maximum a posteriori fit.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"

#include <limits>
#include <vector>

namespace ditimpute {

// What the CM-step's search over the lengthscale and nugget maximises (see above).
enum class GpFitSearch { expected, exact };

// How the E-step gets each window's conditional covariance of its m missing
// entries (the conditional means and the log-likelihood are exact either way):
//  * exact: Q_mm^{-1} from the window's Cholesky factor, 2/3 m^3 flops on top
//    of the factorisation's m^3/3;
//  * sampled: the mean outer product of estep_draws draws of N(0, Q_mm^{-1})
//    (L^{-T} z from the same factor, about 2 draws m^2 flops), an unbiased
//    estimate. Each window keeps the same draws in every E-step, so the
//    E-step is a smooth function of the parameters and over-relaxed steps
//    work as with exact covariances (fresh draws each step measured 30
//    iterations instead of 13 at 50% missing in 100 windows of 30 x 132).
//    The fit then converges to the maximiser of that fixed-draw E-step's
//    objective, a Monte Carlo perturbation of the maximum-likelihood
//    estimate; every kept step still raises the exact log-likelihood, and a
//    step that does not ends the fit at the parameters before it;
//  * automatic: sampled when some window misses kAutoSampledMissing or more
//    entries, where the inverse dominates an E-step; exact otherwise.
enum class GpFitEStep { exact, sampled, automatic };
constexpr int kAutoSampledMissing = 1000;

// The optimiser (gp_fit_lbfgs):
//  * em: the ECM / ECME iterations above (gp_fit_em);
//  * lbfgs: limited-memory quasi-Newton on the exact gradient of the
//    (penalised) marginal log-likelihood, from the exact E-step by Fisher's
//    identity (gp_fit_gradient), in coordinates whitened by the complete-data
//    information: the mean, the Cholesky factor of Lambda relative to a
//    reference Lambda_ref = C C' (Lambda = C T T' C', T lower triangular, I at
//    the reference) and the logs of the lengthscale and nugget. Converged when
//    the gradient's norm in the complete-data information metric,
//    sqrt(g' I_c^{-1} g), is below gradient_tol.
enum class GpFitMethod { em, lbfgs };

// Input errors name the argument a user of the R front end gives (gp_fit()'s
// `lower`, `upper`, `nugget_bounds`, `draws`) where it differs from the field
// below: lengthscale_lower -> "lower", lengthscale_upper -> "upper",
// nugget_lower / nugget_upper -> "nugget_bounds", estep_draws -> "draws";
// fixed_Gamma, which R does not set, is named "fixed_Gamma".
struct GpFitOptions {
  // Kernel type, embedding and the starting lengthscale; variance is forced to 1.
  Kernel kernel;
  bool fit_lengthscale = true;
  double lengthscale_lower = 0.1;   // search interval of the lengthscale
  double lengthscale_upper = 1e3;
  double nugget = 0.0;              // added to the diagonal of Gamma (start value when fitted)
  bool fit_nugget = false;          // fit it too (coordinate search after the lengthscale)
  double nugget_lower = 1e-6, nugget_upper = 1.0;
  double ridge = 0.0;               // Lambda's penalty, see above (0 = plain ML)
  double shrinkage = 0.0;           // Lambda's prior weight in [0, 1), see above (0 = plain ML)
  int max_iter = 200;
  // Stop when an iteration raises the objective by less than
  // tol * (number of observed entries).
  double tol = 1e-7;
  // When non-empty (H x H, symmetric positive definite: input_error
  // "fixed_Gamma" otherwise), Gamma is fixed to it and only the mean and
  // Lambda are fitted (kernel, lengthscale and nugget are then ignored).
  Matrix fixed_Gamma;
  GpFitSearch search = GpFitSearch::expected;
  // Over-relaxed steps (see gp_fit.cpp): each is kept only if the exact
  // objective rose, so the fit stays monotone; false = plain EM steps.
  bool accelerate = true;
  // E-step covariances of the missing entries (see GpFitEStep); the draws a
  // window for GpFitEStep::sampled, and their seed (window i draws from
  // Rng(case_seed(seed, i)), the same draws in every E-step).
  GpFitEStep estep = GpFitEStep::automatic;
  int estep_draws = 32;
  std::uint64_t seed = 0;
  // Early stopping on held-out entries (0 = off, plain maximum likelihood):
  // this share of each window's observed entries (at random, from
  // Rng(case_seed(case_seed(seed, kValidationStream), i)); a window keeps at
  // least one) is set aside, the fit runs on the rest, and after every
  // iteration the E-step's conditional means of the held-out entries, which
  // it computes anyway, are scored against their values (mean absolute
  // error, each variable over its observed standard deviation). The fit
  // returns the parameters with the lowest score and stops once `patience`
  // iterations in a row have not lowered it (or by tol / max_iter as
  // without). With many free parameters and heavy gaps the likelihood's
  // maximiser overfits Lambda (bench/gp_fit_iterations.R: on BeijingAir at
  // 50% missing the test error rises with every further iteration). The
  // absolute error, not the squared: real data have heavy tails, and a
  // squared score followed a few extreme held-out entries (on BeijingAir it
  // kept falling for 25 iterations for one seed of three while the test
  // error rose; scored by absolute error each of 5 seeds found the turn at
  // iteration 3 or 5, 53-74 s, test MAE 0.103-0.107 against 0.148 for 40
  // iterations of maximum likelihood).
  // (Data too small to hold any entry out are fitted by maximum likelihood;
  // validation_trace is then empty.)
  double validation = 0.0;
  int patience = 3;
  // GpFitMethod::lbfgs only (gp_fit_lbfgs): the convergence threshold of the
  // gradient norm above (half its square is the gain a complete-data Newton
  // step, about an EM step, would still make to second order), the number of
  // correction pairs kept, and how often (iterations) the whitening is taken
  // afresh at the current Lambda (the memory then restarts; 0 = never).
  // The search starts after up to lbfgs_em_steps ECM steps from the same
  // exact E-steps (they stop once their gains shrink geometrically).
  double gradient_tol = 0.1;
  int lbfgs_memory = 20;
  int lbfgs_refresh = 25;
  // ECM warm-up steps before the quasi-Newton search (at most; see gp_fit.cpp).
  int lbfgs_em_steps = 20;
};
constexpr std::uint64_t kValidationStream = 0x76616c6964ULL;

struct GpFitResult {
  Kernel kernel;                     // with the fitted lengthscale, variance 1
  double nugget = 0.0;
  Matrix Gamma;                      // H x H, kernel matrix plus nugget
  Matrix Lambda;                     // d x d
  Vector mean;                       // d, one mean per variable
  double loglik = 0.0;               // exact marginal log-likelihood at the fit
  double objective = 0.0;            // loglik minus the penalty (= loglik when ridge = shrinkage = 0)
  std::vector<double> objective_trace;  // at the start and after each iteration
  std::vector<double> lengthscale_trace;
  int iterations = 0;
  bool converged = false;
  long n_observed = 0;
  bool estep_sampled = false;        // whether the E-step covariances were sampled
  // With options.validation > 0: the held-out score at the start and after
  // each iteration, the iteration whose parameters are returned (0 = the
  // start), whether the patience rule stopped the fit, and how many entries
  // were held out (n_observed counts the rest, on which loglik is taken).
  std::vector<double> validation_trace;
  int best_iteration = 0;
  bool stopped_early = false;
  long n_validation = 0;
  // GpFitMethod::lbfgs: the gradient norm at the fit (see GpFitMethod; NaN
  // for em) and the number of log-likelihood-and-gradient evaluations (each a
  // full exact E-step; iterations plus rejected line-search trials).
  double gradient_norm = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> gradient_trace;  // lbfgs: the gradient norm at the start and after each iteration
  int evaluations = 0;
};

// The exact gradient of the penalised log-likelihood (GpFitOptions' ridge and
// shrinkage; their target D as gp_fit_em sets it from the observed variances
// and options.kernel / options.nugget) at the given parameters: objective
// and loglik as gp_fit_em reports them, d objective / d mean, the symmetric
// d x d matrix G with d objective = tr(G dLambda) for symmetric dLambda, and
// the derivatives in the log of the lengthscale and of the nugget (both
// computed whatever fit_lengthscale / fit_nugget say; 0 with a fixed Gamma).
// gradient_norm is sqrt(g' I_c^{-1} g) over the fitted parameters (see
// GpFitMethod). Uses the exact E-step whatever options.estep says.
struct GpFitGradient {
  double objective = 0.0, loglik = 0.0;
  Vector mean;
  Matrix Lambda;
  double log_lengthscale = 0.0, log_nugget = 0.0;
  double gradient_norm = 0.0;
};
GpFitGradient gp_fit_gradient(const Batch& x, const GpFitOptions& options, double lengthscale, double nugget,
                              const Vector& mean, const Matrix& Lambda);

// Exact marginal log-likelihood of the observed entries of every window of x
// (NaN = missing) under N(1 (x) mean, Gamma (x) Lambda). Windows with no
// observed entry contribute 0.
double gp_marginal_loglik(const Batch& x, const Matrix& Gamma, const Matrix& Lambda, const Vector& mean);

// Fits mean, Lambda and (optionally) the lengthscale and nugget by ECM (or
// ECME, options.search). x holds the
// windows, NaN = missing; every variable needs observed values. Throws
// input_error "x" / "kernel" / "lengthscale_lower" ... on bad input and
// numeric_error when a factorisation breaks down.
GpFitResult gp_fit_em(const Batch& x, const GpFitOptions& options);

// The same model by GpFitMethod::lbfgs (the E-step is always exact; validation must be 0: early stopping is gp_fit_em's).
// objective_trace holds the objective at the start and after each iteration
// (it never decreases: each step passes an Armijo test). From the same start
// as gp_fit_em.
GpFitResult gp_fit_lbfgs(const Batch& x, const GpFitOptions& options);

}  // namespace ditimpute
