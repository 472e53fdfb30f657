# with_object(name, value, expr): evaluates expr with the ditimpute package's
# internal object `name` replaced by `value` and restores it after (also on an
# error), for benches that measure a rule the package does not offer as an
# argument (bench/series_model_class.R, bench/series_class_rules.R,
# bench/series_period_choice.R, bench/series_scaling.R).
# Source from the repository root: source("bench/with_object.R").
with_object <- function(name, value, expr) {
  old <- get(name, asNamespace("ditimpute"))
  utils::assignInNamespace(name, value, "ditimpute")
  on.exit(utils::assignInNamespace(name, old, "ditimpute"))
  force(expr)
}

# series_gap_margin with the stationary class never chosen (BIC's best level
# or trend form: margins no hidden-gap difference overcomes), the rule
# "never stationary" of bench/series_class_rules.R and bench/series_fresh.R.
never_stationary_margin <- function() {
  replace(get("series_gap_margin", asNamespace("ditimpute")), c("stationary", "nonstationary"), c(1e6, -1e6))
}

# series_calendar_harmonic() that never holds a cycle at a calendar harmonic:
# its period fitted, the rule before 2026-12-03's held harmonic
# (bench/series_period_choice.R's gp_168_free, bench/series_scaling.R's free).
fitted_harmonic_rule <- function() function(cyc, period, n_time) NA_real_
