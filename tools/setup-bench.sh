#!/usr/bin/env bash
# What the R benchmarks compare against, beyond tools/setup.sh: Amelia, mice
# and forecast from Debian, imputeTS from CRAN (Debian has no package of it).
# The benchmarks skip a method whose package is missing, so run this first on
# a fresh machine, or their tables lose the imputeTS and Amelia rows.
# Safe to re-run: installed packages are skipped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/ensure-packages.sh" r-cran-amelia r-cran-mice r-cran-forecast r-cran-zoo
Rscript -e '
  if (!requireNamespace("imputeTS", quietly = TRUE)) {
    lib <- .libPaths()[1]
    if (file.access(lib, 2) != 0) stop("no writable R library for imputeTS: run as root or set R_LIBS_USER")
    install.packages("imputeTS", repos = "https://cloud.r-project.org", lib = lib,
                     Ncpus = max(1L, parallel::detectCores()))
  }
  stopifnot(requireNamespace("imputeTS", quietly = TRUE), requireNamespace("Amelia", quietly = TRUE))
  cat("setup-bench: imputeTS", format(utils::packageVersion("imputeTS")), "and Amelia",
      format(utils::packageVersion("Amelia")), "installed\n")
'
