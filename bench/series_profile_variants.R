# Which seasonal shape to hold fixed on forecast::taylor (issue 27; see
# series_profile() in rpkg/R/series_model.R): none (the kernel's harmonics
# only, impute_series() before 2026-12-03), the shape's harmonics above the
# kernel's only (the kernel keeps the lower ones, with their drift), or the
# whole shape (the default). bench/series_fresh.R's gaps of taylor (the same
# seeds: 15% hidden, P(L) ~ L^-1.5 up to an eighth of the series), MAE and raw
# 90% coverage by gap-length group, with imputeTS::na_seadec beside them.
# Also both given the series with the daily period (frequency 48) instead of
# the weekly one (`day` and `na_seadec_day`): what a user who gives the
# shorter period gets.
# Usage: Rscript bench/series_profile_variants.R [reps]   (from the repository root)
# Writes bench/results/series_profile_variants.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 10L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
source("bench/with_object.R")
ns <- asNamespace("ditimpute")
whole <- get("series_profile", ns)
above <- function(u, period, harmonics) {  # the whole shape less its first `harmonics` harmonics
  prof <- whole(u, period, harmonics)
  if (is.null(prof)) return(NULL)
  k <- 0:(period - 1)
  apply(prof, 2, function(m) {
    f <- stats::fft(m)
    f[pmin(k, period - k) <= harmonics] <- 0
    Re(stats::fft(f, inverse = TRUE)) / period
  })
}
variants <- list(none = function(...) NULL, above = above, whole = whole)
y0 <- forecast::taylor
rows <- list()
t_start <- proc.time()[["elapsed"]]
for (r in seq_len(reps)) {
  g <- src$hide_repetition(y0, "taylor", r, 0.15, max_len = max(2L, length(y0) %/% 8L))
  gap <- paste(r, cumsum(c(TRUE, diff(which(g$h)) > 1)))
  for (v in names(variants)) {
    imp <- with_object("series_profile", variants[[v]], impute_series(g$y, level = 0.9, n_samples = 50, seed = 1))
    rows[[length(rows) + 1]] <- data.frame(rep = r, method = v, gap = gap, group = g$grp,
                                           abs = abs(as.numeric(imp$point)[g$h] - g$truth),
                                           cover = imp$lower[g$h] <= g$truth & g$truth <= imp$upper[g$h],
                                           model = paste(imp$model$model_name, imp$model$kernel_name))
  }
  day <- stats::ts(as.numeric(g$y), frequency = 48)
  imp <- impute_series(day, level = 0.9, n_samples = 50, seed = 1)
  rows[[length(rows) + 1]] <- data.frame(rep = r, method = "day", gap = gap, group = g$grp,
                                         abs = abs(as.numeric(imp$point)[g$h] - g$truth),
                                         cover = imp$lower[g$h] <= g$truth & g$truth <= imp$upper[g$h],
                                         model = paste(imp$model$model_name, imp$model$kernel_name))
  for (m in c("na_seadec", "na_seadec_day")) {
    sd <- as.numeric(suppressWarnings(imputeTS::na_seadec(if (m == "na_seadec") g$y else day)))
    rows[[length(rows) + 1]] <- data.frame(rep = r, method = m, gap = gap, group = g$grp,
                                           abs = abs(sd[g$h] - g$truth), cover = NA, model = "")
  }
}
res <- do.call(rbind, rows)
groups <- c("all", levels(res$group))
tab <- do.call(rbind, lapply(c(names(variants), "na_seadec", "day", "na_seadec_day"), function(m) {
  d <- res[res$method == m, ]; s <- res[res$method == "na_seadec", ]
  do.call(rbind, lapply(groups, function(k) {
    sel <- if (k == "all") rep(TRUE, nrow(d)) else d$group == k
    data.frame(method = m, group = k, mae = mean(d$abs[sel]), ratio_seadec = mean(d$abs[sel]) / mean(s$abs[sel]),
               se = src$ratio_se(d$abs[sel], s$abs[sel], d$gap[sel]), coverage90 = mean(d$cover[sel]))
  }))
}))
models <- sapply(c(names(variants), "day"), function(v) {
  t <- table(res$model[res$method == v & !duplicated(paste(res$rep, res$method))])
  paste(sprintf("%s %d", names(t), as.integer(t)), collapse = "; ")
})
fmt <- function(x, d = 3) ifelse(is.na(x), "NA", formatC(x, format = "f", digits = d))
md <- c(taylor_header("The seasonal shape held fixed on forecast::taylor", "series_profile_variants.R", reps,
                      "period 336); 90% intervals, 50 sample paths", t_start),
        "`none`: no shape held (the seasonal kernel's 3 harmonics only); `above`: the shape's harmonics above the kernel's;",
        "`whole`: the whole shape (impute_series()'s default). `day` and `na_seadec_day`: impute_series() (default) and",
        "na_seadec given the series with the daily period (frequency 48). `ratio_seadec`: MAE over imputeTS::na_seadec's",
        "(weekly period) on the same hidden values, `se`: its standard error counting each hidden gap as one unit.", "",
        "| method | group | MAE | ratio_seadec | se | coverage90 |", "|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s | %s | %s |", tab$method, tab$group, fmt(tab$mae, 1), fmt(tab$ratio_seadec), fmt(tab$se),
                fmt(tab$coverage90)), "",
        "Forms chosen: ", sprintf("- %s: %s", names(models), models), "")
writeLines(md, "bench/results/series_profile_variants.md")
cat(md, sep = "\n")
