#!/usr/bin/env bash
# Which commit moved a series' result: installs the R package of each commit
# named (without LibTorch: the GP path does not use it; about 3.5 minutes a
# commit on 2 cores) into a library of its own under $BISECT_DIR, runs this
# checkout's bench/series.R with it (the same gaps and seeds for every
# commit) and collects the GP's rows per commit.
# Usage: bash bench/series_bisect.sh "COMMIT1 COMMIT2 ..." SERIES [REPS] [NAME]
#   e.g. bash bench/series_bisect.sh "8fc271c 50e3c74 0f209a5" longley 10 longley
# writes bench/results/series_NAME_bisect.md (NAME defaults to SERIES).
# Run from the repository root; the worktrees and libraries stay in
# $BISECT_DIR (default /tmp/ditimpute-bisect) for re-runs.
set -euo pipefail
commits=$1; series=$2; reps=${3:-10}; name=${4:-$series}
top=$(pwd)
dir=${BISECT_DIR:-/tmp/ditimpute-bisect}
mkdir -p "$dir"
out="$top/bench/results/series_${name}_bisect.md"
rows=""
for c in $commits; do
  full=$(git rev-parse --short "$c")
  wt="$dir/wt_$full"; lib="$dir/lib_$full"
  [ -d "$wt" ] || git worktree add -f --detach "$wt" "$full" > /dev/null
  if [ ! -d "$lib/ditimpute" ]; then
    mkdir -p "$lib"
    bash "$wt/tools/assemble-rpkg.sh" "$wt/build/bisect/ditimpute" > /dev/null
    (cd "$wt/build/bisect" && DITIMPUTE_LIBTORCH=none R_MAKEVARS_USER="$top/tools/R-Makevars" MAKEFLAGS=-j2 \
       R CMD INSTALL --no-test-load -l "$lib" ditimpute > "$dir/install_$full.log" 2>&1)
  fi
  run="$dir/run_$full"; rm -rf "$run"; mkdir -p "$run/inst/extdata"; cp -r "$top/bench" "$run/"
  (cd "$run" && R_LIBS="$lib" Rscript bench/series.R "$reps" gp "$series" bisect > "$dir/run_$full.log" 2>&1)
  subject=$(git log -1 --format='%ad %s' --date=short "$full" | cut -c1-90 | tr '|' '/')
  while IFS= read -r line; do
    rows="$rows| $full | $subject |${line#|}"$'\n'
  done < <(grep -E "^\| $series \| (long|random) \| [0-9]" "$run/bench/results/series_bisect.md")
  echo "$full done"
done
{
  echo "# Which commit moved $series (bench/series_bisect.sh)"
  echo
  echo "\`bash bench/series_bisect.sh \"$commits\" $series $reps $name\` on $(date -u +%Y-%m-%d): each commit's R package (built"
  echo "without LibTorch) run through this checkout's \`bench/series.R $reps gp $series\` (same gaps and seeds). Load average"
  echo "at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| commit | date and subject | series | gaps | mae_gp | rmse | coverage90 | mae_linear | ratio_gp_to_linear | kernel | coverage90_reps |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
} > "$out"
cat "$out"
