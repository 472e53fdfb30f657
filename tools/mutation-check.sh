#!/usr/bin/env bash
# Mutation check for the statistical tests (issue 32): a test of coverage must
# fail when the regions are built at the wrong level.
#
# Each mutant is a scratch copy of the installed package (the first ditimpute
# on R's library path, i.e. what tools/setup.sh installed) in a private
# library, its code patched: every options list that the R front end hands to
# the C++ core asks for regions and intervals at `level - 0.03` (0.92 when the
# user asks for 0.95, 0.87 for 0.9), or at `level + 0.03` (0.98: over-coverage),
# while the R objects keep reporting the level that was asked for, as a bug in
# the glue would. Nothing in the tests or in the package reads a switch: the
# installed package is untouched and the scratch libraries are removed at the
# end.
#
# The named coverage tests are then run against each mutant; the script exits
# 0 when every one of them fails against both (the mutants are caught) and 1
# when one passes (a surviving mutant: that test cannot see a 3-point loss or
# gain of coverage).
#
#   bash tools/mutation-check.sh            # mutant only
#   bash tools/mutation-check.sh --both     # and the same tests on the unpatched copy (must pass)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
both=0
[ "${1:-}" = "--both" ] && both=1

installed=$(Rscript -e 'cat(system.file(package = "ditimpute"))')
[ -n "$installed" ] || { echo "ditimpute is not installed (run tools/setup.sh)"; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/low" "$scratch/high" "$scratch/plain"
for d in low high plain; do cp -a "$installed" "$scratch/$d/ditimpute"; done

# The patch: appended to the package's R loader, so it runs in the namespace
# right after the lazy-load database is attached and replaces each wrapper of
# a core entry point (cpp_*) by one that lowers `level` in its option lists.
patch() {  # $1 = library, $2 = the change of level
cat >>"$1/ditimpute/R/ditimpute" <<PATCH

## MUTANT (tools/mutation-check.sh): regions built at level $2.
local({
  ns <- parent.env(environment())
  for (f in grep("^cpp_", ls(ns, all.names = TRUE), value = TRUE)) {
    orig <- get(f, envir = ns)
    if (!is.function(orig)) next
    assign(f, local({
      orig <- orig
      function(...) {
        args <- lapply(list(...), function(a) {
          if (is.list(a) && is.numeric(a[["level"]])) a[["level"]] <- a[["level"]] $2
          a
        })
        do.call(orig, args)
      }
    }), envir = ns)
  }
})
PATCH
}
patch "$scratch/low" "- 0.03"
patch "$scratch/high" "+ 0.03"

# Tests that assert a coverage level: file and a regular expression of the
# test's name.
tests=(
  "test-impute.R|the oracle imputer's 95% regions cover 95% of exact draws on P1-P4"
  "test-impute.R|the exact imputer's regions and intervals hold 95% coverage of the truths"
  "test-experiments.R|the exact imputer's 95% regions cover 95% of conditional draws"
  "test-calibrate.R|coverage\\(\\) at several levels gives a calibration curve"
  "test-gp-smooth.R|gp_smooth\\(\\)'s 95% regions from its draws cover 95%"
)

run_tests() {  # $1 = library; prints "name<TAB>failed" per test of the listed files
  R_LIBS="$1" Rscript -e '
    files <- unique(sub("\\|.*", "", commandArgs(TRUE)))
    for (f in files) {
      res <- as.data.frame(testthat::test_file(file.path("tests/testthat", f), package = "ditimpute",
                                               load_package = "installed", reporter = "silent",
                                               stop_on_failure = FALSE))
      for (i in seq_len(nrow(res)))
        cat(f, "|", res$test[i], "\t", res$failed[i] + as.integer(res$error[i]), "\n", sep = "")
    }' "${tests[@]}"
}

check() {  # $1 = library, $2 = "fail" or "pass"
  local out status=0
  out=$(run_tests "$1")
  for t in "${tests[@]}"; do
    line=$(printf '%s\n' "$out" | grep -E "^${t%%|*}\|.*${t#*|}" | head -n 1 || true)
    if [ -z "$line" ]; then echo "  not found: $t"; status=1; continue; fi
    n=${line##*$'\t'}
    if [ "$2" = fail ] && [ "$n" -gt 0 ]; then echo "  caught   ($n failed): ${line%$'\t'*}"
    elif [ "$2" = pass ] && [ "$n" -eq 0 ]; then echo "  passes: ${line%$'\t'*}"
    else echo "  WRONG ($n failed, expected $2): ${line%$'\t'*}"; status=1; fi
  done
  return $status
}

status=0
if [ $both = 1 ]; then
  echo "== unpatched copy: the coverage tests pass =="
  check "$scratch/plain" pass || status=1
fi
echo "== mutant: regions at level - 0.03 (0.92 for 0.95): the coverage tests fail =="
check "$scratch/low" fail || status=1
echo "== mutant: regions at level + 0.03 (0.98 for 0.95): the coverage tests fail =="
check "$scratch/high" fail || status=1
[ $status = 0 ] && echo "mutation check: every coverage test caught both mutants" || echo "mutation check FAILED"
exit $status
