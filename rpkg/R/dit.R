#' Configuration of a diffusion transformer (DiT)
#'
#' The conditional score network of the paper: one token per time frame
#' (noisy values on missing entries, observed values on observed ones, and the
#' mask), sinusoidal positions, a timestep embedding feeding adaLN-Zero
#' transformer blocks, and a final layer back to `d` values a token. The paper
#' uses `width = 256`, `depth = 12`, `heads = 16`; the defaults are a small
#' model that trains in minutes on a CPU.
#'
#' With `tokens = "entry"` every entry (frame, variable) is a token of its
#' own, carrying its value and mask, its frame's position and a learned
#' embedding of its variable, and each block attends across the frames of
#' every variable and then across the variables of every frame (the two-axis
#' design of CSDI). A frame token must squeeze all `d` variables into `width`
#' features; an entry token holds one. The price is `H * d` tokens a sequence
#' instead of `H`: a training step costs roughly `d` times more at the same
#' width. `bench/dit_tokens.R` measures both kinds at `d = 8` and on
#' BeijingAir's 132 variables (`bench/results/dit_tokens.md`).
#'
#' @param H,d Frames and variables of the sequences the model imputes.
#' @param width Token width (must be a multiple of `heads`).
#' @param depth Number of transformer blocks.
#' @param heads Attention heads.
#' @param mlp_ratio Hidden width of each block's MLP, as a multiple of `width`.
#' @param t0,T Diffusion time range `[t0, T]` of the VP-SDE
#'   (`alpha_t = exp(-t / 2)`, `sigma_t^2 = 1 - exp(-t)`); `NULL` takes the
#'   engine's defaults.
#' @param prediction What the network's output `F` stands for. `"v"` (default):
#'   the noise prediction is `sigma_t x_t - alpha_t F`, so `F` predicts
#'   `v = alpha_t eps - sigma_t x0` (the EDM preconditioning of this process for
#'   unit-variance data); at large `t` the network's job is the conditional
#'   mean, at small `t` the noise. `"eps"`: the network predicts the noise
#'   directly, which learns the conditioning far more slowly (see the package's
#'   bench/bench_dit.cpp).
#' @param tokens `"frame"` (default: one token per time frame, the paper's
#'   DiT) or `"entry"` (one token per entry, attention across time and across
#'   variables; see Details).
#' @return An object of class `ditimpute_dit_config`.
#' @seealso [dit_fit()]
#' @examplesIf torch_available()
#' dit_config(H = 32, d = 4)
#' dit_config(H = 96, d = 8, width = 256, depth = 12, heads = 16)   # the paper's size
#' dit_config(H = 48, d = 132, width = 32, depth = 2, heads = 2, tokens = "entry")
#' @export
dit_config <- function(H, d, width = 128, depth = 4, heads = 4, mlp_ratio = 4, t0 = NULL, T = NULL,
                       prediction = c("v", "eps"), tokens = c("frame", "entry")) {
  check_torch()
  cfg <- list(H = check_count(H, min = 2), d = check_count(d), width = check_count(width),
              depth = check_count(depth), heads = check_count(heads),
              mlp_ratio = check_number(mlp_ratio, lower = 0, upper = Inf),
              prediction = check_string(prediction, c("v", "eps")),
              tokens = check_string(tokens, c("frame", "entry")))
  if (!is.null(t0)) cfg$t0 <- check_number(t0, lower = 0, upper = Inf)
  if (!is.null(T)) cfg$T <- check_number(T, lower = 0, upper = Inf)
  structure(core_call(cpp_dit_config_check(cfg)), class = "ditimpute_dit_config")
}

#' @export
print.ditimpute_dit_config <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<ditimpute_dit_config> H = %d, d = %d; width %d, depth %d, heads %d, mlp ratio %g; t in [%g, %g]; %s-prediction%s\n",
              x$H, x$d, x$width, x$depth, x$heads, x$mlp_ratio, x$t0, x$T, x$prediction, tokens_text(x)))
  invisible(x)
}

# "; one token per entry" for entry-token models (configs of older models
# have no `tokens`: frame tokens).
tokens_text <- function(cfg) if (identical(cfg$tokens, "entry")) "; one token per entry" else ""

# A fitted model is raw bytes (so saveRDS() works) plus a cache environment
# holding an external pointer to the loaded C++ model, rebuilt after readRDS().
# The strategy and the training record go into the model's notes (bytes the
# core saves with the model and never reads), so dit_save() and dit_load()
# keep them too.
new_dit <- function(ptr, strategy, train_info = list(), device = "auto") {
  if (!is.null(strategy) || length(train_info) > 0) core_call(cpp_dit_set_notes(ptr, dit_notes(strategy, train_info)))
  obj <- structure(list(bytes = core_call(cpp_dit_to_bytes(ptr)), strategy = strategy, train_info = train_info,
                        device = device, cache = new.env(parent = emptyenv())),
                   class = "ditimpute_dit")
  obj$cache$ptr <- ptr
  refresh_info(obj)
}

# `strategy`, or the one the model records; an input error naming `strategy`
# when there is neither or it is not a strategy.
model_strategy <- function(strategy, object, call = rlang::caller_env()) {
  strategy <- strategy %||% object$strategy
  if (is.null(strategy)) {
    abort_input("strategy", "the model does not record its training strategy (a file saved by an earlier build?): give it.",
                call = call)
  }
  if (!inherits(strategy, "ditimpute_strategy")) abort_input("strategy", "must be made by mask_strategy().", call = call)
  strategy
}

notes_format <- "ditimpute-dit-notes-1"
dit_notes <- function(strategy, train_info) {
  serialize(list(format = notes_format, strategy = strategy, train_info = train_info), NULL, xdr = TRUE)
}

# The strategy and training record from a model's notes; NULL parts when the
# file has none (written before notes existed, or by another front end) or
# they are not what dit_notes() writes.
read_dit_notes <- function(bytes) {
  v <- if (length(bytes) > 0) tryCatch(unserialize(bytes), error = function(e) NULL)
  if (!is.list(v) || !identical(v$format, notes_format)) return(list(strategy = NULL, train_info = list()))
  list(strategy = if (inherits(v$strategy, "ditimpute_strategy")) v$strategy,
       train_info = if (is.list(v$train_info)) v$train_info else list())
}

refresh_info <- function(obj) {
  info <- core_call(cpp_dit_info(dit_ptr(obj)))
  obj$config <- structure(info$config, class = "ditimpute_dit_config")
  obj$n_parameters <- info$n_parameters
  obj$steps <- info$steps
  obj$history <- info$history
  obj$has_ema <- info$has_ema
  obj
}

dit_ptr <- function(object, call = rlang::caller_env()) {
  ptr <- object$cache$ptr
  if (is.null(ptr) || cpp_ptr_is_null(ptr)) {
    ptr <- core_call(cpp_dit_from_bytes(object$bytes, object$device %||% "auto"), call = call)
    object$cache$ptr <- ptr
  }
  ptr
}

# Runs the model's network on `device` from now on (NULL: leave it).
use_device <- function(object, device, call = rlang::caller_env()) {
  if (is.null(device)) return(invisible(NULL))
  device <- check_string(device, c("auto", "cpu", "cuda"), arg = "device", call = call)
  core_call(cpp_dit_set_device(dit_ptr(object), device), call = call)
  invisible(NULL)
}

check_dit <- function(object, arg = "object", call = rlang::caller_env()) {
  inner <- if (inherits(object, "ditimpute_imputation")) object$model else object  # an impute_series() result
  if (inherits(inner, "ditimpute_series_dit_model")) {
    # a review: dit_save() of impute_series()'s DiT model said only "must be a fitted model from dit_fit()"
    abort_input(arg, paste("is impute_series()'s DiT model (trend, scale and network): its network is `$dit`",
                           "(dit_save(model$dit) saves it); saveRDS() keeps the whole model, which",
                           "impute_series(x, model = ) reuses."), call = call)
  }
  if (!inherits(object, "ditimpute_dit")) abort_input(arg, "must be a fitted model from dit_fit() or dit_load().", call = call)
  check_torch(call = call)
  if (is.null(object$cache)) object$cache <- new.env(parent = emptyenv())
  object
}


#' Train a conditional diffusion transformer
#'
#' Trains the DiT score network by denoising score matching (the paper's
#' eq. 13, in noise-prediction form) on fully or partly observed sequences: for
#' every example of every batch a mask is drawn from `strategy`, the masked
#' entries are diffused to a random time `t`, and the network learns to predict
#' the noise from the observed entries. Entries that are `NA` in `x` never
#' enter the loss and are shown to the network as missing.
#'
#' The default recipe (chosen by `bench/dit_learning.R`,
#' `bench/results/dit_learning.md`): AdamW at a peak learning rate of 2e-3,
#' warmed up over 200 steps and decayed on a cosine to a tenth, an EMA of the
#' weights (0.999, warmed up) for sampling, and the weights of the best
#' validation record kept at the end. `time_limit` trains for a given number
#' of seconds instead of a step count.
#'
#' **Standardise first.** `dit_fit()` trains on `x` as given: its noise
#' schedule assumes variables of mean about 0 and sd about 1, and it does not
#' rescale them itself. Standardise with [fit_scaler()] and [scale_data()]
#' (a scaler fitted on the training data, applied to every set imputed) and
#' bring the imputations back with [unscale_data()]: on raw data on another
#' scale it imputes poorly. A warning (class
#' `ditimpute_warning_scale`) says so when the observed values are far from
#' standardised: a variable's mean more than 3 of its sds from 0, or its sd
#' outside `[0.1, 10]`.
#'
#' Training can be interrupted with Ctrl-C: it stops cleanly after the current
#' step and returns the model reached, with a warning (continue with
#' `resume_from` and a checkpoint). A loss that turns `NaN` stops training with
#' an error of class `ditimpute_error_numeric`; the last checkpoint file is kept.
#'
#' @param x Training sequences, an `n x H x d` array (`NA` = not observed).
#'   From one long series, cut them overlapping (`make_windows(series, H,
#'   stride = 2)`): the DiT overfits a few hundred disjoint windows (on ETTh1,
#'   246 disjoint windows gave 1.18-1.39x the fitted GP's MAE, windows every
#'   2 hours 0.80-0.83x; `bench/results/real_data_ett_h1_stride2_*.md`), and
#'   keep `validation` apart in time, since overlapping windows share values.
#' @param config A [dit_config()]; by default the small model for `x`'s `H` and `d`.
#' @param strategy A [mask_strategy()]; by default [strategy_preset()]`("S4")`,
#'   whose patterns hide up to 16 frames and need windows of at least 23; for
#'   shorter windows give one that fits, e.g. `mask_strategy(c("4x1", "2x2",
#'   "tail4"))` (an input error naming `strategy` says so otherwise). The
#'   network learns the patterns it is trained on: S4 hides whole frames,
#'   so scattered entries or one variable missing while the others are
#'   observed lie outside it (a review's one-minute DiT imputed such gaps
#'   with errors well above the exact GP's, and intervals far too wide on
#'   the one-variable gap). Train with the patterns you will impute, e.g.
#'   `mask_strategy(c("16x1", "v1x16", "mcar0.2"))` (`"v1x16"`: a block of
#'   16 frames of one variable, the others observed).
#' @param steps Optimizer steps (in total, counting resumed ones). `NULL`:
#'   2000, or no step limit when `time_limit` is given.
#' @param time_limit Seconds to train for (`NULL` or `Inf`: no limit; training also
#'   stops after `steps`). The learning-rate schedule runs over whichever
#'   budget is spent first, so a time-limited run decays its learning rate
#'   over the time given. A run cut by time is not repeatable step for step.
#' @param batch_size Sequences per step.
#' @param lr,weight_decay Peak learning rate and weight decay.
#' @param lr_schedule Learning-rate decay over the run: `"cosine"` (down to
#'   `lr_min * lr`), `"linear"` or `"constant"`.
#' @param warmup_steps Steps of linear learning-rate warm-up from `lr / warmup_steps`
#'   (a run shorter than it never reaches `lr`; print() says so).
#' @param lr_min Final learning rate as a share of `lr` (cosine and linear schedules).
#' @param patience Early stopping: stop after this many validation records
#'   (every `val_every` steps) without a new best validation loss; 0 = never.
#'   Where the validation loss flattens early, as on Gaussian-process data, it
#'   can stop thousands of steps before the budget ends at some cost: in
#'   `bench/results/dit_learning_gpu.md` one run stopped at step 5,000 of 8,000
#'   with W2 1.54x the exact-draw value on a tail gap, against 1.36x for the
#'   same seed run to the end; in `bench/results/dit_learning_sde.md` it
#'   stopped three of four seeds at 6,100-7,400 of 10,000 steps, and two of them
#'   then missed the tail gap's target that the full runs met. `patience = 0`
#'   trains the whole budget.
#' @param restore_best Return the weights of the best validation record
#'   rather than the last ones (needs a validation set). The loss history and
#'   any checkpoint keep the whole run.
#' @param optimizer `"adamw"` or `"adam"`.
#' @param ema Decay of an exponential moving average of the weights used for
#'   sampling and for the validation loss, or 0 for none.
#' @param ema_warmup Warm the average up: at step `k` its decay is
#'   `min(ema, (1 + k) / (10 + k))`, so it leaves the initial weights behind
#'   within a few dozen steps. Without warm-up, `ema = 0.999` still holds 37%
#'   of the untrained network after 1,000 steps.
#' @param grad_clip Maximum gradient norm, or 0 for none.
#' @param validation Held-out sequences (an array) for the validation loss, or
#'   a share of `x` to hold out (the last sequences), or 0 for none. When `x`
#'   holds [make_windows()]'s windows (its `start` and `freq` attributes), the
#'   training windows that share time stamps with the held-out ones are
#'   left out too, so that overlapping windows do not leak into validation.
#' @param val_every Steps between records of the loss curve.
#' @param t_sampling How training times are drawn: `"log_uniform"` or `"uniform"` on `[t0, T]`.
#' @param loss_weight Weight of each example's squared noise error: `"auto"`
#'   (`"v"` for a v-prediction model, `"eps"` otherwise), `"eps"` (eq. 13 as
#'   written, weight 1) or `"v"` (weight `1 / alpha_t^2`, the squared error of
#'   the v prediction).
#' @param checkpoint_path,checkpoint_every File and interval of checkpoints.
#' @param resume_from A checkpoint file to continue from (`steps` counts the
#'   checkpoint's steps, so it must exceed them). The run continues the
#'   checkpoint's validation record: `patience` counts on from its last best,
#'   and `train_info$best_step` may name a step before the resume, whose
#'   weights the checkpoint does not hold; `restore_best` then keeps the last
#'   weights (it returns only a better record reached after the resume). Give
#'   the same validation sequences as the first run for the record to compare.
#' @param seed Optional seed; without one, [set.seed()] makes training repeatable
#'   (for a fixed thread count).
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @param device `"auto"` (CUDA when the linked LibTorch has it), `"cpu"` or `"cuda"`.
#' @param progress Show a progress bar (with the training and validation
#'   loss); on by default in an interactive session, off while knitr renders
#'   a document.
#' @param gp A fitted Gaussian process from [gp_fit()] for `x`'s `H` and `d`,
#'   or `NULL`. With one, the DiT is GP-informed: every token also carries the
#'   GP's conditional mean and sd of its entries given the observed ones, and
#'   (`gp_mode = "residual"`) the network learns a correction to the GP: its
#'   output layer starts at zero, so before training it samples each missing
#'   entry from the GP's exact conditional marginal, and training adds the
#'   dependence between entries and what the GP misses. The model keeps the GP
#'   (it is saved with it) and uses it when imputing.
#' @param gp_mode `"residual"` (above), `"score"` or `"channels"`. `"score"`
#'   corrects the GP's exact *joint* conditional law instead of its marginals:
#'   before training the model draws the missing entries from the GP's exact
#'   conditional distribution, correlation between entries included, and
#'   training adds what the GP misses. It keeps the eigenvectors of each
#'   example's conditional covariance (an `H * d` by missing-entries matrix):
#'   cheap for the frame-level masks of [mask_strategy()] (a Kronecker
#'   product), cubic in the missing entries for entry-level ones, and an error
#'   when the worst case would pass 4 GiB. Measured (`bench/results/gp_dit_score.md`):
#'   with the right GP its draws match the exact conditional law before any
#'   training (Wasserstein distance 0.99-1.01x that of exact draws on the four
#'   test patterns of `bench/dit_learning.R`); with a wrong GP (lengthscale 8
#'   for 64) 2,000 steps take its validation loss from 0.617 to 0.520, level
#'   with the plain DiT's 0.523; on the latent GP of `bench/reproduce_paper_latent.R`
#'   neither GP mode learned the small nonlinear correction the plain DiT
#'   learns on a GPU, so there they impute as the fitted GP does ([impute()]'s
#'   default control variate returns its conditional mean to float rounding).
#'   `"channels"`: the GP's mean and sd as inputs only; the network starts as
#'   the plain DiT. On that latent GP, with fresh conditionals (the default
#'   `gp_pool` there), it learned where the other modes did not: MSE to the
#'   conditional mean 0.70-0.73x the plain DiT's after the same 600 s, level
#'   with the fitted GP on three of the four patterns and 1.48x it on the
#'   hardest (`bench/results/reproduce_paper_latent_pool0_all.md`).
#' @param gp_pool Training examples whose GP conditionals are computed once
#'   and reused (each costs a factorisation of its missing entries, about a
#'   second at a few thousand of them): 0 computes them afresh for every
#'   example. `NULL`: 0 up to `H * d = 1000` entries a sequence, where
#'   fresh conditionals cost no measurable time a step, 256 beyond (until
#'   2026-11-27 the default up to 1000 entries was a pool of 1024). The
#'   pool's cost counts against `time_limit`. A pool is a fixed
#'   set of examples, and a long run can learn it by heart: on the latent GP
#'   of `bench/reproduce_paper_latent.R` (4,000 sequences of 48 x 8) a pool
#'   of 1,024 took the validation loss from 0.802 to 0.975 over 10,000 steps
#'   while the training loss fell (`bench/results/latent_gp_dit_histories.md`);
#'   early stopping (`patience`) keeps the best weights, and `gp_pool = 0`
#'   does not overfit where each example's conditionals are cheap. On ETTh1
#'   (windows of 48 x 7, `gp_mode = "score"`) a pool of 1,024 was learned
#'   by heart within 1,500 steps and early stopping ended the run there;
#'   `gp_pool = 8192` trained 5,800 steps and imputed with 9-10% lower MAE
#'   (`bench/results/real_data_ett_h1_fitted_gp_gp-dit_score.md`); in the
#'   default residual mode a pool of 1,024 stopped early after 2,800 steps
#'   and `gp_pool = 0` after 4,200 (at the same time a step: 209 and 311 s),
#'   with 10-13% lower MAE (0.1030 against 0.1155 at 20% hidden)
#'   (`bench/results/real_data_ett_h1_control_fitted_gp_linear_gp-dit.md`
#'   and `real_data_ett_h1_control_gp_pool_default_fitted_gp_linear_gp-dit.md`).
#'   On ETTh2, which the choice was not made on, the default (fresh
#'   conditionals) trained 7,100 steps before early stopping and imputed with
#'   0.72-0.84x the fitted GP's MAE, level with the plain DiT (0.99-1.03x)
#'   (`bench/results/real_data_ett_h2_fitted_gp_linear_gp-dit_gp-dit_score.md`).
#'   Up to about 1,300 entries a window the pool buys no speed: a step with
#'   fresh conditionals cost 0.69-1.28x a pooled one, and 3.48x at 3,960
#'   entries (30 x 132), where the pool pays (`bench/results/gp_pool_cost.md`).
#'   A score
#'   pool holds an `H*d x m` eigenvector matrix per example (`m` its missing
#'   entries, float32); over 4 GiB in the worst case is refused.
#' @return An object of class `ditimpute_dit`, with methods `print()`,
#'   `summary()`, `plot()` (the loss curve); sample it with [dit_sample()].
#' @seealso [dit_sample()], [dit_save()]
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' x <- gp_simulate(spec, 200, seed = 1)
#' fit <- dit_fit(x, config = dit_config(24, 2, width = 32, depth = 1, heads = 2),
#'                strategy = mask_strategy("6x1"), steps = 20, batch_size = 16,
#'                seed = 1, threads = 1, progress = FALSE)
#' fit
#'
#' # GP-informed: a correction learnt on top of a fitted GP
#' gp <- gp_fit(x, kernel = "laplace", n_windows = 50, seed = 1)
#' gfit <- dit_fit(x, config = dit_config(24, 2, width = 32, depth = 1, heads = 2), gp = gp,
#'                 strategy = mask_strategy("6x1"), steps = 20, batch_size = 16,
#'                 seed = 1, threads = 1, progress = FALSE)
#' gfit
#' @export
dit_fit <- function(x, config = NULL, strategy = NULL, steps = NULL, time_limit = NULL, batch_size = 64,
                    lr = 2e-3, lr_schedule = c("cosine", "linear", "constant"), warmup_steps = 200, lr_min = 0.1,
                    patience = 10, restore_best = TRUE, weight_decay = 0, optimizer = c("adamw", "adam"),
                    ema = 0.999, ema_warmup = TRUE, grad_clip = 1,
                    validation = 0.1, val_every = 100, t_sampling = c("log_uniform", "uniform"),
                    loss_weight = c("auto", "eps", "v"), checkpoint_path = NULL, checkpoint_every = 0,
                    resume_from = NULL, seed = NULL, threads = NULL, device = "auto", progress = interactive() && !isTRUE(getOption("knitr.in.progress")),
                    gp = NULL, gp_mode = c("residual", "channels", "score"), gp_pool = NULL) {
  check_torch()
  if (!is.numeric(x) && !(is.logical(x) && all(is.na(x)))) abort_input("x", "must be a numeric n x H x d array.")
  dm <- dim(x)
  if (length(dm) != 3) {
    abort_input("x", paste("must be an n x H x d array of training sequences: cut a long series (a T x d matrix)",
                           "into windows with make_windows(), or impute a whole series with",
                           "impute_series(method = \"dit\")."))
  }
  check_no_nan_inf(x, "x")
  # named here: the core's check names its own argument ("train"; a review)
  if (all(is.na(x))) abort_input("x", "holds no observed value: there is nothing to train on.")
  storage.mode(x) <- "double"
  x_given <- x  # for warn_unscaled(), before the validation share is held out
  if (is.null(config)) config <- dit_config(dm[2], dm[3])
  if (!inherits(config, "ditimpute_dit_config")) abort_input("config", "must be made by dit_config().")
  if (config$H != dm[2] || config$d != dm[3]) {
    abort_input("x", sprintf("has H = %d, d = %d, but the model is for H = %d, d = %d.", dm[2], dm[3],
                             config$H, config$d))
  }
  if (!is.null(gp)) {
    if (!inherits(gp, "ditimpute_gp_fit")) abort_input("gp", "must be a fitted Gaussian process from gp_fit().")
    if (gp$H != dm[2] || gp$d != dm[3]) {
      abort_input("gp", sprintf("is fitted for H = %d, d = %d, but x has H = %d, d = %d.", gp$H, gp$d, dm[2], dm[3]))
    }
    config$gp <- check_string(gp_mode, c("residual", "channels", "score"))
    config <- structure(core_call(cpp_dit_config_check(unclass(config))), class = "ditimpute_dit_config")
    if (is.null(gp_pool)) gp_pool <- if (dm[2] * dm[3] <= 1000) 0L else 256L
  } else {
    # without a GP they have nothing to act on: silently unused (a review)
    if (!missing(gp_mode) && !is.null(gp_mode)) abort_input("gp_mode", "is used with a fitted GP only: give `gp` too (see ?dit_fit).")
    if (!is.null(gp_pool)) abort_input("gp_pool", "is used with a fitted GP only: give `gp` too (see ?dit_fit).")
    config$gp <- ""
    gp_pool <- 0L
  }
  if (is.null(strategy)) strategy <- strategy_preset("S4")
  if (!inherits(strategy, "ditimpute_strategy")) abort_input("strategy", "must be made by mask_strategy() or strategy_preset().")
  val <- NULL
  if (is.array(validation)) {
    vd <- dim(validation)
    if (length(vd) != 3 || vd[2] != dm[2] || vd[3] != dm[3]) abort_input("validation", "must be an n x H x d array like x.")
    val <- validation
    storage.mode(val) <- "double"
  } else {
    share <- check_number(validation, lower = 0, upper = 1, open = FALSE)
    if (share >= 1) abort_input("validation", "a share must be below 1.")
    n_val <- floor(share * dm[1])
    if (n_val > 0) {
      val <- x[(dm[1] - n_val + 1):dm[1], , , drop = FALSE]
      x <- x[held_apart(x, n_val), , , drop = FALSE]
    }
  }
  if (dim(x)[1] < 1) abort_input("x", "has no training sequence left after holding out the validation share.")
  # a variable never observed in the training sequences: the network cannot
  # learn it and impute() would draw it unchecked (its scale unknown);
  # impute_series() refuses it too (a review). Checked after the hold-out:
  # one observed in the validation share only is as unlearnable.
  never <- which(apply(is.na(x), 3, all))
  if (length(never)) {
    vn <- dimnames(x)[[3]]
    abort_input("x", sprintf("has no observed value of variable %s in any training sequence%s: there is nothing to learn it from (drop it).",
                             if (is.null(vn)) as.character(never[1]) else sprintf("\"%s\"", vn[never[1]]),
                             if (is.null(val)) "" else " (the validation sequences held out excepted)"))
  }
  # early stopping and the best record act on the validation loss: without
  # one they were silently unused (a review)
  if (is.null(val)) {
    why <- if (is.array(validation) || identical(as.numeric(validation), 0)) "give `validation` (a share above 0, or sequences)" else
      sprintf("the validation share %g of %d sequences holds out none: give a larger share, or sequences", validation, dm[1])
    if (!missing(patience) && !identical(patience, 0) && !identical(patience, 0L)) {
      abort_input("patience", sprintf("stops training on the validation loss: %s.", why))
    }
    if (!missing(restore_best) && isTRUE(restore_best)) {
      abort_input("restore_best", sprintf("returns the weights of the best validation loss: %s.", why))
    }
  }
  if (!missing(checkpoint_every) && is.null(checkpoint_path) && !identical(checkpoint_every, 0) &&
      !identical(checkpoint_every, 0L)) {
    abort_input("checkpoint_every", "writes checkpoints to `checkpoint_path`: give it too.")
  }
  progress <- check_flag(progress)
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  if (identical(time_limit, Inf)) time_limit <- NULL  # no limit, as NULL (it was "must be finite" beside "(0, Inf)")
  if (!is.null(time_limit)) time_limit <- check_number(time_limit, lower = 0, upper = Inf)
  if (is.null(steps)) steps <- if (is.null(time_limit)) 2000L else .Machine$integer.max
  opts <- list(steps = check_count(steps, max = .Machine$integer.max), batch_size = check_count(batch_size),
               # a float for LibTorch (a review's 1e300 failed in its conversion)
               lr = check_number(lr, lower = 0, upper = 1e30),
               lr_schedule = check_string(lr_schedule, c("constant", "cosine", "linear")),
               warmup_steps = check_count(warmup_steps, min = 0, max = .Machine$integer.max),
               lr_min = check_number(lr_min, lower = 0, upper = 1, open = FALSE),
               time_limit = if (is.null(time_limit)) 0 else time_limit,
               patience = check_count(patience, min = 0, max = .Machine$integer.max),
               restore_best = check_flag(restore_best),
               ema_warmup = check_flag(ema_warmup),
               weight_decay = check_number(weight_decay, lower = 0, upper = Inf, open = FALSE),
               optimizer = check_string(optimizer, c("adamw", "adam")),
               ema = check_ema(ema),
               grad_clip = check_number(grad_clip, lower = 0, upper = Inf, open = FALSE),
               t_sampling = check_string(t_sampling, c("log_uniform", "uniform")),
               loss_weight = check_string(loss_weight, c("auto", "eps", "v")),
               val_every = check_count(val_every), checkpoint_every = check_count(checkpoint_every, min = 0),
               seed = seed, threads = threads, device = check_string(device, c("auto", "cpu", "cuda")),
               gp_pool = check_count(gp_pool, min = 0, max = .Machine$integer.max))
  if (!is.null(checkpoint_path)) opts$checkpoint_path <- path.expand(checkpoint_path)
  if (!is.null(resume_from)) {
    if (!file.exists(resume_from)) abort_input("resume_from", sprintf("file \"%s\" does not exist.", resume_from))
    opts$resume_from <- path.expand(resume_from)
  }
  warn_unscaled(x_given)
  ptr <- if (!is.null(resume_from)) core_call(cpp_dit_load(opts$resume_from, opts$device)) else
    core_call(cpp_dit_create(unclass(config), seed, opts$device))
  if (!is.null(gp) && is.null(resume_from)) core_call(cpp_dit_set_gp(ptr, gp$Gamma, gp$Lambda, gp$mean))
  callback <- NULL
  if (isTRUE(progress)) {
    # A time-limited run shows seconds spent of the limit (its step count is
    # open), otherwise steps done; both with the training and validation loss.
    by_time <- opts$time_limit > 0
    total <- if (by_time) max(1, ceiling(opts$time_limit)) else opts$steps
    bar <- cli::cli_progress_bar("Training DiT", total = total,
                                 format = paste0("{cli::pb_bar} ", if (by_time) "{cli::pb_current}/{cli::pb_total} s, step {step_txt}" else
                                                   "{cli::pb_current}/{cli::pb_total}", " loss {loss_txt} {cli::pb_eta}"),
                                 .envir = environment())
    loss_txt <- ""
    step_txt <- ""
    callback <- function(step, total, loss, val_loss, seconds) {
      loss_txt <<- sprintf("%.4f%s", loss, if (is.na(val_loss)) "" else sprintf(", validation %.4f", val_loss))
      step_txt <<- as.character(step)
      # cli closes a bar that reaches its total, and a later update of it is an
      # error that would end the training without its model (a time limit
      # reached between two updates): the bar stays short of its total until
      # cli_progress_done(), and a display failure never stops training.
      tryCatch(cli::cli_progress_update(id = bar, set = min(if (by_time) round(seconds) else step, total - 1)),
               error = function(e) NULL)
      TRUE
    }
  }
  res <- core_call(cpp_dit_fit(ptr, x, val, strategy$generators, strategy$weights, opts, callback,
                               progress_every(opts$steps, opts$time_limit)),
                   rename = c(gp = "gp_mode"))  # the core's mode "gp"
  if (isTRUE(progress)) tryCatch(cli::cli_progress_done(id = bar), error = function(e) NULL)
  # each variable's observed training values, mean and sd: impute() warns
  # when the values it is given lie far outside them
  v_train <- matrix(as.numeric(x), ncol = dim(x)[3])  # variables are the slowest index
  info <- list(n_train = dim(x)[1], n_val = if (is.null(val)) 0L else dim(val)[1], seconds = res$seconds,
               variables = dimnames(x)[[3]],  # impute() checks the order of the variables it is given
               value_center = unname(colMeans(v_train, na.rm = TRUE)),
               value_scale = unname(apply(v_train, 2, stats::sd, na.rm = TRUE)),
               final_loss = res$final_loss, final_val_loss = res$final_val_loss, threads = threads,
               stop_reason = res$stop_reason, best_step = res$best_step, best_val_loss = res$best_val_loss,
               restored_best = res$restored_best,
               options = opts[c("steps", "time_limit", "batch_size", "lr", "lr_schedule", "warmup_steps", "lr_min",
                                "patience", "restore_best", "weight_decay", "optimizer", "ema", "ema_warmup",
                                "grad_clip", "t_sampling", "loss_weight", "seed", "gp_pool")])
  fit <- new_dit(ptr, strategy, info, device = opts$device)
  if (isTRUE(res$interrupted)) {
    cli::cli_warn("Training was interrupted at step {res$steps_done} of {opts$steps}; the model keeps the weights reached.")
  }
  fit
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# dit_fit()'s progress bar's update interval in steps: a two-hundredth of the
# steps, or every 10 steps of a time-limited run, whose step cap can be open
# (steps %/% 200 was then 10 million, and the bar never moved).
progress_every <- function(steps, time_limit) if (time_limit > 0) 10L else max(1L, steps %/% 200L)

# The variables of data given to a DiT against those it was trained on, by
# name (when both have names): the same names in another order are an input
# error (a review: load and temp swapped were imputed without a word, widths
# 1.5x), other names a warning. `x`: an n x H x d array or an H x d matrix.
check_dit_variables <- function(object, x, call = rlang::caller_env()) {
  trained <- object$train_info$variables
  given <- if (length(dim(x)) == 3) dimnames(x)[[3]] else colnames(x)
  if (is.null(trained) || is.null(given) || identical(as.character(trained), as.character(given))) return(invisible())
  if (length(trained) == length(given) && setequal(trained, given)) {
    abort_input("x", sprintf(paste("holds the variables the DiT was trained on in another order (%s; trained on %s):",
                                   "reorder them, e.g. x[, c(%s)] for a matrix or x[, , c(%s)] for windows."),
                             paste(given, collapse = ", "), paste(trained, collapse = ", "),
                             paste0("\"", trained, "\"", collapse = ", "), paste0("\"", trained, "\"", collapse = ", ")),
                call = call)
  }
  msg <- sprintf("`x`'s variables are named %s; the DiT was trained on %s: they are taken in that order.",
                 paste(given, collapse = ", "), paste(trained, collapse = ", "))
  cli::cli_warn("{msg}", class = c("ditimpute_warning_variables", "ditimpute_warning"), call = call)
  invisible()
}

# dit_fit()'s warning (class ditimpute_warning_scale) when the observed
# training values are far from standardised, which the DiT's noise schedule
# assumes and does not arrange itself: a variable whose mean is more than 3
# of its sds from 0, or whose sd is outside [0.1, 10]. Data marked by
# scale_data() are taken as standardised.
warn_unscaled <- function(x, call = rlang::caller_env(), imputing = FALSE) {
  # Values beyond single precision (the DiT computes in float32) are an
  # error, not a scale warning: a review's single 1e300 ended in "training
  # loss became -nan", which did not name the data.
  # (squares overflow single precision from about 1.8e19: a code review's
  # 1e20 still ended in "-nan"; 1e18 trains)
  big <- suppressWarnings(max(abs(x), na.rm = TRUE))
  if (is.finite(big) && big > 1e18) {
    abort_input("x", sprintf(paste("has values beyond what the DiT's single-precision arithmetic holds (largest |value|",
                                   "%s): standardise it, %s."), format(big, digits = 3),
                             if (imputing) "with the scaler of the training data, scale_data(x, scaler)" else
                               "e.g. scale_data(x, fit_scaler(x))"),
                call = call)
  }
  if (isTRUE(attr(x, "ditimpute_scaled"))) return(invisible(FALSE))
  d <- dim(x)[3]
  v <- matrix(as.numeric(x), ncol = d, dimnames = list(NULL, dimnames(x)[[3]]))  # variables are the slowest index
  mu <- colMeans(v, na.rm = TRUE)
  s <- apply(v, 2, stats::sd, na.rm = TRUE)
  far <- if (imputing) {
    # a few windows of a standardised series can have a large local mean and
    # a small local sd (one window: mean -1.78, sd 0.26): at imputation only
    # values far off the standard scale count (root mean square above 10)
    # values far off the standard scale count (root mean square above 10, or
    # below 1e-6: a review's data at 1e-50 were imputed at O(1) unwarned)
    rms <- sqrt(colMeans(v^2, na.rm = TRUE))
    which(!is.na(rms) & (rms > 10 | rms < 1e-6))
  } else {
    which(is.finite(mu) & is.finite(s) & (abs(mu) > 3 * s | s < 0.1 | s > 10))
  }
  if (!length(far)) return(invisible(FALSE))
  j <- far[1]
  label <- var_label(v, j)
  mean_j <- format(signif(mu[[j]], 4))
  sd_j <- format(signif(s[[j]], 3))
  others <- if (length(far) > 1) sprintf(" (and %d more variable%s)", length(far) - 1, if (length(far) > 2) "s" else "") else ""
  cli::cli_warn(c("{.arg x} is not standardised: variable {label}{others} has mean {mean_j} and sd {sd_j} where observed.",
                  i = if (imputing) {
                    paste("A DiT imputes data on the scale it was trained on (standardised, as dit_fit() asks):",
                          "standardise with {.code scale_data(x, scaler)}, {.code scaler} the one of the training data,",
                          "then {.code unscale_data()} the imputations.")
                  } else {
                    paste("The DiT assumes variables of mean about 0 and sd about 1 and can impute raw data poorly:",
                          "standardise with {.code scale_data(x, fit_scaler(x))} (impute scaled data, then",
                          "{.code unscale_data()} the imputations).")
                  }),
                class = c("ditimpute_warning_scale", "ditimpute_warning"), call = call)
  invisible(TRUE)
}

# dit_fit()'s `ema`: [0, 1) as the core takes it (1 would never leave the
# initial weights), so that -0.1 and 1 get the same words.
check_ema <- function(ema, call = rlang::caller_env()) {
  ema <- check_number(ema, arg = "ema", call = call)
  if (ema < 0 || ema >= 1) abort_input("ema", sprintf("must lie in [0, 1) (0 = off), not %s%s.", format(ema),
                                                      if (ema == 1) ": at 1 the average never leaves the initial weights" else ""),
                                       call = call)
  ema
}

# impute()'s warning (class ditimpute_warning_patterns) when a DiT trained on
# masks that hide whole frames only (S4, the default, and every frame
# generator) is given gaps that leave part of a frame observed: a pattern it
# has not learnt. On GP data (bench/results/dit_training_patterns.md) such a
# DiT's error on one variable's gap was 1.63x the exact GP's with every 95%
# interval covering, against 1.34x when single-variable blocks and MCAR
# entries were among its training masks. Nothing for one variable, a model
# without a recorded strategy, or a strategy with entry-level generators.
warn_untrained_patterns <- function(object, arr, call = rlang::caller_env()) {
  s <- object$strategy
  d <- dim(arr)[3]
  if (!inherits(s, "ditimpute_strategy") || d < 2) return(invisible(FALSE))
  kinds <- vapply(s$generators, function(g) g$kind %||% "", "")[s$weights > 0]
  if (!all(kinds %in% c("random", "blocks", "tail", "fixed"))) return(invisible(FALSE))
  per_frame <- rowSums(is.na(arr), dims = 2)  # n x H: missing variables per frame
  partial <- rowSums(per_frame > 0 & per_frame < d) > 0
  if (!any(partial)) return(invisible(FALSE))
  n <- dim(arr)[1]
  H <- dim(arr)[2]
  k <- sum(partial)
  # a strategy that fits the model's window (lengths from H)
  example <- sprintf("mask_strategy(c(\"%dx1\", \"1x%d\", \"v1x%d\", \"mcar0.2\"))", max(1L, H %/% 6L),
                     max(2L, H %/% 4L), max(2L, H %/% 4L))
  cli::cli_warn(c(sprintf(paste("The DiT was trained on masks that hide whole frames only, and %d of %s %s frames",
                                "with some variables missing while others are observed: a pattern it has not learnt,",
                                "which it can impute without using the observed variables (on GP data its error on one",
                                "variable's gap was 1.6x the exact GP's, every interval covering)."),
                          k, plural(n, "sequence"), if (k == 1) "has" else "have"),
                  i = sprintf("Train it with such patterns among its masks, e.g. strategy = %s (see ?mask_strategy).",
                              example)),
                class = c("ditimpute_warning_patterns", "ditimpute_warning"), call = call)
  invisible(TRUE)
}

# impute()'s warning (class ditimpute_warning_scale) when the observed values
# it is given lie far outside the model's own scale: over a tenth of a
# variable's observed entries more than 5 sds (the model's, per frame: `scale`
# an H x d matrix or a d-vector, as `center`) from its mean, which a Gaussian
# puts there with probability 6e-7. The usual cause: windows on another scale
# than the model's (raw data for a model fitted on scale_data() windows, or the
# other way round), or a series that has moved beyond anything seen in
# training; the imputations then rest on extrapolation (a user review: a GP
# fitted on standardised windows, given raw ones, returned intervals covering
# 97-100% with no word; a DiT given windows 3-11 sds beyond its training
# range covered 10%).
warn_off_scale <- function(arr, center, scale, model, call = rlang::caller_env()) {
  dm <- dim(arr)
  H <- dm[2]; d <- dm[3]
  center <- matrix(center, H, d, byrow = is.null(dim(center)))
  scale <- matrix(scale, H, d, byrow = is.null(dim(scale)))
  # Entries whose mean or sd is unknown (a DiT trained where a variable had one
  # observed value) are left out of the check; the other variables keep it (it
  # was off for every variable when one training sd was NA: a review).
  ok <- is.finite(center) & is.finite(scale) & scale > 0
  if (!any(ok)) return(invisible(FALSE))
  center[!ok] <- 0
  scale[!ok] <- 1
  z <- abs(sweep(sweep(arr, 2:3, center), 2:3, scale, "/"))
  z[rep(!ok, each = dm[1])] <- NA
  far <- apply(z > 5, 3, mean, na.rm = TRUE)
  obs <- apply(!is.na(z), 3, sum)
  hit <- which(obs > 0 & far > 0.1)
  if (!length(hit)) return(invisible(FALSE))
  j <- hit[which.max(far[hit])]
  name <- dimnames(arr)[[3]][j]
  label <- if (is.null(name) || !nzchar(name)) sprintf("%d", j) else sprintf("%d (%s)", j, name)
  others <- if (length(hit) > 1) sprintf(" (and %d more variable%s)", length(hit) - 1, if (length(hit) > 2) "s" else "") else ""
  cli::cli_warn(c(sprintf("{.arg x} is off the model's scale: %.0f%% of variable %s's observed values%s lie more than 5 of the model's sds from its mean (median distance %.3g sds).",
                          100 * far[j], label, others, stats::median(z[, , j], na.rm = TRUE)),
                  i = sprintf(paste("The imputations extrapolate far beyond %s. Give %s data on the scale it was",
                                    "fitted on (scale_data() with the training data's scaler, then unscale_data()",
                                    "the imputations), or refit it on data that cover these values."),
                              if (model == "DiT") "the DiT's training values" else "the fitted law",
                              if (model == "DiT") "the DiT" else "the model")),
                class = c("ditimpute_warning_scale", "ditimpute_warning"), call = call)
  invisible(TRUE)
}

# The training sequences left when the last n_val of x are held out for
# validation: all before them, less (for make_windows() output, whose
# attributes give each window's start and spacing) those whose last time stamp
# is not before the first held-out window's start.
held_apart <- function(x, n_val) {
  n <- dim(x)[1]
  keep <- seq_len(n - n_val)
  start <- attr(x, "start")
  freq <- attr(x, "freq")
  if (length(start) == n && length(freq) == 1 && is.numeric(freq) && is.finite(freq)) {
    last <- as.numeric(start[keep]) + (dim(x)[2] - 1) * freq
    keep <- keep[last < as.numeric(start[n - n_val + 1])]
  } else if (n_val >= 1 && length(keep) >= 1) {
    # No marks (a subset such as w[1:391, , ] drops them): windows that
    # overlap show it in their values; the last training window shifted by
    # the stride s is the first held-out one, and the ceiling(H / s) - 1
    # windows before it share frames with it.
    s <- window_stride(x[n - n_val, , , drop = TRUE], x[n - n_val + 1, , , drop = TRUE])
    if (!is.na(s)) keep <- keep[seq_len(max(0L, length(keep) - (ceiling(dim(x)[2] / s) - 1L)))]
  }
  keep
}

# The stride s (1 <= s < H) by which window b continues window a, when b's
# first H - s frames are a's last H - s (on every entry both observe, at least
# 4 of them and half the window's entries, not all equal: two matching 0/1
# values are chance); NA when no shift matches (a stride over H / 2 goes
# unseen).
window_stride <- function(a, b) {
  a <- as.matrix(a)
  b <- as.matrix(b)
  H <- nrow(a)
  if (H < 2) return(NA_integer_)
  for (s in seq_len(H - 1)) {
    p <- a[(s + 1):H, , drop = FALSE]
    q <- b[seq_len(H - s), , drop = FALSE]
    ok <- is.finite(p) & is.finite(q)
    if (sum(ok) >= max(4, length(a) / 2) && length(unique(p[ok])) > 1 && all(p[ok] == q[ok])) return(s)
  }
  NA_integer_
}

#' @export
print.ditimpute_dit <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cfg <- x$config
  cat(sprintf("<ditimpute_dit> DiT for H = %d, d = %d: width %d, depth %d, heads %d, %s parameters, %s-prediction%s\n",
              cfg$H, cfg$d, cfg$width, cfg$depth, cfg$heads, format(x$n_parameters, big.mark = ","),
              cfg$prediction, tokens_text(cfg)))
  if (nzchar(cfg$gp %||% "")) cat(sprintf("  GP-informed: %s\n", gp_mode_text(cfg$gp, x$train_info$options$gp_pool)))
  cat(sprintf("  trained %d steps", x$steps))
  if (!is.null(x$train_info$n_train)) {
    cat(sprintf(" on %d sequences in %.1f s", x$train_info$n_train, x$train_info$seconds))
    if (identical(x$train_info$stop_reason, "time_limit")) cat(" (time limit)")
    if (identical(x$train_info$stop_reason, "early_stop")) cat(" (stopped early)")
    if (isTRUE(x$train_info$restored_best)) cat(sprintf("; weights of step %d (best validation)", x$train_info$best_step))
  }
  cat("\n")
  # a run shorter than its warm-up never trained at the rate asked (the
  # default 200 steps against a quick steps = 100)
  w <- x$train_info$options$warmup_steps
  if (!is.null(w) && w > x$steps) {
    cat(strwrap(sprintf("learning-rate warm-up (%d steps) was longer than the run: the rate never reached lr (set warmup_steps lower)",
                        as.integer(w)), width = getOption("width", 80), indent = 2, exdent = 4), sep = "\n")
  }
  if (!is.null(x$strategy)) { cat("  masks: "); print(x$strategy) }
  h <- x$history
  if (nrow(h) > 0) {
    last <- h[nrow(h), ]
    cat(sprintf("  last loss %.4f%s\n", last$train_loss,
                if (is.na(last$val_loss)) "" else sprintf(", validation %.4f", last$val_loss)))
  }
  invisible(x)
}

# What a GP-informed DiT does with its GP, as ?dit_fit says (the "score"
# mode was printed as conditioning on marginal means and sds: a review).
gp_mode_text <- function(mode, pool = NULL) {
  what <- switch(mode,
                 residual = "gp_mode \"residual\", a correction to the fitted GP's exact conditional marginals",
                 score = "gp_mode \"score\", a correction to the fitted GP's exact joint conditional law",
                 channels = "gp_mode \"channels\", its tokens carry the fitted GP's conditional means and sds",
                 sprintf("gp_mode \"%s\"", mode))
  if (!is.null(pool) && pool > 0) what <- sprintf("%s; trained on a pool of %s masks and GP conditionals", what,
                                                  format(pool, big.mark = ","))
  what
}

#' @export
summary.ditimpute_dit <- function(object, ...) {
  check_dots(environment(), "summary()")
  structure(list(config = object$config, n_parameters = object$n_parameters, steps = object$steps,
                 train_info = object$train_info, history = object$history, strategy = object$strategy,
                 has_ema = object$has_ema),
            class = "summary.ditimpute_dit")
}

#' @export
print.summary.ditimpute_dit <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat("Conditional diffusion transformer\n")
  print(x$config)
  # the GP a GP-informed model carries (a review: summary() never said so)
  if (nzchar(x$config$gp %||% "")) cat(sprintf("GP-informed: %s\n", gp_mode_text(x$config$gp, x$train_info$options$gp_pool)))
  cat(sprintf("Parameters: %s; EMA weights: %s\n", format(x$n_parameters, big.mark = ","),
              if (isTRUE(x$has_ema)) "yes" else "no"))
  ti <- x$train_info
  if (!is.null(ti$n_train)) {
    o <- ti$options
    cat(sprintf("Training: %d steps, batch %d, %s lr %g (%s), EMA %g, %d training / %d validation sequences, %.1f s on %s\n",
                x$steps, o$batch_size, o$optimizer, o$lr, o$lr_schedule %||% "constant", o$ema %||% 0, ti$n_train,
                ti$n_val, ti$seconds, plural(ti$threads, "thread")))
    if (!is.null(ti$stop_reason) && ti$stop_reason != "steps") cat(sprintf("Stopped by: %s\n", ti$stop_reason))
    if (isTRUE(ti$restored_best)) cat(sprintf("Weights of step %d, the best validation loss (%.4g)\n", ti$best_step, ti$best_val_loss))
  }
  if (!is.null(x$strategy)) { cat("Masks: "); print(x$strategy) }
  if (nrow(x$history) > 0) {
    cat("Loss curve:\n")
    h <- x$history
    keep <- unique(round(seq(1, nrow(h), length.out = min(8, nrow(h)))))
    print(h[keep, ], row.names = FALSE, digits = 4)
  }
  invisible(x)
}

#' Plot the loss curve of a fitted DiT
#'
#' @param x A fitted model ([dit_fit()]).
#' @param log Axes on a log scale, as for [graphics::plot()] (default `"y"`).
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' fit <- dit_fit(gp_simulate(spec, 100, seed = 1),
#'                dit_config(24, 2, width = 32, depth = 1, heads = 2),
#'                strategy = mask_strategy("6x1"), steps = 20, batch_size = 16, val_every = 5,
#'                seed = 1, threads = 1, progress = FALSE)
#' plot(fit)
#' @export
plot.ditimpute_dit <- function(x, log = "y", ...) {
  h <- x$history
  if (nrow(h) == 0) abort_input("x", "has no loss history (it was never trained).")
  yl <- range(c(h$train_loss, h$val_loss), na.rm = TRUE)
  graphics::plot(h$step, h$train_loss, type = "l", log = log, ylim = yl, xlab = "step",
                 ylab = "denoising loss", main = "DiT training", ...)
  if (any(!is.na(h$val_loss))) {
    graphics::lines(h$step, h$val_loss, col = "firebrick")
    graphics::legend("topright", c("training", "validation"), col = c("black", "firebrick"), lty = 1, bty = "n")
  }
  invisible(x)
}

# Sampler options from user arguments; NULL fields take the engine's defaults.
sampler_max_steps <- 100000L
sampler_options <- function(method = NULL, steps = NULL, grid = NULL, t0 = NULL, T = NULL,
                            call = rlang::caller_env()) {
  opts <- list()
  methods <- c("unipc2", "unipc", "sde", "ode", "euler", "dpm2m", "dpm2m_sde")
  if (!is.null(method)) opts$method <- check_string(method, methods, arg = "method", call = call)
  if (!is.null(grid)) opts$grid <- check_string(grid, c("automatic", "tuned", "geometric", "uniform"), arg = "grid",
                                                call = call)
  if (!is.null(steps)) {
    opts$steps <- check_count(steps, arg = "steps", call = call)
    # A guard (a review's steps = 1e9 ran on past a minute before the first
    # step): the samplers' errors have levelled off long before.
    if (opts$steps > sampler_max_steps) {
      abort_input("steps", sprintf("is %s; at most %s sampler steps (the few-call samplers need 8 to 32, the SDE and Euler samplers a few hundred to a thousand).",
                                   format(opts$steps, big.mark = ","), format(sampler_max_steps, big.mark = ",")),
                  call = call)
    }
  }
  if (!is.null(t0)) opts$t0 <- check_number(t0, arg = "t0", lower = 0, upper = Inf, call = call)
  if (!is.null(T)) opts$T <- check_number(T, arg = "T", lower = 0, upper = Inf, call = call)
  opts
}

#' Sample imputations from a fitted DiT
#'
#' Draws `n_samples` completions of one partly observed sequence by running the
#' reverse-time sampler with the network's score; all samples go through the
#' network as one batch, and observed entries stay as given.
#'
#' Samplers: `"unipc2"` (default, 8 steps = 8 network calls), UniPC-2 on the
#' probability-flow ODE in data prediction, on a time grid tuned for it
#' (`grid = "tuned"`: the 8 points that minimise the worst relative variance
#' error over conditional variances from 2e-4 to 3.6, found by search with the
#' exact GP score; its worst error there is 1.4%). In oracle mode (exact GP
#' score, H = 96, d = 8, P1-P4) its 95% regions hold the exact conditional
#' mass within 1 point of a 1000-step reference (bench/results/sampler.md);
#' `"unipc"`, UniPC-3 (12 geometric steps by default: the former default, worst
#' error 4.3% over the same range); `"sde"`, the reverse SDE (the paper's eq.
#' 6) by the stochastic Heun scheme (2 calls a step; 200 steps matched the
#' reference too, at 400 calls); `"euler"`, the same SDE by Euler-Maruyama;
#' `"ode"`, the probability-flow ODE by Heun; `"dpm2m"` and `"dpm2m_sde"`,
#' DPM-Solver++(2M) and its SDE form (1 call a step; at 20 steps they lose
#' variance on long gaps). A method named without `steps` takes its own
#' default, the fewest steps at which it reproduced the exact conditional law
#' in oracle mode (covariance and mean errors within 1.2x those of exact draws,
#' 95% regions within 1.5 points of 95% on P1-P4;
#' `bench/results/sampler_default_steps.md`): 8 for `"unipc2"`, 12 for
#' `"unipc"`, 50 for `"dpm2m"`, 200 for `"dpm2m_sde"`, `"sde"` and `"ode"`
#' (the last two: 400 network calls) and 1,000 for `"euler"`. With fewer the
#' stochastic and Heun samplers are badly wrong, not just noisy: `"sde"` at 12
#' steps drew a trained network's P1-P4 laws with W2 12-19x that of exact
#' draws. The grid (`grid =
#' "automatic"`) is the tuned one where it is stored (`"unipc2"` at 8 or 10
#' steps, `"unipc"` at 10), otherwise geometric from `T` down to `t0` (fine
#' near `t0`, where small conditional variances need it).
#'
#' The 8-step default was tuned against the exact score. With a trained network
#' on a long trailing gap it gives narrower laws than the SDE sampler: on
#' the tail gap of `bench/results/dit_learning_gpu.md` (seven trained
#' networks), raw 95% regions covered 80.8-89.7% with the default and
#' 90.6-94.2% with `method = "sde", steps = 200` (25x the network calls); on
#' the three other test patterns the default covered 93.9-98.2%. A network
#' trained 600 s on 2 cores to its time limit (`patience = 0`) and sampled with
#' `method = "sde", steps = 50` (100 calls) covered 93.0% on that gap and
#' 93.1-96.3% on the others (`bench/results/dit_learning_sde.md`); with fewer
#' steps it is no substitute (at 25, P3's regions covered 85.8%; at 16, P1's
#' W2 was 3.7x that of exact draws; `bench/results/sampler_default_steps.md`).
#' DPM-Solver++(2M) SDE (`method = "dpm2m_sde"`) at 16-32 steps, one call
#' each, sits between: on three networks trained 600 s its tail-gap W2 was
#' 1.24-1.37x that of exact draws with coverage 87.4-91.8% (the default on the
#' same networks: 1.36-1.51x, 82.9-88.9%); on the two scored on all four
#' patterns the other three covered 95.9-98.7%
#' (`bench/results/dit_p1_samplers_2026-11-30.md`).
#'
#' @param object A fitted model.
#' @param x One sequence, an `H x d` matrix with `NA` where values are missing
#'   (with `d = 1` also a vector of the `H` values).
#' @param n_samples Number of samples.
#' @param method,steps,grid,t0,T Sampler options; `NULL` takes the defaults.
#' @param seed Optional seed (see [dit_fit()]).
#' @param threads CPU threads.
#' @param device `NULL` (the model's device), `"cpu"`, `"cuda"` or `"auto"`; see [impute()].
#' @return An `n_samples x H x d` array of completed sequences.
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' fit <- dit_fit(gp_simulate(spec, 100, seed = 1),
#'                dit_config(24, 2, width = 32, depth = 1, heads = 2),
#'                strategy = mask_strategy("6x1"), steps = 10, batch_size = 16,
#'                seed = 1, threads = 1, progress = FALSE)
#' x <- gp_simulate(spec, 1, seed = 2)[1, , ]
#' x[10:15, ] <- NA
#' s <- dit_sample(fit, x, n_samples = 20, steps = 20, seed = 3, threads = 1)
#' dim(s)
#' @export
dit_sample <- function(object, x, n_samples = 100, method = NULL, steps = NULL, grid = NULL, t0 = NULL,
                       T = NULL, seed = NULL, threads = NULL, device = NULL) {
  object <- check_dit(object)
  use_device(object, device)
  cfg <- object$config
  seqs <- as_sequences(x, cfg$H, cfg$d)
  if (!seqs$single) abort_input("x", "must be one sequence (an H x d matrix); use impute() for several.")
  if (is.null(dim(x))) x <- structure(matrix(x, cfg$H, 1), ditimpute_scaled = attr(x, "ditimpute_scaled"))  # d = 1
  miss <- is.na(x)
  if (!any(miss)) abort_input("x", "has no missing value (NA): there is nothing to impute.")
  if (all(miss)) abort_input("x", "has no observed value: every entry is missing.")
  n_samples <- check_count(n_samples)
  opts <- sampler_options(method, steps, grid, t0, T)
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  check_dit_variables(object, x)
  one <- list(x = x, miss = miss)
  storage.mode(one$x) <- "double"
  # impute()'s scale check (dit_sample() had none: a review's data at 1e-50
  # were drawn at O(1) unwarned)
  if (!isTRUE(attr(x, "ditimpute_scaled"))) warn_unscaled(array(one$x, c(1L, dim(x))), imputing = TRUE)
  s <- core_call(cpp_dit_draw(dit_ptr(object), array(one$x, c(1L, dim(x))), n_samples, opts, seed, threads, 0L))
  completed_draws(one, s[[1]])
}

#' Oracle sampling: the diffusion sampler driven by the exact score
#'
#' Runs the same reverse-time sampler as [dit_sample()] with the exact
#' conditional score of a Gaussian process instead of a network. It separates
#' the sampler's discretisation error from the network's learning error.
#'
#' @inheritParams dit_sample
#' @inheritParams gp_conditional
#' @param x One sequence, an `H x d` matrix (missing entries may be `NA`).
#' @return An `n_samples x H x d` array of completed sequences.
#' @examples
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' x <- gp_simulate(spec, 1, seed = 2)[1, , ]
#' s <- oracle_sample(spec, x, missing = 10:15, n_samples = 50, steps = 50, seed = 1, threads = 1)
#' dim(s)
#' @export
oracle_sample <- function(spec, x, missing = NULL, n_samples = 100, method = NULL, steps = NULL, grid = NULL,
                          t0 = NULL, T = NULL, seed = NULL, threads = NULL) {
  one <- one_sequence(spec, x, missing)
  n_samples <- check_count(n_samples)
  opts <- sampler_options(method, steps, grid, t0, T)
  seed <- resolve_seed(seed)
  completed_draws(one, gp_draw(spec, one, n_samples, opts, seed, resolve_threads(threads)))
}

#' Denoising loss of a fitted DiT on held-out sequences
#'
#' @inheritParams dit_sample
#' @param x Sequences, an `n x H x d` array.
#' @param strategy Masks to evaluate with (default: the model's training strategy).
#' @param t_sampling How times are drawn (`"log_uniform"` or `"uniform"`);
#'   default: as in the model's training (`"log_uniform"` when its record
#'   does not say).
#' @param loss_weight How examples are weighted (`"auto"`, `"eps"` or `"v"`,
#'   see [dit_fit()]); default: as in the model's training, so that the loss
#'   is the one its validation record holds (`"auto"` when the record does
#'   not say). Before, the loss was always the unweighted noise error, 0.78
#'   where the same model's validation loss read 0.97 (a review).
#' @return The mean denoising loss (masks, times and noise drawn from `seed`).
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' x <- gp_simulate(spec, 100, seed = 1)
#' fit <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2),
#'                strategy = mask_strategy("6x1"),
#'                steps = 10, batch_size = 16, seed = 1, threads = 1, progress = FALSE)
#' dit_loss(fit, gp_simulate(spec, 20, seed = 2), seed = 1, threads = 1)
#' @export
dit_loss <- function(object, x, strategy = NULL, t_sampling = NULL, loss_weight = NULL, seed = NULL,
                     threads = NULL) {
  object <- check_dit(object)
  cfg <- object$config
  dm <- dim(x)
  if (!is.numeric(x) || length(dm) != 3 || dm[2] != cfg$H || dm[3] != cfg$d) {
    abort_input("x", sprintf("must be an n x %d x %d array (the model's H and d).", cfg$H, cfg$d))
  }
  check_no_nan_inf(x, "x")
  strategy <- model_strategy(strategy, object)
  trained <- object$train_info$options
  t_sampling <- check_string(t_sampling %||% trained$t_sampling %||% "log_uniform", c("log_uniform", "uniform"),
                             arg = "t_sampling")
  loss_weight <- check_string(loss_weight %||% trained$loss_weight %||% "auto", c("auto", "eps", "v"),
                              arg = "loss_weight")
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  storage.mode(x) <- "double"
  core_call(cpp_dit_loss(dit_ptr(object), x, strategy$generators, strategy$weights, t_sampling, loss_weight, seed,
                         threads))
}

#' Save and load a fitted DiT
#'
#' `dit_save()` writes the model (configuration, weights, EMA weights, loss
#' history, and the mask strategy and training record that `print()` and
#' [dit_loss()] use) to a file in ditimpute's binary format; `dit_load()` reads
#' it back. Model files written by earlier builds of the package hold neither
#' the strategy nor the record; such a model loads without them (give
#' [dit_loss()] a `strategy`).
#' The R object itself also keeps these bytes, so [saveRDS()] and [readRDS()]
#' round-trip a fitted model too. A corrupt or foreign file gives an error of
#' class `ditimpute_error_input` naming `file`.
#'
#' @param object A fitted model.
#' @param file Path of the model file.
#' @param device Device to load onto: `"auto"`, `"cpu"` or `"cuda"`.
#' @return `dit_save()` returns `file` invisibly; `dit_load()` a `ditimpute_dit`.
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' fit <- dit_fit(gp_simulate(spec, 50, seed = 1), dit_config(24, 2, width = 32, depth = 1, heads = 2),
#'                strategy = mask_strategy("6x1"), steps = 5, batch_size = 8, seed = 1, threads = 1,
#'                progress = FALSE)
#' f <- tempfile(fileext = ".dit")
#' dit_save(fit, f)
#' fit2 <- dit_load(f)
#' fit2
#' @export
dit_save <- function(object, file) {
  object <- check_dit(object)
  if (!is.character(file) || length(file) != 1 || is.na(file)) abort_input("file", "must be a single path.")
  core_call(cpp_dit_save(dit_ptr(object), path.expand(file)))
  invisible(file)
}

#' @rdname dit_save
#' @export
dit_load <- function(file, device = "auto") {
  check_torch()
  if (!is.character(file) || length(file) != 1 || is.na(file)) abort_input("file", "must be a single path.")
  if (!file.exists(file)) abort_input("file", sprintf("\"%s\" does not exist.", file))
  device <- check_string(device, c("auto", "cpu", "cuda"))
  ptr <- core_call(cpp_dit_load(path.expand(file), device))
  notes <- read_dit_notes(core_call(cpp_dit_notes(ptr)))
  new_dit(ptr, strategy = notes$strategy, train_info = notes$train_info, device = device)
}
