# Would a local volatility scale repair impute_series()'s interval coverage
# by gap length (issue 27: ETTh2's single values and ETTh1's long gaps were
# over-covered in bench/results/series_long.md)? Real sensor series have
# quiet and turbulent stretches; the structural model has one variance. A
# simple repair scales each gap's 90% interval about its point by
#   f = sqrt(mean of the squared first differences within w frames of the gap
#            / their mean over the whole series),
# clipped to [0.25, 4], computed from the observed values only. This bench
# scores the raw intervals and the scaled ones (w = 12, 24, 72, 168 frames)
# on series_long.R's gaps, by gap-length group, from the same imputations.
#
# Usage: Rscript bench/series_local_scale.R [series,...] [reps]
# (default ETTh2_OT,ETTh1_OT,BeijingAir_PM2.5 and 2 repetitions).
# Writes bench/results/series_local_scale.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
names_arg <- if (length(args) >= 1) strsplit(args[1], ",")[[1]] else c("ETTh2_OT", "ETTh1_OT", "BeijingAir_PM2.5")
reps <- if (length(args) >= 2) as.integer(args[2]) else 2L
windows <- c(12, 24, 72, 168)
# series_long.R's loaders, gap generator and groups.
src <- new.env()
src$pick <- NULL
src$has_imputets <- FALSE
lines <- readLines("bench/series_long.R")
eval(parse(text = lines[grep("^data_dir <- ", lines)[1]:(grep("^kalman_ok <- list", lines)[1] - 1)]), envir = src)

# The factor of every value of each gap: the first differences of observed
# neighbours within w frames of the gap's ends, against the whole series'.
gap_factor <- function(y, w, lo = 0.25, hi = 4) {
  v <- as.numeric(y)
  n <- length(v)
  d2 <- diff(v)^2
  ok <- !is.na(d2)
  global <- mean(d2[ok])
  cs <- c(0, cumsum(ifelse(ok, d2, 0)))
  cn <- c(0, cumsum(ok))
  r <- rle(is.na(v))
  ends <- cumsum(r$lengths)
  starts <- ends - r$lengths + 1
  f <- rep(NA_real_, n)
  for (k in which(r$values)) {
    a <- max(1, starts[k] - w)
    b <- min(n - 1, ends[k] + w - 1)
    s <- cs[b + 1] - cs[a]
    m <- cn[b + 1] - cn[a]
    f[starts[k]:ends[k]] <- if (m >= 5) min(hi, max(lo, sqrt((s / m) / global))) else 1
  }
  f
}

rows <- list()
for (name in names_arg) {
  y0 <- src$series[[name]]
  if (is.null(y0)) stop("no series named ", name)
  y0 <- y0()
  for (r in seq_len(reps)) {
    g <- src$hide_repetition(y0, name, r)
    imp <- impute_series(g$y, level = 0.9, n_samples = 50, seed = 1)
    truth <- g$truth
    p <- as.numeric(imp$point)[g$h]
    lo <- as.numeric(imp$lower)[g$h]
    up <- as.numeric(imp$upper)[g$h]
    rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, scale = "raw", group = g$grp,
                                           cover = lo <= truth & truth <= up, width = up - lo)
    for (w in windows) {
      f <- gap_factor(g$y, w)[g$h]
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, scale = sprintf("w = %d", w), group = g$grp,
                                             cover = p - (p - lo) * f <= truth & truth <= p + (up - p) * f,
                                             width = (up - lo) * f)
    }
    cat(sprintf("%s rep %d: raw coverage %.3f\n", name, r, mean(lo <= truth & truth <= up)))
  }
}
res <- do.call(rbind, rows)
res$scale <- factor(res$scale, levels = c("raw", sprintf("w = %d", windows)))
tab <- do.call(rbind, lapply(split(res, list(res$series, res$scale), drop = TRUE), function(d) {
  by <- tapply(d$cover, d$group, mean)
  data.frame(series = d$series[1], scale = as.character(d$scale[1]), all = mean(d$cover),
             t(sprintf("%.3f", by)), mean_width = mean(d$width), check.names = FALSE)
}))
names(tab)[4:8] <- levels(res$group)
tab <- tab[order(tab$series, factor(tab$scale, levels = levels(res$scale))), ]
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# A local volatility scale for impute_series()'s intervals (bench/series_local_scale.R)", "",
        sprintf("`Rscript bench/series_local_scale.R %s %d` on %s; %d repetitions of series_long.R's gaps (15%% of the observed values hidden, P(L) ~ L^-1.5 on 1..400); raw 90%% intervals of `impute_series(level = 0.9, n_samples = 50)` and the same intervals scaled about the point by the gap's local factor from first differences within w frames (clipped to [0.25, 4]). Coverage by gap-length group; load average at the end: %s (2 cores).",
                paste(names_arg, collapse = ","), reps, format(Sys.Date()), reps, load), "",
        paste("|", paste(names(tab), collapse = " | "), "|"),
        paste("|", paste(rep("---", ncol(tab)), collapse = " | "), "|"),
        apply(tab, 1, function(r) paste("|", paste(c(r[1:2], sprintf("%.3f", as.numeric(r[3])), r[4:8],
                                                      sprintf("%.4g", as.numeric(r[9]))), collapse = " | "), "|")))
writeLines(md, "bench/results/series_local_scale.md")
cat(md, sep = "\n")
