# Self-calibration of a series that holds a fixed seasonal shape (issue 27):
# forecast::taylor, the one benchmark series that holds one (series_profile()
# in rpkg/R/series_model.R). The shape is the position means of 12 weeks of
# half-hours; a calibration round that hides observed values but keeps the
# shape estimated with them scores errors smaller than a real gap's, and
# narrowed intervals that were not too wide (raw 90% coverage 88.9%,
# calibrated 86.8%, bench/results/series_fresh_packages_gp_nonstationary.md).
# Since 2026-12-03 each round estimates the shape again without its hidden
# values (series_profile_refit()). Here both on the same imputations:
# `kept` (the shape estimated with the hidden values, as before) and
# `refit` (the default now), against the raw intervals, by gap-length
# group; bench/series_fresh.R's gaps of taylor (same seeds), 90% intervals.
# Usage: Rscript bench/series_profile_calibration.R [reps]   (from the repository root)
# Writes bench/results/series_profile_calibration.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 10L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
source("bench/with_object.R")
variants <- list(kept = function(model, v) model, refit = get("series_profile_refit", asNamespace("ditimpute")))
y0 <- forecast::taylor
rows <- list(); factors <- list()
t_start <- proc.time()[["elapsed"]]
for (r in seq_len(reps)) {
  g <- src$hide_repetition(y0, "taylor", r, 0.15, max_len = max(2L, length(y0) %/% 8L))
  gap <- paste(r, cumsum(c(TRUE, diff(which(g$h)) > 1)))
  imp <- impute_series(g$y, level = 0.9, n_samples = 50, seed = 1)
  score <- function(method, x) {
    data.frame(rep = r, method = method, gap = gap, group = g$grp,
               cover = x$lower[g$h] <= g$truth & g$truth <= x$upper[g$h])
  }
  rows[[length(rows) + 1]] <- score("raw", imp)
  for (v in names(variants)) {
    cal <- with_object("series_profile_refit", variants[[v]], calibrate(imp, seed = r))  # the same rounds for both
    rows[[length(rows) + 1]] <- score(v, apply_calibration(imp, cal))
    f <- cal$factors  # the gap-length groups by rank (their bounds differ by repetition), then all pooled
    factors[[length(factors) + 1]] <- data.frame(rep = r, method = v,
                                                 group = ifelse(f$group == "pooled", "pooled", paste("group", seq_len(nrow(f)))),
                                                 factor = f$interval)
  }
}
res <- do.call(rbind, rows)
fac <- do.call(rbind, factors)
groups <- c("all", levels(res$group))
binom_se <- function(x, gap) {  # each hidden gap one unit
  m <- mean(x)
  tot <- tapply(x - m, gap, sum)
  sqrt(sum(tot^2)) / length(x)
}
tab <- do.call(rbind, lapply(groups, function(k) {
  out <- data.frame(group = k)
  for (m in c("raw", names(variants))) {
    d <- res[res$method == m, ]
    sel <- if (k == "all") rep(TRUE, nrow(d)) else d$group == k
    out[[m]] <- mean(d$cover[sel])
    out[[paste0(m, "_se")]] <- binom_se(d$cover[sel], d$gap[sel])
  }
  out$entries <- sum(res$method == "raw" & (k == "all" | res$group == k))
  out
}))
ftab <- aggregate(factor ~ method + group, fac, function(f) sprintf("%.3f (%.3f-%.3f)", mean(f), min(f), max(f)))
fmt <- function(x, d = 3) ifelse(is.na(x), "NA", formatC(x, format = "f", digits = d))
md <- c(taylor_header("Self-calibration with a fixed seasonal shape on forecast::taylor", "series_profile_calibration.R", reps,
                      paste("weekly period 336, 15% hidden); impute_series(level = 0.9) once per repetition, then",
                            "`calibrate(seed = rep)` twice on it (the same hidden rounds for both)"), t_start),
        "`raw`: the imputation's 90% intervals; `kept`: self-calibrated with each round's shape estimated with its hidden values",
        "(before 2026-12-03); `refit`: each round's shape estimated without them (series_profile_refit(), the default now).",
        "Coverage of the hidden values; `_se`: its standard error counting each hidden gap as one unit.", "",
        "| group | entries | raw | raw_se | kept | kept_se | refit | refit_se |", "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %s | %s | %s | %s | %s | %s |", tab$group, tab$entries, fmt(tab$raw), fmt(tab$raw_se),
                fmt(tab$kept), fmt(tab$kept_se), fmt(tab$refit), fmt(tab$refit_se)), "",
        "The calibrations' applied factors (`factors$interval`: the half-widths move by 1 + factor; each repetition's",
        "gap-length groups, shortest first, then all hidden gaps pooled): mean over repetitions (range).", "",
        "| calibration | group | factor |", "|---|---|---|",
        sprintf("| %s | %s | %s |", ftab$method, ftab$group, ftab$factor))
writeLines(md, "bench/results/series_profile_calibration.md")
cat(md, sep = "\n")
