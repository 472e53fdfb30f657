# impute_series() on long real series, by gap length, against what users
# would pick instead (imputeTS's na_interpolation, na_seadec, na_kalman where
# it finishes in time, na_ma; and plain linear interpolation), all in one run.
#
# Series (none of them used to choose impute_series()'s defaults):
#   ETTh1 and ETTh2 oil temperature (OT, hourly, 17,420 frames),
#   BeijingAir PM2.5 and O3 at Dongsi (hourly, 35,064 frames, positive and
#   skewed, with their own missing values, which stay missing and unscored),
#   treering (R's datasets, yearly, 7,980 frames), sunspot.month (monthly,
#   3,177 frames: shorter, kept as a check).
# Gaps: on top of the series' own, gaps are hidden until `share` of the
# observed values are hidden; their lengths follow a discrete power law,
# P(L) proportional to L^-1.5 on 1..400 (many single values, some gaps of
# hundreds of frames), placed at random where every hidden value was observed.
# Scores: MAE and RMSE of the hidden values, and the share inside 90%
# intervals, per gap-length group (1, 2-5, 6-20, 21-60, over 60) and overall,
# pooled over `reps` repetitions (different gaps), with standard errors that
# count each hidden gap as one unit.
#
# Usage: Rscript bench/series_long.R [reps] [series,...] [methods,...]
# (series: the names above, or other columns of the shared data such as
# ETTh1_HUFL or BeijingAir_Changping_NO2; see other_series())
# Writes bench/results/series_long.md and inst/extdata/series_long_bench.csv
# (or only bench/results/series_long_<series>-<methods>.md when a subset is named).
suppressMessages(library(ditimpute))
source("bench/with_object.R")
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
pick <- if (length(args) >= 2 && nzchar(args[2])) strsplit(args[2], ",")[[1]] else NULL
only <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else NULL
share <- 0.15
kalman_limit <- 120  # seconds; na_kalman is skipped on a series where it took longer
has_imputets <- requireNamespace("imputeTS", quietly = TRUE)
if (!has_imputets) message("imputeTS is not installed: its methods are skipped")

data_dir <- Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
ett <- function(name, col = "OT") {
  d <- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(name, ".csv.gz"))))
  if (!col %in% names(d)) stop("no column ", col, " in ", name)
  stats::ts(d[[col]], frequency = 24)
}
beijing <- function(col, station = "Dongsi") {
  f <- list.files(file.path(data_dir, "beijing_air"), pattern = station, full.names = TRUE)
  d <- utils::read.csv(gzfile(f))
  if (!col %in% names(d)) stop("no column ", col, " at ", station)
  stats::ts(d[[col]], frequency = 24)
}
series <- list(ETTh1_OT = function() ett("ETTh1"), ETTh2_OT = function() ett("ETTh2"),
               BeijingAir_PM2.5 = function() beijing("PM2.5"), BeijingAir_O3 = function() beijing("O3"),
               treering = function() datasets::treering, sunspot.month = function() datasets::sunspot.month)
# Other columns of the shared data, for checks on series nobody tuned for:
# "ETTh1_<column>" / "ETTh2_<column>" and "BeijingAir_<Station>_<column>".
other_series <- function(name) {
  p <- strsplit(name, "_", fixed = TRUE)[[1]]
  if (length(p) == 2 && p[1] %in% c("ETTh1", "ETTh2")) return(function() ett(p[1], p[2]))
  if (length(p) == 3 && p[1] == "BeijingAir") return(function() beijing(p[3], station = p[2]))
  stop("unknown series: ", name)
}
if (!is.null(pick)) series <- lapply(stats::setNames(pick, pick), function(s) if (s %in% names(series)) series[[s]] else other_series(s))

# Gap lengths from P(L) ~ L^-1.5 on 1..max_len, placed where all is observed.
hide_gaps <- function(y, share, seed, max_len = 400) {
  set.seed(seed)
  obs <- !is.na(y)
  n <- length(y)
  target <- round(share * sum(obs))
  L <- seq_len(max_len)
  p <- L^-1.5
  hidden <- rep(FALSE, n)
  tries <- 0
  while (sum(hidden) < target && tries < 100000) {
    tries <- tries + 1
    len <- sample(L, 1, prob = p)
    s <- sample.int(n - len - 1, 1) + 1  # interior
    idx <- s:(s + len - 1)
    # a gap needs observed values on both sides, and none hidden next to it
    if (!all(obs[idx]) || any(hidden[max(1, s - 1):min(n, s + len)])) next
    hidden[idx] <- TRUE
  }
  hidden
}

# Length of the hidden run each hidden value sits in.
run_len <- function(h) {
  r <- rle(h)
  rep(ifelse(r$values, r$lengths, 0L), r$lengths)
}
group_of <- function(len) cut(len, c(0, 1, 5, 20, 60, Inf), labels = c("1", "2-5", "6-20", "21-60", ">60"))
# Repetition r's hidden gaps of series `name` (values y0): the series with
# them missing, the hidden mask, the hidden truth, each hidden value's group
# and the number of the hidden gap it sits in (1, 2, ... along the series).
hide_repetition <- function(y0, name, r, share = 0.15, max_len = 400) {
  h <- hide_gaps(as.numeric(y0), share, seed = 1000 * r + nchar(name), max_len = max_len)
  y <- y0
  y[h] <- NA
  list(y = y, h = h, truth = as.numeric(y0)[h], grp = group_of(run_len(h)[h]), gap = cumsum(c(TRUE, diff(which(h)) > 1)))
}

linear <- function(y) {
  v <- as.numeric(y)
  ok <- which(!is.na(v))
  out <- stats::approx(ok, v[ok], xout = seq_along(v), rule = 2)$y
  list(point = out)
}
with_timeout <- function(expr_fn, limit) {
  job <- parallel::mcparallel(expr_fn())
  res <- parallel::mccollect(job, wait = FALSE, timeout = limit)
  if (is.null(res)) {
    tools::pskill(job$pid)
    parallel::mccollect(job, wait = FALSE)
    return(NULL)
  }
  res[[1]]
}
kalman_ok <- list()
# impute_series() at the bench's settings: its point and 90% intervals as
# vectors, the model it chose and its scale (transform).
gp_run <- function(y, ...) {
  imp <- impute_series(y, level = 0.9, n_samples = 50, seed = 1, ...)
  m <- imp$model
  list(point = as.numeric(imp$point), lower = as.numeric(imp$lower), upper = as.numeric(imp$upper),
       transform = m$transform, model = gsub(" +", " ", trimws(paste(m$model_name, m$kernel_name,
                     if (any(!is.na(m$lambda))) paste(unique(ditimpute:::transform_label(m$lambda[!is.na(m$lambda)])), collapse = ",") else "",
                     if (isTRUE(m$rate_multiplier != 1)) sprintf("level rate x%g", m$rate_multiplier) else ""))))
}
methods <- list(
  gp = function(y, name) gp_run(y),
  gp_calibrated = function(y, name) gp_run(y, calibrate = TRUE),
  linear = function(y, name) linear(y),
  na_interpolation = function(y, name) if (has_imputets) list(point = as.numeric(imputeTS::na_interpolation(y))),
  na_seadec = function(y, name) if (has_imputets) list(point = as.numeric(suppressWarnings(imputeTS::na_seadec(y)))),
  na_ma = function(y, name) if (has_imputets) list(point = as.numeric(imputeTS::na_ma(y))),
  na_kalman = function(y, name) {
    if (!has_imputets || isFALSE(kalman_ok[[name]])) return(NULL)
    t0 <- proc.time()[["elapsed"]]
    out <- with_timeout(function() as.numeric(suppressWarnings(imputeTS::na_kalman(y))), kalman_limit)
    if (is.null(out) || inherits(out, "try-error")) {
      kalman_ok[[name]] <<- FALSE
      message(sprintf("na_kalman on %s: no result within %d s, skipped from here on", name, kalman_limit))
      return(NULL)
    }
    list(point = out)
  }
)
# Variants, run only when named (e.g. "gp,gp_level"): each form of the model
# (the kernel still chosen by BIC), the whole series as the fitting stretch,
# and the series given as a plain vector (no calendar period: kernel = "auto"
# can only find the day as a cycle, on the periodogram).
variants <- list(gp_level = function(y, name) gp_run(y, model = "level"),
                 gp_trend = function(y, name) gp_run(y, model = "trend"),
                 gp_stationary = function(y, name) gp_run(y, model = "stationary"),
                 gp_whole = function(y, name) gp_run(y, fit_frames = length(y)),
                 gp_plain = function(y, name) gp_run(as.numeric(y)),
                 # the level's rate left at its maximum-likelihood value (the
                 # default before 2026-12-04's step that weighs it on hidden gaps)
                 gp_ml_rate = function(y, name) with_object("series_rate_multipliers", numeric(0), gp_run(y)))
methods <- c(methods, variants[intersect(names(variants), only)])
if (!is.null(only)) methods <- methods[union(only, "linear")]

rows <- list()
# The default's level rate against the maximum-likelihood one, in every
# default run (after `rows <- list()`: the benches that take this file's
# methods through series_long_parts() do not get it).
if (is.null(only)) methods$gp_ml_rate <- variants$gp_ml_rate
for (name in names(series)) {
  y0 <- series[[name]]()
  for (r in seq_len(reps)) {
    rep_gaps <- hide_repetition(y0, name, r, share)
    y <- rep_gaps$y
    h <- rep_gaps$h
    truth <- rep_gaps$truth
    grp <- rep_gaps$grp
    gap <- paste(r, rep_gaps$gap)  # the hidden gap each scored value sits in
    for (m in names(methods)) {
      t0 <- proc.time()[["elapsed"]]
      out <- tryCatch(methods[[m]](y, name), error = function(e) { message(m, " on ", name, ": ", conditionMessage(e)); NULL })
      secs <- proc.time()[["elapsed"]] - t0
      if (is.null(out)) next
      est <- out$point[h]
      err <- est - truth
      cover <- if (!is.null(out$lower)) out$lower[h] <= truth & truth <= out$upper[h] else rep(NA, length(truth))
      neg <- if (all(as.numeric(y0) > 0, na.rm = TRUE)) sum(est <= 0 | (if (!is.null(out$lower)) out$lower[h] <= 0 else FALSE)) else NA
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, gap = gap, method = m, group = grp, abs = abs(err),
                                             sq = err^2, cover = cover, seconds = secs / length(truth),
                                             nonpositive = neg / length(truth),
                                             model = if (is.null(out$model)) NA_character_ else out$model)
      cat(sprintf("%-18s rep %d %-16s MAE %.4g  %.1f s%s\n", name, r, m, mean(abs(err)), secs,
                  if (!is.null(out$lower)) sprintf("  cover90 %.3f", mean(cover)) else ""))
    }
  }
}
res <- do.call(rbind, rows)

# Standard errors treat each hidden gap as one unit: the values of a gap share
# their neighbours and their errors are strongly correlated, so a group's
# effective sample is its number of gaps, not of values. For a ratio of sums
# sum(a_g) / sum(b_g) over gaps g (a coverage: covered / scored values; an MAE
# ratio: one method's absolute errors / another's), the delta-method SE
# sqrt(G / (G - 1) sum((a_g - R b_g)^2)) / sum(b_g).
ratio_se <- function(a, b, gap) {
  A <- tapply(a, gap, sum); B <- tapply(b, gap, sum)
  G <- length(A)
  if (G < 10) return(NA_real_)  # too few gaps for the SE to mean anything
  R <- sum(A) / sum(B)
  sqrt(G / (G - 1) * sum((A - R * B)^2)) / sum(B)
}
summarise <- function(d) {
  data.frame(entries = nrow(d), gaps = length(unique(d$gap)), mae = mean(d$abs), rmse = sqrt(mean(d$sq)),
             coverage90 = if (all(is.na(d$cover))) NA else mean(d$cover),
             coverage90_se = if (all(is.na(d$cover))) NA else ratio_se(d$cover, rep(1, nrow(d)), d$gap),
             seconds = sum(d$seconds) / length(unique(d$rep)),
             nonpositive = sum(d$nonpositive) / length(unique(d$rep)))
}
# The SE of the MAE ratio of method m to method ref over the same values.
mae_ratio_se <- function(series, group, m, ref) {
  d <- res[res$series == series & (group == "all" | res$group == group), ]
  a <- d[d$method == m, ]; b <- d[d$method == ref, ]
  if (!nrow(a) || nrow(a) != nrow(b)) return(NA_real_)
  ratio_se(a$abs, b$abs, a$gap)
}
by_all <- do.call(rbind, lapply(split(res, list(res$series, res$method), drop = TRUE), function(d) {
  cbind(data.frame(series = d$series[1], method = d$method[1], group = "all"), summarise(d))
}))
by_group <- do.call(rbind, lapply(split(res, list(res$series, res$method, res$group), drop = TRUE), function(d) {
  cbind(data.frame(series = d$series[1], method = d$method[1], group = as.character(d$group[1])), summarise(d))
}))
tab <- rbind(by_all, by_group)
tab$group <- factor(tab$group, c("all", "1", "2-5", "6-20", "21-60", ">60"))
tab <- tab[order(tab$series, tab$group, tab$mae), ]
# Ratios of the GP to the best imputeTS method and to linear interpolation, per series and group.
its <- c("na_interpolation", "na_seadec", "na_kalman", "na_ma")
ratio_rows <- lapply(split(tab, list(tab$series, tab$group), drop = TRUE), function(d) {
  gp <- d[d$method == "gp", ]
  if (!nrow(gp)) return(NULL)
  # Only methods scored on the same values as the GP: na_kalman stopped by
  # its time limit on some repetitions would be compared on fewer values.
  b <- d[d$method %in% its & d$entries == gp$entries, ]
  lin <- d[d$method == "linear", ]
  cal <- d[d$method == "gp_calibrated", ]
  ml <- d[d$method == "gp_ml_rate", ]
  best <- if (nrow(b)) b$method[which.min(b$mae)] else NA
  data.frame(series = gp$series, group = gp$group, entries = gp$entries, gaps = gp$gaps, mae_gp = gp$mae,
             best_imputeTS = best,
             ratio_best_imputeTS = if (nrow(b)) gp$mae / min(b$mae) else NA,
             se_best = if (nrow(b)) mae_ratio_se(gp$series, as.character(gp$group), "gp", best) else NA,
             ratio_linear = if (nrow(lin)) gp$mae / lin$mae else NA,
             se_linear = if (nrow(lin)) mae_ratio_se(gp$series, as.character(gp$group), "gp", "linear") else NA,
             ratio_ml_rate = if (nrow(ml)) gp$mae / ml$mae else NA,
             se_ml_rate = if (nrow(ml)) mae_ratio_se(gp$series, as.character(gp$group), "gp", "gp_ml_rate") else NA,
             rmse_ratio_best_imputeTS = if (nrow(b)) gp$rmse / min(b$rmse) else NA,
             coverage90 = gp$coverage90, coverage90_se = gp$coverage90_se,
             coverage90_calibrated = if (nrow(cal)) cal$coverage90 else NA,
             calibrated_se = if (nrow(cal)) cal$coverage90_se else NA)
})
ratios <- do.call(rbind, ratio_rows)
ratios <- ratios[order(ratios$series, ratios$group), ]
models <- unique(res[res$method %in% c("gp", "gp_plain"), c("series", "method", "rep", "model")])

md_table <- function(d, digits = 4) {
  d[] <- lapply(d, function(col) if (is.numeric(col)) signif(col, digits) else as.character(col))
  c(paste("|", paste(names(d), collapse = " | "), "|"), paste0("|", paste(rep("---", ncol(d)), collapse = "|"), "|"),
    apply(d, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
}
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
out <- c("# impute_series() on long real series, by gap length",
         "",
         sprintf("`Rscript bench/series_long.R %s` on %s; %d repetitions per series; %.0f%% of the observed values hidden in gaps with P(L) ~ L^-1.5 on 1..400 frames; 90%% intervals. Load average at the end: %s (2 cores).",
                 paste(args, collapse = " "), format(Sys.Date()), reps, 100 * share, load),
         "", "## The GP against the best imputeTS method and linear interpolation (MAE ratios; < 1 is better)", "",
         "Standard errors (se_*) count each hidden gap as one unit (the values of a gap are strongly correlated): delta-method SEs of the ratio of per-gap sums, for the MAE ratios (paired with the other method on the same values) and the coverages. `gaps`: hidden gaps in the group over all repetitions; no SE under 10 gaps. `ratio_ml_rate`: the GP's MAE over that of the same call with the level's rate left at its maximum-likelihood value (`gp_ml_rate`, the default before 2026-12-04).", "",
         md_table(ratios), "", "## Models chosen (BIC)", "", md_table(models), "",
         "## Every method (seconds: per repetition; nonpositive: imputations or lower bounds <= 0 on positive series, per repetition)", "",
         md_table(tab))
dest <- if (is.null(pick) && is.null(only)) "bench/results/series_long.md" else
  sprintf("bench/results/series_long_%s.md", paste(c(pick, only), collapse = "-"))
writeLines(out, dest)
cat("wrote", dest, "\n")
if (is.null(pick) && is.null(only)) {
  # The by-gap table for the series vignette.
  utils::write.csv(tab, "inst/extdata/series_long_bench.csv", row.names = FALSE)
  cat("wrote inst/extdata/series_long_bench.csv\n")
}
