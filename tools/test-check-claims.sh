#!/usr/bin/env bash
# Shows that tools/check-claims.R can fail: it must pass on this checkout, and
# fail (naming the claim) on a scratch copy whose README has one figure edited
# to disagree with its source, and on one whose result file no longer says it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Rscript "$top/tools/check-claims.R"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
copy() {  # a fresh copy of what the checker reads
  rm -rf "$scratch/repo"
  mkdir -p "$scratch/repo/tools" "$scratch/repo/bench" "$scratch/repo/inst"
  cp "$top/README.md" "$scratch/repo/"
  cp -r "$top/vignettes" "$scratch/repo/"
  cp "$top/tools/check-claims.R" "$top/tools/claims.tsv" "$scratch/repo/tools/"
  cp -r "$top/bench/results" "$scratch/repo/bench/"
  cp -r "$top/inst/extdata" "$scratch/repo/inst/"
}
expect_failure() {  # $1 = what was changed, $2 = text the message must contain
  local out
  if out=$(Rscript "$scratch/repo/tools/check-claims.R" "$scratch/repo" 2>&1); then
    echo "test-check-claims: FAILED: the checker passed with $1"; exit 1
  fi
  if ! grep -qF -- "$2" <<<"$out"; then
    echo "test-check-claims: FAILED: the message for $1 does not name the claim:"; echo "$out"; exit 1
  fi
  echo "test-check-claims: $1 -> exit 1: $(grep -F -- "$2" <<<"$out" | head -n 1 | cut -c1-160)"
}

# 1. A README figure edited: 1.4% -> 1.3% (the sampler's worst error at 8 calls).
copy
grep -qF "1.4% at 8 calls" "$scratch/repo/README.md"
sed -i 's/1\.4% at 8 calls/1.3% at 8 calls/' "$scratch/repo/README.md"
expect_failure "README's \"1.4% at 8 calls\" edited to 1.3%" '"1.4% at 8 calls"'

# 2. The figure this issue found wrong put back: 20 batched cases "0.98-1.43x"
#    one case, where dit_sampler.md says 0.93-1.15x.
copy
sed -i 's/cost 0\.93-1\.15x the single-case time each/cost 0.98-1.43x the single-case time each/' "$scratch/repo/README.md"
grep -qF "cost 0.98-1.43x the single-case" "$scratch/repo/README.md"
expect_failure "README's 20-case figure set back to 0.98-1.43x" '"20 cases in one call cost 0.93-1.15x the single-case time each"'

# 3. A result file that no longer says it: coverage_C.md's P4 calibrated 87.0% -> 88.0%.
copy
sed -i 's/| P4 | 93\.0% | 87\.0% |/| P4 | 93.0% | 88.0% |/' "$scratch/repo/bench/results/coverage_C.md"
grep -qF "| P4 | 93.0% | 88.0% |" "$scratch/repo/bench/results/coverage_C.md"  # the edit took
expect_failure "coverage_C.md's P4 row changed" "is not in bench/results/coverage_C.md"
echo "test-check-claims: ok"
