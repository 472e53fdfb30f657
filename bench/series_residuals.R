# Do the default structural models leave structure in real series? The
# residual checks of summary() (standardised one-step errors: Ljung-Box at
# lag 10 or two periods, errors beyond 3 sds against a Gaussian's count) on
# the default fit of every series of bench/series_sets.R and of R series no
# default was chosen on, each fitted whole (no value hidden: the model a user
# gets for the series). A Ljung-Box p under 0.05 says the form misses
# autocorrelation (its p is not adjusted for the fitted parameters, so a
# little high); many errors beyond 3 sds say the Gaussian law is too light
# (the intervals then miss the extremes).
#
# Usage (repository root, package installed): Rscript bench/series_residuals.R
# Writes bench/results/series_residuals.md.
suppressPackageStartupMessages(library(ditimpute))
source("bench/series_sets.R")  # series, fresh, short
others <- list(USAccDeaths = datasets::USAccDeaths, lynx = datasets::lynx, LakeHuron = datasets::LakeHuron,
               WWWusage = datasets::WWWusage, sunspot.year = datasets::sunspot.year, airmiles = datasets::airmiles,
               UKDriverDeaths = datasets::UKDriverDeaths, AirPassengers = datasets::AirPassengers,
               presidents = datasets::presidents, precip_nhtemp = datasets::nhtemp, treering = datasets::treering,
               discoveries = datasets::discoveries)
all <- c(series, fresh, short, others)
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
load0 <- loadavg()
rows <- list()
for (name in names(all)) {
  y <- all[[name]]
  t0 <- proc.time()[["elapsed"]]
  imp <- tryCatch(suppressWarnings(suppressMessages(impute_series(y, n_samples = 20, proper = FALSE, seed = 1,
                                                                   threads = 1))),
                  error = function(e) e)
  if (inherits(imp, "error")) {
    rows[[length(rows) + 1]] <- data.frame(series = name, variable = NA, form = conditionMessage(imp), errors = NA,
                                           lag = NA, ljung_box_p = NA, over_3sd = NA, expected = NA, seconds = NA)
    next
  }
  r <- summary(imp)$residuals
  # each variable's own form (a model set's part holding it)
  m <- imp$model
  form <- if (inherits(m, "ditimpute_series_model_set")) {
    vapply(seq_along(r$variable), function(j) {
      g <- which(vapply(m$groups, function(cols) j %in% cols, TRUE))
      paste0(ditimpute:::series_model_label(m$parts[[g]]), if (length(m$groups[[g]]) == 1) ", on its own" else "")
    }, "")
  } else ditimpute:::series_model_label(m)
  rows[[length(rows) + 1]] <- data.frame(series = name, variable = r$variable, form = form, errors = r$errors,
                                         lag = r$lag, ljung_box_p = r$ljung_box_p, over_3sd = r$over_3sd,
                                         expected = r$expected, seconds = round(proc.time()[["elapsed"]] - t0, 1))
  cat(name, "\n")
}
tab <- do.call(rbind, rows)
ok <- !is.na(tab$ljung_box_p)
md_table <- function(df) {
  c(paste0("| ", paste(names(df), collapse = " | "), " |"), paste0("|", strrep("---|", ncol(df))),
    apply(df, 1, function(r) paste0("| ", paste(trimws(format(r)), collapse = " | "), " |")))
}
out <- c("# Residual checks of the default structural model on real series (bench/series_residuals.R)", "",
         sprintf(paste("`Rscript bench/series_residuals.R` on %s, R %s: every series fitted whole with the defaults",
                       "(`proper = FALSE`, one thread); summary()'s residual checks per variable. Load average %s",
                       "before, %s after (2 cores)."), format(Sys.Date()), getRversion(), load0, loadavg()), "",
         sprintf(paste("Ljung-Box p < 0.05 on %d of %d variables (p < 0.01 on %d); errors beyond 3 sds: %d against",
                       "%.1f for a Gaussian, on %d of %d variables more than twice the Gaussian's count plus 1."),
                 sum(tab$ljung_box_p[ok] < 0.05), sum(ok), sum(tab$ljung_box_p[ok] < 0.01), sum(tab$over_3sd[ok]),
                 sum(tab$expected[ok]), sum(tab$over_3sd[ok] > 2 * tab$expected[ok] + 1), sum(ok)), "",
         md_table(tab))
writeLines(out, "bench/results/series_residuals.md")
cat(out[1:5], sep = "\n")
