# impute_series() against imputeTS (na_kalman, na_seadec, na_interpolation),
# Amelia and linear interpolation on seasonal series that ship with R, in one
# run: values hidden as random holes (10% of the entries) and as long gaps
# (one gap of 10% of the series per variable, at least 2 periods or 6
# frames), several repetitions each. MAE and RMSE on the hidden values, and
# the coverage of 90% intervals for the methods that give them (the GP:
# point +/- 1.645 sd of its sample paths; Amelia: the 5% and 95% quantiles
# of its 20 imputations). Packages that are not installed are skipped.
#
# gp_calibrated is the same GP with impute_series(calibrate = TRUE): its
# intervals self-calibrated on further stretches hidden in the series itself
# (lengths from the series' own gaps; see ?calibrate).
#
# gp_joint is the GP with separate = "none": every variable in one form (the
# default before 2026-11-28; differs from gp only on series with several
# variables, where separate = "auto" gives a model of its own to a variable
# that the others explain under 5% of the one-step changes of); run only when named.
#
# gp_proper is the GP with proper = TRUE (each path under its own draw of the
# parameters: intervals that carry the parameters' uncertainty), gp_plugin
# with proper = FALSE (every path under the fitted parameters); run only when
# named. The default (gp) is proper = "auto" since 2026-11-28: TRUE on series
# of fewer than 60 frames, so gp equals gp_proper there and gp_plugin above.
#
# dit is impute_series(method = "dit") with its small defaults (300 training
# steps of a 1-layer, width-32 DiT): run only when named.
#
# Usage: Rscript bench/series.R [reps] [methods] [series]   (writes
# bench/results/series.md and inst/extdata/series_bench.csv; with a
# comma-separated list of methods, e.g. gp,gp_calibrated, only those run
# (and linear) and the output goes to bench/results/series_<methods>.md
# instead; a comma-separated list of series restricts the series; when
# every series named is one of the `fresh` ones below, the output goes to
# bench/results/series_fresh_multi.md; a fourth argument NAME sends it to
# bench/results/series_NAME.md)
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 3L
only <- if (length(args) > 1) strsplit(args[2], ",")[[1]] else NULL
# The summary compares the default GP with the others: without gp among the
# methods it had no rows and the run stopped at its end (a 20-minute
# Seatbelts run of gp_joint alone, 2026-12-06).
if (!is.null(only) && !"gp" %in% only) {
  message("bench/series.R: gp added to the methods (the summary table compares the default GP with them)")
  only <- c("gp", only)
}
pick <- if (length(args) > 2) strsplit(args[3], ",")[[1]] else NULL
has <- function(p) requireNamespace(p, quietly = TRUE)
have_imputets <- has("imputeTS"); have_amelia <- has("Amelia")
if (!have_imputets) message("imputeTS is not installed: its methods are skipped")
if (!have_amelia) message("Amelia is not installed: it is skipped")

source("bench/series_sets.R")  # series, fresh, short
if (!is.null(pick)) series <- c(series, fresh, short)[pick]
# Stock prices have no season: frequency 260 only counts trading days.
periods <- list(EuStockMarkets = 1)

source("bench/series_hide.R")  # hide()

with_na <- function(y, miss) { y[miss] <- NA; y }

# The kernel of a fitted series model; of each group where variables were
# separated ("seasonal+smooth").
kernel_of <- function(m) {
  if (is.null(m$parts)) m$kernel_name else paste(unique(vapply(m$parts, `[[`, "", "kernel_name")), collapse = "+")
}
# The groups of variables a model set was fitted in ("" when all are in one model).
split_of <- function(m) {
  if (is.null(m$parts)) return("")
  paste(vapply(m$groups, function(g) paste(m$variables[g], collapse = "+"), ""), collapse = " / ")
}

# Each method returns list(point = T x d matrix, lower, upper) or NULL.
methods <- list(
  gp = function(y, name) {
    imp <- impute_series(y, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                         period = periods[[name]])
    list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = kernel_of(imp$model),
         split = split_of(imp$model))
  },
  gp_joint = function(y, name) {
    imp <- suppressWarnings(impute_series(y, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                                          period = periods[[name]], separate = "none"))
    list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = kernel_of(imp$model))
  },
  gp_proper = function(y, name) {
    imp <- impute_series(y, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                         period = periods[[name]], proper = TRUE)
    list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = kernel_of(imp$model))
  },
  gp_plugin = function(y, name) {
    imp <- impute_series(y, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                         period = periods[[name]], proper = FALSE)
    list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = kernel_of(imp$model))
  },
  gp_calibrated = function(y, name) {
    imp <- impute_series(y, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                         period = periods[[name]], calibrate = TRUE)
    list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = kernel_of(imp$model))
  },
  dit = function(y, name) {
    imp <- impute_series(y, method = "dit", level = 0.9, n_samples = 50, seed = 1, threads = 2,
                         period = periods[[name]])
    list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = "dit")
  },
  linear = function(y, name) {
    v <- as.matrix(y)
    list(point = apply(v, 2, function(col) stats::approx(seq_along(col), col, seq_along(col), rule = 2)$y))
  }
)
# gp_stationary, gp_level and gp_trend are the GP with its model class held
# (impute_series(model = ...)) instead of chosen: run only when named, to see
# what the class choice costs or buys on a series.
for (cls in c("stationary", "level", "trend")) {
  methods[[paste0("gp_", cls)]] <- local({
    model <- cls
    function(y, name) {
      imp <- impute_series(y, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                           period = periods[[name]], model = model)
      list(point = imp$point, lower = imp$lower, upper = imp$upper, kernel = kernel_of(imp$model))
    }
  })
}
if (have_imputets) {
  # StructTS (na_kalman's default) and auto.arima take minutes per column on
  # EuStockMarkets' 1,860 days (auto.arima: 120 s elapsed, 30 s CPU for one
  # column on the shared 2-core machine): skipped above 1,000 frames.
  methods$na_kalman <- function(y, name) {
    if (NROW(y) > 1000) return(NULL)
    list(point = as.matrix(imputeTS::na_kalman(y)))
  }
  methods$na_seadec <- function(y, name) list(point = as.matrix(imputeTS::na_seadec(y)))
  methods$na_interpolation <- function(y, name) list(point = as.matrix(imputeTS::na_interpolation(y)))
}
if (have_amelia) {
  methods$amelia <- function(y, name) {
    v <- as.matrix(y)
    if (ncol(v) < 2) return(NULL)  # Amelia imputes a variable from the others
    # On Longley's collinear series Amelia 1.8.1 aborts the R process (an
    # Armadillo chol() exception escapes its C++: "terminate called").
    if (name == "longley") return(NULL)
    df <- data.frame(time = seq_len(nrow(v)), v)
    a <- suppressWarnings(Amelia::amelia(df, m = 20, ts = "time", polytime = 2, p2s = 0))
    if (is.null(a$imputations) || !is.data.frame(a$imputations[[1]])) return(NULL)
    draws <- simplify2array(lapply(a$imputations, function(im) as.matrix(im[, -1])))
    list(point = apply(draws, 1:2, mean), lower = apply(draws, 1:2, stats::quantile, 0.05),
         upper = apply(draws, 1:2, stats::quantile, 0.95))
  }
}

methods <- if (is.null(only)) methods[!names(methods) %in% c("dit", "gp_joint", "gp_proper", "gp_plugin", "gp_stationary", "gp_level", "gp_trend")] else methods[intersect(names(methods), c(only, "linear"))]

rows <- list()
byvar <- list()
for (name in names(series)) {
  y <- series[[name]]
  truth <- as.matrix(y)
  for (kind in c("random", "long")) {
    for (r in seq_len(reps)) {
      miss <- hide(y, kind, 1000 * r + nchar(name))
      yy <- with_na(y, miss)
      for (m in names(methods)) {
        t0 <- proc.time()[["elapsed"]]
        out <- tryCatch(methods[[m]](yy, name), error = function(e) {
          message(sprintf("%s on %s (%s): %s", m, name, kind, conditionMessage(e))); NULL
        })
        if (is.null(out)) next
        err <- out$point[miss] - truth[miss]
        cover <- if (is.null(out$lower)) NA else mean(truth[miss] >= out$lower[miss] & truth[miss] <= out$upper[miss])
        for (j in seq_len(if (ncol(truth) > 1) ncol(truth) else 0)) {  # per variable, where there are several
          mj <- miss[, j]
          if (any(mj)) byvar[[length(byvar) + 1]] <- data.frame(series = name, gaps = kind, rep = r, method = m,
                                                                 variable = colnames(truth)[j],
                                                                 mae = mean(abs(out$point[mj, j] - truth[mj, j])))
        }
        rows[[length(rows) + 1]] <- data.frame(series = name, gaps = kind, rep = r, method = m,
                                               mae = mean(abs(err)), rmse = sqrt(mean(err^2)), coverage90 = cover,
                                               seconds = proc.time()[["elapsed"]] - t0,
                                               kernel = if (is.null(out$kernel)) NA else out$kernel,
                                               split = if (is.null(out$split)) NA else out$split)
      }
    }
  }
  cat(name, "done\n")
}
res <- do.call(rbind, rows)
agg <- aggregate(cbind(mae, rmse, coverage90, seconds) ~ series + gaps + method, data = res, FUN = mean,
                 na.action = na.pass)
agg <- agg[order(agg$series, agg$gaps, agg$mae), ]
best_ts <- if (have_imputets) {
  ts_rows <- agg[agg$method %in% c("na_kalman", "na_seadec", "na_interpolation"), ]
  do.call(rbind, lapply(split(ts_rows, list(ts_rows$series, ts_rows$gaps), drop = TRUE), function(b) b[which.min(b$mae), ]))
} else NULL
gp <- agg[agg$method == "gp", ]
lin <- agg[agg$method == "linear", ]
cmp <- merge(gp[, c("series", "gaps", "mae", "rmse", "coverage90")], lin[, c("series", "gaps", "mae")],
             by = c("series", "gaps"), suffixes = c("_gp", "_linear"))
if (!is.null(best_ts)) {
  names(best_ts)[names(best_ts) == "mae"] <- "mae_best_imputeTS"
  names(best_ts)[names(best_ts) == "method"] <- "best_imputeTS"
  cmp <- merge(cmp, best_ts[, c("series", "gaps", "best_imputeTS", "mae_best_imputeTS")], by = c("series", "gaps"))
  cmp$ratio_gp_to_best_imputeTS <- cmp$mae_gp / cmp$mae_best_imputeTS
}
cmp$ratio_gp_to_linear <- cmp$mae_gp / cmp$mae_linear
kernels <- aggregate(kernel ~ series + gaps, data = res[res$method == "gp", ], FUN = function(k) paste(unique(k), collapse = "/"))
cmp <- merge(cmp, kernels, by = c("series", "gaps"))
# The groups the default formed, where it split any variable off (how often).
splits <- aggregate(split ~ series + gaps, data = res[res$method == "gp", ], FUN = function(k) {
  k <- k[k != ""]
  if (!length(k)) return("")
  tab <- table(k)
  paste(sprintf("%s (%d)", names(tab), as.integer(tab)), collapse = "; ")
}, na.action = na.pass)
if (any(splits$split != "")) cmp <- merge(cmp, splits, by = c("series", "gaps"))
# Per-repetition spread of the GP's coverage: one long gap is a handful of
# strongly correlated entries, so one repetition's coverage is noisy.
spread <- aggregate(coverage90 ~ series + gaps, data = res[res$method == "gp", ],
                    FUN = function(v) sprintf("%.2f-%.2f", min(v), max(v)))
names(spread)[3] <- "coverage90_reps"
cmp <- merge(cmp, spread, by = c("series", "gaps"))
if (any(agg$method == "gp_calibrated")) {
  gc <- agg[agg$method == "gp_calibrated", c("series", "gaps", "coverage90")]
  names(gc)[3] <- "coverage90_calibrated"
  cmp <- merge(cmp, gc, by = c("series", "gaps"))
}
if (any(agg$method == "dit")) {
  dd <- agg[agg$method == "dit", c("series", "gaps", "mae", "coverage90")]
  names(dd)[3:4] <- c("mae_dit", "coverage90_dit")
  cmp <- merge(cmp, dd, by = c("series", "gaps"))
  cmp$ratio_dit_to_gp <- cmp$mae_dit / cmp$mae_gp
}
within <- function(v) sum(v >= 0.85 & v <= 0.95, na.rm = TRUE)
verdict <- sprintf("90%% intervals covering 85-95%% of the hidden values: GP %d of %d series x gap kinds%s.",
                   within(cmp$coverage90), nrow(cmp),
                   if (is.null(cmp$coverage90_calibrated)) "" else
                     sprintf(", self-calibrated GP %d of %d", within(cmp$coverage90_calibrated), nrow(cmp)))
cat(verdict, "\n")
fmt <- function(df) {
  num <- vapply(df, is.numeric, TRUE)
  df[num] <- lapply(df[num], function(v) signif(v, 3))
  df
}
print(fmt(cmp), row.names = FALSE)
dir.create("bench/results", showWarnings = FALSE)
dir.create("inst/extdata", showWarnings = FALSE, recursive = TRUE)
out_md <- if (length(args) > 3) {
  sprintf("bench/results/series_%s.md", args[4])
} else if (!is.null(pick) && all(pick %in% names(fresh))) {
  "bench/results/series_fresh_multi.md"
} else if (is.null(only)) "bench/results/series.md" else sprintf("bench/results/series_%s.md", paste(only, collapse = "-"))
if (is.null(only)) utils::write.csv(agg, "inst/extdata/series_bench.csv", row.names = FALSE)
md <- function(df) {
  df <- fmt(df)
  c(paste("|", paste(names(df), collapse = " | "), "|"), paste(rep("|---", ncol(df)), collapse = ""),
    apply(df, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
}
# MAE per variable of the series with several variables (mean over the
# repetitions), one column per method.
per_variable <- if (length(byvar)) {
  bv <- aggregate(mae ~ series + gaps + variable + method, data = do.call(rbind, byvar), FUN = mean)
  wide <- reshape(bv, idvar = c("series", "gaps", "variable"), timevar = "method", direction = "wide")
  names(wide) <- sub("^mae\\.", "", names(wide))
  wide <- wide[order(wide$series, wide$gaps, match(wide$variable, unique(bv$variable))), ]
  c("", "## MAE per variable (series with several variables; mean over the repetitions)", "", md(wide))
}
writeLines(c("# impute_series() against imputeTS, Amelia and linear interpolation",
             "", sprintf("`Rscript bench/series.R %s` on %s (%d repetitions per series and gap kind; 10%% random holes, or one long gap of 10%% of the series per variable). MAE and RMSE on the hidden values; coverage90 = share of hidden values inside 90%% intervals.", paste(args, collapse = " "), format(Sys.time(), "%Y-%m-%d", tz = "UTC"), reps),
             if (!is.null(only)) c("", sprintf("Methods: %s (and linear as the baseline).", paste(only, collapse = ", "))),
             "", verdict,
             "", "## GP against the best imputeTS method and linear interpolation", "", md(cmp),
             "", "## Every method", "", md(agg), per_variable), out_md)
cat("wrote", out_md, if (is.null(only)) "and inst/extdata/series_bench.csv", "\n")
