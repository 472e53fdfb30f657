# Rules for the model class measured against impute_series()'s default on
# short series (issue 27; none adopted so far). The default weighs the class
# on the series' own hidden gaps: a local level or trend replaces BIC's
# stationary form when its mean CRPS there is lower at all. Rules:
# - auto_lean: the level or trend replaces BIC's stationary form unless it is
#   worse by more than one standard error (series_gap_margin's
#   nonstationary entry -1 instead of 0).
# - auto_buffer: the default rule, but each hidden stretch keeps at least one
#   observed frame between itself and the variable's own gaps (the scorer's
#   masks drawn as if every frame next to a missing one were missing too), so
#   a hidden stretch never lengthens a real gap: on Longley's long gaps every
#   hidden stretch removed one whole side of a variable's own gap and scored
#   the level on an extrapolation the real gap never asks of it
#   (bench/results/series_longley_scorer.md). Only the scorer's masks change
#   (calibrate = TRUE is not used here).
# - auto_nonstationary: never the stationary class: BIC's best level or trend
#   form (margins that no hidden-gap difference overcomes), against `level`,
#   the local level held.
# Prompted by Longley, where the level imputes better than the stationary
# form BIC and the gaps chose (bench/results/series_fresh_multi_classes.md).
# For each series and gap kind (bench/series.R's hide(), seeds and 10% gaps):
# MAE (also in units of each variable's sd, `_s`) and 90% coverage of the
# class held stationary, held level, the default (auto_gaps) and each rule.
# Usage: Rscript bench/series_class_rules.R REPS SERIES[,SERIES...] NAME
#   (writes bench/results/series_class_rules_NAME.md)
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- as.integer(args[1]); pick <- strsplit(args[2], ",")[[1]]
source("bench/series_sets.R")  # bench/series.R's series, fresh (and short)
# Short series that neither the class rules nor bench/series.R's sets were
# developed on, and two long ones on which the default chooses the stationary
# class (bench/results/series_long.md).
heldout <- list(lynx = log(datasets::lynx), LakeHuron = datasets::LakeHuron, airmiles = datasets::airmiles,
                WWWusage = datasets::WWWusage, austres = datasets::austres,
                JohnsonJohnson = log(datasets::JohnsonJohnson), treering200 = stats::ts(datasets::treering[1:200]),
                USAccDeaths = datasets::USAccDeaths, discoveries = datasets::discoveries,
                treering = datasets::treering, sunspot.month = datasets::sunspot.month)
all <- c(series, fresh, heldout)
series <- all[pick]
source("bench/series_hide.R")  # bench/series.R's hide()
ns <- asNamespace("ditimpute")
source("bench/with_object.R")  # with_object()
lean_margin <- replace(get("series_gap_margin", ns), "nonstationary", -1)
never_margin <- never_stationary_margin()
mask_plain <- get("series_calibration_mask", ns)
mask_buffered <- function(miss, ...) {
  n <- nrow(miss)
  near <- miss | rbind(miss[-1, , drop = FALSE], FALSE) | rbind(FALSE, miss[-n, , drop = FALSE])
  mask_plain(near, ...)
}
auto <- function(y, ...) impute_series(y, level = 0.9, n_samples = 50, seed = 1, ...)
fits <- list(stationary = function(y) auto(y, model = "stationary"), level = function(y) auto(y, model = "level"),
             auto_gaps = auto,
             auto_lean = function(y) with_object("series_gap_margin", lean_margin, auto(y)),
             auto_buffer = function(y) with_object("series_calibration_mask", mask_buffered, auto(y)),
             auto_nonstationary = function(y) with_object("series_gap_margin", never_margin, auto(y)))
rules <- c("auto_lean", "auto_buffer", "auto_nonstationary")
rows <- list()
for (name in names(series)) {
  y <- series[[name]]; tm <- as.matrix(y); sds <- apply(tm, 2, sd, na.rm = TRUE)
  for (kind in c("random", "long")) for (r in seq_len(reps)) {
    miss <- hide(y, kind, 1000 * r + nchar(name)); miss <- matrix(miss, nrow(tm))
    yy <- y; yy[miss] <- NA
    row <- data.frame(series = name, gaps = kind, rep = r)
    for (f in names(fits)) {
      imp <- tryCatch(suppressWarnings(fits[[f]](yy)), error = function(e) NULL)
      if (is.null(imp)) { row[[f]] <- NA; row[[paste0(f, "_s")]] <- NA; row[[paste0(f, "_cov")]] <- NA; next }
      p <- as.matrix(imp$point); lo <- as.matrix(imp$lower); up <- as.matrix(imp$upper)
      row[[f]] <- mean(abs(p[miss] - tm[miss]))
      row[[paste0(f, "_s")]] <- mean(abs(p[miss] - tm[miss]) / sds[col(tm)[miss]])
      row[[paste0(f, "_cov")]] <- mean(tm[miss] >= lo[miss] & tm[miss] <= up[miss])
    }
    rows[[length(rows) + 1]] <- row
  }
  cat(name, "done\n")
}
res <- do.call(rbind, rows)
agg <- aggregate(. ~ series + gaps, data = res[, names(res) != "rep"], FUN = mean, na.action = na.pass)
ok <- stats::complete.cases(agg)
gm <- function(a, b) exp(mean(log(agg[[a]][ok] / agg[[b]][ok])))
fmt <- agg
for (j in 3:ncol(fmt)) fmt[[j]] <- signif(fmt[[j]], 4)
cols <- unlist(lapply(names(fits), function(f) paste0(f, c("", "_s", "_cov"))))
md <- c(sprintf("# Rules for the model class against the default (bench/series_class_rules.R, %s)", args[3]), "",
        sprintf("`Rscript bench/series_class_rules.R %d %s %s` on %s (ditimpute %s): %d repetitions per series and gap kind, 50 sample paths; load average at the end: %s (2 cores).",
                reps, args[2], args[3], format(Sys.Date()), utils::packageVersion("ditimpute"), reps,
                paste(readLines("/proc/loadavg"), collapse = "")), "",
        paste0("| series | gaps | ", paste(cols, collapse = " | "), " |"),
        paste0("|", strrep("---|", 2 + length(cols))),
        apply(fmt[, c("series", "gaps", cols)], 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")), "",
        sprintf("Over the %d series x gap kinds with every result, geometric mean of the MAE ratio to the default (auto_gaps), raw and in sd units:", sum(ok)),
        vapply(c(rules, "level", "stationary"), function(f) {
          lower <- sum(agg[[f]][ok] < agg$auto_gaps[ok] * (1 - 1e-9))
          higher <- sum(agg[[f]][ok] > agg$auto_gaps[ok] * (1 + 1e-9))
          sprintf("- %s %.3f, %.3f (lower in %d, higher in %d, equal in %d; largest ratio %.3f)", f, gm(f, "auto_gaps"),
                  gm(paste0(f, "_s"), "auto_gaps_s"), lower, higher, sum(ok) - lower - higher,
                  max(agg[[f]][ok] / agg$auto_gaps[ok]))
        }, ""))
writeLines(md, file.path("bench", "results", sprintf("series_class_rules_%s.md", args[3])))
cat(md, sep = "\n")
