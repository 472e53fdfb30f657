# Maximum-likelihood fit of the separable Gaussian process to windows with
# missing entries: the exact GP as a statistical competitor on real data.

#' Fit a Gaussian-process model to windows with missing values
#'
#' Fits `vec(X_i) ~ N(1 %x% mean, Gamma(lengthscale) %x% Lambda)` to windows
#' `X_i` by maximum likelihood, the missing entries integrated out (only
#' observed entries enter the likelihood). `Gamma` is the kernel matrix of
#' `kernel` over the frame index with its variance fixed at 1 (it is
#' confounded with the scale of `Lambda`), plus `nugget` on the diagonal;
#' `mean` is one value per variable; `Lambda` is a free `d x d` covariance.
#'
#' The algorithm is an ECM algorithm (Meng and Rubin, 1993), every step of
#' which raises the exact marginal log-likelihood: an E-step with the exact
#' conditional mean and covariance of each window's missing entries (from the
#' joint precision `Gamma^-1 %x% Lambda^-1`, so a window costs `O(m^3)` in its
#' `m` missing entries, not `O((Hd)^3)`), which also gives the exact
#' log-likelihood at the current parameters (the monitor: the fit stops when
#' an iteration gains less than `tol` per observed entry) and the
#' complete-data second moments `sum_i E[vec X_i vec X_i' | observed]`; then
#' closed-form updates of `mean` (generalised least squares) and `Lambda =
#' sum_i E[(X_i - 1 mean')' Gamma^-1 (X_i - 1 mean')] / (n H)`, and a
#' golden-section search of the lengthscale (then the nugget) with `mean` and
#' `Lambda` so profiled. With `search = "expected"` (the default) the search
#' maximises the expected complete-data log-likelihood, which through the
#' Kronecker structure (`log|Gamma %x% Lambda| = d log|Gamma| + H
#' log|Lambda|`) and the second moments costs `O(H^2 d^2)` an evaluation
#' whatever the gaps, so an iteration costs one pass of factorisations. With
#' `search = "exact"` (ECME, Liu and Rubin, 1994) it maximises the exact
#' log-likelihood, a full pass of factorisations per evaluation (about 47 an
#' iteration): about as many iterations, each 10-15 times dearer; both reach
#' the same maximum.
#' Windows with few missing entries are spread over every core (each window's
#' E-step and log-likelihood are independent; the sums do not depend on the
#' thread count); windows with 128 or more go one at a time to R's LAPACK and
#' BLAS (OpenBLAS on Debian), which use every core inside each
#' factorisation: 2.4 times faster for the log-likelihood and 2.1 times for
#' the fit than the portable code at 50% missing in windows of 30 x 132. The
#' second moments take `(H d)^2` doubles (125 MB at 30 x 132).
#' Each step first tries an over-relaxed move (kept only if the exact
#' log-likelihood rose), which halves the iterations with heavy gaps.
#' It starts from the observed means and variances (no cross-correlation)
#' and `lengthscale`.
#'
#' Heavy gaps: the sampled E-step. With `m` missing entries in a window,
#' the exact E-step costs about `m^3` flops a window: `m^3 / 3` for the
#' Cholesky factor of the precision of the missing entries (which gives the
#' conditional mean and the exact log-likelihood) and `2 m^3 / 3` for its
#' inverse, the conditional covariance. With `e_step = "sampled"` that
#' covariance is instead the mean outer product of `draws` draws from the
#' conditional law, made from the same factor (about `2 draws m^2` flops),
#' an unbiased estimate; the conditional means and the log-likelihood stay
#' exact. Each window keeps the same draws in every iteration (so the
#' E-step is a smooth function of the parameters and over-relaxed steps keep
#' working), which makes the fit converge to a Monte Carlo perturbation of
#' the maximum-likelihood estimate; the reported `loglik` is the exact
#' log-likelihood there, every kept step raised it, and a step that would
#' lower it ends the fit. `e_step = "auto"` (the default) samples when a
#' window misses 1,000 or more entries, where the inverse dominates.
#' Measured on 2 cores with 100 simulated windows of 30 x 132 (BeijingAir's
#' size) and 50% of entries missing (`m` about 2,000 a window;
#' `bench/bench_gp_fit.cpp`, one run): the exact E-step fit took 363 s (20
#' iterations), the sampled one 103 s (13 iterations, 3.5 times faster); its
#' log-likelihood was 216 below the exact maximum (1.1e-3 per observed
#' entry, 5% of `p / 2` with `p` = 8,912 free parameters, the scale of the
#' likelihood's own sampling noise), the lengthscale 5.015 against 5.008
#' (true 5) and `Lambda` 3.3% from the exact fit's, which is itself 25%
#' from the truth. The gap shrinks like `1 / draws` (in the package's tests
#' 0.28, 0.044 and 0.0014 at 4, 32 and 1,024 draws). On real data EM can
#' climb far more slowly: BeijingAir's windows with 50% missing had not
#' converged after 30 iterations (`bench/gp_fit_gaps.R`), where a larger
#' `tol` (1e-4) stopped the sampled fit early. The cost is linear in the
#' number of windows, so fewer (`n_windows`) go faster.
#'
#' Quasi-Newton (`method = "lbfgs"`). The EM iterations above creep when
#' much information is missing, and their stopping rule (a small gain) can
#' fire long before the maximum. `method = "lbfgs"` instead climbs the exact
#' (penalised) log-likelihood with limited-memory BFGS on its exact gradient,
#' which the exact E-step gives by Fisher's identity: with `R_i = E[X_i |
#' observed] - 1 mean'`, `S = sum_i E[(X_i - 1 mean')' Gamma^-1 (X_i - 1
#' mean')]` and `T = sum_i E[(X_i - 1 mean') Lambda^-1 (X_i - 1 mean')']`, the
#' gradient in `Lambda` is `Lambda^-1 (S - n H Lambda) Lambda^-1 / 2` (plus
#' the ridge and shrinkage terms), in `Gamma` `Gamma^-1 (T - n d Gamma)
#' Gamma^-1 / 2` (then through the kernel's derivative in the log
#' lengthscale, and the log nugget) and in the mean `Lambda^-1 sum_i R_i'
#' Gamma^-1 1`. The search runs over the mean, the Cholesky factor of
#' `Lambda` and the logs of the lengthscale and nugget, scaled by the
#' complete-data information (taken afresh every 25 iterations), so a unit
#' step is about an EM step; each step passes an Armijo test, so the
#' objective never falls. It starts with up to 20 ECM steps from the same
#' E-steps (the closed-form mean and `Lambda` with a scoring step on the
#' kernel), until their gains shrink geometrically: from the diagonal start
#' EM moves `Lambda` much further than a quasi-Newton step does. It
#' stops when the gradient norm `sqrt(g' I_c^-1 g)` (`I_c` the complete-data
#' information, block diagonal) is below `gradient_tol`: half its square is
#' the gain a further complete-data Newton step (about an EM step) would
#' make, so at 0.1 that step would gain 0.005. Each iteration costs one exact
#' E-step (the sampled E-step is not used: its gradient would not be exact),
#' and line-search trials add more (about 1.9 evaluations an iteration on
#' BeijingAir). Measured there (`bench/gp_fit_ml.R`, a loaded shared 2-core
#' machine): at 10% missing it reached EM's maximum in 0.62 times EM's CPU
#' time; at 50% it climbed more slowly than EM (still far below after 20
#' iterations), so `"em"` stays the default. Early stopping (`validation`) is
#' the EM fit's only.
#'
#' Early stopping (`validation > 0`). With many free parameters and heavy
#' gaps the likelihood's maximiser overfits `Lambda` (`d (d + 1) / 2` free
#' entries), and the longer the fit climbs, the worse it imputes.
#' `validation` sets aside that share of each window's observed entries
#' (at random, from `seed`); the fit runs on the rest, and after every
#' iteration the conditional means of the held-out entries, which the
#' E-step computes anyway, are scored against their values (mean absolute
#' error, each variable over its observed standard deviation: the absolute
#' error resists the heavy tails of real data, where a squared score
#' followed a few extreme entries). The fit returns the
#' parameters with the lowest score, and stops once `patience` iterations in
#' a row have not lowered it (or by `tol` and `max_iter` as without). It is
#' then a regularised estimate, not the maximum-likelihood one, and
#' `loglik` is taken on the entries fitted (`n_observed`, the held-out
#' ones excluded). Measured on BeijingAir's 100 training windows with 50%
#' missing (`bench/gp_fit_iterations.R`, 2 cores, one run): maximum
#' likelihood imputed the test windows worse the longer it climbed (MAE
#' 0.108, 0.123, 0.142 and 0.148 after 5, 10, 20 and 40 iterations, 300 s;
#' 90% coverage 91, 88, 83 and 82%), while `validation = 0.05` stopped
#' in 53 to 74 s for each of 5 seeds (best at iteration 3, once 5) with
#' MAE 0.103 to 0.107 and coverage 92 to 94%. In the package's small
#' simulated case (2 variables) it lands next to the maximum-likelihood fit.
#'
#' Shrinkage (`shrinkage > 0`) is the other remedy: the maximum a posteriori
#' fit under an inverse-Wishart prior on `Lambda` with density proportional
#' to `|Lambda|^(-nu / 2) exp(-nu tr(D Lambda^-1) / 2)`, `nu = shrinkage n H /
#' (1 - shrinkage)` and `D` the diagonal of observed variances (over
#' `Gamma`'s mean diagonal at the start); `objective` is the
#' log-likelihood plus the prior's log-density (up to a constant), and every
#' step raises it. On the same BeijingAir windows, `shrinkage = 0.3` for 40
#' iterations imputed better than maximum likelihood (MAE 0.111, coverage
#' 93%) but worse than early stopping, and was no faster (307 s, still
#' climbing); it is the choice when `Lambda` should be a shrunk estimate
#' (more variables than the windows pin down) rather than when time
#' matters. Schafer (1997, Analysis of Incomplete Multivariate Data, ch. 5)
#' uses the same prior with EM for multivariate normal data.
#'
#' With many windows, a random subset of `n_windows` of them is used: the
#' likelihood of 100 windows of BeijingAir (30 x 132) already pins the
#' `132 x 132` matrix `Lambda` with 3,000 frames, and the cost grows linearly
#' in the number of windows.
#'
#' The result is a [gp_spec()] model, so [impute()] gives exact conditional
#' imputations with intervals, [gp_conditional()] and [kappa_cond()] work on
#' it, and [logLik()] gives the maximised log-likelihood.
#'
#' @param x An `n x H x d` array of windows (e.g. the `train` part of
#'   [load_real_data()]), `NA` = missing. `NA` is the one marker of a missing
#'   value in every function of the package: `NaN` and `Inf` are input errors
#'   that say where they are (set them to `NA` first if they mean missing).
#' @param kernel Kernel type: `"matern32"`, `"matern52"`, `"laplace"` (alias `"exponential"`) or `"rbf"`.
#' @param lengthscale Starting lengthscale (in frames); by default `H / 4`.
#' @param fit_lengthscale If `FALSE`, the lengthscale stays at its start.
#' @param lower,upper Search interval of the lengthscale; by default 0.1 and `100 H`.
#' @param nugget Value added to the diagonal of `Gamma`: a white-noise share
#'   of each variable's variance (`nugget / (1 + nugget)`), fixed, or the
#'   starting value when `fit_nugget = TRUE`.
#' @param fit_nugget If `TRUE`, fit the nugget too (within `nugget_bounds`, by
#'   a search after the lengthscale's in each iteration). Real data need it: a
#'   nugget keeps `Gamma` away from singular, where exactly tied variables
#'   otherwise pull the lengthscale to its upper bound, and measured values
#'   carry noise that a noiseless model reads as signal (its imputations chase
#'   it and its intervals are too narrow). `FALSE` by default, the paper's
#'   noiseless model; the print of such a fit says so.
#' @param nugget_bounds Search interval of a fitted nugget. On BeijingAir the
#'   likelihood runs to the lower bound (tied variables again), so the lower
#'   bound is a modelling choice there: 0.01 (1% white noise) keeps the
#'   covariance of 3,960 entries numerically positive definite.
#' @param ridge Penalty that keeps `Lambda` invertible: the fit maximises the
#'   log-likelihood minus `ridge * n * H / 2 * tr(Lambda^-1)`, which adds
#'   `ridge` to the diagonal of the closed-form `Lambda`. 0 is plain maximum
#'   likelihood. It is relative to the mean observed variance of the
#'   variables (so 1e-3 is 0.1% of it on any scale). Needed when variables are
#'   (nearly) collinear: in BeijingAir several sites share identical weather
#'   columns, where the likelihood has no maximum. A fitted `Lambda` that is
#'   numerically singular (smallest eigenvalue below `1e-8` times the
#'   largest) gives a warning of class `ditimpute_warning_singular` that
#'   suggests it.
#' @param shrinkage Weight in `[0, 1)` of a prior that shrinks the
#'   correlations between variables towards zero: the fit maximises the
#'   log-likelihood plus the log-density of an inverse-Wishart prior on
#'   `Lambda` centred on the observed variances (the ridge prior of Schafer,
#'   1997, for multivariate normal data with missing values), so each update
#'   of `Lambda` is `(1 - shrinkage)` times the likelihood's plus
#'   `shrinkage` times that diagonal target. 0, the default, is maximum
#'   likelihood. See Details.
#' @param n_windows Use at most this many windows, chosen at random.
#' @param max_iter Maximum number of iterations.
#' @param tol Stop when an iteration gains less than `tol` times the number
#'   of observed entries in log-likelihood. A larger `tol` stops sooner but
#'   can stop a slow climb early (see Details).
#' @param seed Optional seed for the choice of windows and the sampled
#'   E-step's draws; without one, [set.seed()] makes it repeatable.
#' @param search What the search over the lengthscale and nugget maximises:
#'   `"expected"` (ECM, the default) the expected complete-data
#'   log-likelihood, cheap; `"exact"` (ECME) the exact marginal
#'   log-likelihood, the slower reference.
#' @param e_step How the E-step gets each window's conditional covariance:
#'   `"exact"`, `"sampled"` (from `draws` draws, see Details) or `"auto"`
#'   (sampled when some window used misses 1,000 or more entries).
#' @param draws Draws a window for the sampled E-step (1 to 10,000); the
#'   fit's Monte Carlo gap to the maximum shrinks like `1 / draws`.
#' @param validation Share of each window's observed entries held out for
#'   early stopping (0 to 0.5; 0, the default, fits by maximum likelihood).
#'   See Details.
#' @param patience With `validation > 0`, stop after this many iterations in a
#'   row without a lower held-out error.
#' @param method `"em"` (the default): the ECM / ECME iterations; `"lbfgs"`:
#'   quasi-Newton on the exact gradient, stopped by `gradient_tol` (see
#'   Details). `tol`, `search`, `e_step`, `draws`, `validation` and
#'   `patience` belong to `"em"`.
#' @param gradient_tol With `method = "lbfgs"`, stop when the gradient norm
#'   `sqrt(g' I_c^-1 g)` falls below it (see Details).
#' @return A `ditimpute_gp` model (see [gp_spec()]) of class
#'   `c("ditimpute_gp_fit", "ditimpute_gp")` with an extra element `fit`: a list
#'   with `loglik` (the exact log-likelihood at the fit), `objective` (`loglik`
#'   minus the ridge and shrinkage penalties), `objective_trace` and `lengthscale_trace` (at
#'   the start and after each iteration; the objective never decreases), `iterations`, `converged`, `n_observed`,
#'   `windows` (the windows used), `seconds`, `e_step` (`"exact"` or
#'   `"sampled"`, as used), `draws` and `tol`; with early stopping also
#'   `validation_trace` (the held-out mean absolute error, in standard
#'   deviations, at the start and after each
#'   iteration), `best_iteration` (whose parameters were returned, 0 = the
#'   start), `stopped_early` and `n_validation` (entries held out); and
#'   `method`, with `method = "lbfgs"` `gradient_norm` (at the fit),
#'   `gradient_trace` (at the start and after each iteration) and
#'   `evaluations` (exact E-steps, line-search trials included).
#' @seealso [gp_loglik()], [impute()], [load_real_data()]
#' @examples
#' truth <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 4),
#'                  Lambda = matrix(c(1, 0.6, 0.6, 2), 2))
#' x <- gp_simulate(truth, 60, seed = 1)
#' x[sample(length(x), 0.2 * length(x))] <- NA
#' fit <- gp_fit(x, seed = 1)
#' fit
#' logLik(fit)
#' fit2 <- gp_fit(x, method = "lbfgs")
#' fit2$fit$gradient_norm
#' logLik(fit2)
#' held <- hide_mcar(x[1:5, , ], rate = 0.1, seed = 2)
#' imp <- impute(fit, held$x, n_samples = 50, level = 0.9, seed = 3)
#' imputation_metrics(imp, truth = x[1:5, , ], hidden = held$hidden, by = "all")
#' @export
gp_fit <- function(x, kernel = c("matern32", "matern52", "laplace", "rbf"), lengthscale = NULL,
                   fit_lengthscale = TRUE, lower = 0.1, upper = NULL, nugget = 0, fit_nugget = FALSE,
                   nugget_bounds = c(1e-6, 1), ridge = 0, shrinkage = 0,
                   n_windows = 100, max_iter = 200, tol = 1e-7, seed = NULL,
                   search = c("expected", "exact"), e_step = c("auto", "exact", "sampled"), draws = 32,
                   validation = 0, patience = 3, method = c("em", "lbfgs"), gradient_tol = 0.1) {
  if (!is.numeric(x) && !(is.logical(x) && all(is.na(x)))) abort_input("x", "must be a numeric n x H x d array.")
  dm <- dim(x)
  if (length(dm) != 3) {
    abort_input("x", paste("must be an n x H x d array of windows: cut a long series into windows with",
                           "make_windows(), or impute a whole series (matrix, data frame, ts) with impute_series()."))
  }
  check_no_nan_inf(x, "x")
  if (identical(kernel, "exponential")) kernel <- "laplace"  # gp_kernel()'s alias (a review found it refused here)
  kernel <- check_string(kernel, c("matern32", "matern52", "laplace", "rbf"))
  search <- check_string(search, c("expected", "exact"))
  e_step <- check_string(e_step, c("auto", "exact", "sampled"))
  method <- check_string(method, c("em", "lbfgs"))
  gradient_tol <- check_number(gradient_tol, lower = 0, upper = Inf)
  H <- dm[2]; d <- dm[3]
  if (is.null(lengthscale)) lengthscale <- H / 4
  if (is.null(upper)) upper <- 100 * H
  lengthscale <- check_number(lengthscale, lower = 0, upper = Inf)
  lower <- check_number(lower, lower = 0, upper = Inf)
  upper <- check_number(upper, lower = 0, upper = Inf)
  nugget <- check_number(nugget, lower = 0, upper = Inf, open = FALSE)
  ridge <- check_number(ridge, lower = 0, upper = Inf, open = FALSE)
  shrinkage <- check_number(shrinkage, lower = 0, upper = 1, open = FALSE)
  if (shrinkage == 1) abort_input("shrinkage", "must lie in [0, 1), not 1: at 1 the data would not enter Lambda.")
  if (!isTRUE(fit_lengthscale) && !isFALSE(fit_lengthscale)) abort_input("fit_lengthscale", "must be TRUE or FALSE.")
  if (!isTRUE(fit_nugget) && !isFALSE(fit_nugget)) abort_input("fit_nugget", "must be TRUE or FALSE.")
  if (!is.numeric(nugget_bounds) || length(nugget_bounds) != 2 || any(!is.finite(nugget_bounds)) ||
      nugget_bounds[1] <= 0 || nugget_bounds[2] <= nugget_bounds[1]) {
    abort_input("nugget_bounds", "must be two numbers 0 < lower < upper.")
  }
  # a start given outside the bounds was moved into them without a word (a review)
  if (fit_nugget && nugget > 0 && (nugget < nugget_bounds[1] || nugget > nugget_bounds[2])) {
    abort_input("nugget", sprintf("the start %g lies outside nugget_bounds [%g, %g]: give a start within them, or wider bounds.",
                                  nugget, nugget_bounds[1], nugget_bounds[2]))
  }
  if (fit_nugget) nugget <- min(max(if (nugget == 0) 0.01 else nugget, nugget_bounds[1]), nugget_bounds[2])
  n_windows <- check_count(n_windows)
  max_iter <- check_count(max_iter)
  tol <- check_number(tol, lower = 0, upper = Inf)
  draws <- check_count(draws, max = 10000)
  validation <- check_number(validation, lower = 0, upper = 0.5, open = FALSE)
  patience <- check_count(patience)
  if (method == "lbfgs" && validation > 0) {
    abort_input("validation", "must be 0 with method = \"lbfgs\": early stopping works with the EM fit only.")
  }
  use <- seq_len(dm[1])
  if (dm[1] > n_windows) use <- sort(with_local_seed(resolve_seed(seed), sample.int(dm[1], n_windows)))
  xs <- x[use, , , drop = FALSE]
  storage.mode(xs) <- "double"
  frames <- matrix(aperm(xs, c(2, 1, 3)), ncol = d)  # frames as rows, one column per variable
  n_obs <- colSums(!is.na(frames))
  if (all(n_obs == 0)) abort_input("x", "has no observed value: there is nothing to fit.")
  if (any(n_obs < 2)) {
    abort_input("x", sprintf("variable %d has fewer than 2 observed values in the windows used, so its variance cannot be estimated.",
                             which(n_obs < 2)[1]))
  }
  most_missing <- max(apply(is.na(xs), 1, sum))
  sampled <- method == "em" && (e_step == "sampled" || (e_step == "auto" && most_missing >= cpp_gp_fit_auto_missing()))
  draw_seed <- if (!sampled && validation == 0) 0 else if (is.null(seed)) resolve_seed(NULL) else resolve_seed(seed)
  obs_var <- mean(apply(frames, 2, stats::var, na.rm = TRUE), na.rm = TRUE)
  # values near the largest double overflow their variance (a review's 1e300
  # gave an error naming `ridge`, which the call had not set)
  if (is.infinite(obs_var) || any(abs(frames) > 1e150, na.rm = TRUE)) {
    abort_input("x", sprintf(paste("has values so large that their variance overflows (largest |value| %s): rescale",
                                   "it, e.g. to other units or with scale_data()."),
                             format(max(abs(frames), na.rm = TRUE), digits = 3)))
  }
  start <- proc.time()[["elapsed"]]
  res <- tryCatch(core_call(cpp_gp_fit(xs, length(use), H, d, kernel, lengthscale, 1, fit_lengthscale, lower, upper, nugget,
                              fit_nugget, nugget_bounds[1], nugget_bounds[2], ridge * obs_var, shrinkage, max_iter, tol, search,
                              if (sampled) "sampled" else "exact", draws, draw_seed, validation, patience, method,
                              gradient_tol)),
                  ditimpute_error_numeric = function(e) {
                    # Tied variables make Lambda singular: say what keeps it invertible.
                    if (ridge > 0) stop(e)
                    msg <- conditionMessage(e)
                    cli::cli_abort(c("{msg}", i = singular_hint(0)),
                                   class = c("ditimpute_error_numeric", "ditimpute_error"), call = e$call)
                  })
  seconds <- proc.time()[["elapsed"]] - start
  vars <- dimnames(x)[[3]]
  Lambda <- res$Lambda
  dimnames(Lambda) <- list(vars, vars)
  spec <- gp_spec(H, d, kernel = gp_kernel(kernel, lengthscale = res$lengthscale), Lambda = Lambda,
                  mean = as.numeric(res$mean), nugget = res$nugget)
  colnames(spec$mean) <- vars
  spec$fit <- list(loglik = res$loglik, objective = res$objective, objective_trace = res$objective_trace, lengthscale_trace = res$lengthscale_trace,
                   iterations = res$iterations, converged = res$converged, n_observed = res$n_observed,
                   windows = use, windows_given = dm[1], seconds = seconds, fit_lengthscale = fit_lengthscale, fit_nugget = fit_nugget,
                   ridge = ridge, shrinkage = shrinkage, search = search, e_step = res$e_step, draws = if (sampled) draws else NA_integer_,
                   tol = tol, validation = validation, patience = patience,
                   validation_trace = res$validation_trace, best_iteration = res$best_iteration,
                   stopped_early = res$stopped_early, n_validation = res$n_validation,
                   method = method, gradient_norm = res$gradient_norm, gradient_trace = res$gradient_trace,
                   evaluations = res$evaluations, gradient_tol = gradient_tol, obs_var = obs_var,
                   start = list(kernel = kernel, lengthscale = lengthscale, nugget = nugget, lower = lower, upper = upper,
                                nugget_bounds = nugget_bounds))
  if (!res$converged && method == "lbfgs") {
    cli::cli_warn("gp_fit() stopped after {res$iterations} iterations with the gradient norm at {signif(res$gradient_norm, 3)}, above {.arg gradient_tol} = {gradient_tol}; raise {.arg max_iter}.")
  } else if (!res$converged) {
    cli::cli_warn(c("gp_fit() stopped after {max_iter} iterations before the log-likelihood settled; raise {.arg max_iter}.",
                    i = "With heavy gaps and many variables the maximum likelihood can overfit {.arg Lambda}: {.code validation = 0.05} stops on held-out entries instead."))
  }
  # A fitted nugget stopped at the upper end of its search interval (within
  # ten times the golden-section search's resolution, 1e-4 in log, gp_fit.cpp):
  # the likelihood may rise beyond it, and the lengthscale (so every interval)
  # then rests on a bound the user may not have chosen.
  spec$fit$nugget_at_bound <- fit_nugget && log(nugget_bounds[2]) - log(res$nugget) < 1e-3
  if (spec$fit$nugget_at_bound) {
    cli::cli_warn(c("gp_fit() stopped the fitted nugget at the upper end of {.arg nugget_bounds} ({nugget_bounds[2]}): the likelihood may be higher beyond it.",
                    i = "Widen {.arg nugget_bounds} (e.g. {.code nugget_bounds = c(1e-6, 10)}) and compare {.fn logLik}."))
  }
  warn_singular_lambda(Lambda, ridge)
  class(spec) <- c("ditimpute_gp_fit", class(spec))
  spec
}

# gp_fit()'s warning (class ditimpute_warning_singular) when the fitted
# Lambda is numerically singular, its smallest eigenvalue below 1e-8 times
# its largest: (nearly) collinear variables, which `ridge` is for. Names the
# most correlated pair of variables.
warn_singular_lambda <- function(Lambda, ridge, call = rlang::caller_env()) {
  if (any(!is.finite(Lambda)) || nrow(Lambda) < 2) return(invisible(FALSE))
  ev <- eigen(Lambda, symmetric = TRUE, only.values = TRUE)$values
  if (!(max(ev) > 0) || min(ev) >= 1e-8 * max(ev)) return(invisible(FALSE))
  sds <- sqrt(pmax(diag(Lambda), .Machine$double.xmin))
  cr <- abs(Lambda / outer(sds, sds))
  diag(cr) <- -Inf
  ij <- arrayInd(which.max(cr), dim(cr))
  vars <- colnames(Lambda)
  if (is.null(vars)) vars <- as.character(seq_len(nrow(Lambda)))
  pair <- sprintf("%s and %s", vars[min(ij)], vars[max(ij)])
  ratio <- format(signif(max(min(ev), 0) / max(ev), 2))
  cli::cli_warn(c("The fitted {.arg Lambda} is numerically singular (smallest eigenvalue {ratio} times the largest): some variables are (nearly) collinear, e.g. variables {pair}.",
                  i = singular_hint(ridge)),
                class = c("ditimpute_warning_singular", "ditimpute_warning"), call = call)
  invisible(TRUE)
}

# What to do about (nearly) collinear variables, for gp_fit()'s messages.
singular_hint <- function(ridge) {
  nugget <- "{.code fit_nugget = TRUE, nugget_bounds = c(0.01, 1)}"
  if (ridge == 0) {
    paste0("If variables are (nearly) collinear (e.g. identical columns), give {.arg ridge} (say {.code ridge = 1e-3}) to keep {.arg Lambda} invertible, with ",
           nugget, " (tied variables also pull the lengthscale to its upper bound), or leave out duplicated variables.")
  } else {
    paste0("Tied variables pull the lengthscale to its upper bound, where {.arg Lambda} grows past the ridge: fit a nugget too (",
           nugget, "), raise {.arg ridge}, or leave out duplicated variables.")
  }
}

#' @export
print.ditimpute_gp_fit <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  f <- x$fit
  # the default fixes the nugget at 0 (the paper's noiseless model); measured
  # data usually carry noise (a user review: Seatbelts' MAE 0.879 without a
  # nugget, 0.583 with one), so the print says how to fit it
  print_gp_spec(x, if (!f$fit_nugget && x$nugget == 0) " (fixed; measured data usually carry noise: fit it with fit_nugget = TRUE and compare BIC())"
                else if (!f$fit_nugget) " (fixed)" else if (isTRUE(f$nugget_at_bound))
    sprintf(" (fitted; stopped at the upper end of nugget_bounds, %g: widen them)", f$start$nugget_bounds[2]) else " (fitted)")
  cat(sprintf("  fitted by %s%s on %s (%d observed entries): log-likelihood %.6g%s, %d iterations, %s, %.1f s\n",
              if (identical(f$method, "lbfgs")) sprintf("L-BFGS (gradient norm %.3g, %d evaluations)", f$gradient_norm, as.integer(f$evaluations))
              else if (identical(f$search, "exact")) "ECME" else "ECM",
              if (identical(f$e_step, "sampled")) sprintf(" (sampled E-step, %d draws)", as.integer(f$draws)) else "",
              # a subset said as such (a review: 100 of 4,332 ETTh1 windows printed as "100 windows")
              if (!is.null(f$windows_given) && f$windows_given > length(f$windows))
                sprintf("%s of %s windows (chosen at random: n_windows)", format(length(f$windows), big.mark = ","),
                        format(f$windows_given, big.mark = ",")) else plural(length(f$windows), "window"),
              as.integer(f$n_observed), f$loglik,
              penalty_note(f), f$iterations,
              if (f$converged) "converged" else "NOT converged", f$seconds))
  if (length(f$validation_trace) > 0) {
    cat(sprintf("  early stopping on %d held-out entries (%.3g of those observed): parameters of iteration %d (held-out mean absolute error %.4g standard deviations, %.4g at the start)%s\n",
                as.integer(f$n_validation), f$validation, as.integer(f$best_iteration),
                f$validation_trace[f$best_iteration + 1], f$validation_trace[1],
                if (isTRUE(f$stopped_early)) sprintf("; stopped after %d iterations without improvement", as.integer(f$patience)) else ""))
  }
  invisible(x)
}

# The exact gradient of a gp_fit() fit's penalised log-likelihood at its
# parameters on windows x (the fit's own: x[fit$fit$windows, , ]): a list with
# the objective, loglik, gradient_norm (sqrt(g' I_c^-1 g), see ?gp_fit) and the
# gradient's parts. Internal; the benchmarks use it to compare the methods.
gp_fit_gradient <- function(fit, x) {
  f <- fit$fit
  xs <- x[f$windows, , , drop = FALSE]
  storage.mode(xs) <- "double"
  mean <- as.numeric(fit$mean[1, ])
  core_call(cpp_gp_fit_gradient(xs, dim(xs)[1], dim(xs)[2], dim(xs)[3], f$start$kernel, f$start$lengthscale, 1,
                                f$fit_lengthscale, f$fit_nugget, f$start$nugget, f$start$lower, f$start$upper,
                                f$start$nugget_bounds[1], f$start$nugget_bounds[2],
                                f$ridge * f$obs_var, f$shrinkage, fit$kernel$lengthscale, fit$nugget, mean,
                                unname(fit$Lambda)))
}

# " (ridge r, shrinkage s, penalised v)" for a penalised fit, "" otherwise.
penalty_note <- function(f) {
  parts <- c(if (f$ridge > 0) sprintf("ridge %g", f$ridge),
             if (isTRUE(f$shrinkage > 0)) sprintf("shrinkage %g", f$shrinkage))
  if (length(parts) == 0) return("")
  sprintf(" (%s, penalised %.6g)", paste(parts, collapse = ", "), f$objective)
}

#' @export
nobs.ditimpute_gp_fit <- function(object, ...) {
  check_dots(environment(), "nobs()")
  as.integer(object$fit$n_observed)
}

#' @export
summary.ditimpute_gp_fit <- function(object, ...) {
  check_dots(environment(), "summary()")
  L <- object$Lambda
  vars <- colnames(L)
  if (is.null(vars)) vars <- as.character(seq_len(nrow(L)))
  sds <- sqrt(pmax(diag(L), 0))
  cor <- L / outer(sds, sds)
  dimnames(cor) <- list(vars, vars)
  ll <- logLik(object)
  structure(list(kernel = object$kernel, nugget = object$nugget, fit_nugget = isTRUE(object$fit$fit_nugget),
                 variables = data.frame(variable = vars, mean = as.numeric(object$mean[1, ]), sd = sds,
                                        row.names = NULL),
                 correlation = cor, loglik = as.numeric(ll), df = attr(ll, "df"), nobs = nobs(object),
                 aic = stats::AIC(object), bic = stats::BIC(object), converged = isTRUE(object$fit$converged),
                 windows = length(object$fit$windows), H = object$H),
            class = "summary.ditimpute_gp_fit")
}

#' @export
print.summary.ditimpute_gp_fit <- function(x, digits = 3, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("Gaussian process fitted to %s of H = %d frames by maximum likelihood%s
",
              plural(x$windows, "window"), as.integer(x$H), if (x$converged) "" else " (NOT converged)"))
  cat(sprintf("  kernel %s, lengthscale %s frames; nugget %s%s
", x$kernel$type, format(signif(x$kernel$lengthscale, 4)),
              format(signif(x$nugget, 3)), if (x$fit_nugget) " (fitted)" else " (fixed)"))
  cat(sprintf("  log-likelihood %.6g on %d observed entries, %g parameters: AIC %.6g, BIC %.6g

",
              x$loglik, as.integer(x$nobs), x$df, x$aic, x$bic))
  cat("Per variable (sd = sqrt of Lambda's diagonal):
")
  v <- x$variables
  v$mean <- signif(v$mean, digits + 2)
  v$sd <- signif(v$sd, digits + 1)
  print(v, row.names = FALSE)
  if (nrow(x$correlation) > 1) {
    cat("
Correlations between variables (Lambda):
")
    print(round(x$correlation, digits))
  }
  invisible(x)
}

#' @export
logLik.ditimpute_gp_fit <- function(object, ...) {
  check_loglik_dots(environment())
  d <- object$d
  # the lengthscale and nugget (if fitted), d means and the d(d+1)/2 entries of Lambda
  structure(object$fit$loglik, df = object$fit$fit_lengthscale + object$fit$fit_nugget + d + d * (d + 1) / 2,
            nobs = object$fit$n_observed,
            class = "logLik")
}

#' Log-likelihood of windows with missing values under a GP model
#'
#' The exact marginal log-likelihood of the observed entries of `x` under
#' `spec` (missing entries integrated out), e.g. to score a [gp_fit()] on test
#' windows it was not fitted on. The model's mean must be the same in every
#' frame (one value per variable), as [gp_fit()] gives.
#'
#' @param spec A [gp_spec()] model.
#' @param x An `n x H x d` array (or `H x d` matrix; with `d = 1` a vector of
#'   the `H` values), `NA` = missing.
#' @return A number: the sum over windows.
#' @examples
#' spec <- gp_spec(12, d = 2, kernel = gp_kernel("matern32", lengthscale = 3))
#' x <- gp_simulate(spec, 5, seed = 1)
#' x[1, 3:5, 1] <- NA
#' gp_loglik(spec, x)
#' @export
gp_loglik <- function(spec, x) {
  check_spec(spec)
  seqs <- as_sequences(x, spec$H, spec$d)
  mu <- spec$mean[1, ]
  if (any(abs(sweep(spec$mean, 2, mu)) > 0)) abort_input("spec", "must have the same mean in every frame.")
  core_call(cpp_gp_loglik(seqs$arr, seqs$n, spec$Gamma, spec$Lambda, as.numeric(mu)))
}
