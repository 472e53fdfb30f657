# Plug-in against proper draws on series of 60 to 160 frames, where
# impute_series(proper = "auto") draws plug-in (proper draws below 60 frames
# and on series with an end gap). A user review (2026-12-06) measured
# USAccDeaths (72 months) at 85.4% coverage of 90% intervals on one 6-month
# gap at 16 positions with the default and 89.6% with proper = TRUE, while
# ?impute_series cites a 72-frame series (UKLungDeaths) where proper draws
# over-covered (95-96%). This bench measures both on R series of that length
# that no default was chosen on, in one run: one interior gap of 6 or 12
# frames per repetition (at a random position, at least 2 frames from the
# ends, so no end gap switches the rule), 12 repetitions per series and gap
# length; MAE, 90% coverage and mean width of both, and the time per call.
#
# Usage: Rscript bench/series_proper_midlength.R [reps]   (from the
# repository root; writes bench/results/series_proper_midlength.md)
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 12L
t_start <- Sys.time()
sets <- list(USAccDeaths = datasets::USAccDeaths, mdeaths = datasets::mdeaths, lynx = datasets::lynx,
             LakeHuron = datasets::LakeHuron, Nile = datasets::Nile, austres = datasets::austres,
             JohnsonJohnson = datasets::JohnsonJohnson, WWWusage = datasets::WWWusage,
             BJsales = datasets::BJsales)
rows <- list()
for (nm in names(sets)) {
  y <- sets[[nm]]
  n <- length(y)
  for (L in c(6L, 12L)) for (r in seq_len(reps)) {
    set.seed(1000 * L + r)
    s <- sample(3:(n - L - 1), 1)
    idx <- s:(s + L - 1)
    x <- y
    x[idx] <- NA
    for (proper in c(FALSE, TRUE)) {
      t0 <- proc.time()[["elapsed"]]
      imp <- impute_series(x, level = 0.9, n_samples = 100, seed = r, threads = 1, proper = proper)
      sec <- proc.time()[["elapsed"]] - t0
      tr <- as.numeric(y)[idx]
      rows[[length(rows) + 1]] <- data.frame(series = nm, frames = n, L = L, rep = r,
                                             method = if (proper) "proper" else "plugin",
                                             abs = abs(imp$point[idx] - tr),
                                             inside = imp$lower[idx] <= tr & tr <= imp$upper[idx],
                                             width = imp$upper[idx] - imp$lower[idx], seconds = sec)
    }
  }
  message(nm, " done")
}
res <- do.call(rbind, rows)
summ <- function(d) {
  sprintf("%.4g | %.1f%% | %.4g", mean(d$abs), 100 * mean(d$inside), mean(d$width))
}
lines <- c("# Plug-in against proper draws on series of 60-160 frames (bench/series_proper_midlength.R)", "",
           sprintf(paste("`Rscript bench/series_proper_midlength.R %d` on %s (ditimpute %s): one interior gap of 6 or 12",
                         "frames per repetition, %d repetitions per series and length, 90%% intervals, 100 paths;",
                         "plugin = `proper = FALSE` (the default at these lengths without an end gap), proper =",
                         "`proper = TRUE`. Each hidden value one unit; the values of one gap are correlated, so",
                         "read coverage differences of a few points on one series as noise."),
                   reps, format(Sys.Date()), format(utils::packageVersion("ditimpute")), reps), "",
           "| series | frames | gap | plugin MAE / 90% coverage / width | proper MAE / 90% coverage / width |",
           "|---|---|---|---|---|")
for (nm in names(sets)) for (L in c(6L, 12L)) {
  d <- res[res$series == nm & res$L == L, ]
  lines <- c(lines, sprintf("| %s | %d | %d | %s | %s |", nm, d$frames[1], L, summ(d[d$method == "plugin", ]),
                            summ(d[d$method == "proper", ])))
}
lines <- c(lines, "", "## Pooled over the series", "",
           "| gap | plugin 90% coverage | proper 90% coverage | proper / plugin mean width (geometric mean over series) | proper / plugin MAE (geometric mean) |",
           "|---|---|---|---|---|")
for (L in list(6L, 12L, c(6L, 12L))) {
  d <- res[res$L %in% L, ]
  ratio <- function(col) {
    per <- vapply(names(sets), function(nm) {
      a <- d[d$series == nm, ]
      mean(a[[col]][a$method == "proper"]) / mean(a[[col]][a$method == "plugin"])
    }, 0)
    exp(mean(log(per)))
  }
  lines <- c(lines, sprintf("| %s | %.1f%% | %.1f%% | %.3f | %.3f |", paste(L, collapse = " and "),
                            100 * mean(d$inside[d$method == "plugin"]), 100 * mean(d$inside[d$method == "proper"]),
                            ratio("width"), ratio("abs")))
}
calls <- unique(res[c("series", "L", "rep", "method", "seconds")])
sec <- aggregate(seconds ~ method, data = calls, FUN = mean)
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
lines <- c(lines, "", sprintf("Mean seconds per call: plugin %.2f, proper %.2f.",
                              sec$seconds[sec$method == "plugin"], sec$seconds[sec$method == "proper"]),
           sprintf("Run time %.1f min; load average at the end: %s (2 cores).",
                   as.numeric(difftime(Sys.time(), t_start, units = "mins")), load))
writeLines(lines, "bench/results/series_proper_midlength.md")
cat(lines, sep = "\n")
