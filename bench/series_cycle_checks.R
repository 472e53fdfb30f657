# Two checks of impute_series(kernel = "cycle") behind the figures of
# bench/series_cycle.R:
# 1. The periodogram start (series_cycle_start()) on 40 simulated series of
#    300 frames (a 37-frame sine on a random walk, sd 0.1 a frame, with noise
#    of sd 0.5; seeds 1-40), against the same rule without its last step
#    (the highest of the three bins the smoothed peak spans), the rule of the
#    first build: how often each lands on the nearest bin, 300 / 8 = 37.5.
# 2. lynx, whose 90% intervals under-cover with the cycle: raw, with
#    calibrate = TRUE and with proper = TRUE, against the default, on
#    bench/series_cycle.R's gaps (an eighth of the series at most, 15%
#    hidden), 10 repetitions, 100 sample paths.
#
# Usage: Rscript bench/series_cycle_checks.R   (from the repository root)
# Writes bench/results/series_cycle_checks.md.
suppressMessages(library(ditimpute))
start_new <- ditimpute:::series_cycle_start
# The last step lives in series_cycle_peak() (which series_cycle_start() calls).
txt <- paste(deparse(ditimpute:::series_cycle_peak), collapse = "\n")
stopifnot(grepl("near <- intersect(best + (-1):1, k)", txt, fixed = TRUE))
peak_old <- eval(parse(text = sub("near <- intersect(best + (-1):1, k)", "near <- best", txt, fixed = TRUE)))
environment(peak_old) <- asNamespace("ditimpute")
start_old <- function(v) peak_old(v)$period
starts <- t(vapply(1:40, function(s) {
  set.seed(s)
  n <- 300
  t <- seq_len(n)
  y <- cumsum(rnorm(n, sd = 0.1)) + sin(2 * pi * t / 37) + rnorm(n, sd = 0.5)
  c(new = start_new(matrix(y)), old = start_old(matrix(y)))
}, c(new = 0, old = 0)))
count <- function(x) paste(sprintf("%.1f: %d", as.numeric(names(table(round(x, 1)))), as.integer(table(round(x, 1)))),
                           collapse = ", ")

source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
y0 <- datasets::lynx
configs <- list(default = list(kernel = "auto"), cycle = list(kernel = "cycle"),
                `cycle, calibrate = TRUE` = list(kernel = "cycle", calibrate = TRUE),
                `cycle, proper = TRUE` = list(kernel = "cycle", proper = TRUE))
rows <- list()
for (r in 1:10) {
  g <- src$hide_repetition(y0, "lynx", r, 0.15, max_len = max(2L, length(y0) %/% 8L))
  for (cfg in names(configs)) {
    imp <- suppressWarnings(do.call(impute_series, c(list(g$y, level = 0.9, n_samples = 100, seed = 1), configs[[cfg]])))
    rows[[length(rows) + 1]] <- data.frame(config = cfg, rep = r, gap = paste(r, g$gap),
                                           abs = abs(imp$point[g$h] - g$truth),
                                           cover = imp$lower[g$h] <= g$truth & g$truth <= imp$upper[g$h])
  }
}
res <- do.call(rbind, rows)
tab <- do.call(rbind, lapply(names(configs), function(cfg) {
  d <- res[res$config == cfg, ]
  data.frame(config = cfg, values = nrow(d), mae = mean(d$abs), cover = mean(d$cover),
             se = src$ratio_se(as.numeric(d$cover), rep(1, nrow(d)), d$gap))
}))
md <- c("# Checks of kernel = \"cycle\" (bench/series_cycle_checks.R)", "",
        sprintf("`Rscript bench/series_cycle_checks.R` on %s (ditimpute %s).", format(Sys.Date()),
                as.character(utils::packageVersion("ditimpute"))), "",
        "## 1. The periodogram start on 40 simulated series (300 frames, a 37-frame cycle; the nearest bin is 37.5)", "",
        sprintf("- series_cycle_start(): %s", count(starts[, "new"])),
        sprintf("- without its last step (the first build's rule): %s", count(starts[, "old"])), "",
        "## 2. lynx: 90% coverage of the hidden values, 10 repetitions", "",
        "| imputation | hidden values | MAE | 90% coverage | SE |", "|---|---|---|---|---|",
        sprintf("| %s | %d | %.1f | %.1f%% | %.1f |", tab$config, tab$values, tab$mae, 100 * tab$cover, 100 * tab$se), "")
writeLines(md, "bench/results/series_cycle_checks.md")
cat(md, sep = "\n")
