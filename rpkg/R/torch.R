# LibTorch: whether this installation has it, what it offers, and the error
# every diffusion-transformer entry raises when it has none. The package's
# configure looks for LibTorch when it is installed; without one the core's
# diffusion engine is left out and everything Gaussian-process still works.

#' Is the diffusion transformer available?
#'
#' ditimpute's diffusion transformer (DiT) runs on LibTorch, which the
#' package's `configure` looks for when the package is installed: in
#' `DITIMPUTE_LIBTORCH` (a LibTorch folder with `include/` and `lib/`, e.g.
#' the `torch` folder of a PyTorch install, or `none`), then in the system
#' folders (Debian's and Ubuntu's `libtorch-dev`). Without it the package
#' installs all the same: every Gaussian-process function works (exact
#' conditionals, [impute()] on a [gp_spec()] or a [gp_fit()], [impute_series()]
#' with its default `method = "gp"`, [calibrate()], [oracle_sample()], the
#' theory diagnostics), and every DiT function ([dit_config()], [dit_fit()],
#' [dit_sample()], [dit_loss()], [dit_save()], [dit_load()], [impute()] on a
#' DiT, `impute_series(method = "dit")`, [distribution_shift()], a DiT in
#' [run_experiments()]) raises an error of class `ditimpute_error_no_torch`
#' that says how to get LibTorch.
#'
#' To add it, install LibTorch and reinstall ditimpute: on Debian or Ubuntu
#' `apt-get install libtorch-dev`; elsewhere set `DITIMPUTE_LIBTORCH` to a
#' LibTorch folder before `R CMD INSTALL`, e.g.
#' `DITIMPUTE_LIBTORCH=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')`.
#'
#' @return `TRUE` when this installation was built with LibTorch, else `FALSE`.
#' @seealso [torch_backend()] for the version and CUDA.
#' @examples
#' torch_available()
#' @export
torch_available <- function() isTRUE(cpp_torch_available())

#' The LibTorch backend
#'
#' Reports the linked LibTorch version, whether it has CUDA, and the number of
#' CPU threads it uses; for an installation without LibTorch, that it has none
#' and how to get one (see [torch_available()]).
#' @return A list of class `ditimpute_torch_backend` with `available` (see
#'   [torch_available()]), `torch_version` (`NA` without LibTorch),
#'   `cuda_available`, `cuda_devices`, `threads` (`NA` without LibTorch).
#' @examples
#' torch_backend()
#' @export
torch_backend <- function() {
  if (!torch_available()) {
    return(structure(list(available = FALSE, torch_version = NA_character_, cuda_available = FALSE,
                          cuda_devices = 0L, threads = NA_integer_), class = "ditimpute_torch_backend"))
  }
  b <- core_call(cpp_backend_info())
  structure(c(list(available = TRUE), b), class = "ditimpute_torch_backend")
}

#' @export
print.ditimpute_torch_backend <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  if (!isTRUE(x$available)) {
    cat("<ditimpute_torch_backend> none: ditimpute was installed without LibTorch, so the diffusion transformer",
        "is left out\n(every Gaussian-process function works).\n")
    cat(paste0("  ", no_torch_hint(), "\n"), sep = "")
  } else {
    cat(sprintf("<ditimpute_torch_backend> LibTorch %s, CUDA %s, %d CPU thread%s\n", x$torch_version,
                if (isTRUE(x$cuda_available)) sprintf("available (%d device%s)", x$cuda_devices,
                                                      if (x$cuda_devices == 1) "" else "s") else "not available",
                x$threads, if (x$threads == 1) "" else "s"))
  }
  invisible(x)
}

no_torch_hint <- function() {
  c("To get it, install LibTorch and reinstall ditimpute: on Debian or Ubuntu `apt-get install libtorch-dev`;",
    "elsewhere set DITIMPUTE_LIBTORCH to a LibTorch folder (with include/ and lib/), e.g. a PyTorch install's",
    "torch folder: python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))'.")
}

abort_no_torch <- function(call = rlang::caller_env()) {
  hint <- paste(no_torch_hint(), collapse = " ")
  cli::cli_abort(c("The diffusion transformer needs LibTorch, and ditimpute was installed without it.",
                   i = "{hint}",
                   i = "Every Gaussian-process function works without it; see {.fn ditimpute::torch_available}."),
                 class = c("ditimpute_error_no_torch", "ditimpute_error"), call = call)
}

# At the top of every DiT entry: the classed error before any other work.
check_torch <- function(call = rlang::caller_env()) {
  if (!torch_available()) abort_no_torch(call = call)
  invisible(TRUE)
}
