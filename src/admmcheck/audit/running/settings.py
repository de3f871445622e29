"""How an audit draws and decides: one :class:`AuditSettings`, validated here and nowhere else.

Every audit uses it: :func:`~admmcheck.audit.auditor.audit` from Python, ``admmcheck audit code``
for third-party code, and the audits of our own mechanisms (whose registry entries hold their
default settings). Errors name the parameter (``samples``), not a command-line flag; the CLI
translates them to its flags.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from admmcheck.audit.running.limits import MAX_OUTPUT_MIB, MIN_MEMORY_MIB, WorkerLimits, default_memory_mib
from admmcheck.audit.running.sandbox import LEVELS
from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.formulas import parse_number
from admmcheck.foundations.parameters import parameter
from admmcheck.foundations.validation import non_negative_int, positive_int, real

#: Samples per side below this leave too few for the selection and the bounding split.
MIN_SAMPLES = 200
RANDOMNESS_MODES = ("auto", "seeded", "unseeded")


@dataclass(frozen=True)
class AuditSettings:
    """``samples`` per side (at least :data:`MIN_SAMPLES`); the lower bound holds with probability
    ``confidence``; ``seed`` drives every sample; ``workers`` local processes (default: every core)
    or, with ``scheduler`` (``tcp://HOST:8786``), Dask tasks; ``timeout`` seconds per mechanism call;
    ``max_time`` seconds of drawing before the bound is taken on what was drawn; ``checkpoint`` a
    file that stores finished blocks; ``randomness`` auto, seeded or unseeded
    (:func:`~admmcheck.audit.running.sampling.judge_randomness`); ``exceptions_are_outputs``: a call that
    raises releases its exception type instead of stopping the audit; ``sequential``: draw in growing
    looks and stop as soon as a violation is established (an anytime-valid test by betting,
    :mod:`admmcheck.audit.sequential`), or when ``samples`` per side are spent. Each worker runs under limits
    (:mod:`admmcheck.audit.running.limits`): ``memory_limit`` MiB of memory (default: half the machine's, shared out among
    the workers) and ``max_output`` MiB per output, in the ``sandbox`` (:mod:`admmcheck.audit.running.sandbox`)."""

    samples: int = parameter(100_000, "samples per side", read=int)
    confidence: float = parameter(0.95, "confidence of the lower bound", read=parse_number)
    seed: int = parameter(0, "seed of every sample (a registered mechanism's: and of its data)", read=int)
    workers: int | None = parameter(None, "worker processes (default: every core; with --scheduler, the cluster's "
                                    "threads)", read=int)
    timeout: float = parameter(10.0, "seconds one mechanism call may take", "s", read=parse_number)
    max_time: float | None = parameter(None, "stop drawing after this many seconds and bound what was drawn", "s",
                                       read=parse_number)
    checkpoint: str | None = parameter(None, "store finished blocks here; rerun the same command to resume")
    scheduler: str | None = parameter(None, "draw the blocks on the Dask cluster at this address (tcp://HOST:8786); "
                                      'needs pip install "admmcheck[dask]"')
    randomness: str = parameter("auto", "seeded: outputs must be functions of the sample's seed (same seed, same "
                                "result); unseeded: the mechanism draws its own randomness (secrets, os.urandom), "
                                "samples are independent but not reproducible, never probed; auto: probe, and go on "
                                "unseeded with a warning if the same seed gives different outputs",
                                choices=RANDOMNESS_MODES, commands=("code",))  # our own mechanisms are seeded
    exceptions_are_outputs: bool = parameter(False, "a call that raises releases the exception's type (an output "
                                             "like any other) instead of stopping the audit", commands=("code",))
    sequential: bool = parameter(False, "draw in growing looks and stop as soon as a violation is established (an "
                                 "anytime-valid test by betting), else at --samples; the JSON gives the samples used")
    memory_limit: float | None = parameter(None, "memory each worker process may allocate (default: half the "
                                           "machine's memory shared out among the workers); past it an allocation "
                                           "fails and the audit stops", "MiB", read=parse_number)
    max_output: float = parameter(MAX_OUTPUT_MIB, "what one output may take as float64 numbers", "MiB",
                                  read=parse_number)
    sandbox: str = parameter("auto", "run the code in a sandbox (bubblewrap: no network, a read-only filesystem, "
                             "private /tmp and home folders, its own processes): on refuses to audit where it cannot "
                             "run, auto uses it where it can and says which isolation ran, off runs the code "
                             "unsandboxed", choices=LEVELS)

    def __post_init__(self) -> None:
        if positive_int("samples", self.samples) < MIN_SAMPLES:
            raise InvalidConfiguration(f"samples={self.samples!r} must be an integer >= {MIN_SAMPLES} per side", parameter="samples")
        if isinstance(self.confidence, bool) or not isinstance(self.confidence, (int, float)) \
                or not 0.5 <= self.confidence < 1:
            raise InvalidConfiguration(f"confidence={self.confidence!r} must lie in [0.5, 1)", parameter="confidence")
        non_negative_int("seed", self.seed)
        if self.workers is not None:
            positive_int("workers", self.workers)
        real("timeout", self.timeout)
        if self.max_time is not None:
            real("max_time", self.max_time)
        if not isinstance(self.sequential, bool):
            raise InvalidConfiguration(f"sequential={self.sequential!r} must be True or False", parameter="sequential")
        if self.sequential and self.checkpoint is not None:
            raise InvalidConfiguration(
                "sequential and checkpoint both given: a sequential audit re-chooses its events and bets from every "
                "earlier sample and stops as soon as the evidence suffices, which a checkpoint of finished blocks "
                "does not resume; leave out one of them", parameter="sequential")
        if self.memory_limit is not None and real("memory_limit", self.memory_limit) < MIN_MEMORY_MIB:
            raise InvalidConfiguration(f"memory_limit={self.memory_limit!r} MiB is too little for a worker to start "
                                       f"(Python and numpy); give at least {MIN_MEMORY_MIB:g}", parameter="memory_limit")
        real("max_output", self.max_output)
        if self.sandbox not in LEVELS:
            raise InvalidConfiguration(f"sandbox={self.sandbox!r}: choose one of {', '.join(LEVELS)}",
                                       parameter="sandbox")
        if self.randomness not in RANDOMNESS_MODES:
            raise InvalidConfiguration(f"randomness={self.randomness!r}: choose one of {', '.join(RANDOMNESS_MODES)}",
                                       parameter="randomness")

    def worker_limits(self, workers: int | None) -> WorkerLimits:
        """The limits of each of ``workers`` local workers (None: workers elsewhere, each of which takes its own
        machine's share where no ``memory_limit`` is given)."""
        memory = self.memory_limit
        if memory is None and workers is not None:
            memory = default_memory_mib(workers)
        return WorkerLimits(float(self.timeout), memory, float(self.max_output), self.sandbox)

    def but(self, **changes: object) -> "AuditSettings":
        """These settings with ``changes`` (field names of :class:`AuditSettings`), validated again."""
        unknown = sorted(set(changes) - set(FIELDS))
        if unknown:
            raise InvalidConfiguration(f"{', '.join(unknown)}: not an audit setting; the settings are "
                                       f"{', '.join(FIELDS)}", parameter=unknown[0])
        return replace(self, **changes)


FIELDS = tuple(f.name for f in fields(AuditSettings))


@dataclass(frozen=True)
class SearchSettings:
    """The search's budget: at most ``candidates`` candidate pairs, ``samples`` screening samples per
    side for each, and the ``keep`` best pairs audited."""

    candidates: int = parameter(100, "neighbour search: candidate pairs screened at most (a seeded subset when "
                                "there are more)", read=int, flag="--search-candidates")
    samples: int = parameter(2_000, "neighbour search: screening samples per side for each candidate (drawn apart "
                             "from the audit's)", read=int, flag="--search-samples")
    keep: int = parameter(1, "neighbour search: the best-screened pairs bounded on fresh samples (1 - confidence is "
                          "shared among them only)", read=int, flag="--search-keep")

    def __post_init__(self) -> None:
        positive_int("candidates", self.candidates)
        positive_int("samples", self.samples)
        positive_int("keep", self.keep)

    def but(self, **changes: object) -> "SearchSettings":
        """This budget with ``changes``, validated again; a bad value is said with its flag (``--search-samples``)."""
        try:
            return replace(self, **changes)
        except InvalidConfiguration as exc:
            raise InvalidConfiguration(f"--search-{exc.parameter} {str(exc).partition('=')[2]}") from None
