# Classed conditions and argument checks shared by every exported function.

abort_input <- function(arg, message, call = rlang::caller_env()) {
  cli::cli_abort(c("{.arg {arg}}: {message}"),
    class = c("ditimpute_error_input", "ditimpute_error"),
    arg = arg, call = call
  )
}

abort_numeric <- function(message, call = rlang::caller_env()) {
  cli::cli_abort("{message}",
    class = c("ditimpute_error_numeric", "ditimpute_error"),
    call = call
  )
}

# Evaluates a call into the C++ core; core errors arrive as
# "ditimpute<US>kind<US>arg<US>message" and leave as classed R conditions.
# `rename` maps a core argument name to the R argument that carries it
# (c(gp = "gp_mode")) where the two differ.
core_call <- function(expr, call = rlang::caller_env(), rename = NULL) {
  tryCatch({
    cpp_set_memory_limit(memory_limit_option())
    expr
  }, error = function(e) {
    msg <- conditionMessage(e)
    parts <- strsplit(msg, "\x1f", fixed = TRUE)[[1]]
    if (length(parts) >= 4 && parts[1] == "ditimpute") {
      text <- paste(parts[-(1:3)], collapse = "\x1f")
      if (parts[2] == "input") {
        arg <- parts[3]
        if (arg %in% names(rename)) arg <- rename[[arg]]
        abort_input(arg, drop_arg_prefix(parts[3], text), call = call)
      }
      if (parts[2] == "numeric") abort_numeric(text, call = call)
      if (parts[2] == "interrupt") rlang::interrupt()
      if (parts[2] == "unavailable") abort_no_torch(call = call)
      cli::cli_abort(c("Internal error in the ditimpute core: {text}",
                       i = "Please report it with the code that produced it."),
                     class = c("ditimpute_error_internal", "ditimpute_error"), call = call)
    }
    stop(e)
  })
}

# The core's input errors read "<arg> <what is wrong>" ("Gamma is not
# symmetric."), whole sentences in C++; abort_input() names the argument
# already ("`Gamma`: ..."), so a leading repeat of the name is dropped here,
# the one place core messages reach R ("`Gamma`: is not symmetric.").
drop_arg_prefix <- function(arg, text) {
  if (!nzchar(arg)) return(text)
  pre <- paste0(arg, " ")
  if (!startsWith(text, pre)) return(text)
  rest <- substring(text, nchar(pre) + 1L)
  if (!grepl("^[[:alpha:]\"]", rest)) return(text)  # "gp = ...", "H (frames) ...": not a plain predicate
  rest
}

check_count <- function(x, arg = rlang::caller_arg(x), min = 1, max = Inf,
                        call = rlang::caller_env()) {
  force(arg)
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x != round(x)) {
    abort_input(arg, "must be a single whole number.", call = call)
  }
  if (x < min) abort_input(arg, sprintf("must be at least %s, not %s.", format(min), format(x)), call = call)
  if (x > max) abort_input(arg, sprintf("must be at most %s, not %s.", format(max), format(x)), call = call)
  if (x > .Machine$integer.max) {
    abort_input(arg, sprintf("must be at most %d, not %s.", .Machine$integer.max, format(x)), call = call)
  }
  as.integer(x)
}

check_number <- function(x, arg = rlang::caller_arg(x), lower = -Inf, upper = Inf,
                         open = TRUE, call = rlang::caller_env()) {
  force(arg)
  if (!is.numeric(x) || length(x) != 1 || !is.finite(x)) {
    abort_input(arg, "must be a single finite number.", call = call)
  }
  bad <- if (open) x <= lower || x >= upper else x < lower || x > upper
  if (bad) {
    range <- if (open) sprintf("(%s, %s)", format(lower), format(upper)) else
      sprintf("[%s, %s]", format(lower), format(upper))
    abort_input(arg, sprintf("must lie in %s, not %s.", range, format(x)), call = call)
  }
  as.numeric(x)
}

check_level <- function(level, arg = rlang::caller_arg(level), call = rlang::caller_env()) {
  force(arg)
  check_number(level, arg = arg, lower = 0, upper = 1, call = call)
}

# One level or several (predict()'s `level`): each in (0, 1), none twice;
# returned in increasing order.
check_levels <- function(level, arg = rlang::caller_arg(level), call = rlang::caller_env()) {
  force(arg)
  if (is.numeric(level) && length(level) == 1) return(check_level(level, arg = arg, call = call))
  if (!is.numeric(level) || length(level) == 0 || anyNA(level) || any(!is.finite(level)) ||
      any(level <= 0 | level >= 1)) {
    abort_input(arg, sprintf("must be levels in (0, 1), not c(%s).", paste(format(level), collapse = ", ")), call = call)
  }
  if (anyDuplicated(level)) {
    abort_input(arg, sprintf("has %g twice: give each level once.", level[anyDuplicated(level)]), call = call)
  }
  # Each level names its columns (lower_80, ...) in percent to 4 decimals:
  # levels that round alike, or to 0% or 100%, would lose a column.
  pct <- format_percent_label(level)
  if (anyDuplicated(pct) || any(pct %in% c("0", "100"))) {
    abort_input(arg, sprintf(paste("has levels that agree to 4 decimals of a percent, or round to 0%% or 100%%",
                                   "(%s): give levels that differ in percent to 4 decimals."),
                             paste(format(level, digits = 12), collapse = ", ")), call = call)
  }
  sort(as.numeric(level))
}

check_string <- function(x, choices, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  force(arg)
  if (!is.character(x) || length(x) < 1 || is.na(x[1])) {
    abort_input(arg, sprintf("must be one of %s.", paste0('"', choices, '"', collapse = ", ")), call = call)
  }
  # Several values are the argument's default (all its choices, the first
  # taken), never a choice the user made: c("smooth", "seasonal") is an error.
  if (length(x) > 1 && !setequal(x, choices)) {
    abort_input(arg, sprintf("must be a single value, one of %s, not c(%s).", paste0('"', choices, '"', collapse = ", "),
                             paste0('"', x, '"', collapse = ", ")), call = call)
  }
  x <- x[1]
  if (!x %in% choices) {
    abort_input(arg, sprintf("must be one of %s, not \"%s\".", paste0('"', choices, '"', collapse = ", "), x),
      call = call
    )
  }
  x
}

check_numeric_matrix <- function(x, arg = rlang::caller_arg(x), nrow = NULL, ncol = NULL,
                                 allow_na = FALSE, call = rlang::caller_env()) {
  force(arg)
  if (!is.matrix(x) || !is.numeric(x)) abort_input(arg, "must be a numeric matrix.", call = call)
  if (!is.null(nrow) && nrow(x) != nrow) {
    abort_input(arg, sprintf("must have %d rows, not %d.", nrow, nrow(x)), call = call)
  }
  if (!is.null(ncol) && ncol(x) != ncol) {
    abort_input(arg, sprintf("must have %d columns, not %d.", ncol, ncol(x)), call = call)
  }
  if (!allow_na && any(!is.finite(x))) abort_input(arg, "must not contain NA, NaN or Inf.", call = call)
  storage.mode(x) <- "double"
  x
}

# The one missing-value policy of every function that takes data: NA marks a
# missing value; NaN and Inf are input errors (R's is.na(NaN) is TRUE, so
# without this check a NaN would silently become a gap). The error names
# `arg`, counts the NaN and Inf entries, locates the first few as R indices
# (x[5], x[3, "a"], x[1, 3, 2]; columns by name where they have one) and
# says how to mark them missing. `x`: a numeric vector, matrix or array
# (ts included), or a data frame (its numeric columns); anything else is left
# to the caller's own checks. Returns `x` invisibly.
check_no_nan_inf <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(), show = 3L) {
  force(arg)
  if (is.data.frame(x)) {
    # Numeric columns; time stamps (Date, POSIXct, difftime: doubles too) are left to the caller.
    num <- vapply(x, function(col) is.double(col) && !inherits(col, c("Date", "POSIXt", "difftime")), TRUE)
    if (!any(num)) return(invisible(x))
    bad <- vapply(x[num], function(v) any(is.nan(v) | is.infinite(v)), TRUE)
    if (!any(bad)) return(invisible(x))
    m <- as.matrix(x[num])
    colnames(m) <- names(x)[num]
    locate_nan_inf(m, arg, call, show, frame_cols = names(x)[num][bad])
  }
  if (!is.double(x)) return(invisible(x))  # integers and logicals hold no NaN or Inf
  if (all(is.finite(x)) || !any(is.nan(x) | is.infinite(x))) return(invisible(x))
  locate_nan_inf(x, arg, call, show)
}

locate_nan_inf <- function(x, arg, call, show, frame_cols = NULL) {
  bad <- is.nan(x) | is.infinite(x)
  n_nan <- sum(is.nan(x))
  n_inf <- sum(bad) - n_nan
  dm <- dim(x)
  if (length(dm) >= 2) {
    at <- which(bad, arr.ind = TRUE)
    at <- at[do.call(order, unname(as.data.frame(at))), , drop = FALSE]  # first by row (sequence), then on
    last <- dimnames(x)[[length(dm)]]
    where <- apply(at[seq_len(min(show, nrow(at))), , drop = FALSE], 1, function(i) {
      j <- i[length(i)]
      idx <- c(i[-length(i)], if (is.null(last) || !nzchar(last[j])) j else sprintf("\"%s\"", last[j]))
      sprintf("%s[%s] is %s", arg, paste(idx, collapse = ", "), format(x[matrix(i, 1)]))
    })
  } else {
    i <- which(bad)
    where <- sprintf("%s[%d] is %s", arg, i[seq_len(min(show, length(i)))], format(x[i[seq_len(min(show, length(i)))]]))
  }
  counts <- paste(c(if (n_nan) sprintf("%d NaN", n_nan), if (n_inf) sprintf("%d Inf", n_inf)), collapse = " and ")
  fix <- if (!is.null(frame_cols)) {
    col <- frame_cols[1]
    ref <- if (make.names(col) == col) sprintf("%s$%s", arg, col) else sprintf("%s[[\"%s\"]]", arg, col)
    sprintf("%s[!is.finite(%s)] <- NA%s", ref, ref, if (length(frame_cols) > 1) " (and so for each such column)" else "")
  } else if (n_inf) {
    sprintf("%s[!is.finite(%s)] <- NA", arg, arg)
  } else {
    sprintf("%s[is.nan(%s)] <- NA", arg, arg)
  }
  one <- n_nan + n_inf == 1
  more <- n_nan + n_inf > length(where)
  abort_input(arg, sprintf(paste("has %s %s (%s%s%s). NA is the one marker of a missing value;",
                                 "if %s missing, set %s to NA first: %s."),
                           counts, if (one) "value" else "values", if (more) "the first: " else "",
                           paste(where, collapse = ", "), if (more) ", ..." else "",
                           if (one) "it means" else "they mean", if (one) "it" else "them", fix),
              call = call)
}

# CPU threads for the core: the number given, else the process's thread
# budget (thread_budget(), threads.R).
resolve_threads <- function(threads, arg = "threads", call = rlang::caller_env()) {
  if (!is.null(threads)) return(check_count(threads, arg = arg, call = call))
  thread_budget(apply = TRUE)
}

# A C++ seed: the one given, or one drawn from R's RNG so that set.seed()
# makes every result repeatable.
resolve_seed <- function(seed, arg = "seed", call = rlang::caller_env()) {
  if (is.null(seed)) return(as.numeric(sample.int(.Machine$integer.max, 1)))
  if (!is.numeric(seed) || length(seed) != 1 || !is.finite(seed) || seed < 0 || seed != round(seed)) {
    abort_input(arg, "must be NULL or a single non-negative whole number.", call = call)
  }
  as.numeric(seed)
}

# options(ditimpute.max_memory = bytes): the core's memory guard (0 or unset:
# half the physical memory).
memory_limit_option <- function() {
  v <- getOption("ditimpute.max_memory", 0)
  if (!is.numeric(v) || length(v) != 1 || is.na(v) || v < 0) {
    abort_input("ditimpute.max_memory", "the option must be a single non-negative number of bytes.")
  }
  as.numeric(v)
}

# The core's memory guard for an allocation R is about to make: an input error
# naming `arg` and the size when it would exceed the limit.
check_memory <- function(bytes, arg, what, call = rlang::caller_env()) {
  core_call(cpp_check_memory(as.numeric(bytes), arg, what), call = call)
  invisible(TRUE)
}

# Rejects arguments passed through `...` that the function does not use, so a
# misspelled argument (`conf.level =`, `nsamples =`, `Method =`) is an input
# error instead of being swallowed while the default runs. `env` is the
# calling function's environment; `valid` the names it does accept (by
# default its own formal arguments); `fn` its name for the message. The
# closest valid name is suggested when one is near (utils::adist). `also`:
# names accepted beside the function's own (and ignored).
check_dots <- function(env, fn, valid = NULL, call = env, also = NULL) {
  n <- eval(quote(...length()), env)
  if (n == 0L) return(invisible(NULL))
  if (is.null(valid)) valid <- names(formals(sys.function(sys.parent())))
  valid <- c(valid, also)
  valid <- setdiff(valid, "...")
  given <- names(eval(quote(substitute(list(...))), env))[-1]
  if (is.null(given)) given <- rep("", n)
  if (any(given == "")) {
    abort_input("...", sprintf("%s got %d unnamed argument%s it has no place for; name every argument after the first ones.",
                               fn, sum(given == ""), if (sum(given == "") == 1) "" else "s"), call = call)
  }
  bad <- given[!given %in% valid][1]
  if (is.na(bad)) return(invisible(NULL))
  hint <- closest_name(bad, valid)
  abort_input(bad, sprintf("is not an argument of %s%s", fn,
                           if (is.null(hint)) "." else sprintf("; did you mean `%s`?", hint)), call = call)
}

# The valid name closest to a misspelled one, or NULL when none is near: an
# edit distance (case ignored) of at most a third of the name (at least 2),
# or a valid name of 4 or more letters contained in it (`conf.level`).
closest_name <- function(name, valid) {
  if (!length(valid)) return(NULL)
  # Names one method calls by another's name: impute() takes the sampler as
  # `sampler` for a GP and as `method` for a DiT.
  synonyms <- c(sampler = "method", method = "sampler")
  if (name %in% names(synonyms) && synonyms[[name]] %in% valid) return(synonyms[[name]])
  d <- drop(utils::adist(tolower(name), tolower(valid)))
  inside <- nchar(valid) >= 4 & vapply(tolower(valid), grepl, TRUE, x = tolower(name), fixed = TRUE)
  near <- d <= max(2, floor(nchar(name) / 3)) | inside
  if (!any(near)) return(NULL)
  valid[near][order(d[near], -nchar(valid[near]))[1]]
}

# What print.default() and methods::show() pass on to the print method of
# each element they print (print(list(imp, cov), digits = 3), show(imp)), and
# the usual arguments of print methods: accepted, and ignored, by every
# print() method here, so that only unknown names are errors.
print_dots <- c("digits", "quote", "na.print", "print.gap", "right", "max", "width", "useSource", "useS4",
                "zero.print", "justify", "signif.stars", "row.names")

# logLik() methods: stats' REML argument is accepted as FALSE (AIC() and
# friends may pass it) and refused as TRUE: every fit here is by maximum
# likelihood.
check_loglik_dots <- function(env) {
  check_dots(env, "logLik()", valid = names(formals(sys.function(sys.parent()))), also = "REML", call = env)
  reml <- eval(quote(list(...)), env)$REML
  if (!is.null(reml) && !identical(reml, FALSE)) {
    abort_input("REML", "must be FALSE: the fits are by maximum likelihood (there is no REML likelihood).", call = env)
  }
}

# Text entries as numbers, NA where not one. as.numeric() also reads
# hexadecimal ("0x1A" is 26): a code or a corrupt entry, not a reading.
text_numbers <- function(s) {
  v <- suppressWarnings(as.numeric(s))
  v[grepl("^[+-]?0[xX]", trimws(s))] <- NA
  v
}
