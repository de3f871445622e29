"""What the auditor audits: a mechanism, neighbouring datasets and a privacy claim.

* A **mechanism** is any callable ``mechanism(data, rng) -> array | Mapping[str, array]``
  returning everything an observer sees. A mapping is flattened in sorted-key order; the
  flat layout (:class:`Layout`) is reported with the result. A mechanism may carry a
  vectorised form as the attribute ``batch``: ``mechanism.batch(data, rng, n) -> (n, k)``
  (see :func:`vectorised`); the sampler uses it when present.
* **Neighbours** are a zero-argument callable returning one pair ``(d0, d1)`` or an
  iterable of pairs.
* A **claim** is :class:`PrivacyClaim` ``(epsilon, delta)``.

Mechanisms and neighbours given as text (``FILE.py:NAME`` or ``module:NAME``) are loaded
by :func:`load_callable` *inside the sampling worker processes only*: third-party code
never runs in the main process.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from admmcheck.errors import InvalidConfiguration, MechanismError


@dataclass(frozen=True)
class PrivacyClaim:
    """The (epsilon, delta)-DP guarantee a mechanism claims for what it releases."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) or not (
            math.isfinite(self.epsilon) and self.epsilon >= 0
        ):
            raise InvalidConfiguration(f"--epsilon {self.epsilon!r} must be a finite number >= 0")
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)) or not 0 <= self.delta < 1:
            raise InvalidConfiguration(f"--delta {self.delta!r} must lie in [0, 1)")


@dataclass(frozen=True)
class Layout:
    """Where each released quantity sits in the flat output vector: (name, shape) in order."""

    parts: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def size(self) -> int:
        """Length k of the flat output."""
        return int(sum(math.prod(shape) for _, shape in self.parts))

    def describe(self, index: int) -> str:
        """The name of flat coordinate ``index``, e.g. ``primal[3, 1]`` or ``x[0]``."""
        offset = 0
        for name, shape in self.parts:
            size = math.prod(shape)
            if index < offset + size:
                position = np.unravel_index(index - offset, shape) if shape else ()
                return f"{name}[{', '.join(str(int(p)) for p in position)}]" if shape else name
            offset += size
        raise IndexError(index)

    def as_dict(self) -> list[dict[str, object]]:
        return [{"name": name, "shape": list(shape)} for name, shape in self.parts]


def flatten_output(output: object) -> tuple[np.ndarray, Layout]:
    """A mechanism's output as a flat float64 vector and its layout (mappings in sorted-key order)."""
    if isinstance(output, Mapping):
        keys = sorted(output, key=str)
        arrays = [np.asarray(output[key], dtype=np.float64) for key in keys]
        layout = Layout(tuple((str(key), array.shape) for key, array in zip(keys, arrays)))
        flat = np.concatenate([array.ravel() for array in arrays]) if arrays else np.empty(0)
        return flat, layout
    array = np.asarray(output, dtype=np.float64)
    return array.ravel(), Layout((("output", array.shape),))


def vectorised(batch: Callable[[Any, np.random.Generator, int], np.ndarray]):
    """Decorator: attach ``batch(data, rng, n) -> (n, k)`` to a per-call mechanism."""
    def attach(mechanism):
        mechanism.batch = batch
        return mechanism
    return attach


def neighbour_pairs(produced: object) -> list[tuple[Any, Any]]:
    """Normalise what a neighbours callable returned to a list of (d0, d1) pairs."""
    if isinstance(produced, tuple) and len(produced) == 2 and not _is_pair(produced[0]):
        return [produced]
    try:
        pairs = list(produced)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidConfiguration("--neighbors must return a pair (d0, d1) or an iterable of pairs") from None
    if not pairs or not all(_is_pair(p) for p in pairs):
        raise InvalidConfiguration("--neighbors must return a pair (d0, d1) or an iterable of such pairs")
    return [tuple(p) for p in pairs]


def _is_pair(value: object) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2


def load_callable(spec: str) -> Callable:
    """Import ``FILE.py:NAME`` or ``module:NAME`` and return NAME. Runs the module's code:
    call this in a worker process for code under audit, never in the main process."""
    path, colon, name = spec.rpartition(":")
    if not colon or not path or not name.isidentifier():
        raise InvalidConfiguration(f"{spec!r}: write FILE.py:NAME or module:NAME")
    if path.endswith(".py"):
        file = Path(path)
        if not file.is_file():
            raise InvalidConfiguration(f"{spec!r}: the file {file} does not exist")
        module_name = f"_admmcheck_audited_{abs(hash(str(file.resolve())))}"
        loader_spec = importlib.util.spec_from_file_location(module_name, file)
        if loader_spec is None or loader_spec.loader is None:
            raise InvalidConfiguration(f"{spec!r}: cannot load {file} as Python")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            raise MechanismError(f"{spec!r}: importing {file} failed: {type(exc).__name__}: {exc}") from None
    else:
        try:
            module = importlib.import_module(path)
        except Exception as exc:
            raise InvalidConfiguration(f"{spec!r}: cannot import {path}: {type(exc).__name__}: {exc}") from None
    target = getattr(module, name, None)
    if not callable(target):
        raise InvalidConfiguration(f"{spec!r}: {path} has no callable named {name}")
    return target


class BatchedRunMechanism:
    """An auditable mechanism made of one of our batched algorithms: subclasses give
    ``batch_run(data, seeds) -> Run`` and ``released(run) -> (n, ...)`` (what the observer sees);
    ``batch`` spawns one seed per sample from ``rng``, and a single call is a batch of one."""

    def batch_run(self, data: Any, seeds: Any) -> Any:
        raise NotImplementedError

    def released(self, run: Any) -> np.ndarray:
        raise NotImplementedError

    def batch(self, data: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        """(n, k): what n independent runs release, flattened per sample."""
        seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(n)
        return self.released(self.batch_run(data, seeds)).reshape(n, -1)

    def __call__(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        return self.batch(data, rng, 1)[0]
