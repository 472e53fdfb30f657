#!/usr/bin/env bash
# What the main job needs and nothing more: installs the Debian packages the R
# package builds and runs with (R, Rcpp, RcppEigen, LibTorch, OpenBLAS, ...),
# assembles the R package (which compiles the core's sources itself), builds a
# CRAN-style tarball and installs it. No CMake, no Catch2 tests, no benchmarks:
# those are tools/setup-cmake.sh (tools/setup.sh runs both).
# Safe to re-run: installed packages are skipped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export R_MAKEVARS_USER="$top/tools/R-Makevars"

bash "$top/tools/ensure-packages.sh" \
  r-base-dev r-cran-rcpp r-cran-rcppeigen r-cran-cli r-cran-rlang r-cran-ggplot2 r-cran-future.apply \
  libtorch-dev g++ make libopenblas0-openmp libblas-dev liblapack-dev

# LibTorch and R link libblas.so.3: make sure it is OpenBLAS (OpenMP build),
# not the reference BLAS that runs LibTorch ~28x slower (BUILD-NOTES.md).
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  alt="/usr/lib/$arch/openblas-openmp/$lib"
  if [ -e "$alt" ] && ! update-alternatives --query "$lib-$arch" 2>/dev/null | grep -q "^Value: $alt"; then
    $sudo_cmd update-alternatives --set "$lib-$arch" "$alt" >/dev/null || true
  fi
done

jobs=$(nproc 2>/dev/null || echo 2)
export MAKEFLAGS="-j$jobs"

# R package: assemble, build a CRAN-style tarball, install it.
pkgdir=$("$top/tools/assemble-rpkg.sh" "$top/build/rpkg/ditimpute" | tail -n 1)
(cd "$top/build/rpkg" && R CMD build --no-build-vignettes --no-manual "$pkgdir" >/dev/null)
tarball=$(ls -t "$top"/build/rpkg/ditimpute_*.tar.gz | head -n 1)
# A lock left by an install that was killed (R CMD INSTALL stops with "failed
# to lock directory" while it is there) is removed, unless an install of
# ditimpute is running now: then wait for it (up to 15 minutes).
lib=$(Rscript -e 'cat(.libPaths()[1])')
for _ in $(seq 1 90); do
  pgrep -f "INSTALL.*ditimpute" >/dev/null 2>&1 || break
  echo "setup: another install of ditimpute is running; waiting for it"; sleep 10
done
if [ -d "$lib/00LOCK-ditimpute" ] && ! pgrep -f "INSTALL.*ditimpute" >/dev/null 2>&1; then
  echo "setup: removing the stale lock $lib/00LOCK-ditimpute"
  rm -rf "$lib/00LOCK-ditimpute"
fi
R CMD INSTALL --no-test-load "$tarball" >"$top/build/rpkg/install.log" 2>&1 || {
  tail -n 60 "$top/build/rpkg/install.log"; exit 1; }
echo "setup: installed $(basename "$tarball")"
