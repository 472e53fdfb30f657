# Frame-major values of the missing entries of one H x d matrix (the order of
# the package's samples and conditional means).
missing_values_of <- function(m, miss) t(m)[t(miss)]
