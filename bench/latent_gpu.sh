#!/usr/bin/env bash
# The latent GP (bench/reproduce_paper_latent.R) at budgets a CPU cannot buy,
# on a lent GPU (../shared/GPU.md): six trainings at once on the one card,
# each `bench_dit latent` over the data that bench exported, with a time limit.
#
#   here:  DITIMPUTE_BENCH_EXPORT=.latent DITIMPUTE_BENCH_DITS=none \
#            DITIMPUTE_BENCH_UPDATE_RDS=0 Rscript bench/reproduce_paper_latent.R
#          bash tools/build-cuda.sh --pack .gpu
#   there: bash bench/latent_gpu.sh .gpu .latent OUT_DIR [SECONDS] [SET]
#          (carry .gpu and .latent; both ignored by git)
#   here:  DITIMPUTE_BENCH_IMPORT="label=OUT_DIR/label.bin,..." \
#            DITIMPUTE_BENCH_DITS=none DITIMPUTE_BENCH_UPDATE_RDS=0 \
#            DITIMPUTE_BENCH_OUT=... Rscript bench/reproduce_paper_latent.R
#
# OUT_DIR gets latent.tar (one imputation file per run), latent.log (every
# run's log) and build.log. CI never runs this: it has no GPU.
set -uo pipefail
pack=${1:?usage: latent_gpu.sh PACK DATA OUT [SECONDS]}
data=${2:?}
out=${3:?}
secs=${4:-330}
set_name=${5:-1}
mkdir -p "$out/runs"
t0=$(date +%s)
bash tools/build-cuda.sh "$pack" build/cuda >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader || true
bench=build/cuda/bench_dit
threads=2  # CPU threads of each run (set 4: 5, for the GP conditionals of each batch)
[ "$set_name" = 4 ] && threads=5
run() {
  local name=$1; shift
  ( timeout $((secs + 120)) "$bench" latent "$threads" cuda "$data" "$out/runs/$name.bin" "$@" time_limit="$secs" \
      >"$out/runs/$name.log" 2>&1; echo "[$name: exit $?, args $*]" >>"$out/runs/$name.log" ) &
}
if [ "$set_name" = 1 ]; then
  # The CPU bench's DiT (64/3/4, the exported 4,000 sequences) with more steps,
  # then capacity, data (40,000 fresh sequences), batch, and the residual
  # GP-DiT with fresh GP conditionals and no early stop.
  run dit64_n4k 64/3/4 patience=30
  run dit128_n4k 128/4/4 patience=30
  run dit64_n40k 64/3/4 patience=30 n_train=40000
  run dit128_n40k 128/4/4 patience=30 n_train=40000
  run dit128_n40k_b256 128/4/4 patience=30 n_train=40000 batch=256
  run gpdit64_n4k_pool0 64/3/4 patience=0 gp=residual gp_pool=0
elif [ "$set_name" = 3 ]; then
  # The score GP-DiT (gp=score: the fitted GP's exact joint conditional as
  # the base) against the residual one, the pure DiT and itself at a lower
  # learning rate and from a pool, all at set 2's 128/4/4, 40,000 sequences,
  # batch 256 and 1,000 samples; and the CPU bench's 64/3/4 on its 4,000.
  run score64_n4k 64/3/4 patience=0 gp=score gp_pool=0
  run score128_b256 128/4/4 patience=30 n_train=40000 batch=256 samples=1000 gp=score gp_pool=0
  run score128_b256_lr5e4 128/4/4 patience=30 n_train=40000 batch=256 samples=1000 gp=score gp_pool=0 lr=5e-4
  run score128_b256_pool4096 128/4/4 patience=30 n_train=40000 batch=256 samples=1000 gp=score gp_pool=4096
  run residual128_b256 128/4/4 patience=30 n_train=40000 batch=256 samples=1000 gp=residual gp_pool=0
  run dit128_b256 128/4/4 patience=30 n_train=40000 batch=256 samples=1000
elif [ "$set_name" = 4 ]; then
  # Set 3 drew each batch's GP conditionals on one thread and the score
  # GP-DiT saw 3,578 batches to the pure DiT's 12,227: three runs, five
  # threads each (the conditionals drawn in parallel), no early stop.
  run score128_b256_t5 128/4/4 patience=0 n_train=40000 batch=256 samples=1000 gp=score gp_pool=0
  run score128_b512_t5 128/4/4 patience=0 n_train=40000 batch=512 samples=1000 gp=score gp_pool=0
  run dit128_b256_t5 128/4/4 patience=0 n_train=40000 batch=256 samples=1000
else
  # Set 1's best (128/4/4, 40,000 sequences, batch 256) with 1,000 samples
  # (a fifth of the Monte Carlo error of 200), at another seed, wider and
  # deeper, with more data, a larger batch and a lower learning rate.
  run b256_z1000 128/4/4 patience=30 n_train=40000 batch=256 samples=1000
  run b256_seed8_z1000 128/4/4 patience=30 n_train=40000 batch=256 samples=1000 seed=8
  run w256_z1000 256/6/8 patience=30 n_train=40000 batch=256 samples=1000
  run n100k_z1000 128/4/4 patience=30 n_train=100000 batch=256 samples=1000
  run b512_z1000 128/4/4 patience=30 n_train=40000 batch=512 samples=1000
  run lr1e3_z1000 128/4/4 patience=30 n_train=40000 batch=256 samples=1000 lr=1e-3
fi
sleep 60; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader || true
wait
for f in "$out"/runs/*.log; do echo "### $(basename "$f" .log)"; grep -v -i 'warn' "$f"; done | tee "$out/latent.log"
(cd "$out/runs" && tar cf ../latent.tar ./*.bin)
rm -rf "$out/runs"
echo "total $(( $(date +%s) - t0 )) s"
