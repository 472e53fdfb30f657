# Bounded series whose values lie on the bound a large share of the time
# (counts with many zeros, a humidity saturated at 100%): impute_series(bounds = )
# against the same call without bounds and linear interpolation, and the
# margin the bounded scale chose. Written after a user review (2026-12-06)
# found 90% intervals up to 908 on boot's coal counts (at most 6) with
# bounds = c(0, Inf).
# Usage: Rscript bench/series_bounded_point_mass.R [reps] [out.md]
# (run once per package build with R_LIBS naming it, e.g. before and after a change)
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 5L
out <- if (length(args) >= 2) args[2] else NA
set.seed(11)
a <- as.numeric(stats::arima.sim(list(ar = 0.9), 400))
coal_counts <- if (requireNamespace("boot", quietly = TRUE)) {
  e <- new.env(); utils::data("coal", package = "boot", envir = e)
  tabulate(floor(e$coal$date) - 1850, nbins = 112)
} else NULL
cases <- list(
  list(name = "coal (boot), yearly disasters", x = coal_counts, bounds = c(0, Inf)),
  list(name = "discoveries", x = as.numeric(datasets::discoveries), bounds = c(0, Inf)),
  list(name = "AR(1) 0.9 clipped at 0 (33% zeros)", x = pmax(0, 2 + a - 1.5), bounds = c(0, Inf)),
  list(name = "AR(1) 0.9 clipped at 0 (20% zeros)", x = pmax(0, 2 + a - 0.5), bounds = c(0, Inf)),
  list(name = "AR(1) 0.9 clipped at 0 (10% zeros)", x = pmax(0, 2 + a + 0.5), bounds = c(0, Inf)),
  list(name = "AR(1) 0.9 humidity saturated at 100 (21%)", x = pmin(100, 85 + 8 * a), bounds = c(0, 100)))
cases <- Filter(function(c) !is.null(c$x), cases)
rows <- list()
for (cs in cases) {
  y0 <- cs$x
  n <- length(y0)
  for (r in seq_len(reps)) {
    set.seed(r)
    hide <- sort(sample(3:(n - 2), round(0.1 * n)))
    y <- y0
    y[hide] <- NA
    truth <- y0[hide]
    lin <- stats::approx(seq_len(n), y, seq_len(n))$y[hide]
    for (b in list(cs$bounds, NULL)) {
      t0 <- proc.time()[["elapsed"]]
      imp <- suppressWarnings(impute_series(y, level = 0.9, n_samples = 50, seed = r, threads = 1, bounds = b))
      sec <- proc.time()[["elapsed"]] - t0
      pt <- imp$point[hide]; lo <- imp$lower[hide]; up <- imp$upper[hide]
      rows[[length(rows) + 1]] <- data.frame(
        series = cs$name, zeros_or_at_bound = mean(y0 %in% cs$bounds), method = if (is.null(b)) "no bounds" else
          sprintf("bounds = c(%s)", paste(b, collapse = ", ")), rep = r,
        margin = if (is.null(b)) NA else imp$model$transform$margin[[1]],
        mae = mean(abs(pt - truth)), mae_linear = mean(abs(lin - truth)), coverage90 = mean(truth >= lo & truth <= up),
        mean_width = mean(up - lo), max_upper = max(up), data_max = max(y0), below_zero = sum(lo < 0), seconds = sec)
    }
  }
}
res <- do.call(rbind, rows)
agg <- do.call(rbind, lapply(split(res, list(res$series, res$method), drop = TRUE), function(d) {
  data.frame(series = d$series[1], at_bound = sprintf("%.1f%%", 100 * d$zeros_or_at_bound[1]), method = d$method[1],
             margins = paste(unique(signif(d$margin, 3)), collapse = " "),
             mae_over_linear = sum(d$mae) / sum(d$mae_linear), coverage90 = mean(d$coverage90),
             mean_width = mean(d$mean_width), max_upper = max(d$max_upper), data_max = d$data_max[1],
             lower_below_0 = sum(d$below_zero))
}))
agg <- agg[order(agg$series, agg$method), ]
lines <- c(sprintf("`Rscript bench/series_bounded_point_mass.R %d` on %s, ditimpute from %s; %d repetitions per series (10%% of the values hidden at random, 90%% intervals, 50 draws); load average at the end: %s.",
                   reps, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), find.package("ditimpute"), reps,
                   paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")), "",
           "| series | on the bound | method | margins chosen | MAE / linear | coverage90 | mean width | max upper end | data max | lower ends < 0 |",
           "|---|---|---|---|---|---|---|---|---|---|",
           sprintf("| %s | %s | %s | %s | %.3f | %.3f | %.3g | %.3g | %.3g | %d |", agg$series, agg$at_bound, agg$method, agg$margins,
                   agg$mae_over_linear, agg$coverage90, agg$mean_width, agg$max_upper, agg$data_max, agg$lower_below_0))
cat(lines, sep = "\n")
if (!is.na(out)) writeLines(lines, out)
