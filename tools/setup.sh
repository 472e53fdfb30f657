#!/usr/bin/env bash
# Everything on a fresh Debian 12 machine (as root, or with sudo): the R
# package (tools/setup-r.sh: what the main job needs), then the C++ core's
# Catch2 tests and benchmarks with CMake and the R packages the tests use
# (tools/setup-cmake.sh). Safe to re-run: installed packages are skipped,
# builds are incremental.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/setup-r.sh"
bash "$top/tools/setup-cmake.sh"
# The vignettes, rendered against the installed package and added to it
# (vignette("pooling") works afterwards).
bash "$top/tools/install-vignettes.sh"
