# bench/series_long.R's gaps (hide_gaps(), hide_repetition(), group_of()),
# methods (impute_series() at the bench's settings, linear interpolation,
# imputeTS's) and gap-counting standard errors (ratio_se()), for the benches
# that score other series the same way: an environment holding them, with
# na_kalman skipped on a series where it took over `kalman_limit` seconds.
# Source from the repository root: source("bench/series_long_parts.R").
series_long_parts <- function(kalman_limit) {
  src <- new.env()
  src$pick <- NULL
  src$only <- NULL
  src$kalman_limit <- kalman_limit
  src$has_imputets <- requireNamespace("imputeTS", quietly = TRUE)
  if (!src$has_imputets) message("imputeTS is not installed: its methods are skipped")
  lines <- readLines("bench/series_long.R")
  eval(parse(text = lines[grep("^data_dir <- ", lines)[1]:(grep("^rows <- list", lines)[1] - 1)]), envir = src)
  eval(parse(text = lines[grep("^ratio_se <- function", lines)[1]:(grep("^summarise <- function", lines)[1] - 1)]),
       envir = src)
  src
}

# fn(g, name, r) for each repetition r of bench/series_long.R's gaps in each
# of its series named in `names` (its `series` list: "ETTh1_OT", ...,
# "sunspot.month", or another column such as "ETTh1_HUFL"), read from
# `data_dir`: g = hide_repetition() of the series. The data frames fn
# returns, bound by rows.
series_repetitions <- function(parts, data_dir, reps, names, fn) {
  parts$data_dir <- data_dir
  out <- list()
  for (name in names) {
    # Other columns of the shared data by series_long.R's names (other_series()).
    y0 <- (if (name %in% names(parts$series)) parts$series[[name]] else parts$other_series(name))()
    for (r in seq_len(reps)) out[[length(out) + 1]] <- fn(parts$hide_repetition(y0, name, r), name, r)
  }
  do.call(rbind, out)
}

# The same for the oil temperature (OT) of ETTh1 and of ETTh2, with
# fn(g, name, frame, r): frame the whole data set (OT and its loads).
ett_ot_repetitions <- function(parts, data_dir, reps, fn) {
  frames <- list()
  series_repetitions(parts, data_dir, reps, c("ETTh1_OT", "ETTh2_OT"), function(g, name, r) {
    target <- sub("_OT$", "", name)
    if (is.null(frames[[target]]))
      frames[[target]] <<- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(target, ".csv.gz"))))
    fn(g, name, frames[[target]], r)
  })
}

# The series a bench runs on, from its command line's third argument
# ("BeijingAir_PM2.5,treering", ...; default ETTh1 and ETTh2 OT), and the name
# of its result file: `name`, with the series appended when they are not the
# default.
series_picked <- function(args, name) {
  default <- c("ETTh1_OT", "ETTh2_OT")
  picked <- if (length(args) >= 3 && nzchar(args[3])) strsplit(args[3], ",")[[1]] else default
  list(names = picked, result = if (identical(picked, default)) name else paste(c(name, picked), collapse = "_"))
}

# Standardised errors of a 90% interval [lower, upper] around the hidden
# truths, on the model's scale (`transform`, as impute_series() fitted it:
# Box-Cox or log intervals are symmetric only there): (truth - centre) / sd,
# with sd the half-width over qnorm(0.95).
standardised_errors <- function(truth, lower, upper, transform) {
  lo <- fitted_scale(lower, transform); hi <- fitted_scale(upper, transform)
  (fitted_scale(truth, transform) - (lo + hi) / 2) / ((hi - lo) / (2 * stats::qnorm(0.95)))
}

# Values of a univariate series on the model's scale (`transform` as
# impute_series() fitted it; NULL: the data's own scale).
fitted_scale <- function(x, transform) {
  tr <- if (is.null(transform)) list(lambda = NA_real_) else transform
  ditimpute:::on_model_scale(as.numeric(x), rep(1L, length(x)), tr)
}

# The opening lines of a result file of a bench on bench/series_fresh.R's gaps
# of forecast::taylor (bench/series_profile_variants.R,
# bench/series_profile_calibration.R): title, command, date, package version,
# `setting` (what was run on each repetition) and the run's time and load.
taylor_header <- function(title, script, reps, setting, t_start) {
  load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
  c(sprintf("# %s (bench/%s)", title, script), "",
    sprintf("`Rscript bench/%s %d` on %s (ditimpute %s): %d repetitions of bench/series_fresh.R's gaps",
            script, reps, format(Sys.Date()), as.character(utils::packageVersion("ditimpute")), reps),
    sprintf("of taylor (4,032 half-hours, %s. Whole run %.0f s; load average %s.",
            setting, proc.time()[["elapsed"]] - t_start, load), "")
}

# One of imputeTS's series with its own gaps and the truth of its *Complete
# twin (tsNH4, tsHeating, tsAirgap): the series `y`, its missing mask `h` and
# the true values there, `truth`.
imputets_series <- function(name) {
  e <- new.env()
  utils::data(list = c(name, paste0(name, "Complete")), package = "imputeTS", envir = e)
  y <- get(name, e); full <- get(paste0(name, "Complete"), e)
  h <- is.na(y)
  stopifnot(!anyNA(full), isTRUE(all.equal(as.numeric(y[!h]), as.numeric(full[!h]))))
  list(y = y, h = h, truth = as.numeric(full)[h])
}

# The versions of a series a bench scores, each list(y, h, truth, label):
# one of imputeTS's series with its own gaps (imputets_series()), or
# bench/series_long.R's series `name` with that bench's hidden gaps of
# repetitions 1..reps (`parts` from series_long_parts(), its data_dir set).
series_versions <- function(parts, name, reps) {
  if (requireNamespace("imputeTS", quietly = TRUE) && name %in% utils::data(package = "imputeTS")$results[, "Item"]) {
    return(list(c(imputets_series(name), label = name)))
  }
  y0 <- (if (name %in% names(parts$series)) parts$series[[name]] else parts$other_series(name))()
  lapply(seq_len(reps), function(r) {
    g <- parts$hide_repetition(y0, name, r)
    list(y = g$y, h = g$h, truth = g$truth, label = sprintf("%s rep %d", name, r))
  })
}

# The methods among `candidates` that scored every value the GP did in `d`
# (rows: one per scored value, with a `method` column): na_kalman stopped by
# its time limit on some repetitions scored fewer, and its MAE on those would
# be compared with the GP's on all of them.
full_methods <- function(d, candidates) {
  n_gp <- sum(d$method == "gp")
  candidates[vapply(candidates, function(m) sum(d$method == m) == n_gp, TRUE)]
}
