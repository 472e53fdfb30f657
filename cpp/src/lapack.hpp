// Dense factorisations through the system LAPACK and BLAS (libblas.so.3 /
// liblapack.so.3: OpenBLAS on the project's machines and in R on Debian,
// whose kernels pick AVX2/AVX-512 at run time and use every core). The core
// is compiled for the baseline x86-64 (SSE2), where Eigen's own Cholesky runs
// at a fraction of that: at m = 2,000 on this project's 2-core machine,
// 0.28 s (Eigen, one core) vs 0.093 s (dpotrf, one thread) / 0.052 s (two).
// In the core (bench_gp_fit lapack: 20 windows of 30 x 132, 50% missing) a
// pass of Cholesky factorisations is 2.4x faster and an ECM fit 2.1x than
// Eigen's code with the windows spread over the two cores.
// Not a public header: include only from cpp/src/*.cpp.
#pragma once

#include <Eigen/Core>

#include <cstddef>

namespace ditimpute {
namespace detail {

// Whether an n x n factorisation should go to LAPACK: large enough for its
// blocked kernels to pay, and not on a parallel_for worker (BLAS threads
// inside those oversubscribe the cores; see inside_parallel_for()).
bool use_lapack(Eigen::Index n);

// Lower Cholesky factor of the symmetric A in place (its lower triangle is
// read; the strictly upper part is left as it was). False when A is not
// numerically positive definite. LAPACK dpotrf where use_lapack(), else Eigen.
bool cholesky_in_place(Eigen::Ref<Eigen::MatrixXd> A);

// (L L^T)^{-1} from the lower factor L held in A, in place, both triangles
// written. LAPACK dpotri where use_lapack(), else the blocked Eigen code.
void inverse_from_cholesky_in_place(Eigen::Ref<Eigen::MatrixXd> A);

// B := L^{-T} B for the lower triangular L (its strictly upper part is not
// read). BLAS dtrsm where use_lapack(L.rows()), else Eigen.
void solve_lower_transposed_in_place(const Eigen::Ref<const Eigen::MatrixXd>& L, Eigen::Ref<Eigen::MatrixXd> B);

// The lower triangle of C := alpha Y Y^T (C is Y.rows() square; its strictly
// upper part is left as it was). BLAS dsyrk where use_lapack(Y.rows()), else Eigen.
void lower_outer_product(const Eigen::Ref<const Eigen::MatrixXd>& Y, double alpha, Eigen::Ref<Eigen::MatrixXd> C);

// B := L^{-1} B for the lower triangular L (its strictly upper part is not
// read). BLAS dtrsm where use_lapack(L.rows()), else Eigen.
void solve_lower_in_place(const Eigen::Ref<const Eigen::MatrixXd>& L, Eigen::Ref<Eigen::MatrixXd> B);

// C := op(A) op(B) with op(X) = X or X^T. BLAS dgemm where use_lapack() of
// the largest dimension, else Eigen (the core's Eigen is compiled for
// baseline x86-64, the system BLAS picks AVX2/AVX-512 at run time).
void multiply(const Eigen::Ref<const Eigen::MatrixXd>& A, bool transpose_a, const Eigen::Ref<const Eigen::MatrixXd>& B,
              bool transpose_b, Eigen::Ref<Eigen::MatrixXd> C);

// Eigenvalues of the symmetric A (lower triangle read), ascending, and with
// `vectors` its orthonormal eigenvectors, written over A (else A is
// destroyed). LAPACK dsyevd (divide and conquer; its back-transformation is
// blocked) where use_lapack(), else Eigen's SelfAdjointEigenSolver. False
// when the algorithm did not converge.
bool symmetric_eigen_in_place(Eigen::Ref<Eigen::MatrixXd> A, Eigen::VectorXd& values, bool vectors);

// The largest eigenvalue of the symmetric A (lower triangle read; A is
// destroyed) and a unit eigenvector for it. LAPACK dsyevr for that one pair
// (tridiagonal reduction, then one eigenvalue and vector: several times
// cheaper than every pair) at any size, Eigen's full decomposition on a
// parallel_for worker or in a forked child. False when it did not converge.
bool largest_eigenpair_in_place(Eigen::Ref<Eigen::MatrixXd> A, double& value, Eigen::VectorXd& vector);

// Asks (Linux, madvise(MADV_HUGEPAGE)) for the whole 2 MB pages inside
// [data, data + n) to come as transparent huge pages at first touch; for
// memory not yet touched, e.g. a caller's fresh output (R's matrix). Below
// 4 MB, elsewhere, or where THP is off: nothing. Advice only: the contents
// and the ownership of the memory do not change.
void advise_huge_pages(double* data, std::size_t n);

// Column-major storage for a large matrix whose pages, on Linux and from
// 4 MB up, are asked to come as transparent huge pages (2 MB-aligned memory,
// madvise(MADV_HUGEPAGE); THP in "madvise" mode honours it). The first touch
// of each fresh 4 KB page cost ~12 us on this project's VMs, ~80 ms for the
// 27 MB factor of Q_mm at BeijingAir size, as long as its Cholesky
// factorisation. Elsewhere, or below 4 MB, plain aligned memory. Not
// initialised. Move-only.
class LargeMatrix {
 public:
  LargeMatrix() = default;
  LargeMatrix(Eigen::Index rows, Eigen::Index cols);
  ~LargeMatrix();
  LargeMatrix(LargeMatrix&& o) noexcept;
  LargeMatrix& operator=(LargeMatrix&& o) noexcept;
  LargeMatrix(const LargeMatrix&) = delete;
  LargeMatrix& operator=(const LargeMatrix&) = delete;
  Eigen::Map<Eigen::MatrixXd> map() { return {data_, rows_, cols_}; }
  Eigen::Map<const Eigen::MatrixXd> map() const { return {data_, rows_, cols_}; }

 private:
  void release();
  double* data_ = nullptr;
  Eigen::Index rows_ = 0, cols_ = 0;
  bool huge_ = false;  // from posix_memalign (free()), else Eigen's aligned_malloc
};

// While alive, OpenBLAS runs on one thread (openblas_set_num_threads(1));
// then back to the process's thread budget (threads.hpp). For loops of many
// small BLAS calls (the Krylov products of kronecker_solve.cpp), whose
// threads cost more in start-up and waiting than they gain, above all on
// loaded cores. Nothing with another BLAS.
class SerialBlasScope {
 public:
  SerialBlasScope();
  ~SerialBlasScope();
  SerialBlasScope(const SerialBlasScope&) = delete;
  SerialBlasScope& operator=(const SerialBlasScope&) = delete;

 private:
  bool active_;
};

// LAPACK/BLAS entry points used by gaussian_process.cpp's invert_lower and
// lower_gram (declared here so that one file names the Fortran symbols).
void lapack_invert_lower(Eigen::Ref<Eigen::MatrixXd> T);   // dtrtri
void lapack_lower_gram(Eigen::Ref<Eigen::MatrixXd> L);     // dlauum: L^T L into the lower triangle

}  // namespace detail
}  // namespace ditimpute
