#!/usr/bin/env bash
# Installs what ditimpute needs on a fresh Debian 12 machine (as root, or with
# sudo), then builds the C++ core (build/cmake) and installs the R package.
# Safe to re-run: installed packages are skipped, builds are incremental.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export R_MAKEVARS_USER="$top/tools/R-Makevars"

packages=(
  r-base-dev r-cran-rcpp r-cran-rcppeigen r-cran-testthat r-cran-cli r-cran-rlang
  r-cran-ggplot2 r-cran-future.apply r-cran-knitr r-cran-rmarkdown pandoc
  libtorch-dev libeigen3-dev catch2 cmake g++ make
  libopenblas0-openmp libblas-dev liblapack-dev
  devscripts   # checkbashisms, which R CMD check --as-cran runs on the package's configure
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# LibTorch and R link libblas.so.3: make sure it is OpenBLAS (OpenMP build),
# not the reference BLAS that runs LibTorch ~28x slower (BUILD-NOTES.md).
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  alt="/usr/lib/$arch/openblas-openmp/$lib"
  if [ -e "$alt" ] && ! update-alternatives --query "$lib-$arch" 2>/dev/null | grep -q "^Value: $alt"; then
    ${sudo_cmd:-} update-alternatives --set "$lib-$arch" "$alt" >/dev/null || true
  fi
done

jobs=$(nproc 2>/dev/null || echo 2)
export MAKEFLAGS="-j$jobs"

# C++ core, tests and benchmarks.
cmake -S "$top" -B "$top/build/cmake" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$top/build/cmake" -j"$jobs"

# R package: assemble, build a CRAN-style tarball, install it.
pkgdir=$("$top/tools/assemble-rpkg.sh" "$top/build/rpkg/ditimpute" | tail -n 1)
(cd "$top/build/rpkg" && R CMD build --no-build-vignettes --no-manual "$pkgdir" >/dev/null)
tarball=$(ls -t "$top"/build/rpkg/ditimpute_*.tar.gz | head -n 1)
R CMD INSTALL --no-test-load "$tarball" >"$top/build/rpkg/install.log" 2>&1 || {
  tail -n 60 "$top/build/rpkg/install.log"; exit 1; }
echo "setup: built build/cmake and installed $(basename "$tarball")"
