// See lapack.hpp. The Fortran routines take their character arguments'
// lengths as trailing hidden size_t arguments (gfortran's convention, which
// C implementations such as OpenBLAS's ignore).
#include "lapack.hpp"

#include "ditimpute/common.hpp"
#include "ditimpute/threads.hpp"
#include "gaussian_internal.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <dlfcn.h>
#include <pthread.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <limits>
#include <thread>
#include <vector>

extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_len);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len, std::size_t diag_len);
void dlauum_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_len);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t side_len,
            std::size_t uplo_len, std::size_t transa_len, std::size_t diag_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void dsyevr_(const char* jobz, const char* range, const char* uplo, const int* n, double* a, const int* lda,
             const double* vl, const double* vu, const int* il, const int* iu, const double* abstol, int* m, double* w,
             double* z, const int* ldz, int* isuppz, double* work, const int* lwork, int* iwork, const int* liwork,
             int* info, std::size_t jobz_len, std::size_t range_len, std::size_t uplo_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t transa_len, std::size_t transb_len);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a,
            const int* lda, const double* beta, double* c, const int* ldc, std::size_t uplo_len, std::size_t trans_len);
}

namespace ditimpute {
namespace detail {

namespace {
// Below this the blocked LAPACK kernels gain little over Eigen's and the
// call's threading overhead dominates.
constexpr Eigen::Index kLapackMin = 128;

int fortran_int(Eigen::Index v) {
  if (v > std::numeric_limits<int>::max()) throw numeric_error("a matrix is too large for LAPACK's 32-bit sizes.");
  return static_cast<int>(v);
}

// Set in a child process made by fork() (R's parallel::mclapply, for one).
// GNU OpenMP's thread pool does not survive a fork: an OpenMP BLAS (Debian's
// libopenblas0-openmp) called in the child after the parent used its threads
// hangs for ever (measured: plain R, chol(crossprod(m)) in the parent and
// again inside mclapply). Children therefore keep to Eigen's code.
std::atomic<bool> forked_child{false};
void mark_forked_child() { forked_child.store(true); }
const bool atfork_registered = pthread_atfork(nullptr, nullptr, &mark_forked_child) == 0;

}  // namespace

std::atomic<int> budget{0};

}  // namespace detail

bool in_forked_child() { return detail::forked_child.load(); }

bool set_thread_budget(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  detail::budget.store(threads);
  if (detail::forked_child.load()) return false;  // children keep to Eigen (above): leave the BLAS alone
  using SetThreads = void (*)(int);
  // RTLD_DEFAULT: the BLAS the process loaded (R's, or the one this library links).
  const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set == nullptr) return false;
  set(threads);
  return true;
}

namespace detail {
namespace {
using SetThreads = void (*)(int);
SetThreads openblas_setter() {
  static const SetThreads set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  return set;
}

using GetThreads = int (*)();
GetThreads openblas_getter() {
  static const GetThreads get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return get;
}
thread_local int serial_saved = 0;  // the count to restore (0: not inside a scope)
}  // namespace

SerialBlasScope::SerialBlasScope()
    : active_(serial_saved == 0 && !forked_child.load() && openblas_setter() != nullptr && openblas_getter() != nullptr) {
  if (!active_) return;
  serial_saved = std::max(1, openblas_getter()());
  if (serial_saved > 1) openblas_setter()(1);
}
SerialBlasScope::~SerialBlasScope() {
  if (!active_) return;
  if (serial_saved > 1) openblas_setter()(serial_saved);
  serial_saved = 0;
}
}  // namespace detail

int thread_budget() {
  const int b = detail::budget.load();
  return b > 0 ? b : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace detail {

bool use_lapack(Eigen::Index n) {
  return n >= kLapackMin && !inside_parallel_for() && atfork_registered && !forked_child.load();
}

bool cholesky_in_place(Eigen::Ref<Eigen::MatrixXd> A) {
  if (A.rows() == 0) return true;
  if (!use_lapack(A.rows())) {
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(A);
    return llt.info() == Eigen::Success;
  }
  const int n = fortran_int(A.rows()), lda = fortran_int(A.outerStride());
  int info = 0;
  dpotrf_("L", &n, A.data(), &lda, &info, 1);
  return info == 0;
}

void inverse_from_cholesky_in_place(Eigen::Ref<Eigen::MatrixXd> A) {
  if (A.rows() == 0) return;
  if (!use_lapack(A.rows())) {
    A.triangularView<Eigen::StrictlyUpper>().setZero();
    invert_lower(A);
    A = lower_gram(A);
    return;
  }
  const int n = fortran_int(A.rows()), lda = fortran_int(A.outerStride());
  int info = 0;
  dpotri_("L", &n, A.data(), &lda, &info, 1);
  if (info != 0) throw numeric_error("the inverse of a Cholesky factor failed (a zero on its diagonal).");
  A.triangularView<Eigen::StrictlyUpper>() = A.transpose();
}

void solve_lower_transposed_in_place(const Eigen::Ref<const Eigen::MatrixXd>& L, Eigen::Ref<Eigen::MatrixXd> B) {
  if (L.rows() != B.rows()) throw numeric_error("solve_lower_transposed_in_place: sizes differ.");
  if (B.size() == 0) return;
  if (!use_lapack(L.rows())) {
    L.triangularView<Eigen::Lower>().transpose().solveInPlace(B);
    return;
  }
  const int m = fortran_int(B.rows()), n = fortran_int(B.cols()), lda = fortran_int(L.outerStride()),
            ldb = fortran_int(B.outerStride());
  const double one = 1.0;
  dtrsm_("L", "L", "T", "N", &m, &n, &one, L.data(), &lda, B.data(), &ldb, 1, 1, 1, 1);
}

void solve_lower_in_place(const Eigen::Ref<const Eigen::MatrixXd>& L, Eigen::Ref<Eigen::MatrixXd> B) {
  if (L.rows() != B.rows()) throw numeric_error("solve_lower_in_place: sizes differ.");
  if (B.size() == 0) return;
  if (!use_lapack(L.rows())) {
    L.triangularView<Eigen::Lower>().solveInPlace(B);
    return;
  }
  const int m = fortran_int(B.rows()), n = fortran_int(B.cols()), lda = fortran_int(L.outerStride()),
            ldb = fortran_int(B.outerStride());
  const double one = 1.0;
  dtrsm_("L", "L", "N", "N", &m, &n, &one, L.data(), &lda, B.data(), &ldb, 1, 1, 1, 1);
}

void multiply(const Eigen::Ref<const Eigen::MatrixXd>& A, bool transpose_a, const Eigen::Ref<const Eigen::MatrixXd>& B,
              bool transpose_b, Eigen::Ref<Eigen::MatrixXd> C) {
  const Eigen::Index m = transpose_a ? A.cols() : A.rows(), k = transpose_a ? A.rows() : A.cols(),
                     n = transpose_b ? B.rows() : B.cols();
  if ((transpose_b ? B.cols() : B.rows()) != k || C.rows() != m || C.cols() != n)
    throw numeric_error("multiply: sizes differ.");
  if (C.size() == 0) return;
  if (k == 0) {
    C.setZero();
    return;
  }
  if (!use_lapack(std::max({m, n, k}))) {
    if (transpose_a && transpose_b) C.noalias() = A.transpose() * B.transpose();
    else if (transpose_a) C.noalias() = A.transpose() * B;
    else if (transpose_b) C.noalias() = A * B.transpose();
    else C.noalias() = A * B;
    return;
  }
  const int mi = fortran_int(m), ni = fortran_int(n), ki = fortran_int(k), lda = fortran_int(A.outerStride()),
            ldb = fortran_int(B.outerStride()), ldc = fortran_int(C.outerStride());
  const double one = 1.0, zero = 0.0;
  dgemm_(transpose_a ? "T" : "N", transpose_b ? "T" : "N", &mi, &ni, &ki, &one, A.data(), &lda, B.data(), &ldb, &zero,
         C.data(), &ldc, 1, 1);
}

bool symmetric_eigen_in_place(Eigen::Ref<Eigen::MatrixXd> A, Eigen::VectorXd& values, bool vectors) {
  if (A.rows() != A.cols()) throw numeric_error("symmetric_eigen_in_place: the matrix is not square.");
  values.resize(A.rows());
  if (A.rows() == 0) return true;
  if (!use_lapack(A.rows())) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(
        A, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);  // reads the lower triangle
    if (es.info() != Eigen::Success) return false;
    values = es.eigenvalues();
    if (vectors) A = es.eigenvectors();
    return true;
  }
  const int n = fortran_int(A.rows()), lda = fortran_int(A.outerStride());
  const char* jobz = vectors ? "V" : "N";
  int info = 0, lwork = -1, liwork = -1, iwork_query = 0;
  double work_query = 0.0;
  dsyevd_(jobz, "L", &n, A.data(), &lda, values.data(), &work_query, &lwork, &iwork_query, &liwork, &info, 1, 1);
  if (info != 0) return false;
  lwork = static_cast<int>(work_query) + 1;
  liwork = iwork_query;
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(liwork, 1)));
  dsyevd_(jobz, "L", &n, A.data(), &lda, values.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  return info == 0;
}

namespace {
constexpr std::size_t kHugePage = std::size_t(2) << 20;  // a transparent huge page: 2 MB
}  // namespace

void advise_huge_pages(double* data, std::size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = kHugePage;
  if (data == nullptr || n * sizeof(double) < 2 * kHuge) return;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(data), end = begin + n * sizeof(double);
  const std::uintptr_t a = (begin + kHuge - 1) / kHuge * kHuge, b = end / kHuge * kHuge;
  if (b > a) madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);
#else
  (void)data;
  (void)n;
#endif
}

LargeMatrix::LargeMatrix(Eigen::Index rows, Eigen::Index cols) : rows_(rows), cols_(cols) {
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (bytes == 0) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= 2 * kHugePage) {
    void* p = nullptr;
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (posix_memalign(&p, kHugePage, rounded) != 0) throw std::bad_alloc();
    data_ = static_cast<double*>(p);
    huge_ = true;
    advise_huge_pages(data_, rounded / sizeof(double));  // advice only: ignored where THP is off
    return;
  }
#endif
  data_ = static_cast<double*>(Eigen::internal::aligned_malloc(bytes));
}

void LargeMatrix::release() {
  if (data_ == nullptr) return;
  if (huge_) std::free(data_);
  else Eigen::internal::aligned_free(data_);
  data_ = nullptr;
}

LargeMatrix::~LargeMatrix() { release(); }

LargeMatrix::LargeMatrix(LargeMatrix&& o) noexcept : data_(o.data_), rows_(o.rows_), cols_(o.cols_), huge_(o.huge_) {
  o.data_ = nullptr;
  o.rows_ = o.cols_ = 0;
}

LargeMatrix& LargeMatrix::operator=(LargeMatrix&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    rows_ = o.rows_;
    cols_ = o.cols_;
    huge_ = o.huge_;
    o.data_ = nullptr;
    o.rows_ = o.cols_ = 0;
  }
  return *this;
}

bool largest_eigenpair_in_place(Eigen::Ref<Eigen::MatrixXd> A, double& value, Eigen::VectorXd& vector) {
  if (A.rows() != A.cols() || A.rows() == 0) throw numeric_error("largest_eigenpair_in_place: not a square matrix.");
  // Any size: the Ritz problems of the Krylov loops are 4 to 600 rows, where
  // Eigen's full decomposition (SSE2, every vector) cost more than the products.
  if (inside_parallel_for() || !atfork_registered || forked_child.load()) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A);  // reads the lower triangle
    if (es.info() != Eigen::Success) return false;
    value = es.eigenvalues()(A.rows() - 1);
    vector = es.eigenvectors().col(A.rows() - 1);
    return true;
  }
  const int n = fortran_int(A.rows()), lda = fortran_int(A.outerStride()), il = n, iu = n;
  const double vl = 0.0, vu = 0.0, abstol = 0.0;  // abstol 0: LAPACK's default accuracy
  int found = 0, info = 0, lwork = -1, liwork = -1, iwork_query = 0;
  double work_query = 0.0;
  std::vector<double> w(static_cast<std::size_t>(n));
  std::vector<int> isuppz(2);
  vector.resize(n);
  dsyevr_("V", "I", "L", &n, A.data(), &lda, &vl, &vu, &il, &iu, &abstol, &found, w.data(), vector.data(), &n,
          isuppz.data(), &work_query, &lwork, &iwork_query, &liwork, &info, 1, 1, 1);
  if (info != 0) return false;
  lwork = static_cast<int>(work_query) + 1;
  liwork = std::max(iwork_query, 1);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  dsyevr_("V", "I", "L", &n, A.data(), &lda, &vl, &vu, &il, &iu, &abstol, &found, w.data(), vector.data(), &n,
          isuppz.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1, 1);
  if (info != 0 || found != 1) return false;
  value = w[0];
  return true;
}

void lower_outer_product(const Eigen::Ref<const Eigen::MatrixXd>& Y, double alpha, Eigen::Ref<Eigen::MatrixXd> C) {
  if (C.rows() != Y.rows() || C.cols() != Y.rows()) throw numeric_error("lower_outer_product: sizes differ.");
  if (C.size() == 0) return;
  if (!use_lapack(Y.rows()) || Y.cols() == 0) {
    C.triangularView<Eigen::Lower>().setZero();
    C.selfadjointView<Eigen::Lower>().rankUpdate(Y, alpha);
    return;
  }
  const int n = fortran_int(Y.rows()), k = fortran_int(Y.cols()), lda = fortran_int(Y.outerStride()),
            ldc = fortran_int(C.outerStride());
  const double zero = 0.0;
  dsyrk_("L", "N", &n, &k, &alpha, Y.data(), &lda, &zero, C.data(), &ldc, 1, 1);
}

void lapack_invert_lower(Eigen::Ref<Eigen::MatrixXd> T) {
  const int n = fortran_int(T.rows()), lda = fortran_int(T.outerStride());
  int info = 0;
  dtrtri_("L", "N", &n, T.data(), &lda, &info, 1, 1);
  if (info != 0) throw numeric_error("a triangular factor is singular (a zero on its diagonal).");
  T.triangularView<Eigen::StrictlyUpper>().setZero();
}

void lapack_lower_gram(Eigen::Ref<Eigen::MatrixXd> L) {
  const int n = fortran_int(L.rows()), lda = fortran_int(L.outerStride());
  int info = 0;
  dlauum_("L", &n, L.data(), &lda, &info, 1);
  if (info != 0) throw numeric_error("LAPACK dlauum failed.");
}

}  // namespace detail
}  // namespace ditimpute
