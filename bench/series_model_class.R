# How impute_series() should choose the model class (stationary, or a local
# level or trend) on short series: bench/series.R's univariate series and
# gaps (10% random holes, or one long gap of 10% of the series; the same
# seeds), each imputed with the class fixed (model = "stationary", "level",
# "trend") and with model = "auto" under four rules: BIC alone (the rule
# before the class was weighed on hidden gaps), and the hidden gaps' CRPS
# with the one-standard-error margin that the cycle's choice uses (leaning to
# BIC's class), with none (the lower mean CRPS), and the default (a level or
# trend replaces BIC's stationary form on a lower mean, a stationary form
# replaces BIC's level or trend by one standard error). MAE on the
# hidden values, pooled over the repetitions; `bic_stationary`: repetitions in
# which BIC's smallest form was stationary; `class_by_gaps`: repetitions in
# which the default rule took the other class than BIC's.
#
# Usage: Rscript bench/series_model_class.R [reps]   (from the repository root)
# Writes bench/results/series_model_class.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 10L
series <- list(co2 = datasets::co2, nottem = datasets::nottem, UKgas = log(datasets::UKgas),
               ldeaths = datasets::ldeaths, Nile = datasets::Nile)
source("bench/series_hide.R")  # bench/series.R's hide()
ns <- asNamespace("ditimpute")
# Runs expr with the class weighed on hidden gaps (models = TRUE) or not, and
# the margins (in standard errors) a stationary rival and a level or trend
# rival need.
source("bench/with_object.R")  # with_object()
with_rule <- function(models, to_stationary, to_nonstationary, expr) {
  margin <- c(cycle = get("series_gap_margin", ns)[["cycle"]], stationary = to_stationary,
              nonstationary = to_nonstationary)
  with_object("series_gap_models", models, with_object("series_gap_margin", margin, expr))
}
auto <- function(y) impute_series(y, level = 0.9, n_samples = 50, seed = 1)
fits <- list(stationary = function(y) impute_series(y, model = "stationary", level = 0.9, n_samples = 50, seed = 1),
             level = function(y) impute_series(y, model = "level", level = 0.9, n_samples = 50, seed = 1),
             trend = function(y) impute_series(y, model = "trend", level = 0.9, n_samples = 50, seed = 1),
             auto_bic = function(y) with_rule(FALSE, 0, 0, auto(y)),
             auto_gaps_1se = function(y) with_rule(TRUE, 1, 1, auto(y)),
             auto_gaps_0 = function(y) with_rule(TRUE, 0, 0, auto(y)),
             auto_gaps = auto)
t_start <- proc.time()[["elapsed"]]
rows <- list()
for (name in names(series)) {
  y <- series[[name]]
  truth <- as.numeric(y)
  for (kind in c("random", "long")) {
    for (r in seq_len(reps)) {
      miss <- hide(y, kind, 1000 * r + nchar(name))  # bench/series.R's seed
      yy <- y
      yy[miss] <- NA
      row <- data.frame(series = name, gaps = kind, rep = r)
      for (f in names(fits)) {
        imp <- suppressWarnings(fits[[f]](yy))
        row[[f]] <- mean(abs(imp$point[miss] - truth[miss]))
        if (f == "auto_bic") row$bic_stationary <- imp$model$model_name == "stationary"
        if (f == "auto_gaps") row$class_by_gaps <- (imp$model$model_name == "stationary") != row$bic_stationary
      }
      rows[[length(rows) + 1]] <- row
    }
    cat(name, kind, "done\n")
  }
}
res <- do.call(rbind, rows)
agg <- do.call(rbind, lapply(split(res, list(res$series, res$gaps), drop = TRUE), function(d) {
  data.frame(series = d$series[1], gaps = d$gaps[1],
             as.list(colMeans(d[, names(fits)])), bic_stationary = sum(d$bic_stationary),
             class_by_gaps = sum(d$class_by_gaps))
}))
agg <- agg[order(agg$series, agg$gaps), ]
ratio <- function(a, b) exp(mean(log(agg[[a]] / agg[[b]])))
fmt <- agg
for (f in names(fits)) fmt[[f]] <- signif(fmt[[f]], 4)
md <- c("# Choosing the model class on short series (bench/series_model_class.R)", "",
        sprintf("`Rscript bench/series_model_class.R %d` on %s (%s, ditimpute %s): bench/series.R's univariate series, gaps and seeds, %d repetitions per series and gap kind; MAE on the hidden values (50 sample paths, default arguments but the model). Whole run %.0f s; load average at the end: %s (2 cores).",
                reps, format(Sys.Date()), R.version.string, utils::packageVersion("ditimpute"), reps,
                proc.time()[["elapsed"]] - t_start, paste(readLines("/proc/loadavg"), collapse = "")), "",
        "`auto_bic`: the smallest BIC (the rule before the class was weighed on hidden gaps); `auto_gaps_1se`: the class weighed on the series' own hidden gaps with the one-standard-error margin, leaning to BIC's class; `auto_gaps_0`: the lower mean CRPS on them; `auto_gaps`: the default, a level or trend on a lower mean CRPS, a stationary form against BIC's level or trend by one standard error. `bic_stationary`: repetitions in which BIC chose a stationary form; `class_by_gaps`: repetitions in which `auto_gaps` took the other class.", "",
        "| series | gaps | stationary | level | trend | auto_bic | auto_gaps_1se | auto_gaps_0 | auto_gaps | bic_stationary | class_by_gaps |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        apply(fmt, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")), "",
        "Geometric mean over the series x gap kinds of the MAE ratio to `auto_bic`:",
        sprintf("- `auto_gaps_1se` %.3f, `auto_gaps_0` %.3f, `auto_gaps` %.3f; fixed classes: stationary %.3f, level %.3f, trend %.3f.",
                ratio("auto_gaps_1se", "auto_bic"), ratio("auto_gaps_0", "auto_bic"), ratio("auto_gaps", "auto_bic"), ratio("stationary", "auto_bic"),
                ratio("level", "auto_bic"), ratio("trend", "auto_bic")),
        sprintf("- ldeaths, random holes: `auto_gaps` / stationary %.3f, level / stationary %.3f.",
                agg$auto_gaps[agg$series == "ldeaths" & agg$gaps == "random"] / agg$stationary[agg$series == "ldeaths" & agg$gaps == "random"],
                agg$level[agg$series == "ldeaths" & agg$gaps == "random"] / agg$stationary[agg$series == "ldeaths" & agg$gaps == "random"]))
dir.create("bench/results", showWarnings = FALSE)
writeLines(md, "bench/results/series_model_class.md")
cat(md, sep = "\n")
