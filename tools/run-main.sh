#!/usr/bin/env bash
# Sets up only what the main job needs (tools/setup-r.sh: the R package, no
# C++ tests or benchmarks), then runs ditimpute's main job on built-in
# defaults. Output (tables on stdout, pictures) goes to ./ditimpute-output.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/setup-r.sh"
cd "$top"
Rscript "$top/inst/scripts/main.R"
