"""The papers' experiments and convergence checks: the figures of the M-ADMM and R-ADMM papers
(:mod:`~admmcheck.experiments.figures`), the ADMM-sharing paper's (:mod:`~admmcheck.experiments.sharing`) and the
convergence and equivalence checks of the non-private reference algorithms
(:mod:`~admmcheck.experiments.convergence`). The claims layer, with :mod:`admmcheck.privacy` and
:mod:`admmcheck.conditions`."""
