#!/usr/bin/env bash
# Builds, installs and tests ditimpute WITHOUT LibTorch, on this machine even
# where libtorch-dev is installed (DITIMPUTE_LIBTORCH=none makes the package's
# configure leave it out):
#   1. assemble the package (build/notorch/ditimpute) and build its tarball;
#   2. install it into a fresh private library, build/notorch/lib (the system
#      library is never touched), timed, and check that it has no LibTorch;
#   3. run the testthat tests against it (the DiT tests skip, saying why;
#      test-torch.R checks that every DiT entry raises ditimpute_error_no_torch);
#   4. render the vignettes against it (DiT chunks are not evaluated);
#   5. R CMD check --as-cran of the tarball, reusing that installation: no ERROR
#      or WARNING allowed (the NOTEs are listed in README, "Without LibTorch").
# Usage: bash tools/check-no-torch.sh [--no-vignettes] [--no-check]
# Needs what tools/setup.sh installs (R, Rcpp, RcppEigen, testthat, ...), and
# checkbashisms (devscripts) for step 5. Prints the time of each step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/notorch
lib=$out/lib
vignettes=yes
check=yes
for a in "$@"; do
  case "$a" in
    --no-vignettes) vignettes=no ;;
    --no-check) check=no ;;
    *) echo "usage: $0 [--no-vignettes] [--no-check]" >&2; exit 2 ;;
  esac
done
export DITIMPUTE_LIBTORCH=none
export R_MAKEVARS_USER=${R_MAKEVARS_USER:-$top/tools/R-Makevars}
export MAKEFLAGS=${MAKEFLAGS:--j$(nproc 2>/dev/null || echo 2)}
t_all=$SECONDS
rm -rf "$out"
mkdir -p "$lib"

echo "== no-torch: assemble and build the tarball =="
"$top/tools/assemble-rpkg.sh" "$out/ditimpute" >/dev/null
(cd "$out" && R CMD build --no-build-vignettes --no-manual ditimpute >"$out/build.log" 2>&1) || {
  tail -n 30 "$out/build.log"; exit 1; }
tarball=$(ls -t "$out"/ditimpute_*.tar.gz | head -n 1)

echo "== no-torch: install into $lib =="
t=$SECONDS
R CMD INSTALL -l "$lib" "$tarball" >"$out/install.log" 2>&1 || { tail -n 60 "$out/install.log"; exit 1; }
install_s=$((SECONDS - t))
grep "^configure:" "$out/install.log"
R_LIBS="$lib" Rscript -e '
  path <- find.package("ditimpute")
  if (normalizePath(dirname(path)) != normalizePath(Sys.getenv("R_LIBS"))) stop("ditimpute loaded from ", path)
  if (ditimpute::torch_available()) stop("the no-torch build has LibTorch")
  cat("installed without LibTorch:", path, "\n")'
echo "no-torch install: ${install_s} s"

echo "== no-torch: testthat =="
t=$SECONDS
(cd "$top" && R_LIBS="$lib" COUNT_FILE="$out/testthat.count" Rscript -e '
  res <- as.data.frame(testthat::test_dir("tests/testthat", package = "ditimpute", load_package = "installed",
                                          reporter = "summary", stop_on_failure = FALSE))
  failed <- sum(res$failed) + sum(res$error)
  cat(sprintf("\nno-torch testthat: %d passed, %d failed, %d skipped\n", sum(res$passed), failed, sum(res$skipped)))
  writeLines(as.character(sum(res$passed)), Sys.getenv("COUNT_FILE"))
  quit(status = if (failed > 0) 1 else 0)
')
echo "no-torch testthat: $((SECONDS - t)) s"

if [ "$vignettes" = yes ]; then
  echo "== no-torch: vignettes =="
  t=$SECONDS
  mkdir -p "$out/vignettes"
  for v in "$top"/vignettes/*.Rmd; do
    R_LIBS="$lib" Rscript -e "options(rmarkdown.html_vignette.check_title = FALSE)" \
      -e "rmarkdown::render('$v', output_dir = '$out/vignettes', intermediates_dir = tempdir(), quiet = TRUE)"
    [ -f "$out/vignettes/$(basename "${v%.Rmd}").html" ] || { echo "vignette failed: $(basename "$v")"; exit 1; }
    echo "vignette ok: $(basename "$v")"
  done
  echo "no-torch vignettes: $((SECONDS - t)) s"
fi

if [ "$check" = yes ]; then
  echo "== no-torch: R CMD check --as-cran =="
  t=$SECONDS
  # --install=check:LOG reuses the installation above (in -l $lib) instead of
  # compiling the package again; the tests and vignettes ran above. Offline:
  # no remote CRAN queries.
  run_check() {
    (cd "$out" && _R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_FORCE_SUGGESTS_=false \
       R CMD check "$@" --no-manual --no-tests --ignore-vignettes -l "$lib" --install="check:$out/install.log" \
       "$tarball" >"$out/check.log" 2>&1) || true
  }
  mode="--as-cran"
  run_check --as-cran
  # --as-cran always runs the orphaned-dependency check, which reads CRAN's
  # web/packages/packages.rds whenever a suggested package (Amelia, imputeTS)
  # is not installed; where the mirror does not serve that file the check
  # stops with an error before checking anything else. Then check again
  # without --as-cran, and say so.
  if grep -q "web/packages/packages.rds" "$out/check.log" && ! grep -q "^Status:" "$out/check.log"; then
    echo "no-torch: CRAN's package database (web/packages/packages.rds) is not reachable from here, and --as-cran"
    echo "no-torch: needs it for a suggested package that is not installed: R CMD check again without --as-cran"
    mv "$out/check.log" "$out/check-as-cran.log"
    mode="(without --as-cran: CRAN's package database unreachable)"
    run_check
  fi
  grep -E "^\* checking .*(WARNING|ERROR|NOTE)$" -A4 "$out/check.log" | head -n 60 || true
  grep "^Status:" "$out/check.log" || true
  if ! grep -q "^Status:" "$out/check.log" || grep -qE "^Status:.*(ERROR|WARNING)" "$out/check.log"; then
    echo "no-torch R CMD check failed (see build/notorch/check.log)"; tail -n 40 "$out/check.log"; exit 1
  fi
  echo "no-torch R CMD check $mode: no ERROR, no WARNING ($((SECONDS - t)) s)"
fi
echo "no-torch: install ${install_s} s; all steps $((SECONDS - t_all)) s"
