# How many harmonics the season of impute_series() needs on short monthly
# series, and at what cost: the same gaps imputed with the season's state
# set four ways, everything else at the package's defaults.
#
#   former: 3 harmonics, drift as a Matern 3/2 process (envelope 2): the
#           default for series of up to 1,500 frames until 2026-11-27;
#   h5e2:   5 harmonics, Matern 3/2 drift (a state 5/3 as large);
#   h6e1:   6 harmonics (every one a 12-month period has), exponential drift;
#   default: the package's since 2026-11-27: 5 harmonics with exponential
#           drift (envelope 1, the state size of `former`) where the period
#           has room for more than 3 (monthly), `former` where not (quarterly).
#
# Series: R's monthly (and quarterly UKgas) series, the first column of
# Seatbelts with the others beside it; gaps as bench/series_fresh.R's
# (P(L) ~ L^-1.5 on 1 .. an eighth of the series, 15% hidden), 6 repetitions.
# Scores: MAE of each form over `former`'s on the same values, raw 90%
# coverage, seconds per imputation (one thread).
#
# Usage: Rscript bench/series_harmonics.R [reps]   (writes bench/results/series_harmonics.md)
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 6L

src <- new.env()
src$pick <- NULL
src$only <- NULL
src$kalman_limit <- 60
src$has_imputets <- FALSE
lines <- readLines("bench/series_long.R")
eval(parse(text = lines[grep("^data_dir <- ", lines)[1]:(grep("^rows <- list", lines)[1] - 1)]), envir = src)

ns <- asNamespace("ditimpute")
forms_default <- ns$series_candidate_forms
with_season <- function(harmonics, envelope, expr) {
  assignInNamespace("series_candidate_forms", function(...) {
    f <- forms_default(...)
    s <- f$kernel == "seasonal"
    if (!is.na(envelope)) f$envelope[s] <- envelope
    # (the default is min(5, floor(period / 2)) on these series: below 5 it is the period's cap)
    if (!is.na(harmonics)) f$harmonics[s] <- ifelse(f$harmonics[s] < 5, pmin(harmonics, f$harmonics[s]), harmonics)
    f
  }, ns)
  on.exit(assignInNamespace("series_candidate_forms", forms_default, ns))
  force(expr)
}
forms <- list(former = c(3, 2), h5e2 = c(5, 2), h6e1 = c(6, 1), default = c(NA, NA))
series <- list(USAccDeaths = USAccDeaths, AirPassengers = AirPassengers, UKDriverDeaths = UKDriverDeaths,
               mdeaths = mdeaths, ldeaths = ldeaths, nottem = nottem, co2 = co2, UKgas = log(UKgas),
               Seatbelts = Seatbelts[, c("drivers", "front", "rear")])
t_start <- proc.time()[["elapsed"]]
out <- list()
for (name in names(series)) {
  y0 <- series[[name]]
  v0 <- as.matrix(y0)
  for (r in seq_len(reps)) {
    g <- src$hide_repetition(v0[, 1], name, r, 0.15, max_len = max(2L, nrow(v0) %/% 8L))
    y <- y0
    if (is.matrix(y)) y[g$h, 1] <- NA else y[g$h] <- NA
    for (f in names(forms)) {
      t0 <- proc.time()[["elapsed"]]
      imp <- with_season(forms[[f]][1], forms[[f]][2],
                         impute_series(y, level = 0.9, n_samples = 30, seed = 1, threads = 1))
      secs <- proc.time()[["elapsed"]] - t0
      P <- as.matrix(imp$point)[g$h, 1]
      L <- as.matrix(imp$lower)[g$h, 1]
      U <- as.matrix(imp$upper)[g$h, 1]
      out[[length(out) + 1]] <- data.frame(series = name, rep = r, form = f, mae = mean(abs(P - g$truth)),
                                           n = length(P), covered = sum(L <= g$truth & g$truth <= U), seconds = secs,
                                           harmonics = imp$model$spec$harmonics, envelope = imp$model$spec$season_envelope,
                                           kernel = imp$model$kernel_name)
    }
  }
  cat(sprintf("%s done (%.0f s)\n", name, proc.time()[["elapsed"]] - t_start))
}
res <- do.call(rbind, out)
rows <- lapply(names(series), function(name) {
  d <- res[res$series == name, ]
  base <- d[d$form == "former", ]
  vapply(names(forms), function(f) {
    a <- d[d$form == f, ]
    sprintf("%.3f / %.1f%% / %.1f s", sum(a$mae * a$n) / sum(base$mae * base$n), 100 * sum(a$covered) / sum(a$n),
            mean(a$seconds))
  }, "")
})
seasonal_share <- tapply(res$kernel == "seasonal", res$series, mean)
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# The season's harmonics on short monthly series (bench/series_harmonics.R)", "",
        sprintf("`Rscript bench/series_harmonics.R %d` on %s (%s); %d repetitions per series (gaps as bench/series_fresh.R's).",
                reps, format(Sys.Date()), R.version.string, reps),
        sprintf("Whole run %.0f s, one thread per imputation; load average at the end: %s (2 cores).",
                proc.time()[["elapsed"]] - t_start, load), "",
        "Each cell: MAE over `former`'s on the same hidden values / raw 90% coverage / seconds per imputation.",
        "former = 3 harmonics with a Matern 3/2 drift (the default until 2026-11-27); h5e2 = 5 harmonics, Matern 3/2",
        "drift; h6e1 = 6 harmonics, exponential drift; default = the package's since: 5 harmonics with exponential",
        "drift (the former state size) on monthly series, the former form on quarterly UKgas. `seasonal`: share of the",
        "imputations whose BIC chose the seasonal kernel.", "",
        paste0("| series | seasonal | ", paste(names(forms), collapse = " | "), " |"),
        paste0("|---|---|", paste(rep("---", length(forms)), collapse = "|"), "|"),
        vapply(seq_along(series), function(i) sprintf("| %s | %.2f | %s |", names(series)[i],
                                                      seasonal_share[[names(series)[i]]], paste(rows[[i]], collapse = " | ")), ""),
        "")
writeLines(md, "bench/results/series_harmonics.md")
cat(md, sep = "\n")
