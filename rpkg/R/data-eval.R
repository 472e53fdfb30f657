# Evaluation on real data: hide observed entries to score imputations against,
# two simple baselines, and a one-call loader of the paper's data sets.

#' Hide observed entries completely at random
#'
#' Real data have their own gaps, whose truth is unknown. To score an
#' imputation, `hide_mcar()` hides a share `rate` of the *observed* entries,
#' chosen uniformly at random (missing completely at random): exactly
#' `round(rate * n_observed)` of them. Entries that were already `NA` stay
#' missing and are never hidden, so they are never scored.
#'
#' @param x An `n x H x d` array (or an `H x d` matrix), `NA` = missing.
#' @param rate Share of the observed entries to hide, in (0, 1).
#' @param seed Optional seed; without one, [set.seed()] makes draws repeatable.
#'   A given seed leaves R's random number stream as it was.
#' @return A list with `x` (the input with the hidden entries set to `NA`),
#'   `hidden` (a logical array of the shape of `x`, `TRUE` = hidden) and
#'   `truth` (the hidden values, in the order of `x[hidden]`): for an
#'   imputation `imp` of `out$x`, `imp[out$hidden] - out$truth` are its errors.
#' @seealso [impute_linear()], [impute_mean()], [load_real_data()]
#' @examples
#' x <- array(rnorm(2 * 5 * 3), c(2, 5, 3))
#' x[1, 2, 1] <- NA
#' out <- hide_mcar(x, rate = 0.2, seed = 1)
#' sum(out$hidden)            # 20% of the 29 observed entries, rounded
#' imp <- impute_linear(out$x)
#' sqrt(mean((imp[out$hidden] - out$truth)^2))
#' @export
hide_mcar <- function(x, rate, seed = NULL) {
  check_value_shape(x, "x", series = FALSE)
  rate <- check_number(rate, lower = 0, upper = 1)
  observed <- which(!is.na(x))
  n_hide <- round(rate * length(observed))
  if (n_hide < 1) {
    abort_input("rate", sprintf("hides no entry: %s of %d observed entries rounds to 0.", format(rate),
                                length(observed)))
  }
  if (n_hide >= length(observed)) {
    abort_input("rate", sprintf("hides every entry: %s of %d observed entries rounds to all of them, leaving nothing to impute from.",
                                format(rate), length(observed)))
  }
  picked <- with_local_seed(seed, observed[sample.int(length(observed), n_hide)])
  hidden <- array(FALSE, dim(x), dimnames(x))
  hidden[picked] <- TRUE
  truth <- x[hidden]
  x[hidden] <- NA
  list(x = x, hidden = hidden, truth = truth)
}

# Evaluates `expr` with R's generator seeded by `seed` (if given) and restores
# the caller's random stream afterwards.
with_local_seed <- function(seed, expr, call = rlang::caller_env()) {
  if (is.null(seed)) return(expr)
  seed <- resolve_seed(seed, call = call)
  env <- globalenv()
  old <- if (exists(".Random.seed", envir = env, inherits = FALSE)) get(".Random.seed", envir = env)
  on.exit(if (is.null(old)) rm(".Random.seed", envir = env) else assign(".Random.seed", old, envir = env))
  set.seed(seed %% .Machine$integer.max)
  expr
}

#' Baseline imputations: linear interpolation and means
#'
#' Two simple references for real-data benchmarks, each returning the
#' completed data (observed entries unchanged).
#'
#' * `impute_linear()` interpolates linearly along time, for each variable
#'   within each window separately; before the first and after the last
#'   observed value of a window it carries that value (constant
#'   extrapolation). A variable with no observed value in a window gets its
#'   training mean from `means`.
#' * `impute_mean()` replaces every missing entry by its variable's training
#'   mean.
#'
#' On data standardised with [scale_data()] (as returned by
#' [load_real_data()]) every training mean is 0, the default. For data in
#' their original units pass the scaler from [fit_scaler()] (its `center` is
#' used) or the means themselves. Passing a scaler with data marked as
#' standardised by [scale_data()] is an error, as it would mix scales.
#'
#' @param x An `n x H x d` array of windows (or one `H x d` window), `NA` =
#'   missing.
#' @param means Training means: 0 (standardised data), a numeric d-vector, or
#'   a `ditimpute_scaler`.
#' @return `x` with every `NA` filled in.
#' @seealso [hide_mcar()], [fit_scaler()]
#' @examples
#' x <- array(c(1, NA, NA, 4, NA, NA, NA, NA), c(1, 4, 2))
#' impute_linear(x)[1, , ]       # 1 2 3 4 | 0 0 0 0 (no value: the mean 0)
#' impute_mean(x, means = c(2.5, 10))[1, , ]
#' @export
impute_linear <- function(x, means = 0) {
  d <- check_value_shape(x, "x", series = FALSE)
  dims <- dim(x)
  # Frames along the rows: an H x (windows * variables) matrix, variable slowest.
  by_time <- if (length(dims) == 3) matrix(aperm(x, c(2, 1, 3)), nrow = dims[2]) else unclass(x)
  # The means fill only a window's variable with no observed value: the
  # default's check (resolve_means()) matters only then.
  means <- resolve_means(means, x, d, default = missing(means) && any(colSums(!is.na(by_time)) == 0))
  fallback <- rep(means, each = ncol(by_time) / d)
  filled <- interpolate_columns(by_time, fallback)
  if (length(dims) == 3) filled <- aperm(array(filled, dims[c(2, 1, 3)]), c(2, 1, 3))
  x[] <- filled
  x
}

# Linear interpolation down each column between its observed neighbours,
# constant beyond the first and last observed value, `fallback[col]` for a
# column with none. Vectorised over columns: one pass per row finds the
# previous observed row, one the next.
interpolate_columns <- function(m, fallback) {
  H <- nrow(m)
  obs <- !is.na(m)
  prev <- nxt <- matrix(NA_integer_, H, ncol(m))
  prev[1, obs[1, ]] <- 1L
  for (h in seq_len(H)[-1]) prev[h, ] <- ifelse(obs[h, ], h, prev[h - 1, ])
  nxt[H, obs[H, ]] <- H
  for (h in rev(seq_len(H - 1))) nxt[h, ] <- ifelse(obs[h, ], h, nxt[h + 1, ])
  col <- col(m)
  at <- function(rows) m[cbind(ifelse(is.na(as.vector(rows)), 1L, as.vector(rows)), as.vector(col))]
  lo <- ifelse(is.na(prev), nxt, prev)     # no value before: carry the next one back
  hi <- ifelse(is.na(nxt), prev, nxt)      # no value after: carry the last one forward
  w <- ifelse(is.na(lo) | hi == lo, 0, (row(m) - lo) / (hi - lo))
  out <- at(lo) + w * (at(hi) - at(lo))
  none <- is.na(lo)
  out[none] <- fallback[col[none]]
  out[obs] <- m[obs]
  matrix(out, H)
}

#' @rdname impute_linear
#' @export
impute_mean <- function(x, means = 0) {
  d <- check_value_shape(x, "x", series = FALSE)
  means <- resolve_means(means, x, d, default = missing(means))
  fill <- rep(means, each = length(x) / d)
  miss <- is.na(x)
  x[miss] <- fill[miss]
  x
}

resolve_means <- function(means, x, d, default = FALSE, call = rlang::caller_env()) {
  # The default 0 is the training mean of standardised data: on data that
  # are plainly not standardised it would fill in values far from the data.
  if (default && !isTRUE(attr(x, "ditimpute_scaled"))) {
    v <- matrix(as.numeric(x), ncol = d, dimnames = list(NULL, var_names(x)))  # the variables are the slowest index
    mu <- colMeans(v, na.rm = TRUE)
    s <- apply(v, 2, stats::sd, na.rm = TRUE)
    far <- which(is.finite(mu) & abs(mu) > 3 * pmax(s, 0, na.rm = TRUE))
    if (length(far)) {
      j <- far[1]
      cli::cli_warn(sprintf(paste("{.arg means} is 0, the default for standardised data, but variable %s averages %s",
                                  "where observed (sd %s): give the training means (a fit_scaler() result or",
                                  "numbers), or standardise {.arg x} first (scale_data()). Windows of scale_data()'s",
                                  "result are marked standardised; a subset such as x[1:5, , ] loses the mark: give",
                                  "{.code means = 0} to say it is."),
                            var_label(v, j), format(signif(mu[j], 4)), format(signif(s[j], 3))),
                    call = call)
    }
  }
  if (inherits(means, "ditimpute_scaler")) {
    if (isTRUE(attr(x, "ditimpute_scaled"))) {
      abort_input("means", paste("is a scaler but `x` is standardised (from scale_data()), where the training",
                                 "means are 0: use `means = 0`, or unscale `x` first."), call = call)
    }
    means <- means$center
  }
  if (!is.numeric(means) || !length(means) %in% c(1, d) || any(!is.finite(means))) {
    abort_input("means", sprintf("must be a ditimpute_scaler or finite numbers, one or one per variable (%d).", d),
                call = call)
  }
  # named means go to the variables of those names, in x's order (they were
  # taken by position: c(d = 4, c = 3, b = 2, a = 1) filled a with 4; a review)
  vars <- var_names(x)
  if (length(means) == d && d > 1 && !is.null(names(means)) && !is.null(vars)) {
    if (!setequal(names(means), vars) || anyDuplicated(names(means))) {
      abort_input("means", sprintf("names variables %s; x has %s.", paste0('"', names(means), '"', collapse = ", "),
                                   paste0('"', vars, '"', collapse = ", ")), call = call)
    }
    means <- means[vars]
  }
  rep_len(as.numeric(means), d)
}

#' Load a real data set, ready for training and testing
#'
#' Reads one of the paper's data sets, splits it in time (training before
#' test, [split_by_time()]), cuts each part into non-overlapping windows
#' ([make_windows()]) and standardises both with means and sds fitted on the
#' training part ([fit_scaler()]). The defaults follow the paper's appendix:
#' windows of 30 hours for BeijingAir and 48 steps for ETT, 80% of the time
#' for training. The paper uses ETTm1 (15-minute steps); its hourly siblings
#' ETTh1 and ETTh2 stand in for it here.
#'
#' The data files are not shipped with the package. `dir` is the folder
#' holding `beijing_air/` (the 12 per-site files) and `ett/` (`ETTh1.csv.gz`,
#' `ETTh2.csv.gz`, gzipped or plain); by default it is taken from the
#' environment variable `DITIMPUTE_DATA_DIR`.
#'
#' @param name `"beijing_air"`, `"ett_h1"` or `"ett_h2"`.
#' @param dir Folder of the data sets.
#' @param length Window length; `NULL` for the default (30 or 48).
#' @param train Share of the time for training.
#' @return A list with `train` and `test` (standardised `n x H x d` window
#'   arrays, see [make_windows()]), `scaler` (to map imputations back with
#'   [unscale_data()]) and `name`.
#' @seealso [read_beijing_air()], [read_ett()], [hide_mcar()]
#' @examples
#' \dontrun{
#' air <- load_real_data("beijing_air", dir = "shared/data")
#' dim(air$train)   # 935 x 30 x 132
#' held <- hide_mcar(air$test, rate = 0.1, seed = 1)
#' imp <- impute_linear(held$x)
#' mean(abs(unscale_data(imp, air$scaler) - unscale_data(air$test, air$scaler))[held$hidden])
#' }
#' @export
load_real_data <- function(name = c("beijing_air", "ett_h1", "ett_h2"), dir = Sys.getenv("DITIMPUTE_DATA_DIR"),
                           length = NULL, train = 0.8) {
  name <- check_string(name, c("beijing_air", "ett_h1", "ett_h2"))
  if (!is.character(dir) || base::length(dir) != 1 || is.na(dir) || !dir.exists(dir)) {
    abort_input("dir", sprintf("must be the folder of the data sets (or set DITIMPUTE_DATA_DIR), not %s.",
                               deparse1(dir)))
  }
  if (is.null(length)) length <- if (name == "beijing_air") 30 else 48
  series <- if (name == "beijing_air") {
    read_beijing_air(file.path(dir, "beijing_air"))
  } else {
    stem <- file.path(dir, "ett", if (name == "ett_h1") "ETTh1.csv" else "ETTh2.csv")
    found <- c(paste0(stem, ".gz"), stem)[file.exists(c(paste0(stem, ".gz"), stem))]
    if (base::length(found) == 0) abort_input("dir", sprintf("holds no %s(.gz).", stem))
    read_ett(found[1])
  }
  parts <- split_by_time(series, train = train)
  length <- check_count(length)
  stamps <- vapply(parts, function(p) nrow(p$values), 1)
  if (length > min(stamps)) {  # make_windows() would name the part's stamps as if they were the series'
    short <- names(stamps)[which.min(stamps)]
    abort_input("length", sprintf("must be at most the %s part's %d time stamps (%s has %d, split at train = %s), not %d.",
                                  short, min(stamps), series$name %||% "series", sum(stamps), format(train), length))
  }
  scaler <- fit_scaler(parts$train)
  windows <- lapply(parts, function(p) scale_data(make_windows(p, length), scaler))
  list(train = windows$train, test = windows$test, scaler = scaler, name = series$name)
}
