# Multiple imputation for pooling: an imputation's completions as a `mids`
# object of the mice package, so that mice::complete(), with() and
# mice::pool() (Rubin's rules) work on ditimpute results.

#' Completions as a mice `mids` object, for analyses pooled with Rubin's rules
#'
#' Turns the sample paths of an imputation into the multiply imputed data set
#' of the \pkg{mice} package (`mids`, through [mice::as.mids()]), so that the
#' usual workflow runs unchanged: `mice::complete()` gives completed data sets,
#' `with()` fits an analysis to each and `mice::pool()` combines them with
#' Rubin's rules. `mice::complete()` and `with()` also work on the imputation
#' itself (they convert it with `as_mids()` first); plain `complete()` needs
#' \pkg{mice} (or \pkg{tidyr}, whose generic it is) attached.
#'
#' **Relations between variables.** An analysis of the completed data sets
#' sees a relation between two variables only as far as the imputation model
#' carries it. [impute_series()] relates variables through one cross-variable
#' covariance `Lambda` shared by all its terms, and with `separate = "auto"`
#' (its default) models a variable whose one-step changes the others hardly
#' explain on its own: its imputations are then independent of the other
#' variables given the observed values, and a regression of it on them (or of
#' them on it) is pulled towards zero, the more so the more is missing.
#' `as_mids()` warns when the imputation's variables sit in independent
#' groups; for such analyses impute with `separate = "none"`, or with
#' \pkg{mice} itself, whose models are the regressions on the other variables.
#' (On four windows of hourly ozone with 30% missing, a reviewer found the
#' pooled slope on temperature at 0.64-0.85 of the complete-data slope with
#' the default and 0.72-0.92 with `separate = "none"`.)
#' The one `Lambda` also ties the variables' white noise to their signals:
#' every variable has the same share of noise. A variable that is a noisy
#' copy of a noise-free one (b = 2 a + e) is imputed with intervals far wider
#' than the relation allows: over 5 simulated series
#' (`bench/results/series_noisy_copy.md`), b's 95% intervals given a fully
#' observed a were 8.9 wide against the relation's 3.9 (coverage 98.9%), and
#' the pooled standard error of b's slope on a was 0.086 against 0.029 from
#' the complete cases and 0.051 with mice's `"norm"`. For such a pair, mice's
#' regression imputation uses the relation.
#'
#' **Form of the data sets.** For [impute_series()], each completed data set
#' is a data frame in the form of the imputed `x`: a data frame comes back
#' with all its columns (the time column, columns named in `time =`, the
#' imputed variables, under their own names); a `ts`, a matrix, a vector or a
#' [ditimpute_series()] becomes a data frame with a `time` column and one
#' column per variable. For [impute()], the columns are `sequence` and
#' `frame` followed by the variables (one row per frame of each sequence);
#' for one `H x d` matrix, `frame` and the variables (named by its column
#' names, else `V1`, `V2`, ...).
#' Imputation 0 (`complete(mids, 0)`, `include = TRUE`) is the data with
#' their missing values.
#'
#' **Proper or improper.** Rubin's rules assume *proper* imputations: draws
#' that carry the uncertainty about the imputation model's parameters as well
#' as about the missing values given them. By default the completions of
#' [impute_series()] on series of 60 frames or more without an end gap (and
#' of [impute()] with a fitted [gp_fit()] or a trained DiT) hold the fitted
#' parameters fixed: the
#' trend, the kernel and `Lambda` are the maximum-likelihood estimates, and
#' every sample path is drawn given them. They are then improper, and Rubin's
#' rules understate the between-imputation variance by the part due to
#' parameter uncertainty: the
#' pooled standard errors and the fraction of missing information come out
#' too small. `impute_series(proper = TRUE)` (the default on series of fewer
#' than 60 frames, and on series of up to 20,000 frames with a gap at their
#' start or end) draws each path under its own draw of the form (by BIC
#' weight) and the parameters from their approximate sampling distribution
#' (see its `proper` argument), which
#' is what Rubin's rules assume. It matters
#' when the parameters are uncertain against what the missing values add:
#' short series (tens of frames per parameter), long gaps, a large fraction
#' of missing information (say above 0.3), and analyses that lean on the
#' imputed relation between variables (a regression slope leans on
#' `Lambda`). On long, well-observed series the two agree. With a known
#' Gaussian process ([impute()] with a [gp_spec()] of the true model) the
#' draws are exact conditional draws and no parameter is estimated.
#' `vignette("pooling")` shows the coverage of pooled intervals measured both
#' ways (`bench/mi_pooling.R`).
#'
#' **Messages in a report.** `as_mids()`, `with()` and `complete()` say both
#' things above each time they are called on such an imputation (the
#' improper note once per session at the console, every time in a knitted
#' document, so that a second rendering keeps it). Once read, a report can
#' keep them out of a chunk with the chunk options `message = FALSE` and
#' `warning = FALSE`, or around a call with
#' `suppressMessages(..., classes = "ditimpute_improper_message")` and
#' `suppressWarnings(..., classes = "ditimpute_warning_groups")`.
#'
#' **Not a mice chain.** The `mids` object holds finished imputations: its
#' `method` is `"ditimpute"` for every imputed variable (no method of mice
#' made them), and its chain cannot be continued with `mice::mice.mids()`,
#' which would replace them with imputations of its own (it stops with an
#' error, finding no `mice.impute.ditimpute()`). For more imputations, impute
#' again with more `n_samples`. What mice's own imputation model would have
#' dropped (a constant column, say) is kept in `$loggedEvents` without mice's
#' "Number of logged events" warning: no mice model imputes here. For the
#' same reason `$predictorMatrix` is mice's default (every other column, the
#' `time` index among them) and says nothing of how the values were imputed:
#' that is the imputation's own model (for [impute_series()], `print(object$model)`).
#'
#' **The completed data sets** hold the variables in the form of the
#' imputed data: a data frame's columns (row names included; a tibble comes
#' back as a data frame, as from mice), or, for a matrix or `ts`, a `time`
#' column and the variables; for [impute()], `sequence` and `frame` columns
#' and the variables. A variable with the name of such an index column keeps
#' it, and the index gets a dot in front (`.time`). Variables named `.imp` or
#' `.id` are an input error (mice's long format reserves them). Imputed values
#' are real numbers: an integer column comes back as a double one with
#' fractional imputations (rounding imputations tends to bias estimates;
#' round in the analysis if a count model needs it).
#'
#' @param object An imputation from [impute_series()] or [impute()] with
#'   samples.
#' @param m The imputations, as `m` of `mice::mice()`: a single number
#'   uses the first `m` sample paths (`m = 5`: five imputations, paths 1 to
#'   5), a vector of several numbers those paths (`m = c(2, 7)`); `NULL`
#'   (the default) all `n_samples`. More than `n_samples` is an input error.
#' @param ... Unused: a named argument here is an input error.
#' @return A `mids` object (package \pkg{mice}).
#' @seealso [completions()], [completed_series()]
#' @examplesIf requireNamespace("mice", quietly = TRUE)
#' set.seed(1)
#' n <- 120
#' b <- as.numeric(arima.sim(list(ar = 0.7), n))
#' a <- 1 + 0.5 * b + as.numeric(arima.sim(list(ar = 0.5), n, sd = 0.5))
#' d <- data.frame(date = as.Date("2020-01-01") + seq_len(n) - 1, a = a, b = b)
#' d$a[c(20:35, 70:80)] <- NA
#' imp <- impute_series(d, n_samples = 20, seed = 1)
#' mids <- as_mids(imp)
#' head(mice::complete(mids, 1))
#' fits <- with(imp, lm(a ~ b))
#' summary(mice::pool(fits))
#' @export
as_mids <- function(object, m = NULL, ...) {
  check_dots(environment(), "as_mids()")
  check_mids_input(object)
  mids_of_paths(object, resolve_paths(m, object$n_samples, distinct = TRUE))
}

check_mids_input <- function(object, call = rlang::caller_env()) {
  if (!requireNamespace("mice", quietly = TRUE)) {
    abort_input("object", "needs the mice package for a mids object: install.packages(\"mice\").", call = call)
  }
  if (!inherits(object, "ditimpute_imputation")) {
    abort_input("object", "must be an imputation from impute_series() or impute().", call = call)
  }
  if (all(vapply(object$samples, is.null, TRUE))) {
    abort_input("object", "has no sample paths (a deterministic imputation): there is nothing to pool.", call = call)
  }
}

# What every pooled analysis of the imputation should know: groups imputed
# apart, and plug-in parameters. `used`: the names an analysis refers to
# (with()'s expression), when known: the groups' warning only when they
# span two groups or more (a review: lm(PM2.5 ~ NO2) was warned of,
# although both were imputed in one group and only WSPM apart). NULL (as_mids(),
# or an expression held in a variable) warns whenever there are groups.
mids_notes <- function(object, used = NULL) {
  set <- inherits(object$model, "ditimpute_series_model_set")
  if (set && !is.null(used)) {
    group_of <- rep(seq_along(object$model$groups), lengths(object$model$groups))
    names(group_of) <- object$model$variables[unlist(object$model$groups)]
    hit <- intersect(used, names(group_of))
    if (length(hit) && length(unique(group_of[hit])) < 2) set <- FALSE
  }
  if (set) {
    groups <- vapply(object$model$groups, function(g) paste(object$model$variables[g], collapse = ", "), "")
    cli::cli_warn(c("The variables were imputed in independent groups ({paste(groups, collapse = ' | ')}): within each completion a group's imputations ignore the other groups' values.",
                    i = "A relation between variables of different groups is pulled towards zero in the pooled analysis; for it, impute with {.code separate = \"none\"} (see ?as_mids, \"Relations between variables\")."),
                  class = c("ditimpute_warning_groups", "ditimpute_warning"))
  }
  if (isFALSE(object$model$proper)) {  # a GP series imputation with proper = FALSE (impute_series())
    rlang::inform(c("The completions hold the fitted parameters fixed (improper imputation): pooled standard errors leave out the parameters' uncertainty.",
                    i = "impute_series(proper = TRUE) draws the form and parameters per completion, as Rubin's rules assume; see ?as_mids."),
                  class = "ditimpute_improper_message", .frequency_id = "ditimpute_improper",
                  # every time in a knitted report (once per session, a second render lost it: a review)
                  .frequency = if (isTRUE(getOption("knitr.in.progress"))) "always" else "once")
  }
}

# The mids of sample paths `m` (checked), imputation k of it being path m[k].
mids_of_paths <- function(object, m) {
  as_frame <- mids_frame(object)
  sets <- completion_values(object, m)
  data0 <- as_frame(as_values(object, object$x))
  odd <- names(data0)[make.names(names(data0)) != names(data0)]
  if (length(odd)) {  # mice::as.mids() builds formulas of the names and stops with a parse error
    abort_input("object", sprintf("has variable%s %s, which mice cannot take (it needs syntactic names such as %s): rename %s in x before imputing.",
                                  if (length(odd) > 1) "s" else "", paste0("\"", odd, "\"", collapse = ", "),
                                  paste0("\"", make.names(names(data0), unique = TRUE)[match(odd, names(data0))], "\"",
                                         collapse = ", "),
                                  if (length(odd) > 1) "them" else "it"), call = rlang::caller_env())
  }
  reserved <- intersect(c(".imp", ".id"), names(data0))
  if (length(reserved)) {  # mice's long format would take it for its own column and drop it
    abort_input("object", sprintf("has a variable named \"%s\", a name mice reserves for its own index columns: rename it in x before imputing.",
                                  reserved[1]), call = rlang::caller_env())
  }
  mids_notes(object)
  # a data frame's own row names (rows of airquality for June on) become the
  # mids' row names, as mice does with an .id column
  ids <- if (is.data.frame(data0) && .row_names_info(data0) > 0) rownames(data0) else seq_len(nrow(data0))
  long <- do.call(rbind, c(list(cbind(.imp = 0L, .id = ids, data0)),
                           lapply(seq_along(sets), function(k) {
                             cbind(.imp = k, .id = ids, as_frame(sets[[k]]))
                           })))
  rownames(long) <- NULL
  # mice::as.mids() sets up mice's own imputation model too and warns
  # "Number of logged events" for what that model would drop (a constant
  # column, such as the year within one window): as_mids() imputes nothing
  # with it, so the warning is muffled; the events stay in $loggedEvents.
  mids <- withCallingHandlers(mice::as.mids(long), warning = function(w) {
    if (grepl("logged events", conditionMessage(w), fixed = TRUE)) invokeRestart("muffleWarning")
  })
  # The imputations are ditimpute's, not mice's: label them so, and as a
  # method mice does not know, so that mice::mice.mids() stops with an error
  # instead of overwriting them with its default ("pmm") imputations.
  mids$method[names(mids$nmis)[mids$nmis > 0]] <- "ditimpute"
  mids
}

# The imputation's x (n x H x d, or H x d for one sequence) in the form the
# completions have.
as_values <- function(object, arr) {
  if (isTRUE(object$single) && length(dim(arr)) == 3) matrix(arr[1, , ], dim(arr)[2], dim(arr)[3]) else arr
}

# A function turning completed values into the data frame of one imputation.
mids_frame <- function(object) {
  if (inherits(object, "ditimpute_series_imputation")) {
    vars <- colnames(object$x)
    probe <- object$rebuild(object$point)
    if (is.data.frame(probe)) return(function(vals) object$rebuild(vals))
    time <- object$time
    if (inherits(time, "POSIXlt")) time <- as.POSIXct(time)
    time_name <- index_name("time", vars)
    return(function(vals) {
      vals <- matrix(as.numeric(vals), nrow(object$x), dimnames = list(NULL, vars))
      out <- data.frame(time, vals, check.names = FALSE)
      names(out)[1] <- time_name
      out
    })
  }
  obj3 <- as3(object)
  vars <- variable_names(object)
  n <- dim(obj3$x)[1]; H <- dim(obj3$x)[2]; d <- dim(obj3$x)[3]
  frame_name <- index_name("frame", vars)
  sequence_name <- index_name("sequence", vars)
  function(vals) {
    arr <- if (length(dim(vals)) == 2) array(vals, c(1L, dim(vals))) else vals
    flat <- matrix(aperm(arr, c(2, 1, 3)), n * H, d, dimnames = list(NULL, vars))
    # One H x d sequence has no `sequence` column (a constant one, which mice
    # would log and warn about).
    index <- if (isTRUE(object$single)) list(seq_len(H)) else list(rep(seq_len(n), each = H), rep(seq_len(H), n))
    names(index) <- if (isTRUE(object$single)) frame_name else c(sequence_name, frame_name)
    data.frame(index, flat, check.names = FALSE)
  }
}

# The name of an index column the completed data sets add (time, frame,
# sequence): a variable of that name keeps it, the index gets dots in front
# (a review: a variable named `time` was replaced by the time index in
# with() and complete(), a regression on it silently fitted the calendar).
index_name <- function(name, vars) {
  while (name %in% vars) name <- paste0(".", name)
  name
}

#' @rdname as_mids
#' @param data An imputation (for `complete()`, `with()`).
#' @param action,include,mild As in `mice::complete()`: which completed data
#'   set (`1`, ..., or `"long"`, `"broad"`, `"repeated"`, `"all"`), whether
#'   to include the incomplete data, and whether to return a list.
#' @exportS3Method tidyr::complete
complete.ditimpute_imputation <- function(data, action = 1L, include = FALSE, mild = FALSE, ...) {
  check_dots(environment(), "complete()")  # mice's complete() ignores what it does not know (a review)
  check_mids_input(data)
  # mice's own words, abbreviated as mice's match.arg() allows ("l"), checked
  # here so that the error names `action` (mice said "'arg' should be one of"; a review)
  if (is.character(action)) {
    words <- c("all", "long", "broad", "repeated", "stacked")
    hit <- if (length(action) == 1 && !is.na(action)) pmatch(action, words) else NA
    action <- check_string(if (is.na(hit)) action else words[hit], words, arg = "action")
  }
  if (!is.numeric(action) && !is.character(action)) {
    abort_input("action", sprintf("must be completed data sets 0..%d (0: the data with their gaps) or one of mice's words (\"long\", \"all\", ...).",
                                  as.integer(data$n_samples)))
  }
  # One completed data set: the mids of that path alone (one of every path,
  # which mice::as.mids() checks as a whole, took 77 s against 0.04 s for
  # 100 paths of 100,000 frames in a user review).
  if (is.numeric(action) && length(action) == 1 && isFALSE(include) && isFALSE(mild) && !is.na(action) &&
      action == round(action) && action >= 1 && action <= data$n_samples) {
    return(mice::complete(mids_of_paths(data, action), action = 1L, ...))
  }
  if (is.numeric(action) && any(is.na(action) | action < 0 | action > data$n_samples | action != round(action))) {
    abort_input("action", sprintf("must be completed data sets 0..%d (0: the data with their gaps) or one of mice's words (\"long\", \"all\", ...).",
                                  as.integer(data$n_samples)))
  }
  mice::complete(as_mids(data), action = action, include = include, mild = mild, ...)
}

#' @rdname as_mids
#' @param expr An analysis to repeat on each completed data set, e.g.
#'   `lm(a ~ b)`; its variables are columns of the completed data.
#' @export
with.ditimpute_imputation <- function(data, expr, ...) {
  check_dots(environment(), "with()")
  check_mids_input(data)
  # What mice's with.mids() returns (a "mira" of one analysis per completed
  # data set, in as_mids()'s order), without building the mids first: for
  # 100 paths of 100,000 frames mice::as.mids() took most of a minute.
  e <- substitute(expr)
  mids_notes(data, used = all.vars(e))
  as_frame <- mids_frame(data)
  data0 <- as_frame(as_values(data, data$x))
  enclos <- parent.frame()
  analyses <- lapply(seq_len(data$n_samples), function(k) {
    frame <- as_frame(completion_values(data, k)[[1]])
    out <- eval(e, frame, enclos)
    if (is.expression(out)) out <- eval(out, frame, enclos)
    out
  })
  structure(list(call = match.call(), call1 = NULL, nmis = vapply(data0, function(col) sum(is.na(col)), 0L), analyses = analyses),
            class = c("mira", "matrix"))
}
