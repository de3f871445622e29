"""Code under audit, named as text, loaded: ``FILE.py:NAME`` and ``module:NAME`` imported,
``FILE.m:FUNCTION`` started in GNU Octave, data files read. Used by the sampling worker processes
only: third-party code never runs in the main process."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from admmcheck.audit.inputs.datafiles import is_data_file, read_pair
from admmcheck.audit.running.octave import OctaveMechanism, OctaveNeighbours
from admmcheck.foundations.errors import InvalidConfiguration, MechanismError


def load_callable(spec: str, role: str = "mechanism") -> Callable:
    """Import ``FILE.py:NAME`` or ``module:NAME`` and return NAME, or start ``FILE.m:FUNCTION`` in
    GNU Octave (:mod:`admmcheck.audit.running.octave`; ``role`` "mechanism" or "neighbours" says how it is
    called). Runs the code: call this in a worker process for code under audit, never in the main
    process. With ``role`` "neighbours", data files (``D0.csv,D1.csv``, ``PAIR.npz``) are read
    into their :class:`Pair` (:mod:`admmcheck.audit.inputs.datafiles`)."""
    if role == "neighbours":
        if is_data_file(spec):
            return read_pair(spec)
    path, colon, name = spec.rpartition(":")
    if not colon or not path or not name.isidentifier():
        raise InvalidConfiguration(f"{spec!r}: write FILE.py:NAME, module:NAME or FILE.m:FUNCTION")
    if path.endswith(".m"):
        return OctaveNeighbours(spec) if role == "neighbours" else OctaveMechanism(spec)
    if path.endswith(".py"):
        file = Path(path)
        if not file.is_file():
            raise InvalidConfiguration(f"{spec!r}: the file {file} does not exist")
        module_name = f"_admmcheck_audited_{abs(hash(str(file.resolve())))}"
        module = sys.modules.get(module_name)  # the mechanism and its neighbours in one file: imported once, as
        if module is None:                     # import would, so that their objects pickle as the same classes
            loader_spec = importlib.util.spec_from_file_location(module_name, file)
            if loader_spec is None or loader_spec.loader is None:
                raise InvalidConfiguration(f"{spec!r}: cannot load {file} as Python")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[module_name] = module
            try:
                loader_spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[module_name]
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


def as_mechanism(target: Callable, name: str) -> Callable:
    """``target`` as admmcheck calls a mechanism, ``mechanism(data, rng)``. Code that takes the data alone
    (``release(data)``, drawing from numpy's or Python's global generators, which every sample seeds) is called
    with the data alone, and code whose second parameter is scikit-learn's ``random_state`` (which refuses a
    Generator) gets ``numpy.random.RandomState(rng.bit_generator)``, drawing from the sample's own stream: decided
    from its signature, not by trying, so a TypeError raised inside the code is never taken for a wrong call. A
    signature that takes neither is refused; one that cannot be read (a builtin) and a vectorised mechanism
    (``target.batch``) are called as given."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return target
    if getattr(target, "batch", None) is not None:
        return target
    if _binds(signature, 2):
        second = list(signature.parameters.values())[1:2]
        if second and second[0].name == "random_state":  # scikit-learn's convention: a RandomState, an int or None
            def legacy(data: Any, rng: Any) -> Any:
                return target(data, np.random.RandomState(rng.bit_generator))
            return legacy
        return target
    if _binds(signature, 1):
        def data_only(data: Any, rng: Any) -> Any:
            return target(data)
        return data_only
    raise InvalidConfiguration(f"{name}{signature} cannot be called as mechanism(data, rng) or mechanism(data): "
                               "wrap it in a function of the data (and rng) that passes its other arguments")


def _binds(signature: inspect.Signature, count: int) -> bool:
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True
