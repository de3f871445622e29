"""The exception hierarchy of admmcheck.

Every error raised on bad input is an :class:`AdmmcheckError`; its message names the
offending argument, the bad value and what to pass instead.
"""

from __future__ import annotations


class AdmmcheckError(Exception):
    """Base class of every error admmcheck raises on purpose.

    ``parameter``, where given, is the name of the offending parameter as the library spells it,
    and the message starts with it (``samples=10 must be ...``, ``out /tmp/x is a file, ...``), so
    that a front end can say it in its own words (the CLI: ``--samples 10 must be ...``)."""

    def __init__(self, message: str, parameter: str | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter


class InvalidProblem(AdmmcheckError, ValueError):
    """The ERM problem (data, labels, constants) violates what the papers assume."""


class InvalidNetwork(AdmmcheckError, ValueError):
    """The graph is not a connected, simple, undirected network."""


class InvalidDataset(AdmmcheckError, ValueError):
    """A dataset file or a partition request cannot be used."""


class InvalidConfiguration(AdmmcheckError, ValueError):
    """Algorithm parameters (penalties, step sizes, iterations, seeds) are invalid; ``parameter``
    (see :class:`AdmmcheckError`) names the offending one where there is one."""


class InvalidFormula(InvalidConfiguration):
    """A number or schedule formula cannot be read, or has a non-finite or non-positive value."""


class OutputError(AdmmcheckError, OSError):
    """An output file or folder cannot be written (missing folder, a file in the way, no permission)."""


class MechanismError(AdmmcheckError, RuntimeError):
    """A mechanism under audit raised, hung, returned NaN/inf, changed its output shape, or
    gave different outputs for the same seed; the message says which and how to reproduce it."""


class SolverError(AdmmcheckError, RuntimeError):
    """A numerical solver failed or returned an inaccurate status."""


class PreconditionError(AdmmcheckError, ValueError):
    """A theorem's bound was requested where its preconditions do not hold."""


class TheoremConditionWarning(UserWarning):
    """A run goes ahead outside the conditions of the theorem that guarantees it (named in the message)."""


class UnseededRandomness(UserWarning):
    """A mechanism under audit draws randomness admmcheck cannot seed: the audit goes on with
    independent but unreproducible samples (the message says so)."""
