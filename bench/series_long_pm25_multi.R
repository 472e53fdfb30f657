# Does the rest of the station help PM2.5? bench/series_long_pm25.R found that
# no univariate form of impute_series() beats linear interpolation on
# BeijingAir's PM2.5 and guessed that other variables measured at the same
# station would. Here impute_series() gets PM2.5 with PM10, NO2 and CO
# (Dongsi, 35,064 hours) in one data frame, on bench/series_long.R's gaps in
# PM2.5 (its hide_gaps(), seeds and groups): (a) gaps in PM2.5 alone, the
# other variables observed there (a failed PM2.5 sensor); (b) the same gaps in
# all four (a station outage). MAE over linear interpolation's of the same
# PM2.5 entries by gap length, and raw 90% coverage, beside the univariate
# default on the same gaps.
# The same question for ETTh1's or ETTh2's oil temperature (OT) with the six
# load series of its transformer (HUFL, HULL, MUFL, MULL, LUFL, LULL) beside
# it: the third argument names the target. Each input with several variables
# runs under the default separate = "auto" (a variable that the others
# explain under 5% of the one-step changes of gets a model of its own); the
# gaps in the target only run once more with separate = "none" (one form for
# all variables, the default before 2026-11-28).
# Usage: Rscript bench/series_long_pm25_multi.R [reps] [data_dir] [PM2.5|ETTh1|ETTh2]
# Writes bench/results/series_long_pm25_multi.md (PM2.5) or
# bench/results/series_long_multi_<ETTh1|ETTh2>_OT.md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, gap helpers, beijing, fmt
target <- if (length(args) >= 3) args[3] else "PM2.5"
if (target == "PM2.5") {
  frame <- beijing
  vars <- c("PM2.5", "PM10", "NO2", "CO")
  name <- "BeijingAir_PM2.5"                                  # bench/series_long.R's name: its seeds
  others <- "PM10, NO2, CO"
  where <- "Dongsi station"
} else if (target %in% c("ETTh1", "ETTh2")) {
  frame <- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(target, ".csv.gz"))))
  vars <- c("OT", "HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL")
  name <- paste0(target, "_OT")
  others <- "the six loads"
  where <- paste0(target, ", oil temperature and the six loads of its transformer")
} else stop("the third argument must be PM2.5, ETTh1 or ETTh2")

rows <- character(0)
for (r in seq_len(reps)) {
  y0 <- frame[[vars[1]]]
  h <- hide_gaps(y0, 0.15, seed = 1000 * r + nchar(name))  # bench/series_long.R's seed for this series
  truth <- y0[h]
  grp <- group_of(run_len(h)[h])
  y <- y0
  y[h] <- NA
  lin <- linear(y)$point[h]
  only <- as.matrix(frame[vars])
  only[h, 1] <- NA
  all <- as.matrix(frame[vars])
  all[h, ] <- NA
  forms <- stats::setNames(list(stats::ts(y, frequency = 24), stats::ts(only, frequency = 24), stats::ts(all, frequency = 24),
                                stats::ts(only, frequency = 24)),
                           c(sprintf("%s alone (the univariate default)", vars[1]),
                             sprintf("with %s; gaps in %s only", others, vars[1]),
                             sprintf("with %s; gaps in all %s", others, if (length(vars) == 4) "four" else length(vars)),
                             sprintf("with %s; gaps in %s only; separate = \"none\"", others, vars[1])))
  separate <- c("auto", "auto", "auto", "none")
  for (k in seq_along(forms)) {
    f <- names(forms)[k]
    t0 <- proc.time()[["elapsed"]]
    warned <- FALSE
    imp <- withCallingHandlers(impute_series(forms[[f]], level = 0.9, n_samples = 50, seed = 1, separate = separate[k]),
                               warning = function(w) {
                                 warned <<- TRUE
                                 invokeRestart("muffleWarning")
                               })
    if (warned) f <- paste(f, "(warned)")
    secs <- proc.time()[["elapsed"]] - t0
    if (inherits(imp$model, "ditimpute_series_model_set")) {
      f <- sprintf("%s (groups: %s)", f, paste(vapply(imp$model$groups, function(g) paste(vars[g], collapse = ", "), ""),
                                             collapse = " / "))
    }
    est <- as.matrix(imp$point)[h, 1]
    lo <- as.matrix(imp$lower)[h, 1]
    hi <- as.matrix(imp$upper)[h, 1]
    cover <- lo <= truth & truth <= hi
    ratio <- c(mean(abs(est - truth)) / mean(abs(lin - truth)),
               tapply(abs(est - truth), grp, mean) / tapply(abs(lin - truth), grp, mean))
    rows <- c(rows, sprintf("| %d | %s | %s | %.3f | %s | %.0f |", r, f, fmt(ratio), mean(cover),
                            fmt(tapply(cover, grp, mean)), secs))
    cat(tail(rows, 1), "\n")
  }
}
out <- if (target == "PM2.5") "series_long_pm25_multi" else paste0("series_long_multi_", name)
write_result(out, sprintf("# %s with %s (bench/series_long_pm25_multi.R)", vars[1], others),
             sprintf("bench/series_long.R's gaps in %s (15%% hidden, P(L) ~ L^-1.5 on 1..400), %s", vars[1], where),
             c(sprintf("## %s: MAE over linear interpolation's by gap length, raw 90%% coverage", vars[1]), "",
               "| rep | impute_series() input (separate = \"auto\", the default, unless said) | all | 1 | 2-5 | 6-20 | 21-60 | >60 | cover all | 1 | 2-5 | 6-20 | 21-60 | >60 | seconds |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", rows),
             script = "series_long_pm25_multi")
