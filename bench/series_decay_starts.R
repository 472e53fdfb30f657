# Does impute_series() on a long seasonal series gain from starting the
# season's decay (its drift time constant) slower? bench/series_multistart.R
# found ETTh1's first 1,000 hours of OT 9.3 log-likelihood units better off
# with a start that reached a slower drift; this bench refits the whole series
# with the start of every seasonal form's season_decay multiplied by each of
# `mults` (1 = the default, 4 periods), on series_long.R's gaps, and scores
# each fit's imputation against linear interpolation by gap length.
#
# Usage (from the repository root): Rscript bench/series_decay_starts.R [reps] [series,...] [mults]
# Prints one line per repetition and start: the chosen form, its fitted decay
# (frames), log-likelihood, MAE over linear interpolation's (all, then by gap
# length group 1 / 2-5 / 6-20 / 21-60 / >60), raw 90% coverage (same groups),
# seconds.
suppressMessages(library(ditimpute))
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 0)
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
names_run <- if (length(args) >= 2) strsplit(args[2], ",")[[1]] else c("ETTh1_OT", "ETTh2_OT")
mults <- if (length(args) >= 3) as.numeric(strsplit(args[3], ",")[[1]]) else c(1, 3, 10)
orig <- ditimpute:::series_start_spec
cat(sprintf("%s; load average %s\n", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
            paste(readLines("/proc/loadavg"), collapse = "")))
for (name in names_run) {
  y0 <- src$series[[name]]()
  for (r in seq_len(reps)) {
    g <- src$hide_repetition(y0, name, r)
    lin <- src$linear(g$y)$point[g$h]
    for (k in mults) {
      assignInNamespace("series_start_spec", function(model, kernel, period) {
        s <- orig(model, kernel, period)
        s$season_decay <- k * s$season_decay
        s
      }, "ditimpute")
      t0 <- proc.time()[["elapsed"]]
      imp <- impute_series(g$y, level = 0.9, n_samples = 50, seed = 1)
      secs <- proc.time()[["elapsed"]] - t0
      m <- imp$model
      e <- abs(as.numeric(imp$point)[g$h] - g$truth)
      el <- abs(lin - g$truth)
      cover <- as.numeric(imp$lower)[g$h] <= g$truth & g$truth <= as.numeric(imp$upper)[g$h]
      cat(sprintf("%s rep %d start x%g: %s %s, decay %.0f, logLik %.2f | MAE/linear %.3f | %s | cover %.3f | %s | %.1f s\n",
                  name, r, k, m$model_name, m$kernel_name,
                  if (is.null(m$spec$season_decay)) NA else m$spec$season_decay, m$loglik, sum(e) / sum(el),
                  paste(sprintf("%.3f", tapply(e, g$grp, sum) / tapply(el, g$grp, sum)), collapse = " "), mean(cover),
                  paste(sprintf("%.3f", tapply(cover, g$grp, mean)), collapse = " "), secs))
    }
  }
}
