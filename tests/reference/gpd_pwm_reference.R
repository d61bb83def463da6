# Reference values for tests/stats/test_evt.py, computed independently in R.
#
#   Rscript tests/reference/gpd_pwm_reference.R
#
# Needs R and fExtremes (Debian: apt-get install r-cran-fextremes; run with R 4.2.2,
# fExtremes 4021.83).  Prints every number to 17 significant digits.
#
# What fExtremes computes: gpdFit(x, u, type = "pwm") calls fExtremes:::.gpdpwmFit(x, u), which
# takes excess = x[x > u] - u and uses the plotting positions pvec = ((1:Nu) + gamma)/(Nu + delta)
# with gamma = -0.35, delta = 0, i.e. p_k = (k - 0.35)/n -- the same as evir::gpd(method = "pwm")
# and METHOD.md section 2.  Note that .gpdpwmFit multiplies sort(excess) by (1 - pvec) but takes
# a0 = mean(excess) unsorted (harmless, a mean).  Its parametrisation is G = 1 - (1 + xi x/beta)^(-1/xi),
# the same as qar_sql.evt.  So "plotting" below is checked against fExtremes itself, and the
# "unbiased" variant (not in fExtremes) against the plain formulas.

suppressMessages(library(fExtremes))

f17 <- function(v) sprintf("%.17g", v)

pwm_plain <- function(x, method = c("plotting", "unbiased")) {
  method <- match.arg(method)
  x <- sort(x)
  n <- length(x)
  a0 <- mean(x)
  if (method == "plotting") {
    p <- ((1:n) - 0.35) / n
    a1 <- mean((1 - p) * x)
  } else {
    b1 <- mean(((1:n) - 1) / (n - 1) * x)
    a1 <- a0 - b1
  }
  c(xi = 2 - a0 / (a0 - 2 * a1), beta = 2 * a0 * a1 / (a0 - 2 * a1))
}

# ---- 1. PWM fits on fixed vectors -----------------------------------------------------------
vectors <- list(
  hand = c(1, 2, 3),
  gamma12 = c(0.3809, 0.0224, 0.5902, 0.3078, 0.377, 0.2484, 0.4332, 1.5444, 1.5725, 0.0923,
              0.7642, 0.3815),
  # GPD(xi = 0.2, beta = 0.5) quantiles at k/41, k = 1..40 (the same formula in the test)
  gpdq40 = 0.5 / 0.2 * ((1 - (1:40) / 41)^(-0.2) - 1),
  single = c(0.7)
)
cat("# PWM fits: name, xi and beta from fExtremes::gpdFit(x, u = 0, type = 'pwm'),",
    "then plain-R plotting and unbiased formulas\n")
for (name in names(vectors)) {
  x <- vectors[[name]]
  fit <- gpdFit(x, u = 0, type = "pwm")@fit$par.ests
  pl <- pwm_plain(x, "plotting")
  stopifnot(isTRUE(all.equal(unname(fit), unname(pl), tolerance = 1e-14)))
  cat(name, "fExtremes", f17(fit["xi"]), f17(fit["beta"]), "\n")
  if (length(x) >= 2) {
    ub <- pwm_plain(x, "unbiased")
    cat(name, "unbiased ", f17(ub["xi"]), f17(ub["beta"]), "\n")
  }
}

# ---- 2. The full estimator T-hat of METHOD.md section 2 on a fixed theta vector --------------
# theta = H / M, M = 1000 records, N_p = 84 QIs; two keys (H = 1000) and some ties.
H <- c(512, 252, 541, 989, 336, 1000, 961, 839, 302, 321, 182, 182, 787, 795, 221, 553, 104,
       932, 406, 666, 327, 258, 766, 542, 926, 696, 847, 791, 372, 340, 105, 800, 265, 463, 800,
       850, 438, 620, 590, 222, 1000, 929, 606, 668, 296, 196, 535, 919, 348, 897, 318, 394, 371,
       885, 502, 333, 882, 711, 492, 129, 929, 929, 929, 348, 988, 920, 486, 214, 304, 281, 852,
       505, 925, 981, 276, 577, 862, 133, 451, 536, 604, 527, 377, 145)
M <- 1000
theta <- H / M
logit <- function(p) log(p / (1 - p))
expit <- function(y) 1 / (1 + exp(-y))

qar <- function(theta, M, alpha, pi_u, method) {
  t <- pmin(pmax(theta, 0.5 / M), 1 - 0.5 / M)
  u <- unname(quantile(t, 1 - pi_u, type = 8))
  l <- logit(t[t > u]) - logit(u)
  est <- pwm_plain(l, method)
  if (method == "plotting") {  # cross-check the fit against fExtremes
    fit <- gpdFit(l, u = 0, type = "pwm")@fit$par.ests
    stopifnot(isTRUE(all.equal(unname(fit), unname(est), tolerance = 1e-14)))
  }
  xi <- unname(est["xi"]); beta <- unname(est["beta"])
  risk <- expit(logit(u) + beta / xi * ((alpha / pi_u)^(-xi) - 1))
  c(risk = risk, u = u, n = length(l), xi = xi, beta = beta)
}

cat("# T-hat: vector alpha pi_u pwm -> risk u n xi beta",
    "('keys' = theta above; 'nokeys' = theta without the two keys, N_p = 82)\n")
cases <- list(list(0.01, 0.05, "plotting"), list(0.001, 0.05, "plotting"),
              list(0.01, 0.2, "plotting"), list(0.01, 0.2, "unbiased"))
thetas <- list(keys = theta, nokeys = theta[H < M])
for (tn in names(thetas)) {
  for (cs in cases) {
    r <- qar(thetas[[tn]], M, cs[[1]], cs[[2]], cs[[3]])
    cat("qar", tn, cs[[1]], cs[[2]], cs[[3]], f17(r["risk"]), f17(r["u"]), r["n"], f17(r["xi"]),
        f17(r["beta"]), "\n")
  }
}
