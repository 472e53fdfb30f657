// The process-wide thread budget (cpp/DESIGN.md, "Threads"): one figure for
// the system BLAS under the core's dense algebra and LibTorch's intra-op
// threads, so that several processes on one machine share its cores instead
// of each taking all of them.
#pragma once

namespace ditimpute {

// Records the budget (<= 0: every core) and sets OpenBLAS's threads to it
// (openblas_set_num_threads, looked up at run time in the loaded libraries:
// nothing happens with another BLAS, and nothing in a forked child, which
// keeps to Eigen). Returns whether a BLAS took the setting. LibTorch's
// threads are set from the same figure by each call (TorchCallScope).
bool set_thread_budget(int threads);

// The budget last set (every core before any call).
int thread_budget();

// True in a process made by fork() after this library was loaded (R's
// mclapply children, future's multicore workers).
bool in_forked_child();

}  // namespace ditimpute
