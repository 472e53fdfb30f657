#!/usr/bin/env bash
# Renders the vignettes against the installed package (build/vignettes) and
# adds them to that installation, so that `vignette("pooling")` and
# `browseVignettes("ditimpute")` work after tools/setup.sh.
#
# tools/setup-r.sh installs a tarball built with --no-build-vignettes: building
# them there would install (compile) the package a second time in R CMD build's
# temporary library, minutes on 2 cores, and the main job does not need them
# (nor rmarkdown and pandoc, which tools/setup-cmake.sh installs). Here the
# rendered HTML goes into a copy of the assembled source's inst/doc and
# `R CMD INSTALL --no-libs` installs the R code, help and vignette index again
# over the installed package; --no-libs drops the installed libs/ folder, so
# it is kept aside and put back (the same build: nothing is compiled here).
# Run after tools/setup-r.sh and tools/setup-cmake.sh. A vignette that fails
# to render fails this script.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
src="$top/build/rpkg/ditimpute"
[ -d "$src" ] || { echo "install-vignettes: run tools/setup-r.sh first ($src is missing)"; exit 1; }
lib=$(Rscript -e 'cat(dirname(find.package("ditimpute")))')
out="$top/build/vignettes"
mkdir -p "$out"
for v in "$top"/vignettes/*.Rmd; do
  Rscript -e "rmarkdown::render('$v', output_dir = '$out', intermediates_dir = tempdir(), quiet = TRUE)"
  echo "vignette ok: $(basename "$v")"
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r "$src" "$stage/ditimpute"
mkdir -p "$stage/ditimpute/inst/doc"
cp "$top"/vignettes/*.Rmd "$stage/ditimpute/inst/doc/"
for v in "$top"/vignettes/*.Rmd; do
  cp "$out/$(basename "${v%.Rmd}").html" "$stage/ditimpute/inst/doc/"
done
cp -r "$lib/ditimpute/libs" "$stage/libs"
if ! R CMD INSTALL --no-libs --no-test-load -l "$lib" "$stage/ditimpute" >"$top/build/rpkg/install-vignettes.log" 2>&1; then
  tail -n 40 "$top/build/rpkg/install-vignettes.log"
  rm -rf "$lib/ditimpute/libs" && cp -r "$stage/libs" "$lib/ditimpute/libs"
  exit 1
fi
rm -rf "$lib/ditimpute/libs"
cp -r "$stage/libs" "$lib/ditimpute/libs"
Rscript -e 'suppressMessages(library(ditimpute)); v <- vignette(package = "ditimpute")$results
            if (nrow(v) < 1) stop("no vignette installed"); cat("install-vignettes:", nrow(v), "vignettes installed\n")'
