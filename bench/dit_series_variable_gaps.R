# impute_series(method = "dit") on multivariate series whose gaps are in
# single variables while the others stay observed (one sensor of several
# failing): the common case in real data, and one the DiT's training masks
# did not contain until its series path drew single-variable blocks
# ("v1xL" generators, rpkg/R/series_dit.R's series_dit_strategy()).
#
# Four series nobody tuned the DiT for: the first 150 days of EuStockMarkets
# (log scale; bench/dit_series_defaults.R's series), Seatbelts (192 months x
# 7, `law` left out), ETTh1 hours 2,001-2,600 (7 variables) and BeijingAir
# Dongsi hours 20,001-20,600 (9 variables; RAIN and WSPM left out). In each,
# 10% of the observed entries are hidden in single-variable gaps of 1-10
# frames (seed 1, or the second argument). Scores on the hidden values, standardised by each
# variable's sd so that variables in different units weigh alike: MAE, RMSE,
# 95% interval coverage (impute_series()'s default level), by gap length
# (1-3, 4-10), for the DiT (defaults), the structural GP (method = "gp",
# defaults) and imputeTS's linear interpolation, in one run.
#
# Compare package builds by running this script under each (R_LIBS), with a
# label and the gaps' seed: Rscript bench/dit_series_variable_gaps.R LABEL SEED
# Appends to bench/results/dit_series_variable_gaps.md (and a CSV of the
# rows beside it).
suppressPackageStartupMessages({
  library(ditimpute)
  library(imputeTS)
})
source(file.path("bench", "md_table.R"))
args <- commandArgs(trailingOnly = TRUE)
label <- if (length(args)) args[1] else "run"
hide_seed <- if (length(args) > 1) as.integer(args[2]) else 1L
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "1"))
shared <- Sys.getenv("DITIMPUTE_SHARED", "../shared")
if (!dir.exists(shared)) shared <- "/work/shared"

series <- list(
  EuStockMarkets = log(unclass(EuStockMarkets)[1:150, ]),
  Seatbelts = unclass(Seatbelts)[, setdiff(colnames(Seatbelts), "law")],
  ETTh1 = read_ett(file.path(shared, "data/ett/ETTh1.csv.gz"))$values[2001:2600, ],
  BeijingAir_Dongsi = {
    b <- read_beijing_air(file.path(shared, "data/beijing_air"), sites = "Dongsi")$values[20001:20600, ]
    b[, !grepl("RAIN|WSPM", colnames(b))]
  }
)

# 10% of the observed entries hidden in single-variable gaps of 1-10 frames
# (a gap is one variable's run; gaps may overlap in time across variables).
hide_variable_gaps <- function(v, share = 0.10, seed = 1) {
  set.seed(seed)
  hide <- matrix(FALSE, nrow(v), ncol(v))
  target <- share * sum(!is.na(v))
  while (sum(hide & !is.na(v)) < target) {
    j <- sample(ncol(v), 1); len <- sample(10, 1); s <- sample(nrow(v) - len, 1)
    hide[s + seq_len(len) - 1, j] <- TRUE
  }
  hide & !is.na(v)
}

# each hidden value's gap length (its run in its variable)
run_length <- function(hide) {
  out <- matrix(NA_integer_, nrow(hide), ncol(hide))
  for (j in seq_len(ncol(hide))) {
    r <- rle(hide[, j]); ends <- cumsum(r$lengths)
    for (k in which(r$values)) out[(ends[k] - r$lengths[k] + 1):ends[k], j] <- r$lengths[k]
  }
  out
}

loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
rows <- list()
for (nm in names(series)) {
  v <- series[[nm]]
  hide <- hide_variable_gaps(v, seed = hide_seed)
  x <- v
  x[hide] <- NA
  sds <- apply(v, 2, stats::sd, na.rm = TRUE)
  len <- run_length(hide)[hide]
  group <- ifelse(len <= 3, "1-3", "4-10")
  truth <- v[hide]
  sdv <- sds[col(v)[hide]]
  score <- function(method, point, lower, upper, secs) {
    err <- (point[hide] - truth) / sdv
    inside <- if (is.null(lower)) NA else lower[hide] <= truth & truth <= upper[hide]
    do.call(rbind, lapply(c("all", "1-3", "4-10"), function(g) {
      k <- if (g == "all") rep(TRUE, length(err)) else group == g
      data.frame(series = nm, frames = nrow(v), variables = ncol(v), method = method, gaps = g, values = sum(k),
                 mae_sd = mean(abs(err[k])), rmse_sd = sqrt(mean(err[k]^2)), coverage95 = mean(inside[k]),
                 seconds = secs)
    }))
  }
  load0 <- loadavg()
  t0 <- proc.time()[["elapsed"]]
  d <- impute_series(x, method = "dit", seed = 1, threads = threads)
  s_dit <- proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  g <- impute_series(x, method = "gp", seed = 1, threads = threads)
  s_gp <- proc.time()[["elapsed"]] - t0
  lin <- apply(x, 2, function(col) imputeTS::na_interpolation(col))
  tab <- rbind(score("dit", as.matrix(d$point), as.matrix(d$lower), as.matrix(d$upper), s_dit),
               score("gp", as.matrix(g$point), as.matrix(g$lower), as.matrix(g$upper), s_gp),
               score("linear", lin, NULL, NULL, NA))
  tab$load <- paste(load0, "->", loadavg())
  tab$training_masks <- paste(vapply(d$model$strategy$generators, `[[`, "", "label"), collapse = " ")
  print(tab[, 1:10], digits = 3)
  rows[[nm]] <- tab
}
tab <- do.call(rbind, rows)
tab$label <- label
tab$hide_seed <- hide_seed
csv <- "bench/results/dit_series_variable_gaps.csv"
utils::write.table(tab, csv, sep = ",", row.names = FALSE, append = file.exists(csv), col.names = !file.exists(csv))

show <- tab[, c("series", "method", "gaps", "values", "mae_sd", "rmse_sd", "coverage95", "seconds")]
show$mae_sd <- sprintf("%.4f", show$mae_sd); show$rmse_sd <- sprintf("%.4f", show$rmse_sd)
show$coverage95 <- ifelse(is.na(show$coverage95), "", sprintf("%.3f", show$coverage95))
show$seconds <- ifelse(is.na(show$seconds), "", sprintf("%.1f", show$seconds))
fmt <- md_table_lines(show)
out <- "bench/results/dit_series_variable_gaps.md"
head <- if (file.exists(out)) character() else
  c("# The DiT on single-variable gaps (bench/dit_series_variable_gaps.R)", "",
    "Four multivariate series, 10% of the observed entries hidden in single-variable gaps of 1-10 frames (seed 1);",
    "errors in each variable's sd; 95% intervals; impute_series() defaults for both methods; imputeTS's",
    "na_interpolation column by column. Load average (1/5/15 min) before -> after each series in the CSV.", "")
cat(c(head, sprintf("## %s (gaps of seed %d): %s, ditimpute from %s, %d thread(s), load at the end %s", label, hide_seed,
                    format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), dirname(find.package("ditimpute")), threads,
                    loadavg()), "",
      sprintf("DiT training masks (per series): %s", paste(sprintf("%s: %s", names(rows),
              vapply(rows, function(t) t$training_masks[1], "")), collapse = "; ")), "",
      fmt, ""), file = out, sep = "\n", append = TRUE)
