# with_object(name, value, expr): evaluates expr with the ditimpute package's
# internal object `name` replaced by `value` and restores it after (also on an
# error), for benches that measure a rule the package does not offer as an
# argument (bench/series_model_class.R, bench/series_class_rules.R).
# Source from the repository root: source("bench/with_object.R").
with_object <- function(name, value, expr) {
  old <- get(name, asNamespace("ditimpute"))
  utils::assignInNamespace(name, value, "ditimpute")
  on.exit(utils::assignInNamespace(name, old, "ditimpute"))
  force(expr)
}
