#!/usr/bin/env bash
# Assembles the R package source tree from the repository's pieces:
#   DESCRIPTION, LICENSE, vignettes/, tests/ (testthat), inst/   (top level)
#   rpkg/R, rpkg/man, rpkg/NAMESPACE, rpkg/src (glue)           (R front end)
#   rpkg/configure, configure.win, cleanup, src/Makevars.in     (LibTorch found at install time)
#   cpp/include, cpp/src                                        (the R-free core -> src/core)
# and generates the Rcpp glue exports. Output: $1 (default build/rpkg/ditimpute).
# The result is an ordinary R package directory: `R CMD build` it for a
# CRAN-style tarball.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/rpkg/ditimpute}
rm -rf "$out"
mkdir -p "$out/src/core"
cp "$top/DESCRIPTION" "$top/LICENSE" "$out/"
cp "$top/rpkg/NAMESPACE" "$out/"
cp -r "$top/rpkg/R" "$top/rpkg/man" "$out/"
cp "$top"/rpkg/src/*.cpp "$top"/rpkg/src/*.h "$top/rpkg/src/Makevars.in" "$out/src/"
# configure writes src/Makevars at install time (with or without LibTorch).
cp "$top/rpkg/configure" "$top/rpkg/configure.win" "$top/rpkg/cleanup" "$out/"
chmod 755 "$out/configure" "$out/configure.win" "$out/cleanup"
cp -r "$top/cpp/include" "$top/cpp/src" "$out/src/core/"
[ -d "$top/tests" ] && cp -r "$top/tests" "$out/"
[ -d "$top/vignettes" ] && cp -r "$top/vignettes" "$out/"
[ -d "$top/inst" ] && cp -r "$top/inst" "$out/"
cat > "$out/.Rbuildignore" <<'IGN'
^\.Rbuildignore$
^src/Makevars$
^src/Makevars\.win$
IGN
Rscript -e "invisible(Rcpp::compileAttributes('$out'))"
echo "$out"
