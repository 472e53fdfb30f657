#' Temporal kernel of a Gaussian process
#'
#' Describes `gamma(i, j) = k(||e_i - e_j||)`, the correlation between frames
#' `i` and `j` (`i, j = 1..H`), through a kernel `k` and a time embedding `e_i`.
#'
#' Kernels, with `r` the embedding distance, `l` the lengthscale and `s2` the
#' variance: laplace (exponential, Ornstein-Uhlenbeck) `s2 exp(-r / l)`; rbf
#' `s2 exp(-r^2 / (2 l^2))`; matern32 `s2 (1 + sqrt(3) r / l) exp(-sqrt(3) r / l)`;
#' matern52 `s2 (1 + sqrt(5) r / l + 5 r^2 / (3 l^2)) exp(-sqrt(5) r / l)`.
#'
#' Embeddings: `"index"` uses `e_i = i * scale`; `"sinusoidal"` uses the
#' paper's `e_i = radius * (sin(2 pi i / period), cos(2 pi i / period))`.
#'
#' @param type Kernel name: `"laplace"` (alias `"exponential"`), `"rbf"`,
#'   `"matern32"` or `"matern52"`.
#' @param lengthscale Positive lengthscale `l`.
#' @param variance Positive variance `s2` (the kernel's value at distance 0).
#' @param embedding `"index"` or `"sinusoidal"`.
#' @param scale Spacing of the index embedding (time between frames).
#' @param radius,period Radius `r` and period `C` of the sinusoidal embedding.
#'   `period` has no default: frames a whole number of periods apart get the
#'   same embedding, so `C` must not divide any lag below `H` (a period
#'   longer than the sequences does not; `gp_spec()` and [kernel_matrix()]
#'   check it). Until 2026-12-07 it defaulted to 1, which put every frame at
#'   one point.
#' @return An object of class `ditimpute_kernel`.
#' @seealso [gp_spec()], [kernel_matrix()]
#' @examples
#' k <- gp_kernel("laplace", lengthscale = 128)
#' k
#' kernel_matrix(k, 4)
#' @export
gp_kernel <- function(type = c("laplace", "rbf", "matern32", "matern52"), lengthscale = 1,
                      variance = 1, embedding = c("index", "sinusoidal"), scale = 1,
                      radius = 1, period = NULL) {
  if (identical(type, "exponential")) type <- "laplace"
  type <- check_string(type, c("laplace", "rbf", "matern32", "matern52"))
  embedding <- check_string(embedding, c("index", "sinusoidal"))
  # an embedding's settings given for the other one had no effect (a review)
  if (embedding == "index" && (!missing(radius) || !is.null(period))) {
    abort_input(if (!missing(radius)) "radius" else "period",
                "belongs to the sinusoidal embedding: give embedding = \"sinusoidal\" too.")
  }
  if (embedding == "sinusoidal" && !missing(scale)) {
    abort_input("scale", "belongs to the index embedding; the sinusoidal one has radius and period.")
  }
  if (embedding == "sinusoidal" && is.null(period)) {
    abort_input("period", paste("is needed with the sinusoidal embedding (frames a whole number of periods apart",
                                "coincide): give one longer than the sequences, e.g. twice their length H."))
  }
  if (is.null(period)) period <- 1  # unused by the index embedding
  structure(list(
    type = type,
    lengthscale = check_number(lengthscale, lower = 0, upper = Inf),
    variance = check_number(variance, lower = 0, upper = Inf),
    embedding = embedding,
    scale = check_number(scale, lower = 0, upper = Inf),
    radius = check_number(radius, lower = 0, upper = Inf),
    period = check_number(period, lower = 0, upper = Inf)
  ), class = "ditimpute_kernel")
}

#' @export
print.ditimpute_kernel <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  emb <- if (x$embedding == "index") sprintf("index (scale %g)", x$scale) else
    sprintf("sinusoidal (radius %g, period %g)", x$radius, x$period)
  cat(sprintf("<ditimpute_kernel> %s, lengthscale %g, variance %g, embedding %s\n",
              x$type, x$lengthscale, x$variance, emb))
  invisible(x)
}

#' Kernel matrix of a temporal kernel
#'
#' @param kernel A [gp_kernel()].
#' @param H Number of frames.
#' @return The `H x H` matrix `Gamma` with `Gamma[i, j] = gamma(i, j)`.
#' @examples
#' kernel_matrix(gp_kernel("rbf", lengthscale = 2), 5)
#' @export
kernel_matrix <- function(kernel, H) {
  if (!inherits(kernel, "ditimpute_kernel")) abort_input("kernel", "must be made by gp_kernel().")
  H <- check_count(H)
  check_embedding(kernel, H)
  core_call(cpp_kernel_matrix(kernel, H))
}

# The sinusoidal embedding puts frames k periods apart at one point: with a
# lag below H that is a multiple of the period, Gamma has equal rows (singular,
# and a nugget would hide a periodic process the user did not ask for).
check_embedding <- function(kernel, H, arg = "kernel", call = rlang::caller_env()) {
  if (kernel$embedding != "sinusoidal" || H < 2) return(invisible())
  lag <- seq_len(H - 1)
  gap <- abs(sin(pi * lag / kernel$period))  # distance / (2 radius)
  if (any(gap < 1e-8)) {
    k <- lag[which(gap < 1e-8)[1]]
    abort_input(arg, sprintf(paste("puts frames %d apart at the same point of its sinusoidal embedding (period %g",
                                   "divides the lag): every frame equals the one %d later. Give a period that divides",
                                   "no lag below H = %d, e.g. period = %d."), k, kernel$period, k, H, 2L * H),
                call = call)
  }
  invisible()
}
