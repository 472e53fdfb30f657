# Gaps at a series' ends: impute_series() where the last (or first) values
# of a series are missing, so that it extrapolates, against what users would
# pick instead (imputeTS's na_interpolation, which carries the nearest value
# out to the end, na_kalman and na_ma), in one run.
#
# No other bench has end gaps: bench/series_long.R and series_fresh.R hide
# gaps with observed values on both sides. A user review (2026-12-05) found
# 95% intervals covering 0-50% of the last 6-30 values of LakeHuron, austres,
# uspop and JohnsonJohnson: the class step chose the stationary form, whose
# intervals stop widening beyond the data, scored on gaps between observed
# values only, and the stationary form's line was taken as known.
#
# Series: 18 of R's `datasets` (yearly, quarterly, monthly; 19 to 1,000
# frames; trending, positive and skewed, cyclic), treering (7,980 frames),
# and 10 simulated series of 200 frames (5 random walks, 5 AR(1) with
# coefficient 0.9), the first k values hidden ("lead") or the last k
# ("trail"), k = 5%, 10% or 20% of the frames (at least 1), one gap per
# series x end x share. Scores by horizon (frames from the nearest observed
# value: 1, 2-5, 6-20, 21-60, over 60): MAE over linear interpolation's and
# over the best imputeTS method's (chosen by its MAE on every hidden value of
# the run), and 90% coverage, each hidden value one unit (one gap per
# series x end x share: values of a gap are correlated, so read differences
# between groups, not their SEs).
#
# Usage: Rscript bench/series_ends.R TAG   (writes
#   bench/results/series_ends_TAG.csv.gz, one row per hidden value; run it once
#   per package build to compare, e.g. with R_LIBS pointing at each)
#   Rscript bench/series_ends.R TAG calibrate   (the same with calibrate = TRUE)
#   Rscript bench/series_ends.R TAG proper   (the same with proper = TRUE)
#   Rscript bench/series_ends.R TAG holes   (the same with a tenth of the other
#   values missing as well, at random: the end gap then has missing values
#   near it, as a sensor series' trailing outage often has; only the end gap
#   is scored. Options combine: TAG calibrate holes)
#   Rscript bench/series_ends.R --report TAG1,TAG2 ["what TAG1 ran|what TAG2 ran"]
#   (writes bench/results/series_ends.md from those files, or the file named
#   by a fourth argument)
#   Rscript bench/series_ends.R --paired TAG_A TAG_B   (per end gap: the GP's
#   mean absolute error, the log of B / A on the gaps whose values changed,
#   its mean and SE, by kind)
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) >= 1)
if (length(args) == 3 && args[1] == "--paired") {
  read <- function(tg) utils::read.csv(sprintf("bench/results/series_ends_%s.csv.gz", tg))
  a <- read(args[2])
  b <- read(args[3])
  stopifnot(nrow(a) == nrow(b), identical(a$truth, b$truth))
  key <- paste(a$series, a$end, a$share)
  ea <- tapply(abs(a$gp - a$truth), key, mean)
  eb <- tapply(abs(b$gp - b$truth), key, mean)
  kind <- tapply(a$kind, key, `[`, 1)
  ch <- abs(ea - eb) > 1e-12
  r <- log(eb[ch] / ea[ch])
  cat(sprintf("%s -> %s: %d of %d gaps changed; mean log ratio %.3f (SE %.3f), better %d, worse %d; real %.3f (%d), simulated %.3f (%d)\n",
              args[2], args[3], sum(ch), length(ch), mean(r), stats::sd(r) / sqrt(sum(ch)), sum(r < 0), sum(r > 0),
              mean(r[kind[ch] == "real"]), sum(kind[ch] == "real"), mean(r[kind[ch] == "simulated"]), sum(kind[ch] == "simulated")))
  quit(save = "no")
}
out_dir <- "bench/results"
group_of <- function(h) as.character(cut(h, c(0, 1, 5, 20, 60, Inf), labels = c("1", "2-5", "6-20", "21-60", ">60")))

if (args[1] == "--report") {
  tags <- strsplit(args[2], ",")[[1]]
  rows <- do.call(rbind, lapply(tags, function(tg) {
    d <- utils::read.csv(file.path(out_dir, sprintf("series_ends_%s.csv.gz", tg)), stringsAsFactors = FALSE)
    d$tag <- tg
    d
  }))
  meta <- lapply(tags, function(tg) readLines(file.path(out_dir, sprintf("series_ends_%s.txt", tg))))
  what <- if (length(args) >= 3) strsplit(args[3], "|", fixed = TRUE)[[1]] else rep("", length(tags))
  meta <- Map(function(m, w) if (nzchar(w)) paste0(w, "; ", m) else m, meta, what)
  md <- c("# Gaps at a series' ends (bench/series_ends.R)", "",
          readLines("bench/series_ends.R", n = 23) |> sub(pattern = "^# ?", replacement = ""), "",
          "Runs (each its own package build, the same gaps):", "",
          unlist(lapply(seq_along(tags), function(i) paste0("- `", tags[i], "`: ", meta[[i]]))), "")
  # The best imputeTS method of the run: the smallest MAE on every hidden value.
  ts_methods <- c("na_interpolation", "na_kalman", "na_ma")
  best <- ts_methods[which.min(vapply(ts_methods, function(m) mean(abs(rows[[m]] - rows$truth)[rows$tag == tags[1]]), 0))]
  summarise <- function(d) {
    data.frame(values = nrow(d), gaps = length(unique(paste(d$series, d$end, d$share))),
               mae_gp = mean(abs(d$gp - d$truth)),
               ratio_linear = sum(abs(d$gp - d$truth)) / sum(abs(d$na_interpolation - d$truth)),
               ratio_best_imputeTS = sum(abs(d$gp - d$truth)) / sum(abs(d[[best]] - d$truth)),
               coverage90 = mean(d$truth >= d$lower & d$truth <= d$upper))
  }
  fmt <- function(tab) {
    num <- vapply(tab, is.numeric, TRUE)
    tab[num] <- lapply(tab[num], function(x) if (all(x == round(x))) format(x) else formatC(x, digits = 3, format = "f"))
    c(paste("|", paste(names(tab), collapse = " | "), "|"), paste(rep("|---", ncol(tab)), collapse = ""),
      apply(tab, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
  }
  by_group <- do.call(rbind, lapply(split(rows, list(rows$tag, rows$kind, rows$horizon_group), drop = TRUE), function(d) {
    cbind(run = d$tag[1], kind = d$kind[1], horizon = d$horizon_group[1], summarise(d))
  }))
  by_group <- by_group[order(by_group$kind, match(by_group$horizon, c("1", "2-5", "6-20", "21-60", ">60")),
                             match(by_group$run, tags)), ]
  by_kind <- do.call(rbind, lapply(split(rows, list(rows$tag, rows$kind), drop = TRUE), function(d) {
    cbind(run = d$tag[1], kind = d$kind[1], summarise(d))
  }))
  by_kind <- by_kind[order(by_kind$kind, match(by_kind$run, tags)), ]
  by_series <- do.call(rbind, lapply(split(rows, list(rows$tag, rows$series), drop = TRUE), function(d) {
    cbind(run = d$tag[1], series = d$series[1], summarise(d),
          models = paste(sort(unique(d$model)), collapse = "; "))
  }))
  by_series <- by_series[order(by_series$series, match(by_series$run, tags)), ]
  md <- c(md, sprintf("Best imputeTS method of the run (smallest MAE on every hidden value of `%s`): %s.", tags[1], best), "",
          "## Real series and simulated ones, by run", "", fmt(by_kind), "",
          "## By horizon (frames from the nearest observed value)", "", fmt(by_group), "",
          "## By series (models: the forms chosen over its 6 gaps)", "", fmt(by_series))
  writeLines(md, file.path(out_dir, if (length(args) >= 4) args[4] else "series_ends.md"))
  quit(save = "no")
}

suppressMessages(library(ditimpute))
suppressMessages(library(imputeTS))
tag <- args[1]
calibrated <- "calibrate" %in% args[-1]
proper <- if ("proper" %in% args[-1]) TRUE else "auto"
holes <- "holes" %in% args[-1]
real <- c("LakeHuron", "austres", "uspop", "JohnsonJohnson", "AirPassengers", "lynx", "sunspot.year", "WWWusage",
          "BJsales", "nhtemp", "USAccDeaths", "UKDriverDeaths", "airmiles", "discoveries", "lh", "mdeaths",
          "Nile", "nottem", "treering")
series <- lapply(real, function(nm) get(nm, envir = asNamespace("datasets")))
names(series) <- real
for (i in 1:5) {
  set.seed(100 + i)
  series[[sprintf("random_walk_%d", i)]] <- ts(cumsum(stats::rnorm(200)))
}
for (i in 1:5) {
  set.seed(200 + i)
  series[[sprintf("ar1_%d", i)]] <- ts(as.numeric(stats::arima.sim(list(ar = 0.9), 200)))
}
safe <- function(f, x) tryCatch(as.numeric(f(x)), error = function(e) rep(NA_real_, length(x)))
started <- Sys.time()
rows <- list()
for (nm in names(series)) {
  y <- series[[nm]]
  n <- length(y)
  for (end in c("trail", "lead")) {
    for (share in c(0.05, 0.1, 0.2)) {
      k <- max(1L, round(share * n))
      idx <- if (end == "trail") (n - k + 1L):n else seq_len(k)
      x <- y
      x[idx] <- NA
      if (holes) {  # a tenth of the other values, seeded per series, end and share
        set.seed(sum(utf8ToInt(nm)) * 1000 + (end == "lead") * 100 + round(100 * share))
        other <- setdiff(seq_len(n), idx)
        x[other[sample.int(length(other), round(0.1 * length(other)))]] <- NA
      }
      fit <- tryCatch(impute_series(x, level = 0.9, seed = 1, calibrate = calibrated, proper = proper), error = function(e) e)
      if (inherits(fit, "error")) {
        message(nm, " ", end, " ", share, ": ", conditionMessage(fit))
        next
      }
      full <- as.numeric(completed_series(fit))
      rows[[length(rows) + 1L]] <- data.frame(
        series = nm, kind = if (nm %in% real) "real" else "simulated", end = end, share = share, k = k,
        frame = idx, horizon = if (end == "trail") idx - (n - k) else k + 1L - idx,
        truth = as.numeric(y)[idx], gp = full[idx],
        lower = as.numeric(completed_series(fit, what = "lower"))[idx],
        upper = as.numeric(completed_series(fit, what = "upper"))[idx],
        na_interpolation = safe(imputeTS::na_interpolation, x)[idx],
        na_kalman = safe(imputeTS::na_kalman, x)[idx], na_ma = safe(imputeTS::na_ma, x)[idx],
        model = paste(fit$model$model_name, fit$model$kernel_name), stringsAsFactors = FALSE)
    }
  }
}
rows <- do.call(rbind, rows)
rows$horizon_group <- group_of(rows$horizon)
utils::write.csv(rows, gzfile(file.path(out_dir, sprintf("series_ends_%s.csv.gz", tag))), row.names = FALSE)
writeLines(sprintf("%s, ditimpute %s from %s; %d hidden values; %.0f s; load average at the end %s",
                   format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.character(utils::packageVersion("ditimpute")),
                   dirname(find.package("ditimpute")), nrow(rows), as.numeric(difftime(Sys.time(), started, units = "secs")),
                   paste(readLines("/proc/loadavg"), collapse = "")),
           file.path(out_dir, sprintf("series_ends_%s.txt", tag)))
