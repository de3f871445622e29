"""What ``admmcheck audit`` runs, as plain data in and an :class:`AuditResult` out."""

from __future__ import annotations

from dataclasses import dataclass

from admmcheck.audit.auditor import AuditResult, audit
from admmcheck.audit.contract import PrivacyClaim
from admmcheck.audit.sampling import Source
from admmcheck.errors import InvalidConfiguration
from admmcheck.validation import non_negative_int, positive_int, real


@dataclass(frozen=True)
class AuditConfig:
    """A third-party audit: ``mechanism`` and ``neighbors`` are ``FILE.py:NAME`` or ``module:NAME``."""

    mechanism: str | None = None
    neighbors: str | None = None
    epsilon: float | None = None
    delta: float = 0.0
    samples: int = 100_000
    confidence: float = 0.95
    seed: int = 0
    workers: int | None = None
    timeout: float = 10.0
    max_time: float | None = None
    checkpoint: str | None = None

    def __post_init__(self) -> None:
        for flag, value in (("--mechanism", self.mechanism), ("--neighbors", self.neighbors)):
            if value is None:
                raise InvalidConfiguration(f"{flag} is required: FILE.py:NAME or module:NAME")
        if self.epsilon is None:
            raise InvalidConfiguration("--epsilon is required: the epsilon the mechanism claims")
        PrivacyClaim(self.epsilon, self.delta)
        positive_int("--samples", self.samples)
        non_negative_int("--seed", self.seed)
        if self.workers is not None:
            positive_int("--workers", self.workers)
        real("--timeout", self.timeout)
        if self.max_time is not None:
            real("--max-time", self.max_time)
        if not 0.5 <= self.confidence < 1:
            raise InvalidConfiguration(f"--confidence {self.confidence!r} must lie in [0.5, 1)")


def run_audit(config: AuditConfig, progress: bool = False) -> AuditResult:
    """Audit the mechanism of ``config`` (loaded only in worker processes)."""
    return audit(Source(spec=config.mechanism), Source(spec=config.neighbors),
                 PrivacyClaim(config.epsilon, config.delta), samples=config.samples, confidence=config.confidence,
                 seed=config.seed, workers=config.workers, timeout=config.timeout, max_time=config.max_time,
                 checkpoint=config.checkpoint, progress=progress)
