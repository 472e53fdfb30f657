#!/usr/bin/env bash
# The C++ core, the DiT tests (test_dit) and bench_dit built against the
# LibTorch inside a CUDA build of PyTorch, with plain g++, for a lent GPU
# machine (../shared/GPU.md): it has CUDA, g++ and a Python with torch, but no
# Eigen, Catch2 or LAPACK. Those travel in a folder packed here:
#
#   bash tools/build-cuda.sh --pack .gpu          (here: Eigen and Catch2
#        headers, Debian's LAPACK/BLAS and the libraries they load; the folder
#        must be ignored by git, e.g. listed in .git/info/exclude, and carried)
#   bash tools/build-cuda.sh .gpu build/cuda      (there: objects compiled 16
#        at a time, then build/cuda/test_dit and build/cuda/bench_dit)
#
# $PYTHON (default python3) names the Python whose torch is used. CI never
# runs this: it has no GPU; cpp/CMakeLists.txt is the build everywhere else.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = "--pack" ]; then
  pack=${2:?usage: build-cuda.sh --pack DIR}
  mkdir -p "$pack/include/eigen3" "$pack/lib"
  cp -r /usr/include/eigen3/Eigen /usr/include/eigen3/unsupported "$pack/include/eigen3/"
  cp -r /usr/include/catch2 "$pack/include/"
  # The reference LAPACK and BLAS (small, and fast enough for what the DiT
  # code factorises), or whatever the alternatives system names, with the
  # libraries they need that a bare machine may lack.
  for lib in lapack/liblapack.so.3 blas/libblas.so.3; do
    real=$(readlink -f "/usr/lib/x86_64-linux-gnu/$lib")
    [ -e "$real" ] || real=$(readlink -f "/usr/lib/x86_64-linux-gnu/$(basename "$lib")")
    lib=$(basename "$lib")
    cp "$real" "$pack/lib/$lib"
    ldd "$real" | awk '/=> \// {print $3}' | while read -r dep; do
      case "$(basename "$dep")" in
        libgfortran.so*|libquadmath.so*|libopenblas.so*|libgomp.so*)
          # OpenBLAS (and its OpenMP) only when it is the library copied.
          case "$real" in *openblas*) ;; *) case "$dep" in *openblas*|*gomp*) continue ;; esac ;; esac
          cp -L "$dep" "$pack/lib/" ;;
      esac
    done
  done
  du -sh "$pack"
  exit 0
fi

pack=$(cd "${1:?usage: build-cuda.sh PACK_DIR [BUILD_DIR]}" && pwd)
out=${2:-build/cuda}
mkdir -p "$out/obj"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
torch=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
abi=$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
echo "LibTorch: $torch (torch $("$py" -c 'import torch; print(torch.__version__, torch.version.cuda)'), ABI $abi)"
flags="-O2 -std=c++17 -fPIC -DNDEBUG -D_GLIBCXX_USE_CXX11_ABI=$abi -I$top/cpp/include -I$pack/include/eigen3
       -I$pack/include -I$torch/include -I$torch/include/torch/csrc/api/include"
cd "$top"
core=$(ls cpp/src/*.cpp cpp/src/dit/*.cpp)
tests=$(ls cpp/tests/main.cpp cpp/tests/dit/*.cpp)
# One object per source, 16 compilers at a time; an object is named after its
# path so that same-named files in two folders do not collide.
printf '%s\n' $core $tests bench/bench_dit.cpp |
  xargs -P 16 -I{} sh -c 'o="$0/obj/$(echo {} | tr / _).o"; g++ $1 -c {} -o "$o" || exit 255' "$out" "$flags"
objs() { for f in "$@"; do printf '%s ' "$out/obj/$(echo "$f" | tr / _).o"; done; }
libs="-L$torch/lib -Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed -ltorch -ltorch_cpu -lc10
      -L$pack/lib -l:liblapack.so.3 -l:libblas.so.3 -lpthread -Wl,-rpath,$torch/lib:$pack/lib"
# shellcheck disable=SC2046
g++ $(objs $core $tests) -o "$out/test_dit" $libs
# shellcheck disable=SC2046
g++ $(objs $core bench/bench_dit.cpp) -o "$out/bench_dit" $libs
echo "built $out/test_dit $out/bench_dit"
