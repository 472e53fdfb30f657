#!/usr/bin/env bash
# Sets up (tools/setup.sh), then runs every test: the claims checker (every
# figure of README.md and the vignettes found in its result file,
# tools/check-claims.R, and a test that it fails when one disagrees), the
# Catch2 tests through ctest, the same tests under AddressSanitizer + UBSan
# (tools/sanitize.sh), the R package's testthat tests, the mutation check of
# the coverage tests (tools/mutation-check.sh), the vignettes, then R CMD check
# of the tarball (which must end without ERROR or WARNING); then the same
# package built without LibTorch (tools/check-no-torch.sh: install into a
# private library, testthat, vignettes, R CMD check --as-cran).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export R_MAKEVARS_USER="$top/tools/R-Makevars"
# Each stage's header says how long the run has taken so far (CI's limit is
# 90 minutes: the slow stages show here).
stage() { echo "== $* == ($(( SECONDS / 60 )) min $(( SECONDS % 60 )) s since the start)"; }
stage "setup (tools/setup.sh)"
bash "$top/tools/setup.sh"

stage "claims (tools/check-claims.R)"
bash "$top/tools/test-check-claims.sh"

stage "ctest (Catch2)"
# As many tests at a time as cores; the LibTorch tests run alone (RUN_SERIAL in
# cpp/CMakeLists.txt).
(cd "$top/build/cmake" && ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)") | tee "$top/build/ctest.log"
ctest_total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$top/build/ctest.log" | tail -n 1)
# Skipped tests (the CUDA test without CUDA) are in ctest's total; count them apart.
ctest_skipped=$(grep -c "(Skipped)" "$top/build/ctest.log" || true)
ctest_total=$(( ${ctest_total:-0} - ${ctest_skipped:-0} ))

stage "sanitizers (ASan + UBSan, build/asan)"
bash "$top/tools/sanitize.sh"

stage "testthat"
Rscript -e '
  res <- as.data.frame(testthat::test_dir("tests/testthat", package = "ditimpute", load_package = "installed",
                                          reporter = "summary", stop_on_failure = FALSE))
  failed <- sum(res$failed) + sum(res$error)
  cat(sprintf("\ntestthat: %d passed, %d failed, %d skipped\n", sum(res$passed), failed, sum(res$skipped)))
  writeLines(as.character(sum(res$passed)), "build/testthat.count")
  quit(status = if (failed > 0) 1 else 0)
'

stage "mutation check (coverage tests against regions built at the wrong level)"
bash "$top/tools/mutation-check.sh"

stage "vignettes"
# Rendered against the installed package and installed with it by
# tools/setup.sh (tools/install-vignettes.sh, which fails when one does not
# run); the tarball is built without them (building them would compile the
# package once more), so R CMD check below skips its vignette stage. Here:
# every vignette has its HTML and vignette() finds it.
Rscript -e '
  suppressMessages(library(ditimpute))
  rmd <- sub("[.]Rmd$", "", basename(Sys.glob("vignettes/*.Rmd")))
  found <- vignette(package = "ditimpute")$results[, "Item"]
  missing <- setdiff(rmd, found)
  if (length(missing) || !all(file.exists(file.path("build/vignettes", paste0(rmd, ".html"))))) {
    stop("vignettes not installed: ", paste(missing, collapse = ", "))
  }
  cat("vignettes installed:", paste(found, collapse = ", "), "\n")
'

stage "R CMD check"
tarball=$(ls -t "$top"/build/rpkg/ditimpute_*.tar.gz | head -n 1)
rm -rf "$top/build/rpkg/ditimpute.Rcheck"
# --install=check:LOG checks the installation tools/setup-r.sh made of this
# same tarball (its log is scanned for compiler warnings as an install's
# would be) instead of compiling the package again: that install took
# about 3.5 of this stage's 4.5 minutes in session 80's CI.
lib=$(Rscript -e 'cat(.libPaths()[1])')
(cd "$top/build/rpkg" && _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual --no-tests --ignore-vignettes \
   -l "$lib" --install="check:$top/build/rpkg/install.log" "$tarball" \
   >"$top/build/rpkg/check.log" 2>&1) || true
grep -E "^(\* checking .*(WARNING|ERROR|NOTE)|Status:)" -A6 "$top/build/rpkg/check.log" | head -n 80
if ! grep -q "^Status:" "$top/build/rpkg/check.log" || grep -qE "^Status:.*(ERROR|WARNING)" "$top/build/rpkg/check.log"; then
  echo "R CMD check failed (see build/rpkg/check.log)"; tail -n 40 "$top/build/rpkg/check.log"; exit 1
fi
echo "R CMD check: no ERROR, no WARNING"

stage "without LibTorch (tools/check-no-torch.sh)"
bash "$top/tools/check-no-torch.sh"
echo "ctest: ${ctest_total:-0} tests passed, ${ctest_skipped:-0} skipped (see above); testthat: $(cat "$top/build/testthat.count") expectations"
echo "without LibTorch: testthat $(cat "$top/build/notorch/testthat.count") expectations"
stage "done"
echo "tests: $(( ${ctest_total:-0} + $(cat "$top/build/testthat.count") )) passed, 0 failed"
