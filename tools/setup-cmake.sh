#!/usr/bin/env bash
# What the tests and benchmarks need beyond tools/setup-r.sh: CMake, Catch2 and
# the system Eigen for the C++ core's tests and benchmarks (built into
# build/cmake), and the R packages the testthat tests and vignettes use
# (testthat, knitr, rmarkdown, pandoc, mice). Safe to re-run: builds are
# incremental.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

bash "$top/tools/ensure-packages.sh" \
  cmake catch2 libeigen3-dev libtorch-dev g++ make \
  r-cran-testthat r-cran-knitr r-cran-rmarkdown pandoc r-cran-mice r-cran-zoo \
  devscripts   # checkbashisms, which R CMD check --as-cran runs on the package's configure

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$top" -B "$top/build/cmake" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$top/build/cmake" -j"$jobs"
echo "setup: built build/cmake (Catch2 tests and benchmarks)"
