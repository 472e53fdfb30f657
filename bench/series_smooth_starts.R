# The smooth forms' second start (series_second_starts(), 2026-12-05): a
# form with the smooth kernel alone whose starting lengthscale was tied to the
# period (min(period, 20)) is fitted from 10 frames too, and keeps the better
# optimum. A user review found the stationary smooth form of fdeaths stuck at
# log-likelihood -440.9 (lengthscale 1e+05) from starts of 13-20 frames,
# against -412.5 from 2-12. This bench fits every seasonal series of the
# package's benches with and without the second start (the former rule
# through bench/with_object.R) on the same gaps and reports, per series, the
# largest log-likelihood gain of a smooth form, whether the chosen form
# changed, and MAE, 90% coverage and seconds of both.
#
# Series: R's seasonal series of bench/series.R, series_fresh.R and
# series_ends.R (monthly and quarterly; 3 repetitions of gaps, 15% of the
# values in gaps of 1-24 frames) and the long hourly series of
# bench/series_long.R (ETTh1/ETTh2 OT, BeijingAir PM2.5/O3 at Dongsi, period
# 24) and sunspot.month (period 12) with repetition 1 of series_long.R's
# gaps, when the shared data are found.
#
# Usage: Rscript bench/series_smooth_starts.R [reps] [data_dir] [seasonal]
# Writes bench/results/series_smooth_starts.md; with a third argument
# "seasonal", a study not adopted: `before` is the package's rule and `after`
# gives the seasonal forms a second start as well (smooth lengthscale 10 where
# theirs started at min(period, 20)), written to
# bench/results/series_smooth_starts_seasonal.md.
suppressMessages(library(ditimpute))
source("bench/with_object.R")
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
data_dir <- if (length(args) >= 2) args[2] else file.path("..", "shared", "data")
seasonal <- length(args) >= 3 && args[3] == "seasonal"
load_of <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
load_start <- load_of()
t0 <- proc.time()[["elapsed"]]

short <- list(AirPassengers = datasets::AirPassengers, nottem = datasets::nottem, UKgas = datasets::UKgas,
              co2 = datasets::co2, presidents = datasets::presidents, austres = datasets::austres,
              JohnsonJohnson = datasets::JohnsonJohnson, ldeaths = datasets::ldeaths, mdeaths = datasets::mdeaths,
              fdeaths = datasets::fdeaths, UKDriverDeaths = datasets::UKDriverDeaths,
              USAccDeaths = datasets::USAccDeaths, drivers = datasets::Seatbelts[, "drivers"],
              quarterly_gas = stats::aggregate(datasets::UKgas, nfrequency = 4))
# bench/series_long.R's series and gaps (its hide_gaps(), hide_repetition())
source("bench/series_long_parts.R")
parts <- series_long_parts(kalman_limit = 0)
parts$data_dir <- data_dir
have_data <- dir.exists(file.path(data_dir, "ett")) && dir.exists(file.path(data_dir, "beijing_air"))
long <- if (have_data) names(parts$series) else "sunspot.month"
long <- setdiff(long, "treering")  # yearly: no period, one start as before

no_second_start <- function(specs) list(rows = integer(), specs = list())
# The study's rule: every form whose smooth start differs from 10 frames.
every_second_start <- function(specs) {
  start <- get("series_smooth_start", asNamespace("ditimpute"))
  again <- which(vapply(specs, function(s) s$smooth_lengthscale != start, TRUE))
  list(rows = again, specs = lapply(specs[again], function(s) {
    s$smooth_lengthscale <- start
    s
  }))
}

# One imputation under a rule: chosen form, smooth forms' log-likelihoods,
# MAE and 90% coverage on the hidden values, seconds.
run_rule <- function(y, h, truth, old) {
  t <- proc.time()[["elapsed"]]
  fit <- function() impute_series(y, level = 0.9, seed = 1, threads = 2)
  imp <- if (seasonal) {
    if (old) fit() else with_object("series_second_starts", every_second_start, fit())
  } else {
    if (old) with_object("series_second_starts", no_second_start, fit()) else fit()
  }
  secs <- proc.time()[["elapsed"]] - t
  cand <- imp$model$candidates
  est <- as.numeric(imp$point)[h]
  forms <- if (seasonal) rep(TRUE, nrow(cand)) else cand$kernel == "smooth"
  list(chosen = paste(cand$model[cand$chosen], cand$kernel[cand$chosen]),
       smooth = stats::setNames(cand$logLik[forms], paste(cand$model, cand$kernel)[forms]),
       mae = mean(abs(est - truth)),
       coverage = mean(truth >= as.numeric(imp$lower)[h] & truth <= as.numeric(imp$upper)[h]),
       seconds = secs)
}

rows <- list()
one <- function(name, y0, r, h) {
  y <- y0
  y[h] <- NA
  truth <- as.numeric(y0)[h]
  a <- run_rule(y, h, truth, old = TRUE)
  b <- run_rule(y, h, truth, old = FALSE)
  gain <- b$smooth[names(a$smooth)] - a$smooth
  message(sprintf("%s rep %d: gain %.3f, chosen %s -> %s, MAE %.4g -> %.4g, %.1f s -> %.1f s", name, r,
                  max(gain), a$chosen, b$chosen, a$mae, b$mae, a$seconds, b$seconds))
  data.frame(series = name, frames = length(y0), rep = r, hidden = sum(h), gain_max = max(gain),
             gaining_form = names(gain)[which.max(gain)], chosen_before = a$chosen, chosen_after = b$chosen,
             mae_before = a$mae, mae_after = b$mae, mae_ratio = b$mae / a$mae,
             coverage_before = a$coverage, coverage_after = b$coverage,
             seconds_before = a$seconds, seconds_after = b$seconds, stringsAsFactors = FALSE)
}
for (name in names(short)) {
  y0 <- short[[name]]
  for (r in seq_len(reps)) {
    h <- parts$hide_gaps(as.numeric(y0), 0.15, seed = 100 * r + nchar(name), max_len = min(24, length(y0) %/% 6))
    rows[[length(rows) + 1]] <- one(name, y0, r, h)
  }
}
for (name in long) {  # repetition 1 of bench/series_long.R's gaps
  y0 <- parts$series[[name]]()
  rows[[length(rows) + 1]] <- one(name, y0, 1, parts$hide_repetition(y0, name, 1)$h)
}
d <- do.call(rbind, rows)
saveRDS(d, file.path(tempdir(), "series_smooth_starts.rds"))  # the rows, should the report fail

fmt <- function(x, digits = 3) if (is.numeric(x)) formatC(x, format = "fg", digits = digits, flag = "#") else x
md <- function(df) {
  out <- c(paste0("| ", paste(names(df), collapse = " | "), " |"), paste0("|", strrep("---|", ncol(df))))
  for (i in seq_len(nrow(df))) out <- c(out, paste0("| ", paste(vapply(df[i, ], function(v) fmt(v[[1]]), ""), collapse = " | "), " |"))
  out
}
changed <- d$chosen_before != d$chosen_after
pooled <- function(sel) sprintf("MAE after / before %.4f (pooled over %d imputations), 90%% coverage %.3f -> %.3f",
                                sum(d$mae_after[sel] * d$hidden[sel]) / sum(d$mae_before[sel] * d$hidden[sel]), sum(sel),
                                sum(d$coverage_before[sel] * d$hidden[sel]) / sum(d$hidden[sel]),
                                sum(d$coverage_after[sel] * d$hidden[sel]) / sum(d$hidden[sel]))
out <- c(if (seasonal) "# A second start for the seasonal forms too: a study (bench/series_smooth_starts.R seasonal)" else
           "# The smooth forms' second start (bench/series_smooth_starts.R)", "",
         sprintf("`Rscript bench/series_smooth_starts.R %d %s%s` on %s, %s; %d repetitions of gaps on R's seasonal series, repetition 1 of bench/series_long.R's gaps on the long ones. %s impute_series(level = 0.9, seed = 1, threads = 2). Load average %s at the start, %s at the end (2 cores); wall %.0f s.",
                 reps, data_dir, if (seasonal) " seasonal" else "", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                 R.version.string, reps,
                 if (seasonal) {
                   paste("`before`: the package's rule (a second start for the smooth forms); `after`: every form whose",
                         "smooth lengthscale started elsewhere also from 10 frames (bench/with_object.R), the better optimum kept.")
                 } else {
                   paste("`before`: one start per form (the rule until 2026-12-05, through bench/with_object.R); `after`:",
                         "the smooth forms also from 10 frames, the better optimum kept.")
                 },
                 load_start, load_of(), proc.time()[["elapsed"]] - t0), "",
         sprintf("gain_max: the largest log-likelihood gain of a %s form after over before, on the data's scale.",
                 if (seasonal) "candidate" else "smooth"), "",
         md(d), "",
         sprintf("- %s that gained over 0.5 log-likelihood units: %d of %d imputations; chosen form changed in %d.",
                 if (seasonal) "Forms" else "Smooth forms", sum(d$gain_max > 0.5), nrow(d), sum(changed)),
         sprintf("- All: %s.", pooled(rep(TRUE, nrow(d)))),
         if (any(changed)) sprintf("- Where the chosen form changed: %s.", pooled(changed)),
         sprintf("- Seconds, sum: before %.1f, after %.1f (ratio %.2f).", sum(d$seconds_before), sum(d$seconds_after),
                 sum(d$seconds_after) / sum(d$seconds_before)))
writeLines(out, if (seasonal) "bench/results/series_smooth_starts_seasonal.md" else "bench/results/series_smooth_starts.md")
cat(out, sep = "\n")
