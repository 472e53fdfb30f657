# impute_series(method = "dit") on positive, skewed data: does the DiT keep
# its imputations, draws and interval ends positive, and what does modelling
# on the transformed scale do to its error and coverage? airquality's Ozone
# (daily ppb, 153 days, 37 missing, 1 to 168: the default transform = "auto"
# chooses a Box-Cox scale for it), DiT defaults, one thread.
#
# Usage: Rscript bench/series_dit_scale.R TAG   (writes
#   bench/results/series_dit_scale_TAG.txt; run once per package build, e.g.
#   R_LIBS pointing at the build before the change)
#   Rscript bench/series_dit_scale.R --report TAG1,TAG2 ["what TAG1 is|what TAG2 is"]
#   (writes bench/results/series_dit_scale.md)
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) >= 1)
out_dir <- "bench/results"
if (args[1] == "--report") {
  tags <- strsplit(args[2], ",")[[1]]
  what <- if (length(args) >= 3) strsplit(args[3], "|", fixed = TRUE)[[1]] else rep("", length(tags))
  body <- unlist(lapply(seq_along(tags), function(i) {
    c(sprintf("## `%s`%s", tags[i], if (nzchar(what[i])) paste0(": ", what[i]) else ""), "",
      readLines(file.path(out_dir, sprintf("series_dit_scale_%s.txt", tags[i]))), "")
  }))
  writeLines(c("# The DiT series path on positive, skewed data (bench/series_dit_scale.R)", "",
               sub("^# ?", "", readLines("bench/series_dit_scale.R", n = 5)), "", body),
             file.path(out_dir, "series_dit_scale.md"))
  quit(save = "no")
}
tag <- args[1]
suppressMessages(library(ditimpute))
oz <- datasets::airquality$Ozone
started <- Sys.time()
lines <- character(0)
say <- function(...) lines <<- c(lines, sprintf(...))

# 1. The series' own 37 gaps, 95% intervals (the default level).
imp <- impute_series(oz, method = "dit", seed = 1, threads = 1)
miss <- is.na(oz)
pt <- as.numeric(completed_series(imp))[miss]
lo <- as.numeric(completed_series(imp, what = "lower"))[miss]
draws <- unlist(imp$samples)
say("- Own gaps (37 days), 95%% intervals: negative imputations %d of %d, negative lower ends %d (%.1f%%), negative draws %.1f%%; %s",
    sum(pt < 0), length(pt), sum(lo < 0), 100 * mean(lo < 0), 100 * mean(draws < 0),
    if (is.null(imp$model$transform)) "no transform recorded" else
      paste("lambda", paste(format(imp$model$transform$lambda, digits = 2), collapse = ", ")))

# 2. Further values hidden (20 observed days, five seeds), 90% intervals, the
# series' own gaps not scored.
rows <- lapply(1:5, function(s) {
  set.seed(s)
  hide <- sample(which(!miss), 20)
  x <- oz
  x[hide] <- NA
  fit <- impute_series(x, method = "dit", level = 0.9, seed = s, threads = 1)
  p <- as.numeric(completed_series(fit))[hide]
  l <- as.numeric(completed_series(fit, what = "lower"))[hide]
  u <- as.numeric(completed_series(fit, what = "upper"))[hide]
  data.frame(seed = s, err = abs(p - oz[hide]), inside = oz[hide] >= l & oz[hide] <= u, width = u - l,
             negative = l < 0)
})
d <- do.call(rbind, rows)
per_seed <- aggregate(cbind(mae = err, coverage = inside) ~ seed, d, mean)
say("- 20 observed days hidden, 5 seeds (100 values), 90%% intervals: MAE %.2f, coverage %.1f%% (by seed %s), mean width %.1f, negative lower ends %d",
    mean(d$err), 100 * mean(d$inside), paste(sprintf("%.0f%%", 100 * per_seed$coverage), collapse = " / "),
    mean(d$width), sum(d$negative))
say("- MAE by seed: %s", paste(sprintf("%.2f", per_seed$mae), collapse = " / "))
say("- %s, ditimpute %s from %s; %.0f s; load average at the end %s",
    format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.character(utils::packageVersion("ditimpute")),
    dirname(find.package("ditimpute")), as.numeric(difftime(Sys.time(), started, units = "secs")),
    paste(readLines("/proc/loadavg"), collapse = ""))
writeLines(lines, file.path(out_dir, sprintf("series_dit_scale_%s.txt", tag)))
cat(lines, sep = "\n")
