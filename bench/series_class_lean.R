# A rule for the model class measured and not adopted (issue 27): impute_series()
# weighs the class on the series' own hidden gaps, and a local level or trend
# replaces BIC's stationary form when its mean CRPS there is lower at all.
# "Lean" asks more: the level or trend replaces BIC's stationary form unless
# it is worse by more than one standard error (series_gap_margin's
# nonstationary entry -1 instead of 0). Prompted by Longley, where the level
# imputes better than the stationary form BIC and the gaps chose
# (bench/results/series_fresh_multi_classes.md); measured here on series
# nobody had weighed the class on. For each series and gap kind
# (bench/series.R's hide(), seeds and 10% gaps), MAE (also in units of each
# variable's sd, `_s`) and 90% coverage of: the class held stationary, held
# level, the default (auto_gaps) and the lean rule (auto_lean).
# Usage: Rscript bench/series_class_lean.R REPS SERIES[,SERIES...] NAME
#   (writes bench/results/series_class_lean_NAME.md)
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- as.integer(args[1]); pick <- strsplit(args[2], ",")[[1]]
all <- list(co2 = datasets::co2, nottem = datasets::nottem, UKgas = log(datasets::UKgas),
            ldeaths = datasets::ldeaths, Nile = datasets::Nile, lh = datasets::lh, uspop = datasets::uspop,
            UKLungDeaths = cbind(mdeaths = datasets::mdeaths, fdeaths = datasets::fdeaths),
            BJsales = cbind(sales = datasets::BJsales, lead = datasets::BJsales.lead),
            beaver2 = stats::ts(as.matrix(datasets::beaver2[, c("temp", "activ")])),
            freeny = stats::ts(as.matrix(datasets::freeny), start = c(1962, 2), frequency = 4),
            longley = stats::ts(as.matrix(datasets::longley[, names(datasets::longley) != "Year"]), start = 1947),
            lynx = log(datasets::lynx), LakeHuron = datasets::LakeHuron, airmiles = datasets::airmiles,
            WWWusage = datasets::WWWusage, austres = datasets::austres, JohnsonJohnson = log(datasets::JohnsonJohnson),
            treering200 = stats::ts(datasets::treering[1:200]),
            USAccDeaths = datasets::USAccDeaths, discoveries = datasets::discoveries)
series <- all[pick]
source("bench/series_hide.R")  # bench/series.R's hide()
ns <- asNamespace("ditimpute")
with_rule <- function(to_nonstationary, expr) {
  old_margin <- get("series_gap_margin", ns)
  m <- old_margin; m[["nonstationary"]] <- to_nonstationary
  utils::assignInNamespace("series_gap_margin", m, "ditimpute")
  on.exit(utils::assignInNamespace("series_gap_margin", old_margin, "ditimpute"))
  force(expr)
}
auto <- function(y) impute_series(y, level = 0.9, n_samples = 50, seed = 1)
fits <- list(stationary = function(y) impute_series(y, model = "stationary", level = 0.9, n_samples = 50, seed = 1),
             level = function(y) impute_series(y, model = "level", level = 0.9, n_samples = 50, seed = 1),
             auto_gaps = auto, auto_lean = function(y) with_rule(-1, auto(y)))
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
md <- c(sprintf("# The lean class rule against the default (bench/series_class_lean.R, %s)", args[3]), "",
        sprintf("`Rscript bench/series_class_lean.R %d %s %s` on %s (ditimpute %s): %d repetitions per series and gap kind, 50 sample paths; load average at the end: %s (2 cores).",
                reps, args[2], args[3], format(Sys.Date()), utils::packageVersion("ditimpute"), reps,
                paste(readLines("/proc/loadavg"), collapse = "")), "",
        "| series | gaps | stationary | stationary_s | stationary_cov | level | level_s | level_cov | auto_gaps | auto_gaps_s | auto_gaps_cov | auto_lean | auto_lean_s | auto_lean_cov |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        apply(fmt, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")), "",
        sprintf("Over the %d series x gap kinds with every result: geometric mean of the MAE ratio to the default: lean %.3f, level %.3f, stationary %.3f (in sd units: lean %.3f, level %.3f); lean lower in %d, higher in %d, equal in %d.",
                sum(ok), gm("auto_lean", "auto_gaps"), gm("level", "auto_gaps"), gm("stationary", "auto_gaps"),
                gm("auto_lean_s", "auto_gaps_s"), gm("level_s", "auto_gaps_s"),
                sum(agg$auto_lean[ok] < agg$auto_gaps[ok] * (1 - 1e-9)), sum(agg$auto_lean[ok] > agg$auto_gaps[ok] * (1 + 1e-9)),
                sum(abs(agg$auto_lean[ok] / agg$auto_gaps[ok] - 1) <= 1e-9)))
writeLines(md, file.path("bench", "results", sprintf("series_class_lean_%s.md", args[3])))
cat(md, sep = "\n")
