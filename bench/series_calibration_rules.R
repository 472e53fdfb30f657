# Does impute_series()'s self-calibration carry over to the gaps it is applied
# to, and which rule for its factors moves coverage towards the level rather
# than away (issue 27: "may not make coverage worse")? On six held-out long
# series the package's rule moved 11 of 30 gap-length groups further from 90%
# (bench/results/series_long_BeijingAir_Changping_NO2-...-ETTh2_HULL.md).
#
# Per repetition of bench/series_long.R's gaps: impute_series(level = 0.9,
# n_samples = 50, seed = 1) and the calibration impute_series(calibrate =
# TRUE) makes (its call, seed and defaults). Long series get Gaussian
# intervals, symmetric on the model's scale, so one calibration serves every
# level: a score s = max(lo - y, y - hi) / half-width at 90% is
# (s + 1) qnorm(0.95) / qnorm((1 + L) / 2) - 1 at level L, for the
# calibration's own hidden values and for the bench's. The rules then give a
# factor per calibration group from the same scores, and a bench value is
# inside its calibrated interval when its score is at most its group's factor
# (what apply_calibration() does; the "package" rows at 0.9 are checked against
# apply_calibration()'s intervals):
#   raw      no factor;
#   package  series_factors(): each group's conformal factor, narrowing a
#            group of fewer than 200 hidden gaps by at most the pooled factor;
#   pooled   the factor of all calibration scores pooled, for every group;
#   gate1, gate2  the package's factor for a group only where its raw
#            calibration coverage differs from the level by more than 1 (2)
#            standard errors (each hidden calibration gap one unit), else none;
#   shrunk   0.75 times the package's factors (in case the calibration
#            over-corrects);
#   bins5    the package's rule on 5 quantile bins of gap length instead of 3;
#   classes  the package's rule on the bench's own classes (1, 2-5, 6-20,
#            21-60, over 60: the groups it is scored on, so an optimistic
#            reference, not a rule a user's series could know).
# Also per repetition, and by class of gap length over the repetitions: the
# calibration's raw coverage against the bench's (does the self-calibration
# see the same miscalibration?).
#
# Usage: Rscript bench/series_calibration_rules.R [reps] [data_dir] [series,...]
# Writes bench/results/series_calibration_rules[_<series>].md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, fmt, write_result
source(file.path("bench", "series_long_parts.R"))
parts <- series_long_parts(60)
picked <- series_picked(args, "series_calibration_rules")
t_start <- proc.time()[["elapsed"]]
eval_levels <- c(0.5, 0.9, 0.99)
at_level <- function(s, L) (s + 1) * stats::qnorm(0.95) / stats::qnorm((1 + L) / 2) - 1
# Clustered SE of a share (each unit one hidden gap).
share_se <- function(inside, unit) parts$ratio_se(as.numeric(inside), rep(1, length(inside)), unit)
# For the gate: a group of fewer than 10 calibration gaps has no SE and is not moved.
gate_se <- function(inside, unit) {
  se <- share_se(inside, unit)
  if (is.na(se)) Inf else se
}
# A grouping of the calibration scores by the gap length of their entries:
# k quantile bins as the package chooses them at level L (k = 3: its own), or
# the bench's classes (1, 2-5, 6-20, 21-60, over 60).
bins <- function(gap, s, k, L) {
  ditimpute:::choose_groups(list(gap = gap, pattern = character(0), n = length(gap)), "gap", k, L,
                            list(entry = s, region = NA_real_))
}
classes <- list(type = "gap", inner = c(1, 5, 20, 60), labels = c("1", "2-5", "6-20", "21-60", ">60"))
in_groups <- function(grouping, gap) ditimpute:::assign_groups(grouping, list(gap = gap, n = length(gap)))
# Factors per group of `grouping` (and pooled, last) from the scores s of
# gap lengths `gap` (units: hidden calibration gaps) under each rule.
rule_factors <- function(s, gap, unit, grouping, L) {
  g <- in_groups(grouping, gap)
  n_groups <- length(grouping$labels)
  fitted <- c(vapply(seq_len(n_groups), function(b) ditimpute:::conformal_quantile(s[g == b], L), 0),
              ditimpute:::conformal_quantile(s, L))
  gaps <- c(vapply(seq_len(n_groups), function(b) length(unique(unit[g == b])), 0L), length(unique(unit)))
  package <- ditimpute:::series_factors(fitted, gaps)
  dev <- c(vapply(seq_len(n_groups), function(b) {
    sel <- g == b
    abs(mean(s[sel] <= 0) - L) / max(gate_se(s[sel] <= 0, unit[sel]), 1e-12)
  }, 0), abs(mean(s <= 0) - L) / max(gate_se(s <= 0, unit), 1e-12))
  list(raw = rep(0, n_groups + 1), package = package, pooled = rep(fitted[n_groups + 1], n_groups + 1),
       gate1 = ifelse(dev > 1, package, 0), gate2 = ifelse(dev > 2, package, 0), shrunk = 0.75 * package)
}
# Each rule's factor for each bench value (test_gap: the gap length it sits in).
test_factors <- function(s, gap, unit, L, test_gap) {
  own <- bins(gap, s, 3L, L)
  at_own <- lapply(rule_factors(s, gap, unit, own, L), function(q) q[in_groups(own, test_gap)])
  other <- function(grouping) rule_factors(s, gap, unit, grouping, L)$package[in_groups(grouping, test_gap)]
  c(at_own, list(bins5 = other(bins(gap, s, 5L, L)), classes = other(classes)))
}
rules <- c("raw", "package", "pooled", "gate1", "gate2", "shrunk", "bins5", "classes")
per_rep <- list()
by_class <- list()
res <- series_repetitions(parts, data_dir, reps, picked$names, function(g, name, r) {
  imp <- impute_series(g$y, level = 0.9, n_samples = 50, seed = 1)
  cal <- ditimpute:::calibrate_series(imp, NULL, 0.9, "auto", 3L, 10L, NULL, ditimpute:::sub_seed(1, 7),
                                      ditimpute:::resolve_threads(NULL))
  tr <- imp$model$transform
  cj <- rep(1L, sum(g$h))
  lo <- ditimpute:::on_model_scale(as.numeric(imp$lower)[g$h], cj, tr)
  hi <- ditimpute:::on_model_scale(as.numeric(imp$upper)[g$h], cj, tr)
  y <- ditimpute:::on_model_scale(g$truth, cj, tr)
  s_test <- pmax(lo - y, y - hi) / pmax((hi - lo) / 2, .Machine$double.eps)
  test_gap <- ditimpute:::run_lengths(imp$missing)[g$h]
  sc <- cal$scores
  unit <- paste(sc$round, sc$run)
  # The offline package rule at 0.9 must reproduce the package's groups, factors and apply_calibration().
  stopifnot(identical(bins(sc$gap, sc$score, 3L, 0.9)$inner, cal$grouping$inner))
  q9 <- rule_factors(sc$score, sc$gap, unit, cal$grouping, 0.9)$package
  stopifnot(isTRUE(all.equal(q9, cal$factors$interval)))
  applied <- ditimpute::apply_calibration(imp, cal)
  cover_applied <- as.numeric(applied$lower)[g$h] <= g$truth & g$truth <= as.numeric(applied$upper)[g$h]
  q9_test <- test_factors(sc$score, sc$gap, unit, 0.9, test_gap)$package
  mismatch <- sum((s_test <= q9_test) != cover_applied)
  by_class[[length(by_class) + 1]] <<- rbind(
    data.frame(series = name, source = "calibration", class = parts$group_of(sc$gap), inside = sc$score <= 0),
    data.frame(series = name, source = "bench", class = parts$group_of(test_gap), inside = s_test <= 0))
  per_rep[[length(per_rep) + 1]] <<- data.frame(
    series = name, rep = r, calibration_raw = mean(sc$score <= 0), bench_raw = mean(s_test <= 0),
    package_factors = paste(sprintf("%.3f", q9), collapse = " / "),
    groups = paste(cal$grouping$labels, collapse = "; "), mismatch = mismatch)
  cat(sprintf("%s rep %d: calibration raw %.3f, bench raw %.3f, package %.3f (apply_calibration %.3f, %d differ)\n",
              name, r, mean(sc$score <= 0), mean(s_test <= 0), mean(s_test <= q9_test), mean(cover_applied), mismatch))
  do.call(rbind, lapply(eval_levels, function(L) {
    q <- test_factors(at_level(sc$score, L), sc$gap, unit, L, test_gap)
    st <- at_level(s_test, L)
    do.call(rbind, lapply(rules, function(rule) {
      data.frame(series = name, rep = r, level = L, rule = rule, group = g$grp, cover = st <= q[[rule]],
                 gap = paste(r, g$gap))
    }))
  }))
})
per_rep <- do.call(rbind, per_rep)

groups <- c("all", levels(res$group))
cov_cell <- function(x) c(mean(x$cover), share_se(x$cover, x$gap))
lines <- c("## Coverage by gap-length group (SE; each hidden gap one unit)", "",
           paste("| series | level | rule |", paste(groups, collapse = " | "), "|"),
           paste0(paste(rep("|---", length(groups) + 3), collapse = ""), "|"))
summ <- list()
for (s in unique(res$series)) for (L in eval_levels) {
  raw <- NULL
  for (rule in rules) {
    d <- res[res$series == s & res$level == L & res$rule == rule, ]
    cells <- lapply(groups, function(gr) {
      x <- if (gr == "all") d else d[d$group == gr, ]
      c(cov_cell(x), nrow(x))
    })
    if (rule == "raw") raw <- cells
    shown <- vapply(cells, function(v) sprintf("%.3f (%.3f)", v[1], v[2]), "")
    lines <- c(lines, sprintf("| %s | %g | %s | %s |", s, L, rule, paste(shown, collapse = " | ")))
    for (k in seq_along(groups)) {
      summ[[length(summ) + 1]] <- data.frame(series = s, level = L, rule = rule, group = groups[k],
                                             entries = cells[[k]][3], cover = cells[[k]][1], se = cells[[k]][2],
                                             raw = raw[[k]][1])
    }
  }
}
summ <- do.call(rbind, summ)
# Per level and rule, over the gap-length groups (not "all") with at least 200
# values: mean |coverage - level|, groups outside level +- 3 points (90%:
# 87-93%; 50%: 47-53%; 99%: 98-100% as 99 +- 1), groups further from the
# level than raw (and by more than one SE).
band <- function(L) if (L == 0.99) 0.01 else 0.03
tab <- c("## Summary over the gap-length groups with at least 200 values", "",
         paste("| level | rule | groups | mean abs(coverage - level) | outside the band | further than raw |",
               "further by > 1 SE |"),
         "|---|---|---|---|---|---|---|")
for (L in eval_levels) for (rule in rules) {
  d <- summ[summ$level == L & summ$rule == rule & summ$group != "all" & summ$entries >= 200, ]
  further <- abs(d$cover - L) - abs(d$raw - L)
  tab <- c(tab, sprintf("| %g | %s | %d | %.4f | %d | %d | %d |", L, rule, nrow(d), mean(abs(d$cover - L)),
                        sum(abs(d$cover - L) > band(L) + 1e-12), sum(further > 1e-12),
                        sum(further > d$se, na.rm = TRUE)))
}
rep_lines <- c("## Per repetition at 90%: the calibration's raw coverage against the bench's", "",
               paste("| series | rep | calibration raw | bench raw | package factors (groups, pooled) | groups |",
                     "offline vs apply_calibration() |"),
               "|---|---|---|---|---|---|---|",
               sprintf("| %s | %d | %.3f | %.3f | %s | %s | %d differ |", per_rep$series, per_rep$rep,
                       per_rep$calibration_raw, per_rep$bench_raw, per_rep$package_factors, per_rep$groups,
                       per_rep$mismatch))
cors <- vapply(split(per_rep, per_rep$series),
               function(d) if (nrow(d) > 2) stats::cor(d$calibration_raw, d$bench_raw) else NA, 0)
rep_lines <- c(rep_lines, "", sprintf("Correlation over repetitions of the calibration's raw coverage with the bench's: %s.",
                                      paste(sprintf("%s %.2f", names(cors), cors), collapse = ", ")))
# Raw coverage by class of gap length (the whole run of missing values a
# value sits in, as the calibration groups it), the calibration's hidden
# values against the bench's, pooled over repetitions.
by_class <- do.call(rbind, by_class)
class_cov <- tapply(by_class$inside, list(by_class$series, by_class$source, by_class$class), mean)
class_lines <- c("## Raw 90% coverage by class of gap length: the calibration's hidden values / the bench's", "",
                 paste("| series |", paste(levels(by_class$class), collapse = " | "), "|"),
                 paste0(paste(rep("|---", nlevels(by_class$class) + 1), collapse = ""), "|"),
                 vapply(unique(by_class$series), function(s) sprintf("| %s | %s |", s, paste(sprintf("%.3f / %.3f",
                   class_cov[s, "calibration", ], class_cov[s, "bench", ]), collapse = " | ")), ""))
gaps_abs <- abs(class_cov[, "calibration", ] - class_cov[, "bench", ])
class_lines <- c(class_lines, "", sprintf(paste("Differences: median %.4f, %d of %d over 0.015, largest %.4f."),
                                          stats::median(gaps_abs, na.rm = TRUE), sum(gaps_abs > 0.015, na.rm = TRUE),
                                          sum(!is.na(gaps_abs)), max(gaps_abs, na.rm = TRUE)))
write_result(picked$result, "# Self-calibration rules: which factor moves coverage towards the level (issue 27)",
             sprintf("%d repetitions of bench/series_long.R's gaps in %s; %.0f s", reps,
                     paste(picked$names, collapse = ", "), proc.time()[["elapsed"]] - t_start),
             c(tab, "", lines, "", rep_lines, "", class_lines), script = "series_calibration_rules")
