#!/usr/bin/env bash
# What the R benchmarks compare against, beyond tools/setup.sh: Amelia, mice
# and forecast from Debian, imputeTS and Mcomp (the M3 series) from CRAN (Debian has
# no package of them).
# The benchmarks skip a method whose package is missing, so run this first on
# a fresh machine, or their tables lose the imputeTS and Amelia rows.
# Safe to re-run: installed packages are skipped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# imputeTS's own dependencies from Debian (ggtext brings gridtext and
# markdown): from CRAN they pulled newer xfun and rlang into the site library,
# where they shadow Debian's, and CRAN's xfun 0.62 no longer exports what
# Debian's knitr 1.42 calls (xfun::attr), which broke the vignettes and
# tools/document.sh (2026-11-29). CRAN then adds only imputeTS and stinepack.
bash "$top/tools/ensure-packages.sh" r-cran-amelia r-cran-mice r-cran-forecast r-cran-zoo r-cran-ggtext
Rscript -e '
  if (!requireNamespace("imputeTS", quietly = TRUE)) {
    lib <- .libPaths()[1]
    if (file.access(lib, 2) != 0) stop("no writable R library for imputeTS: run as root or set R_LIBS_USER")
    install.packages("imputeTS", repos = "https://cloud.r-project.org", lib = lib,
                     Ncpus = max(1L, parallel::detectCores()))
  }
  # the M3 competition series (bench/forecast_m3.R): data only, on top of forecast
  if (!requireNamespace("Mcomp", quietly = TRUE)) {
    install.packages("Mcomp", repos = "https://cloud.r-project.org", lib = .libPaths()[1], dependencies = FALSE)
  }
  stopifnot(requireNamespace("imputeTS", quietly = TRUE), requireNamespace("Amelia", quietly = TRUE),
            requireNamespace("Mcomp", quietly = TRUE))
  # The vignettes and tools/document.sh still work (knitr with the xfun it finds).
  ok <- !requireNamespace("knitr", quietly = TRUE) || tryCatch(identical(knitr::knit(text = "`r 1 + 1`", quiet = TRUE), "2"), error = function(e) FALSE)
  if (!ok) stop("knitr fails with the packages now installed (an R package from CRAN shadows one of Debian\x27s?): ",
                "compare .libPaths()[1] with /usr/lib/R/site-library")
  cat("setup-bench: imputeTS", format(utils::packageVersion("imputeTS")), "and Amelia",
      format(utils::packageVersion("Amelia")), "installed\n")
'
