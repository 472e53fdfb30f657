# Are impute_series()'s intervals on short series calibrated when the model is
# right? The nine 40-50-frame series of bench/series.R's short check cover
# their long gaps 72-93% (five of nine under 85%, 10 repetitions) with the
# default proper draws (series_short_proper.md); the multi-start bench ruled
# out local optima (series_multistart.md). This bench separates the two
# remaining causes, the parameters' uncertainty and the model's misfit: it
# fits the default model to each short series (one model for all its
# variables, no transform), draws `reps` series of the same length from the
# chosen form at the fitted parameters (the core's smoother with every value
# missing; a level or trend form anchored by two frames observed at 0, since
# its start is diffuse, and those frames dropped), hides bench/series.R's
# long gaps (one per variable, its hide()) and scores impute_series() with the
# default proper draws and with proper = FALSE (plug-in). Under a right model
# the default's 90% intervals should cover about 90%: a shortfall there is
# the parameter uncertainty's handling; a shortfall on the real series only
# is the model's.
#
# Usage (from the repository root): Rscript bench/series_short_simulated.R [reps] [series,...]
# Writes bench/results/series_short_simulated.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 100L
# bench/series.R's short series and its gaps (the files it sources; the
# grab of their lines from bench/series.R broke when they moved there).
source("bench/series_sets.R")  # short
source("bench/series_hide.R")  # hide()
short <- short[setdiff(names(short), c("austres", "JohnsonJohnson"))]  # the 40-50-frame ones
if (length(args) >= 2) short <- short[strsplit(args[2], ",")[[1]]]
t_start <- proc.time()[["elapsed"]]
load_start <- readLines("/proc/loadavg")

rows <- list()
forms <- list()
for (name in names(short)) {
  y <- short[[name]]
  v <- as.matrix(y)
  n <- nrow(v); d <- ncol(v)
  y1 <- y
  y1[1] <- NA  # impute_series() fits when something is missing
  fit <- impute_series(y1, transform = "none", proper = FALSE, separate = "none", seed = 1)$model
  cand <- fit$candidate
  s <- cand$spec
  forms[[name]] <- sprintf("%s %s: nugget %.3g, lengthscale %.3g%s%s%s", fit$model_name, fit$kernel_name, s$nugget,
                           s$smooth_lengthscale,
                           if (s$model != "stationary") sprintf(", level rate %.3g", s$level_rate) else "",
                           if (s$model == "trend") sprintf(", slope rate %.3g", s$slope_rate) else "",
                           if (isTRUE(s$seasonal)) sprintf(", season variance %.3g, periodic lengthscale %.3g, decay %.3g",
                                                           s$season_var, s$periodic_lengthscale, s$season_decay) else "")
  anchor <- if (s$model == "stationary") 0L else 2L
  z0 <- matrix(NA_real_, n + anchor, d)
  z0[seq_len(anchor), ] <- 0
  sims <- ditimpute:::cpp_structural_impute(z0, cand, list(n_samples = reps, seed = 99, threads = 1L))$samples
  for (r in seq_len(reps)) {
    z <- matrix(sims[r, ], n, d, byrow = TRUE)
    x <- y
    x[] <- sweep(sweep(z, 2, fit$scale, "*"), 2, fit$center, "+")
    miss <- hide(x, "long", 1000 * r + nchar(name))
    truth <- as.matrix(x)[miss]
    x[miss] <- NA
    for (proper in c(TRUE, FALSE)) {
      imp <- tryCatch(impute_series(x, level = 0.9, n_samples = 200, seed = 1, transform = "none", proper = proper),
                      error = function(e) { message(name, " ", r, ": ", conditionMessage(e)); NULL })
      if (is.null(imp)) next
      lo <- as.matrix(imp$lower)[miss]; hi <- as.matrix(imp$upper)[miss]
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, method = if (proper) "proper (default)" else "plug-in",
                                             cover = mean(lo <= truth & truth <= hi),
                                             abs = mean(abs(as.matrix(imp$point)[miss] - truth)), width = mean(hi - lo),
                                             same_form = identical(imp$model$model_name, fit$model_name) &&
                                               identical(imp$model$kernel_name, fit$kernel_name))
    }
  }
  cat(name, "done\n")
}
res <- do.call(rbind, rows)
# One unit per simulated series (its gaps share the series' parameters).
tab <- do.call(rbind, lapply(split(res, list(res$series, res$method), drop = TRUE), function(d) {
  data.frame(series = d$series[1], method = d$method[1], reps = nrow(d), coverage90 = mean(d$cover),
             se = stats::sd(d$cover) / sqrt(nrow(d)), mae = mean(d$abs), width = mean(d$width),
             same_form_chosen = mean(d$same_form))
}))
tab <- tab[order(tab$series, tab$method), ]
pooled <- do.call(rbind, lapply(split(res, res$method), function(d) {
  data.frame(method = d$method[1], series = length(unique(d$series)), coverage90 = mean(d$cover),
             se = stats::sd(d$cover) / sqrt(nrow(d)))
}))
fmt <- function(df) {
  for (k in names(df)) if (is.numeric(df[[k]])) df[[k]] <- signif(df[[k]], 3)
  c(paste("|", paste(names(df), collapse = " | "), "|"), paste("|", paste(rep("---", ncol(df)), collapse = " | "), "|"),
    apply(df, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
}
out <- c("# Short series simulated from their own fitted models (bench/series_short_simulated.R)", "",
         sprintf("`Rscript bench/series_short_simulated.R %s` on %s; %s. %d simulated series per real one, bench/series.R's long gaps (one per variable); 90%% intervals, 200 paths, no transform. Load average %s at the start, %s at the end (2 cores); wall %.0f s.",
                 paste(args, collapse = " "), format(Sys.Date()), R.version.string, reps, sub(" [0-9]+/.*", "", load_start),
                 sub(" [0-9]+/.*", "", readLines("/proc/loadavg")), proc.time()[["elapsed"]] - t_start), "",
         "## The models simulated from (each real series' fit, standardised scale)", "",
         paste0("- ", names(forms), ": ", unlist(forms)), "",
         "## 90% coverage of the hidden gaps (SE over simulated series)", "", fmt(tab), "",
         "## Pooled over the series", "", fmt(pooled))
writeLines(out, "bench/results/series_short_simulated.md")
cat(out, sep = "\n")
