#!/usr/bin/env bash
# Sets up (tools/setup.sh), then runs ditimpute's main job on built-in defaults.
# Output (tables on stdout, pictures) goes to ./ditimpute-output.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bash "$top/tools/setup.sh"
cd "$top"
Rscript "$top/inst/scripts/main.R"
