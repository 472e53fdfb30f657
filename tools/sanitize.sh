#!/usr/bin/env bash
# The C++ core and its Catch2 tests under AddressSanitizer + UndefinedBehavior-
# Sanitizer (build/asan, separate from build/cmake). Every report aborts its
# test, so "100% tests passed" means zero reports. The DiT learning test (minutes
# of training, several times slower under ASan) and the oracle acceptance test
# (statistics over 2,000-draw runs of code the quick sampler tests already
# cover; over 5 minutes under ASan) are left out.
# LibTorch itself is not instrumented; LeakSanitizer is off because LibTorch
# keeps global allocations alive until exit by design.
# Optimisation -O1 with -g1 (as ASan's documentation suggests): on this 2-core
# machine it compiles a LibTorch source 2.5x as fast as RelWithDebInfo's -O2 -g
# (network.cpp 42 s against 107 s), which made the sanitized build 27 of CI's
# 75 minutes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
cmake -S "$top" -B "$top/build/asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DDITIMPUTE_SANITIZE=ON \
  -DDITIMPUTE_BENCH=OFF >/dev/null
cmake --build "$top/build/asan" -j"$jobs" 2>&1 | grep -E "error|warning: .*sanitize" || true
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# As many tests at a time as cores, the LibTorch tests alone (RUN_SERIAL in
# cpp/CMakeLists.txt): the Gaussian tests' 285 s under ASan ran one at a time
# in session 80's CI.
(cd "$top/build/asan" && ctest --output-on-failure -j"$jobs" -E "learns GP conditionals|oracle mode reproduces") | tee "$top/build/asan/ctest.log"
reports=$(grep -cE "ERROR: AddressSanitizer|runtime error:" "$top/build/asan/ctest.log" || true)
echo "sanitizers: ${reports} reports, $(( $(date +%s) - start )) s"
[ "$reports" -eq 0 ]
