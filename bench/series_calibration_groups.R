# Does impute_series()'s self-calibration group its scores well? It bins the
# hidden calibration values by gap length at the quantiles of their own
# lengths (3 bins by default, so single values can share a factor with gaps
# of ten frames). This bench scores, on series_long.R's gaps, the calibrated
# coverage per gap-length group (1, 2-5, 6-20, 21-60, >60) with those bins
# and with fixed classes at the same edges, from one fitted imputation and
# the same calibration rounds (only the grouping differs).
#
# Usage: Rscript bench/series_calibration_groups.R [series] [reps]
# (series: a name of series_long.R's list; default ETTh2_OT, 2 repetitions).
# Writes bench/results/series_calibration_groups_<series>.md.
suppressMessages(library(ditimpute))
ns <- asNamespace("ditimpute")
args <- commandArgs(trailingOnly = TRUE)
name <- if (length(args) >= 1) args[1] else "ETTh2_OT"
reps <- if (length(args) >= 2) as.integer(args[2]) else 2L
# series_long.R's loaders, gap generator and groups.
src <- new.env()
src$pick <- NULL
src$has_imputets <- FALSE
lines <- readLines("bench/series_long.R")
eval(parse(text = lines[grep("^data_dir <- ", lines)[1]:(grep("^kalman_ok <- list", lines)[1] - 1)]), envir = src)
y0 <- src$series[[name]]
if (is.null(y0)) stop("no series named ", name)
y0 <- y0()
# Fixed classes at the bench's edges; a class with fewer scores than a
# conformal quantile needs is merged into the next.
classes <- function(features, level) {
  need <- ns$min_group_size(level)
  inner <- c(1, 5, 20, 60)
  repeat {
    cnt <- tabulate(findInterval(features$gap, inner, left.open = TRUE) + 1, length(inner) + 1)
    if (all(cnt >= need) || !length(inner)) break
    inner <- inner[-min(which(cnt < need)[1], length(inner))]
  }
  edges <- c(-Inf, inner, Inf)
  labels <- vapply(seq_len(length(edges) - 1), function(b) {
    paste(c(if (is.finite(edges[b])) sprintf("gap > %g", edges[b]),
            if (is.finite(edges[b + 1])) sprintf("gap <= %g", edges[b + 1])), collapse = ", ")
  }, "")
  list(type = "gap", inner = inner, labels = labels)
}
orig <- ns$choose_groups
res <- list()
bins <- character(0)
t0 <- proc.time()[["elapsed"]]
for (r in seq_len(reps)) {
  rep_gaps <- src$hide_repetition(y0, name, r)
  y <- rep_gaps$y
  h <- rep_gaps$h
  truth <- rep_gaps$truth
  grp <- rep_gaps$grp
  imp <- impute_series(y, level = 0.9, n_samples = 50, seed = 1)
  raw <- imp$lower[h] <= truth & truth <= imp$upper[h]
  cal_q <- calibrate(imp, seed = 7)
  assignInNamespace("choose_groups", function(features, groups, n_groups, level, scores, call = NULL) {
    classes(features, level)
  }, ns)
  cal_c <- tryCatch(calibrate(imp, seed = 7), finally = assignInNamespace("choose_groups", orig, ns))
  for (k in c("quantile bins (package)", "fixed classes")) {
    cal <- if (startsWith(k, "quantile")) cal_q else cal_c
    ci <- apply_calibration(imp, cal)
    cov <- ci$lower[h] <= truth & truth <= ci$upper[h]
    res[[length(res) + 1]] <- data.frame(grouping = k, group = c(levels(grp), "all"),
                                         n = c(as.vector(table(grp)), length(grp)),
                                         raw = c(tapply(raw, grp, mean), mean(raw)),
                                         cal = c(tapply(cov, grp, mean), mean(cov)))
    bins <- c(bins, sprintf("| %d | %s | %s | %s |", r, k, paste(cal$factors$group[-nrow(cal$factors)], collapse = "; "),
                            paste(sprintf("%.3f (%d gaps)", cal$factors$fitted, cal$factors$gaps)[-nrow(cal$factors)],
                                  collapse = "; ")))
  }
}
secs <- proc.time()[["elapsed"]] - t0
out <- do.call(rbind, res)
agg <- aggregate(cbind(raw = raw * n, cal = cal * n, n) ~ grouping + group, out, sum)
agg <- agg[order(agg$grouping, match(agg$group, c("1", "2-5", "6-20", "21-60", ">60", "all"))), ]
md <- c(sprintf("# Series self-calibration: quantile bins against fixed gap-length classes (%s)", name), "",
        sprintf("`Rscript bench/series_calibration_groups.R %s %d` on %s; %d repetitions of series_long.R's gaps (15%% of the observed values hidden, P(L) ~ L^-1.5 on 1..400); impute_series(level = 0.9, n_samples = 50, seed = 1), then calibrate(seed = 7) with each grouping. %.0f s; load average at the end: %s (2 cores).",
                name, reps, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), reps, secs,
                tryCatch(readLines("/proc/loadavg", n = 1), error = function(e) "NA")), "",
        "## 90% coverage of the hidden values by gap-length group (pooled over repetitions)", "",
        "| grouping | group | values | raw | calibrated |", "|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %.1f%% | %.1f%% |", agg$grouping, agg$group, agg$n, 100 * agg$raw / agg$n,
                100 * agg$cal / agg$n), "",
        "## Calibration groups and their fitted conformal factors", "",
        "| rep | grouping | groups | fitted factor (hidden gaps behind it) |", "|---|---|---|---|", bins)
out_file <- sprintf("bench/results/series_calibration_groups_%s.md", name)
writeLines(md, out_file)
cat(md, sep = "\n")
