# impute_series(separate = "auto") on short multivariate series: the share
# of a variable's one-step changes that the others explain, taken raw (as
# before 2026-12-05) or less what chance gives over n frames (the adjusted
# R^2, series_chance_adjusted()), against the 5% threshold. With no
# dependence the raw share of d variables over n frames averages
# (d - 1) / (n - 1) (a third for Longley's 16 x 6), so on short series the raw
# rule almost never separated a variable. Both rules run in one process on the
# same hidden gaps (bench/series_long.R's law, P(L) ~ L^-1.5, capped at an
# eighth of the series, 15% of each variable's observed values hidden; new
# gaps each repetition), with linear interpolation as a reference.
# Scores pool the hidden values of all variables, each scaled by its
# variable's standard deviation: MAE ratio (adjusted over raw rule, with a
# standard error counting each hidden gap as one unit), 90% coverage.
#
# Usage: Rscript bench/series_separate_chance.R [reps]   (from the repository
# root; writes bench/results/series_separate_chance.md)
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 5L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
data_dir <- src$data_dir
t_start <- Sys.time()

ett_window <- function(name, rows) {
  d <- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(name, ".csv.gz"))))
  stats::ts(as.matrix(d[rows, -1]), frequency = 24)
}
beijing_window <- function(station, cols, rows) {
  f <- list.files(file.path(data_dir, "beijing_air"), pattern = paste0("PRSA_Data_", station, "_"), full.names = TRUE)
  d <- utils::read.csv(gzfile(f))
  stats::ts(as.matrix(d[rows, cols]), frequency = 24)
}
series <- list(
  longley = function() stats::ts(as.matrix(datasets::longley[, -6]), start = 1947),
  freeny = function() stats::ts(as.matrix(datasets::freeny), start = c(1962, 2), frequency = 4),
  UKLungDeaths = function() cbind(mdeaths = datasets::mdeaths, fdeaths = datasets::fdeaths),
  Seatbelts48 = function() stats::window(datasets::Seatbelts[, c("drivers", "front", "rear", "kms", "PetrolPrice")],
                                         end = c(1972, 12)),
  EuStockMarkets60 = function() stats::ts(datasets::EuStockMarkets[1:60, ]),
  airquality = function() stats::ts(as.matrix(datasets::airquality[, 1:4])),
  ETTh1_96 = function() ett_window("ETTh1", 1:96),
  ETTh2_72 = function() ett_window("ETTh2", 2001:2072),
  Aotizhongxin_96 = function() beijing_window("Aotizhongxin", c("PM2.5", "PM10", "SO2", "NO2", "CO", "O3", "TEMP",
                                                                "PRES", "DEWP", "WSPM"), 1:96),
  Changping_72 = function() beijing_window("Changping", c("TEMP", "PRES", "DEWP", "WSPM"), 1001:1072)
)

old_rule <- function(r2, n) r2  # the raw share (before 2026-12-05)
ns <- asNamespace("ditimpute")
adjusted_rule <- get("series_chance_adjusted", ns)
run_rule <- function(y, rule) {
  utils::assignInNamespace("series_chance_adjusted", rule, "ditimpute")
  on.exit(utils::assignInNamespace("series_chance_adjusted", adjusted_rule, "ditimpute"))
  t0 <- Sys.time()
  imp <- suppressWarnings(impute_series(y, level = 0.9, seed = 1))
  list(imp = imp, seconds = as.numeric(difftime(Sys.time(), t0, units = "secs")))
}
groups_of <- function(model) {
  if (!inherits(model, "ditimpute_series_model_set")) return("all together")
  paste(vapply(model$groups, function(g) paste(model$variables[g], collapse = "+"), ""), collapse = " | ")
}

rows <- list()
groups <- list()
for (name in names(series)) {
  y0 <- series[[name]]()
  v0 <- as.matrix(y0)
  sds <- apply(v0, 2, stats::sd, na.rm = TRUE)
  for (r in seq_len(reps)) {
    y <- y0
    hid <- matrix(FALSE, nrow(v0), ncol(v0))
    for (j in seq_len(ncol(v0))) {
      hid[, j] <- src$hide_gaps(v0[, j], 0.15, seed = 1000 * r + 10 * j + nchar(name), max_len = max(1, nrow(v0) %/% 8))
    }
    yv <- v0; yv[hid] <- NA
    y <- stats::ts(yv, start = stats::start(y0), frequency = stats::frequency(y0))
    gap <- cumsum(c(TRUE, diff(which(hid)) > 1 | diff(col(hid)[hid]) != 0))
    lin <- apply(yv, 2, function(col) src$linear(col)$point)
    for (rule in c("raw", "adjusted")) {
      res <- tryCatch(run_rule(y, if (rule == "raw") old_rule else adjusted_rule), error = function(e) e)
      if (inherits(res, "error")) {
        message(name, " rep ", r, " ", rule, ": ", conditionMessage(res))
        next
      }
      imp <- res$imp
      iv <- confint(imp, level = 0.9)
      lo <- matrix(NA_real_, nrow(v0), ncol(v0)); hi <- lo; pt <- lo
      pt[cbind(iv$frame, match(iv$variable, colnames(v0)))] <- iv$estimate
      lo[cbind(iv$frame, match(iv$variable, colnames(v0)))] <- iv$lower
      hi[cbind(iv$frame, match(iv$variable, colnames(v0)))] <- iv$upper
      truth <- v0[hid]
      scale <- sds[col(hid)[hid]]
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, rule = rule, gap = gap,
                                             abs = abs(pt[hid] - truth) / scale,
                                             abs_linear = abs(lin[hid] - truth) / scale,
                                             cover = truth >= lo[hid] & truth <= hi[hid], seconds = res$seconds / sum(hid))
      groups[[length(groups) + 1]] <- data.frame(series = name, rep = r, rule = rule, groups = groups_of(imp$model))
    }
  }
}
res <- do.call(rbind, rows)
grp <- do.call(rbind, groups)

fmt <- function(x, d = 3) formatC(x, format = "f", digits = d)
lines <- c("# separate = \"auto\" on short multivariate series: the raw share against the share beyond chance", "",
           sprintf("`Rscript bench/series_separate_chance.R %d` on %s (ditimpute %s): %d repetitions of 15%% hidden gaps per variable; %s",
                   reps, format(Sys.Date()), format(utils::packageVersion("ditimpute")), reps,
                   "both rules on the same gaps in one process; MAE in each variable's standard deviations, pooled over variables."),
           "", "| series | n x d | chance share (d-1)/(n-1) | reps where the groups differ | MAE raw rule | MAE adjusted | ratio (SE) | linear | 90% cov. raw | 90% cov. adjusted |",
           "|---|---|---|---|---|---|---|---|---|---|")
for (name in names(series)) {
  y0 <- as.matrix(series[[name]]())
  a <- res[res$series == name & res$rule == "raw", ]
  b <- res[res$series == name & res$rule == "adjusted", ]
  if (!nrow(a) || nrow(a) != nrow(b)) next
  ga <- grp[grp$series == name & grp$rule == "raw", "groups"]
  gb <- grp[grp$series == name & grp$rule == "adjusted", "groups"]
  gid <- paste(a$rep, a$gap)
  lines <- c(lines, sprintf("| %s | %d x %d | %.3f | %d of %d | %s | %s | %s (%s) | %s | %.1f%% | %.1f%% |", name, nrow(y0), ncol(y0),
                            (ncol(y0) - 1) / (nrow(y0) - 1), sum(ga != gb), length(ga), fmt(mean(a$abs)), fmt(mean(b$abs)),
                            fmt(mean(b$abs) / mean(a$abs)), fmt(src$ratio_se(b$abs, a$abs, gid)), fmt(mean(a$abs_linear)),
                            100 * mean(a$cover), 100 * mean(b$cover)))
}
a <- res[res$rule == "raw", ]; b <- res[res$rule == "adjusted", ]
lines <- c(lines, "", sprintf("All series: MAE ratio adjusted / raw %s (SE %s); 90%% coverage raw %.1f%%, adjusted %.1f%%; seconds per run raw %.1f, adjusted %.1f.",
                              fmt(mean(b$abs) / mean(a$abs)), fmt(src$ratio_se(b$abs, a$abs, paste(a$series, a$rep, a$gap))),
                              100 * mean(a$cover), 100 * mean(b$cover),
                              sum(a$seconds) / (reps * length(series)), sum(b$seconds) / (reps * length(series))),
           "", "Groups chosen (repetition: raw rule -> adjusted rule, where they differ):", "")
for (i in which(grp$rule == "raw")) {
  j <- which(grp$rule == "adjusted" & grp$series == grp$series[i] & grp$rep == grp$rep[i])
  if (length(j) && grp$groups[i] != grp$groups[j]) lines <- c(lines, sprintf("- %s rep %d: %s -> %s", grp$series[i], grp$rep[i], grp$groups[i], grp$groups[j]))
}
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
lines <- c(lines, "", sprintf("Run time %.1f min; load average at the end: %s (2 cores).",
                              as.numeric(difftime(Sys.time(), t_start, units = "mins")), load))
dir.create("bench/results", showWarnings = FALSE)
writeLines(lines, "bench/results/series_separate_chance.md")
utils::write.csv(res, gzfile("bench/results/series_separate_chance.csv.gz"), row.names = FALSE)
cat(lines, sep = "\n")
