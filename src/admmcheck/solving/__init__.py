"""Solving: the CVXPY oracle with its certificate, the local solver of each node's step, the noise samplers,
the penalty schedules, the one shared :class:`~admmcheck.solving.runs.Run` type and the process pool that runs
independent trial blocks. Built on :mod:`admmcheck.problems`; knows no published algorithm."""
