# impute_series(calibrate = TRUE)'s rule for a gap-length group too small to
# narrow on, against the former one. The self-calibration narrows a group's
# intervals by its own factor only when its scores come from at least 200
# hidden gaps (series_calibrate.R: a few long gaps are a sample of a few, and
# narrowing on them cost sunspot.month's long gaps 24 points of coverage).
# But part of the over-coverage is the errors' shape, which every group shares
# (bench/results/series_long_tails*.md: 50% intervals over-cover in nearly
# every group), and the pooled factor rests on every hidden gap. Rule
# "package" (series_factors(), since 2026-11-29): a group of fewer than 200
# gaps whose own factor is negative is narrowed by the smaller of its own and
# the pooled factor's narrowing (by none when the pooled factor widens or
# rests on fewer than 200 gaps itself). Rule "former": such a group is never
# narrowed. Both from one calibration (impute_series(calibrate = TRUE)'s own
# call, so the package rows reproduce it), at levels 0.5, 0.9 and 0.99, on
# bench/series_long.R's gaps; coverage (SE, each hidden gap one unit).
# Usage: Rscript bench/series_long_narrowing_pooled.R [reps] [data_dir] [series,...]
# Writes bench/results/series_long_narrowing_pooled[_<series>].md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, fmt, write_result
source(file.path("bench", "series_long_parts.R"))
parts <- series_long_parts(60)
picked <- series_picked(args, "series_long_narrowing_pooled")
min_gaps <- ditimpute:::series_narrow_min_gaps
former_rule <- function(f) {
  f$interval <- ifelse(f$fitted >= 0 | f$gaps >= min_gaps, f$fitted, 0)
  f
}
res <- series_repetitions(parts, data_dir, reps, picked$names, function(g, name, r) {
  do.call(rbind, lapply(c(0.5, 0.9, 0.99), function(level) {
    imp <- impute_series(g$y, level = level, n_samples = 50, seed = 1)
    cal <- ditimpute:::calibrate_series(imp, NULL, level, "auto", 3L, 10L, NULL, ditimpute:::sub_seed(1, 7),
                                        ditimpute:::resolve_threads(NULL))
    cal_former <- cal
    cal_former$factors <- former_rule(cal$factors)
    runs <- list(raw = imp, package = ditimpute::apply_calibration(imp, cal),
                 former = ditimpute::apply_calibration(imp, cal_former))
    do.call(rbind, lapply(names(runs), function(rule) {
      o <- runs[[rule]]
      cover <- as.numeric(o$lower)[g$h] <= g$truth & g$truth <= as.numeric(o$upper)[g$h]
      data.frame(series = name, rep = r, level = level, rule = rule, group = g$grp, cover = cover,
                 gap = paste(r, g$gap), narrowed = sum(cal$factors$interval < cal_former$factors$interval))
    }))
  }))
})
groups <- c("all", levels(res$group))
lines <- c(paste("| series | level | intervals |", paste(groups, collapse = " | "), "| reps where the rules differ |"),
           paste0(paste(rep("|---", length(groups) + 4), collapse = ""), "|"))
for (s in unique(res$series)) for (level in c(0.5, 0.9, 0.99)) for (rule in c("raw", "former", "package")) {
  d <- res[res$series == s & res$level == level & res$rule == rule, ]
  v <- vapply(groups, function(gr) {
    x <- if (gr == "all") d else d[d$group == gr, ]
    sprintf("%.3f (%.3f)", mean(x$cover), parts$ratio_se(x$cover, rep(1, nrow(x)), x$gap))
  }, "")
  differ <- sum(tapply(d$narrowed, d$rep, `[`, 1) > 0)
  lines <- c(lines, sprintf("| %s | %g | %s | %s | %s |", s, level, rule, paste(v, collapse = " | "),
                            if (rule == "package") differ else ""))
}
write_result(picked$result,
             "# Self-calibration: a group of few gaps narrowed by the pooled factor at most, or never (issue 27)",
             sprintf("%d repetitions of bench/series_long.R's gaps in %s; coverage (SE, each hidden gap one unit)",
                     reps, paste(picked$names, collapse = ", ")), lines, script = "series_long_narrowing_pooled")
