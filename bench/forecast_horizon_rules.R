# Rules for predict()'s choice of the model class with the horizon in view
# (series_forecast_form()), compared on M3 series other than the 400 of
# bench/forecast_m3.R, or on M1: each series fitted once by impute_series()
# and forecast over the competition's horizon with the fitted class
# (model_choice = "fit") and with the class chosen for the horizon, the
# rule's margins set by MARGIN=stationary,nonstationary (standard errors a
# rival of that class must win by; the package: 1,0; series_gap_margin,
# which the fit's class step on a series' gaps shares: these series have no
# gaps, so only the forecast's choice moves). Prints a Markdown
# table (MASE, interval scores and coverage at 80% and 95%, series whose
# class moved) and saves the per-series rows.
# Usage: [MARGIN=1,0] Rscript bench/forecast_horizon_rules.R <n per period> <seed> <out.rds> [M1 <0|1: odd or even series>]
#   (needs Mcomp: bash tools/setup-bench.sh; results of session 78:
#   bench/results/forecast_horizon_choice.md)
suppressPackageStartupMessages({
  library(ditimpute)
  if (!requireNamespace("Mcomp", quietly = TRUE)) stop("needs the Mcomp package (bash tools/setup-bench.sh)")
})
args <- commandArgs(trailingOnly = TRUE)
n_per <- as.integer(args[1]); seed <- as.integer(args[2]); out <- args[3]
m3 <- Mcomp::M3
periods <- vapply(m3, function(s) s$period, "")
set.seed(2026)  # the 400 series of bench/forecast_m3.R, left out
used <- unlist(lapply(c("YEARLY", "QUARTERLY", "MONTHLY", "OTHER"), function(p) sort(sample(which(periods == p), 100))))
set.seed(seed)
pick <- unlist(lapply(c("YEARLY", "QUARTERLY", "MONTHLY", "OTHER"),
                      function(p) sort(sample(setdiff(which(periods == p), used), n_per))))
if (length(args) >= 4 && args[4] == "M1") {
  m3 <- Mcomp::M1
  pick <- seq_along(m3)
  pick <- pick[pick %% 2 == as.integer(args[5])]
}
mg <- Sys.getenv("MARGIN", "")
if (nzchar(mg)) {
  m <- as.numeric(strsplit(mg, ",")[[1]])
  utils::assignInNamespace("series_gap_margin", c(cycle = 1, stationary = m[1], nonstationary = m[2]), "ditimpute")
}
rows <- list()
for (i in pick) {
  s <- m3[[i]]; x <- s$x; y <- as.numeric(s$xx); h <- s$h; f <- stats::frequency(x)
  lag <- if (f > 1 && length(x) > f) f else 1
  sc <- mean(abs(diff(as.numeric(x), lag = lag)))
  if (!is.finite(sc) || sc <= 0) next
  imp <- tryCatch(suppressWarnings(impute_series(x, n_samples = 100, seed = i, threads = 1, progress = FALSE)),
                  error = function(e) NULL)
  if (is.null(imp)) next
  for (r in c("fit", "horizon")) {
    p <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = i, threads = 1, model_choice = r))
    is <- function(l, u, a) mean((u - l) + (2 / a) * pmax(l - y, 0) + (2 / a) * pmax(y - u, 0)) / sc
    rows[[length(rows) + 1]] <- data.frame(series = s$sn, period = tolower(s$period), n = length(x), h = h, arm = r,
      changed = grepl("chosen for the horizon", attr(p, "method")), mase = mean(abs(p$estimate - y)) / sc,
      is80 = is(p$lower_80, p$upper_80, 0.2), is95 = is(p$lower_95, p$upper_95, 0.05),
      c80 = mean(p$lower_80 <= y & y <= p$upper_80), c95 = mean(p$lower_95 <= y & y <= p$upper_95))
  }
}
d <- do.call(rbind, rows)
saveRDS(d, out)
cat("| class | series | MASE | IS 80% | IS 95% | cover 80% | cover 95% | moved |\n|---|---|---|---|---|---|---|---|\n")
for (e in split(d, d$arm)) {
  cat(sprintf("| %s | %d | %.3f | %.2f | %.2f | %.1f | %.1f | %d |\n", e$arm[1], nrow(e), mean(e$mase), mean(e$is80),
              mean(e$is95), 100 * mean(e$c80), 100 * mean(e$c95), sum(e$changed)))
}
