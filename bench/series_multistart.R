# Are impute_series()'s structural fits local optima? Each candidate form is
# fitted by Nelder-Mead from one start (series_start_spec()); this refits
# every form from 27 more starts (smooth lengthscale 3 / 10 / 40 frames x
# nugget 0.01 / 0.1 / 1 x level rate 1e-3 / 1e-2 / 1e-1, the other values
# as the default start's) on the same data and scale as the default fit
# (transform = "auto", standardised), and reports, per series, the largest
# log-likelihood gain of any start over the default start for the form the
# default chooses by BIC and for any form, whether the best starts would
# choose another form, and the time of one fit against the 28.
#
# Series: the nine 40-50-frame stretches of bench/series.R's short_proper set,
# R's datasets (Nile, LakeHuron, lynx, AirPassengers, nottem, UKgas,
# sunspot.year, WWWusage, co2, presidents, austres, JohnsonJohnson, BJsales,
# ldeaths, UKDriverDeaths, airquality's Ozone, beaver2's temperature) and the
# first 1,000 hours of ETTh1's OT (period 24) when the shared data are found.
#
# Usage: Rscript bench/series_multistart.R [data_dir]
# Writes bench/results/series_multistart.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else "../shared/data"
t_start <- proc.time()[["elapsed"]]
load_start <- paste(round(unname(as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3])), 2), collapse = " ")

series <- list(
  LakeHuron40 = stats::ts(datasets::LakeHuron[1:40]), lynx40 = stats::ts(datasets::lynx[1:40]),
  WWWusage40 = stats::ts(datasets::WWWusage[1:40]), discoveries40 = stats::ts(datasets::discoveries[1:40]),
  nhtemp40 = stats::ts(datasets::nhtemp[1:40]), sunspot40 = stats::ts(datasets::sunspot.year[1:40]),
  USAccDeaths48 = stats::window(datasets::USAccDeaths, end = c(1976, 12)),
  EuStock50 = stats::ts(log(datasets::EuStockMarkets[1:50, ])),
  Seatbelts48 = stats::ts(datasets::Seatbelts[1:48, c("drivers", "front", "rear")], frequency = 12),
  Nile = datasets::Nile, LakeHuron = datasets::LakeHuron, lynx = datasets::lynx, AirPassengers = datasets::AirPassengers,
  nottem = datasets::nottem, UKgas = datasets::UKgas, sunspot.year = datasets::sunspot.year,
  WWWusage = datasets::WWWusage, co2 = datasets::co2, presidents = datasets::presidents, austres = datasets::austres,
  JohnsonJohnson = datasets::JohnsonJohnson, BJsales = datasets::BJsales, ldeaths = datasets::ldeaths,
  UKDriverDeaths = datasets::UKDriverDeaths, Ozone = stats::ts(datasets::airquality$Ozone),
  beaver2 = stats::ts(datasets::beaver2$temp))
ett <- file.path(data_dir, "ett", "ETTh1.csv.gz")
if (file.exists(ett)) series$ETTh1_OT_1000 <- stats::ts(utils::read.csv(ett)$OT[1:1000], frequency = 24)

grid <- expand.grid(smooth_lengthscale = c(3, 10, 40), nugget = c(0.01, 0.1, 1), level_rate = c(1e-3, 1e-2, 1e-1))
starts <- c(list(list()), lapply(seq_len(nrow(grid)), function(i) as.list(grid[i, ])))

rows <- lapply(names(series), function(nm) {
  x <- series[[nm]]
  v <- as.matrix(x)
  colnames(v) <- if (ncol(v) == 1) nm else colnames(v)
  period <- if (stats::frequency(x) >= 2) stats::frequency(x) else 1
  # The default fit, as impute_series() makes it (ridge 1e-2, 6,000 frames, one thread).
  t0 <- proc.time()[["elapsed"]]
  m <- ditimpute:::fit_series_model(v, period, "auto", "auto", "auto", 1e-2, 6000L, 1L)
  t_one <- proc.time()[["elapsed"]] - t0
  u <- ditimpute:::to_model_scale(v, m$transform)
  y <- sweep(sweep(u, 2, m$center), 2, m$scale, "/")
  forms <- ditimpute:::series_candidate_forms("auto", "auto", period, nrow(v), min(colSums(!is.na(v))), NULL)
  specs <- ditimpute:::series_start_specs(forms, period)
  evaluations <- ditimpute:::series_fit_evaluations(nrow(v), 6000L)
  t0 <- proc.time()[["elapsed"]]
  L <- do.call(rbind, lapply(starts, function(st) {
    f <- ditimpute:::cpp_structural_fit(y, lapply(specs, function(s) utils::modifyList(s, st)),
                                        list(max_frames = 6000L, ridge = 1e-2, threads = 1L, max_evaluations = evaluations))
    vapply(f$candidates, function(c) c$loglik, 0)
  }))
  t_all <- proc.time()[["elapsed"]] - t0
  gain <- apply(L, 2, max) - L[1, ]
  bic0 <- m$candidates$BIC
  bic_best <- bic0 - 2 * gain
  w <- function(b) { e <- exp(-(b - min(b)) / 2); e / sum(e) }
  chosen <- which.min(bic0)
  data.frame(series = nm, frames = nrow(v), d = ncol(v), forms = nrow(forms),
             chosen = paste(forms$model[chosen], forms$kernel[chosen], sep = "/"),
             gain_chosen = gain[chosen], gain_max = max(gain),
             form_gaining_most = paste(forms$model[which.max(gain)], forms$kernel[which.max(gain)], sep = "/"),
             chosen_by_best_starts = paste(forms$model[which.min(bic_best)], forms$kernel[which.min(bic_best)], sep = "/"),
             weight_chosen = w(bic0)[chosen], weight_chosen_best_starts = w(bic_best)[chosen],
             seconds_default_fit = t_one, seconds_28_starts = t_all, stringsAsFactors = FALSE)
})
tab <- do.call(rbind, rows)
fmt <- function(df) {
  num <- vapply(df, is.numeric, TRUE)
  df[num] <- lapply(df[num], function(z) formatC(z, digits = 3, format = "fg"))
  c(paste0("| ", paste(names(df), collapse = " | "), " |"), paste0("|", strrep("---|", ncol(df))),
    apply(df, 1, function(r) paste0("| ", paste(r, collapse = " | "), " |")))
}
load_end <- paste(round(unname(as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3])), 2), collapse = " ")
out <- c("# Local optima of the structural fits (bench/series_multistart.R)", "",
         sprintf("`Rscript bench/series_multistart.R %s` on %s; %s. Load average %s at the start, %s at the end (2 cores); wall %.0f s.",
                 data_dir, format(Sys.Date()), R.version.string, load_start, load_end, proc.time()[["elapsed"]] - t_start), "",
         "Every candidate form refitted from the default start and 27 others (smooth lengthscale 3 / 10 / 40 x nugget 0.01 / 0.1 / 1 x level rate 1e-3 / 1e-2 / 1e-1) on the default fit's scale. gain_* = the best start's log-likelihood minus the default start's (model scale; the data scale's differs by a constant); weight_* = the BIC weight of the default's chosen form among the forms, with the default start's and the best starts' log-likelihoods.", "",
         fmt(tab), "",
         sprintf("Chosen form's gain: median %.2f, largest %.2f (%s); any form's: largest %.2f. The best starts choose another form on %d of %d series.",
                 stats::median(tab$gain_chosen), max(tab$gain_chosen), tab$series[which.max(tab$gain_chosen)], max(tab$gain_max),
                 sum(tab$chosen != tab$chosen_by_best_starts), nrow(tab)))
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(out, "bench/results/series_multistart.md")
cat(out, sep = "\n")
