# Forms that might bridge tsHeating's gaps better than the default's (a
# prototype study for issue 27, nothing here is a package option).
#
# On imputeTS's tsHeating with its own gaps, impute_series() has 1.02-1.04x
# linear interpolation's MAE in the groups over 5 frames
# (bench/results/series_real_gaps.md). Its model, a local level (at the rate
# the level-rate step chose) plus a Matern 5/2 term of lengthscale about 5
# frames, fills a gap on a steady decline by flattening at its start and
# catching up at its end, where the truth (and linear interpolation) keeps the
# slope. Two changes that could keep the slope, each applied to the form the
# default chose (bench/with_object.R swaps the rate step for one that returns
# the changed form, its scale and Lambda re-profiled by one evaluation of the
# core's fit, nothing else refitted):
#   smooth xK  the smooth term's lengthscale K times the fitted one;
#   trend      model = "trend" (a local linear trend; its fitted slope noise is
#              nil, about 1e-13 of the stationary variance), with slope noise
#              S of the stationary variance a frame and the level's rate at
#              1 or 10 times its fitted value.
# impute_series() at bench/series_real_gaps.R's settings (the ts object, 90%
# intervals, 50 sample paths, seed 1). Scores: MAE and 90% coverage on the
# series' own gaps (the truth from tsHeatingComplete) and the mean CRPS on one
# round of hidden gaps of the series' own lengths anywhere in the series (the
# rate step's scorer). And the default on the same gap pattern moved
# elsewhere in the series.
#
# Usage: Rscript bench/series_heating_forms.R   (from the repository root;
#   writes bench/results/series_heating_forms.md)
suppressMessages(library(ditimpute))
if (!requireNamespace("imputeTS", quietly = TRUE)) stop("this bench needs imputeTS (bash tools/setup-bench.sh)")
source("bench/with_object.R")
ns <- asNamespace("ditimpute")
e <- new.env()
utils::data(list = c("tsHeating", "tsHeatingComplete"), package = "imputeTS", envir = e)
y0 <- as.numeric(e$tsHeating); truth <- as.numeric(e$tsHeatingComplete)
h <- is.na(y0)
lin <- imputeTS::na_interpolation(y0)
runs <- rle(h)
grp <- cut(rep(runs$lengths, runs$lengths)[h], c(0, 5, 20, 60, Inf), labels = c("1-5", "6-20", "21-60", ">60"))
rate_step <- ns$series_rate_step  # the package's, before with_object() swaps it

# Each variant: the model argument and the change to the chosen form's spec.
variants <- list("default" = list(model = "auto", change = NULL))
for (k in c(3, 10, 30)) {
  variants[[sprintf("smooth x%g", k)]] <- local({
    k <- k
    list(model = "auto", change = function(s) { s$smooth_lengthscale <- k * s$smooth_lengthscale; s })
  })
}
for (km in c(1, 10)) for (sr in c(1e-5, 1e-4, 1e-3)) {
  variants[[sprintf("trend, slope noise %g, level rate x%g", sr, km)]] <- local({
    km <- km; sr <- sr
    list(model = "trend", change = function(s) {
      tot <- s$smooth_var + s$nugget + (if (isTRUE(s$seasonal)) s$season_var else 0)
      s$level_rate <- s$level_rate * km
      s$slope_rate <- max(s$slope_rate, sr * tot)
      s
    }, fitted_rate = TRUE)
  })
}

t_start <- proc.time()[["elapsed"]]
rows <- list()
for (name in names(variants)) {
  vr <- variants[[name]]
  crps <- NA_real_
  step <- function(v, y, cand, fit, ridge, seed, threads, call) {
    # The default's rate step first, unless the variant sets the rate itself
    # (the trend variants, from the fitted form).
    base <- if (isTRUE(vr$fitted_rate)) cand else {
      r <- rate_step(v, y, cand, fit, ridge, seed, threads, call)
      if (is.null(r)) cand else r$candidate
    }
    if (!is.null(vr$change)) {
      base <- ns$core_call(ns$cpp_structural_fit(y, list(vr$change(base$spec)),
                                                 list(max_frames = fit$fit_frames, ridge = ridge, threads = threads,
                                                      max_evaluations = 1L)), call = call)$candidates[[1]]
    }
    whole <- list(candidates = list(base), fit_start = 1L, fit_frames = nrow(y))
    scorer <- ns$series_gap_scorer(v, whole, y, seed, threads, call, 1L)
    crps <<- mean(scorer$score(1L))
    # multiplier != 1: the model uses `base` (its label and selection rows are
    # not read here)
    list(multiplier = 2, candidate = base, selection = NULL)
  }
  t0 <- proc.time()[["elapsed"]]
  imp <- with_object("series_rate_step", step,
                     suppressWarnings(impute_series(e$tsHeating, level = 0.9, n_samples = 50, seed = 1, model = vr$model)))
  secs <- proc.time()[["elapsed"]] - t0
  err <- abs(as.numeric(imp$point)[h] - truth[h])
  cover <- as.numeric(imp$lower)[h] <= truth[h] & truth[h] <= as.numeric(imp$upper)[h]
  s <- imp$model$spec
  rows[[length(rows) + 1]] <- data.frame(
    variant = name, lengthscale = s$smooth_lengthscale, crps = crps, mae = mean(err),
    ratio_linear = mean(err) / mean(abs(lin[h] - truth[h])),
    t(tapply(err, grp, mean) / tapply(abs(lin[h] - truth[h]), grp, mean)),
    coverage = mean(cover), seconds = secs, check.names = FALSE)
  message(sprintf("%-40s MAE %.4f  CRPS %.4f  %.1f s", name, mean(err), crps, secs))
}
d <- do.call(rbind, rows)

# The default on the same gap pattern moved elsewhere in the series (shifted
# circularly by `shift` frames, the truth from tsHeatingComplete): do the
# real gaps sit where interpolation does unusually well?
moved <- do.call(rbind, lapply(c(150000L, 300000L), function(shift) {
  n <- length(y0)
  hs <- h[((seq_len(n) - 1L + shift) %% n) + 1L]
  ys <- replace(truth, hs, NA)
  imp <- suppressWarnings(impute_series(stats::ts(ys, frequency = stats::frequency(e$tsHeating)), level = 0.9,
                                        n_samples = 50, seed = 1))
  lin_s <- imputeTS::na_interpolation(ys)
  err <- abs(as.numeric(imp$point)[hs] - truth[hs])
  data.frame(shift = shift, missing = sum(hs), mae = mean(err), linear = mean(abs(lin_s[hs] - truth[hs])),
             coverage = mean(as.numeric(imp$lower)[hs] <= truth[hs] & truth[hs] <= as.numeric(imp$upper)[hs]))
}))
elapsed <- proc.time()[["elapsed"]] - t_start

out <- "bench/results/series_heating_forms.md"
con <- file(out, "w")
w <- function(...) cat(..., "\n", sep = "", file = con)
w("# Forms that might bridge tsHeating's gaps better (bench/series_heating_forms.R, a prototype study)")
w("")
w(sprintf("`Rscript bench/series_heating_forms.R` on %s (%s, ditimpute %s). Whole run %.0f s; load average at the end: %s.",
          format(Sys.Date()), R.version.string, utils::packageVersion("ditimpute"), elapsed,
          paste(tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), collapse = "")))
w("")
w(sprintf("tsHeating's own %d missing values; linear interpolation's MAE %.4f. `crps`: mean CRPS on one round of hidden",
          sum(h), mean(abs(lin[h] - truth[h]))))
w("gaps of the series' own lengths anywhere in the series (standardised units; lower is better); `ratio_linear` and the")
w("group columns: MAE over linear interpolation's; `coverage`: raw 90% intervals. `default`: impute_series()'s choice")
w("(a local level at the rate the level-rate step chose, smooth term); `smooth xK`: that form with the smooth")
w("lengthscale K times longer; `trend, ...`: model = \"trend\" with the slope noise (share of the stationary variance a")
w("frame) and the level's rate (times the fitted one) shown.")
w("")
w("| variant | lengthscale | crps | MAE | ratio_linear | 1-5 | 6-20 | 21-60 | >60 | coverage | seconds |")
w("|---|---|---|---|---|---|---|---|---|---|---|")
for (i in seq_len(nrow(d))) {
  w(sprintf("| %s | %.3g | %.4f | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f%% | %.1f |", d$variant[i], d$lengthscale[i],
            d$crps[i], d$mae[i], d$ratio_linear[i], d[i, "1-5"], d[i, "6-20"], d[i, "21-60"], d[i, ">60"],
            100 * d$coverage[i], d$seconds[i]))
}
w("")
w("## The default on the same gaps moved elsewhere in the series")
w("")
w("The series' own gap pattern shifted circularly by `shift` frames (the truth from tsHeatingComplete), imputed by")
w("the default; `ratio_linear`: its MAE over linear interpolation's on those values.")
w("")
w("| shift | missing | MAE | linear | ratio_linear | coverage |")
w("|---|---|---|---|---|---|")
for (i in seq_len(nrow(moved))) {
  w(sprintf("| %d | %d | %.4f | %.4f | %.3f | %.1f%% |", moved$shift[i], moved$missing[i], moved$mae[i], moved$linear[i],
            moved$mae[i] / moved$linear[i], 100 * moved$coverage[i]))
}
close(con)
cat(readLines(out), sep = "\n")
