#include "ditimpute/backend.hpp"

#include "ditimpute/common.hpp"
#include "ditimpute/threads.hpp"

#include <torch/torch.h>

#include <mutex>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ditimpute {

bool has_torch() { return true; }

BackendInfo backend_info() {
  BackendInfo info;
  info.torch_version = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                       std::to_string(TORCH_VERSION_PATCH);
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  info.threads = at::get_num_threads();
  return info;
}

namespace {

// LibTorch's CPU tensors come straight from malloc, and a DiT's activations
// are tens of MB each (100 samples x 96 frames x 512 floats = 20 MB). glibc
// gives such blocks fresh mmap'ed pages, or trims the heap top after their
// free, so every network call paid page faults on all of them: a third of a
// sampling call's time was system time (bench/results/dit_sampler.md). Keeping
// blocks up to 64 MB on the heap, and up to 256 MB of free heap before
// trimming, made a call 1.46x faster on 2 cores; the process then holds up to
// 256 MB of freed memory for reuse instead of returning it at once. Set once,
// for the whole process (glibc only; elsewhere nothing changes). What is kept
// is handed back at the end of each call (TorchCallScope): in an R session the
// tuning also puts R's own large vectors on the heap, and R's garbage between
// collections, interleaved with tensors, pinned ever more kept heap (the DiT
// soak loop grew about 0.6 MB per call; bench/results/soak.md).
void tune_allocator_once() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
  });
}

}  // namespace

void set_threads(int threads) {
  tune_allocator_once();
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  // The BLAS that LibTorch and the core call gets the same count (one budget:
  // cpp/DESIGN.md, "Threads").
  if (thread_budget() != threads) set_thread_budget(threads);
}

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

namespace {
thread_local int torch_call_depth = 0;
}  // namespace

TorchCallScope::TorchCallScope(int threads) {
  set_threads(threads);
  ++torch_call_depth;
}

TorchCallScope::~TorchCallScope() {
  if (--torch_call_depth == 0) release_free_memory();
}

std::string resolve_device(const std::string& device) {
  if (device == "auto") return torch::cuda::is_available() ? "cuda" : "cpu";
  if (device == "cpu") return device;
  if (device == "cuda") {
    if (!torch::cuda::is_available())
      throw input_error("device", "device \"cuda\" was asked for, but the linked LibTorch " +
                                      backend_info().torch_version +
                                      " offers only \"cpu\" (built without CUDA, or no CUDA device visible). "
                                      "Build ditimpute against a CUDA LibTorch (DITIMPUTE_LIBTORCH=<folder>, see "
                                      "README) to use a GPU.");
    return device;
  }
  throw input_error("device", "device must be \"auto\", \"cpu\" or \"cuda\", not \"" + device + "\".");
}

}  // namespace ditimpute
