"""Hypothesis profiles: ``ci`` (default, fast) and ``thorough`` (HYPOTHESIS_PROFILE=thorough)."""

from __future__ import annotations

import os

# One OpenMP/BLAS thread per process (inherited by the audit workers): see tests/conftest.py.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from hypothesis import HealthCheck, settings  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1)  # for thread pools a plugin may have started before this file ran

settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
