#!/usr/bin/env bash
# The CUDA path's tests on a lent GPU (../shared/GPU.md): the core and
# test_dit built against the GPU machine's LibTorch (tools/build-cuda.sh), the
# hidden CUDA tests (test_dit "[cuda]": CPU and CUDA samples agree with the
# same noise for a plain, a score GP-DiT and an entry-token DiT; training
# steps on CUDA), then every other DiT test on that machine, where models
# created with device "auto" run on the GPU.
#
#   here:  bash tools/build-cuda.sh --pack .gpu     (.gpu ignored by git)
#   there: bash tools/cuda-check.sh .gpu OUT_DIR    (carry .gpu)
#
# OUT_DIR gets build.log, cuda.log and dit.log. CI never runs this: it has no
# GPU; there the CUDA test is reported as skipped.
set -uo pipefail
pack=${1:?usage: cuda-check.sh PACK OUT}
out=${2:?}
mkdir -p "$out"
t0=$(date +%s)
bash tools/build-cuda.sh "$pack" build/cuda >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
t1=$(date +%s)
timeout 180 build/cuda/test_dit "[cuda]" -r compact >"$out/cuda.log" 2>&1
echo "test_dit [cuda]: exit $?, $(( $(date +%s) - t1 )) s"
grep -E "Passed|Failed|failed|SKIPPED|passed" "$out/cuda.log" | tail -5
t2=$(date +%s)
timeout 300 build/cuda/test_dit "~[learning]" >"$out/dit.log" 2>&1
echo "test_dit ~[learning]: exit $?, $(( $(date +%s) - t2 )) s"
tail -5 "$out/dit.log"
