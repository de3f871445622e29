"""admmcheck inside a researcher's own test suite: assertions that fail with what the toolkit found and how to
reproduce it.

* :func:`assert_private`: the black-box audit (:func:`admmcheck.audit.audit`) of a mechanism on neighbouring
  datasets against its claimed (ε, δ); a violation raises :class:`PrivacyViolation` (an :class:`AssertionError`)
  with the deciding event, the bound and the one-line ``admmcheck audit`` command that reproduces it. By registered
  name (``assert_private("my-variant", setting)``) it audits the spec's mechanism against the spec's claim.
* :func:`assert_converges`: a run against the centralized CVXPY optimum.
* :func:`assert_conditions_hold`: a convergence theorem's conditions, decided exactly; the failure names each
  condition not shown to hold, with its certificate.

Under the pytest plugin (:mod:`admmcheck.pytest_plugin`) a statistical assertion runs in a test marked
``@pytest.mark.admmcheck``: the session's confidence is shared among those tests (Bonferroni: each gets
``(1 - confidence) / K`` of the error), each assertion's seed follows from the session seed and the test's id (the
same under ``pytest-xdist``), and every assertion's result, statistical or not, is recorded with its replay command
(terminal summary, JUnit XML properties, JSON). Outside pytest the assertions take ``confidence`` (default 0.95) and
``seed`` (default 0) as given.

A mechanism is a module-level function (the audit's workers import it by file and name, so one defined in the test
module itself works), a ``FILE.py:NAME`` or ``module:NAME`` text, or a registered name; its neighbours a
module-level function returning :class:`~admmcheck.audit.Pair`, such a text, or a ``Pair`` of arrays.
"""

from __future__ import annotations

import contextvars
import hashlib
import inspect
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable

from admmcheck.foundations.errors import InvalidConfiguration
from admmcheck.foundations.parameters import as_flags

#: samples per side of an assertion that gives none, by profile (the verification profiles' audit samples)
PROFILE_SAMPLES = {"smoke": 2_000, "quick": 20_000, "full": 200_000}


class PrivacyViolation(AssertionError):
    """A mechanism's claimed (ε, δ) is violated with statistical evidence: ``result`` is the audit's result
    (:class:`~admmcheck.audit.result.AuditResult`, or for a registered mechanism its
    :class:`~admmcheck.commands.audit.MechanismAuditResult`), ``command`` the ``admmcheck audit`` command line that
    reproduces the verdict."""

    def __init__(self, message: str, result: Any, command: str):
        super().__init__(message)
        self.result, self.command = result, command


@dataclass
class Session:
    """What the pytest plugin gives the statistical assertions of one marked test: its ``test_id``, the share of the
    error budget of each of its statistical assertions (``error_share``; the test may make ``assertions`` of them),
    the session ``seed`` and the ``profile``."""

    test_id: str
    error_share: float
    assertions: int
    seed: int
    profile: str
    made: int = field(default=0)

    def next_assertion(self) -> int:
        """The index of the statistical assertion about to run, refusing one beyond the test's declared count."""
        if self.made >= self.assertions:
            raise InvalidConfiguration(f"{self.test_id} makes more than the {self.assertions} statistical "
                                       f"assertion(s) it declares; mark it @pytest.mark.admmcheck(assertions="
                                       f"{self.made + 1}) or more")
        self.made += 1
        return self.made - 1


#: the session of the test now running (set by the pytest plugin; None outside it)
CURRENT: contextvars.ContextVar[Session | None] = contextvars.ContextVar("admmcheck_session", default=None)


def derived_seed(session_seed: int, test_id: str, index: int) -> int:
    """The seed of assertion ``index`` of test ``test_id``: a function of the session seed and the test's id alone,
    so that it is the same in any process and order (``pytest-xdist``)."""
    digest = hashlib.sha256(f"{session_seed}\0{test_id}\0{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _decision(confidence: float | None, seed: int | None, samples: int | None) -> tuple[float, int, int, float | None]:
    """(confidence, seed, samples, the budget share) of the assertion about to run."""
    session = CURRENT.get()
    if session is None and "admmcheck.pytest_plugin" in sys.modules and os.environ.get("PYTEST_CURRENT_TEST"):
        test = os.environ["PYTEST_CURRENT_TEST"].rpartition(" (")[0]
        raise InvalidConfiguration(f"{test} makes a statistical assertion but is not marked: mark it "
                                   "@pytest.mark.admmcheck (or @pytest.mark.admmcheck(assertions=N) for N of them) "
                                   "so that the session's error budget counts it (or run pytest -p no:admmcheck to "
                                   "give each assertion its own confidence)")
    if session is None:
        return (0.95 if confidence is None else confidence, 0 if seed is None else seed,
                PROFILE_SAMPLES["quick"] if samples is None else samples, None)
    index = session.next_assertion()
    share = session.error_share / session.assertions
    return (1 - share if confidence is None else confidence,
            derived_seed(session.seed, session.test_id, index) if seed is None else seed,
            PROFILE_SAMPLES[session.profile] if samples is None else samples, share)


def _spec_of(thing: Any, role: str) -> str | None:
    """``FILE.py:NAME`` of a module-level function (the workers import it so), the text itself, or None."""
    if isinstance(thing, str):
        return thing
    if inspect.isfunction(thing):
        if thing.__qualname__ != thing.__name__:
            raise InvalidConfiguration(f"{role} {thing.__qualname__} is defined inside a function or class: the "
                                       "audit's worker processes import it by file and name; define it at module "
                                       "level", parameter=role)
        source = inspect.getsourcefile(thing)
        if source is None:
            raise InvalidConfiguration(f"{role} {thing.__name__} has no source file to import it from; define it in "
                                       "a module", parameter=role)
        return f"{Path(source).resolve()}:{thing.__name__}"
    return None


def _plugin_value(name: str) -> Any:
    """The pytest plugin's context value ``name`` for the test now running (None outside pytest, or where the
    plugin is not loaded); read without importing the plugin."""
    plugin = sys.modules.get("admmcheck.pytest_plugin")
    return getattr(plugin, name).get() if plugin is not None else None


def _record(record: dict[str, object]) -> None:
    """Give ``record`` (one assertion's result: its ``kind``, ``verdict``, ``line`` in words, replay ``command``
    and JUnit ``properties``) to the pytest plugin's recorder of the running test, if there is one."""
    recorder = _plugin_value("RECORDER")
    if recorder is not None:
        recorder(record)


def _this_test() -> str | None:
    """The ``pytest NODEID`` command that reruns the test now running (None outside pytest): the replay of an
    assertion on the user's own objects, which no admmcheck command can rebuild."""
    running = os.environ.get("PYTEST_CURRENT_TEST")
    return shlex.join(["pytest", running.rpartition(" (")[0]]) if running else None


def _pair_file(pair: Any) -> str:
    """A ``Pair`` of arrays saved where the replay command can read it (``--neighbors PAIR.npz``), named by its
    content (the same pair, the same name, on any machine): under the pytest plugin's ``--admmcheck-pairs``
    folder, else ``.admmcheck/pairs`` of the working folder; the path given relative to the run's root (pytest's
    root, else the working folder) when it lies inside."""
    import numpy as np

    d0, d1 = np.ascontiguousarray(pair.d0), np.ascontiguousarray(pair.d1)
    digest = hashlib.sha256()
    for array in (d0, d1):
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    folder, root = _plugin_value("PAIRS") or (Path(".admmcheck/pairs").resolve(), Path.cwd())
    path = Path(folder) / f"pair-{digest.hexdigest()[:16]}.npz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as stream:  # np.savez(path) would add .npz to a name that has it
            np.savez(stream, d0=d0, d1=d1)
    try:
        return str(path.resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(path)


#: ``where`` of a registered mechanism's assertion: the place its spec names first (``first_place``)
FIRST_PLACE = "first place"


def assert_private(mechanism: Any, neighbours: Any = None, epsilon: float | None = None, delta: float = 0.0, *,
                   claim: Any = None, samples: int | None = None, confidence: float | None = None,
                   seed: int | None = None, sequential: bool | None = None, workers: int | None = None,
                   where: Any = FIRST_PLACE) -> Any:
    """Audit ``mechanism`` on ``neighbours`` against the claim (``epsilon``, ``delta``), or against ``claim``, a value
    of any DP notion (:mod:`admmcheck.claims`: ``GaussianDp(mu)``, ``ZeroConcentratedDp(rho)``, ``ApproxDp``, ...),
    tested in its own notion; raise :class:`PrivacyViolation` when the samples establish, with the stated
    confidence, that the claim is violated.
    With a registered ``mechanism`` name, ``neighbours`` is its family's setting (None: the audit's defaults), the
    claim is the spec's own (``epsilon`` only for a mechanism without a theorem), and the pair changes the data at
    ``where`` (default: the place the spec names first; None: where the neighbour search finds it, slower).
    ``sequential`` draws in growing looks and stops as soon as a violation is established (an anytime-valid test),
    else at ``samples``; by default, sequential for an (ε, δ) claim (the sequential test's), fixed-n for any other.
    Returns the audit's result (:class:`~admmcheck.audit.result.AuditResult`; for a registered mechanism its
    :class:`~admmcheck.commands.audit.MechanismAuditResult`, whose ``result`` is the black box's), also recorded
    under the pytest plugin."""
    from admmcheck.claims import ApproxDp

    registered = isinstance(mechanism, str) and ":" not in mechanism
    if registered and claim is not None:
        raise InvalidConfiguration(f"claim: {mechanism} is audited against its own claim; leave claim out",
                                   parameter="claim")
    claimed = None if registered else _claim_of(epsilon, delta, claim)  # refused before it counts as an assertion
    confidence, seed, samples, share = _decision(confidence, seed, samples)
    if registered:
        found, command = _audit_registered(mechanism, neighbours, epsilon, samples, confidence, seed, sequential,
                                           workers, where)
        black = found.result
    else:
        found, command = _audit_code(mechanism, neighbours, claimed, samples, confidence, seed, sequential, workers)
        black = found
    claim = black.claim
    approx = isinstance(claim, ApproxDp)
    record = {"kind": "private", "mechanism": mechanism if registered else (black.mechanism or str(mechanism)),
              "claim": claim.describe(), "claim_source": claim.source,
              "claimed_epsilon": claim.epsilon if approx else None, "claimed_delta": claim.delta if approx else None,
              "epsilon_lower_bound": black.epsilon_lower_bound, "bounded": claim.parameter,
              "lower_bound": black.claim_lower_bound, "samples": black.samples,
              "samples_used": black.selection_samples[0] + black.bounding_samples[0], "seed": seed,
              "confidence": confidence, "budget_share": share, "verdict": black.verdict, "command": command,
              "bound_is_strict": black.strict}
    record["line"] = _audit_line(record)
    record["properties"] = {"epsilon_lower_bound": record["epsilon_lower_bound"], "samples": record["samples_used"],
                            "seed": seed, "budget_share": share, "verdict": record["verdict"]}
    _record(record)
    if black.verdict == "violation":
        n = black.counted or black.bounding_samples
        raise PrivacyViolation(
            f"{record['mechanism']} violates its claim ({claim.claimed().removeprefix('claimed ')}): "
            f"{claim.parameter} {'>' if black.strict else '>='} {black.claim_lower_bound:.4f} with confidence "
            f"{confidence:.6g}\n  event: {black.event}\n  P[event | d0] = {black.counts[0]}/{n[0]}, P[event | d1] = "
            f"{black.counts[1]}/{n[1]}\n  replay (seed {seed}): {command}", found, command)
    return found


def _audit_line(record: dict[str, Any]) -> str:
    """One audit's result in words, as the terminal summary shows it."""
    share = "as given" if record["budget_share"] is None else f"{record['budget_share']:.3g}"
    claimed = f"{record['claimed_epsilon']:g}" if record["claimed_epsilon"] is not None else record["claim"]
    return (f"[{record['mechanism']}]: {record['bounded']} {'>' if record['bound_is_strict'] else '>='} "
            f"{record['lower_bound']:.4f} (claim {claimed}), n = {record['samples_used']}/{record['samples']}, "
            f"seed {record['seed']}, error share {share}")


def _claim_of(epsilon: float | None, delta: float, claim: Any) -> Any:
    """The claim an assertion tests: ``claim``, or (``epsilon``, ``delta``)-DP; refuses both and neither."""
    from admmcheck.claims import ApproxDp, Claim

    if claim is not None:
        if epsilon is not None or delta:
            raise InvalidConfiguration("epsilon and delta given with claim: give the claim one way (claim=ApproxDp("
                                       "epsilon, delta), or epsilon= and delta= alone)", parameter="claim")
        if not isinstance(claim, Claim):
            raise InvalidConfiguration(f"claim={claim!r}: give a value of admmcheck.claims (PureDp, ApproxDp, "
                                       "ZeroConcentratedDp, GaussianDp, DpCurve)", parameter="claim")
        return claim
    if epsilon is None:
        raise InvalidConfiguration("epsilon is required: the epsilon the mechanism claims (or claim=, a claim of any "
                                   "DP notion)", parameter="epsilon")
    return ApproxDp(epsilon, delta)


def _claim_flags(claim: Any) -> list[str] | None:
    """The ``admmcheck audit code`` flags that state ``claim``: its parameters, each a flag of that command
    (``--epsilon``/``--delta``, ``--mu``, ``--rho``); None where one has no flag (a curve's points)."""
    from admmcheck.commands.audit import CodeAuditConfig

    given, offered = claim.fields(), {item.name for item in fields(CodeAuditConfig)}
    if not set(given) <= offered:
        return None
    return [word for name, value in given.items() for word in (f"--{name}", repr(float(value)))]


def _audit_code(mechanism: Any, neighbours: Any, claim: Any, samples: int, confidence: float, seed: int,
                sequential: bool | None, workers: int | None) -> tuple[Any, str | None]:
    from admmcheck.audit import AuditSettings, Source, audit
    from admmcheck.claims import ApproxDp

    if sequential is None:
        sequential = isinstance(claim, ApproxDp)
    mechanism_spec = _spec_of(mechanism, "mechanism")
    if mechanism_spec is None:
        raise InvalidConfiguration("mechanism: give a module-level function, FILE.py:NAME or module:NAME, or a "
                                   "registered name", parameter="mechanism")
    neighbours_spec = _spec_of(neighbours, "neighbours")
    source = Source(spec=neighbours_spec) if neighbours_spec is not None else Source(obj=neighbours)
    if neighbours_spec is None and not hasattr(neighbours, "d0"):
        raise InvalidConfiguration("neighbours: give a module-level function returning admmcheck.audit.Pair, "
                                   "FILE.py:NAME, or a Pair of arrays", parameter="neighbours")
    settings = AuditSettings(samples=samples, confidence=confidence, seed=seed, sequential=sequential,
                             workers=workers)
    result = audit(Source(spec=mechanism_spec), source, claim, settings)
    flags = _claim_flags(claim)
    if flags is None or (neighbours_spec is None and result.verdict != "violation"):
        return result, None  # a Pair of arrays is saved for the replay of a violation only; a curve has no flags
    pair = neighbours_spec if neighbours_spec is not None else _pair_file(neighbours)
    command = shlex.join(["admmcheck", "audit", "code", "--mechanism", mechanism_spec, "--neighbors", pair,
                          *flags, "--samples", str(samples),
                          "--confidence", repr(confidence), "--seed", str(seed)]
                         + (["--sequential"] if sequential else []) + ["--json"])
    return result, command


def _audit_registered(name: str, setting: Any, epsilon: float | None, samples: int, confidence: float, seed: int,
                      sequential: bool | None, workers: int | None, where: Any) -> tuple[Any, str]:
    from admmcheck.commands.audit import MechanismAudit, run_mechanism_audit
    from admmcheck.mechanisms.registry import REGISTRY

    spec = REGISTRY.mechanism(name)
    defaults = spec.setting_type.defaults("audit")
    setting = replace(setting if setting is not None else defaults, seed=seed)
    if epsilon is not None:
        if spec.supports("claim"):
            raise InvalidConfiguration(f"epsilon: {name} is audited against its own claim ({spec.theorem}); leave "
                                       "epsilon out", parameter="epsilon")
        setting = replace(setting, epsilon=epsilon)
    if sequential is None:  # the sequential test's claims are (epsilon, delta)
        from admmcheck.claims import ApproxDp

        sequential = isinstance(spec.claim_value(setting), ApproxDp)
    settings = spec.audit.but(samples=samples, confidence=confidence, seed=seed, sequential=sequential,
                              workers=workers)
    place = []
    if where is FIRST_PLACE:  # its own first place, or its family's
        where = spec.first_place[0]
    if where is not None:
        place = [spec.first_place[1].split()[0], ":".join(map(str, where)) if isinstance(where, tuple) else str(where)]
    result = run_mechanism_audit(MechanismAudit(name, setting, where=where, settings=settings))
    command = shlex.join(["admmcheck", "audit", name, *as_flags(setting, defaults, skip=("seed",)), *place, "--samples", str(samples), "--confidence",
                          repr(confidence), "--seed", str(seed)] + (["--sequential"] if sequential else [])
                         + ["--json"])
    return result, command


def assert_converges(algorithm: Any, setting: Any = None, *, problem: Any = None, network: Any = None,
                     iterations: int = 500, tolerance: float = 1e-6, seed: int = 0, reference: Any = None,
                     **arguments: object) -> float:
    """Assert that a run reaches the CVXPY optimum: its final relative objective gap abs(F(x) − F*) / abs(F*) is at most
    ``tolerance``. Returns the gap. ``algorithm`` is

    * a registered name, run on its family's ``setting`` (default ``admmcheck run``'s);
    * a ``run_*`` function of admmcheck's form, run on ``problem`` over ``network`` with ``arguments``, from
      ``seed``, against ``reference`` (an :class:`~admmcheck.solving.oracle.Optimum` of ``problem``; None: solved here);
    * your own optimiser, any function: ``algorithm(**arguments)`` returns its final point (``iterations`` and
      ``seed`` are passed too where its signature takes them), and ``reference`` is a ``cvxpy.Problem`` of one
      variable written on your data, whose optimum CVXPY finds; the point is put in that variable to evaluate F(x)
      and the constraints, each of which it must meet within ``tolerance``."""
    if _is_cvxpy_problem(reference):
        taken = inspect.signature(algorithm).parameters
        own = {name: value for name, value in (("iterations", iterations), ("seed", seed)) if name in taken}
        return _reaches(algorithm, reference, tolerance, own | arguments)
    if isinstance(algorithm, str):
        from admmcheck.mechanisms.registry import REGISTRY

        spec = REGISTRY[algorithm]
        if not spec.family.has_optimum:
            raise InvalidConfiguration(f"{algorithm} is of the {spec.family} family, whose runs are measured by their "
                                       "regret, not against an optimum; assert_converges runs algorithms of the "
                                       "families with one (consensus, sharing) by name", parameter="algorithm")
        defaults = spec.setting_type.defaults("run")
        setting = setting if setting is not None else replace(defaults, iterations=iterations)
        gap = abs(float(spec.family.run(spec, setting).objective_gap))
        where = replay = shlex.join(["admmcheck", "run", algorithm, *as_flags(setting, defaults), "--json"])
    else:
        from admmcheck.solving.oracle import centralized_optimum

        if problem is None or network is None:
            raise InvalidConfiguration("problem and network are required with a run function", parameter="problem")
        reference = centralized_optimum(problem) if reference is None else reference
        run = algorithm(problem, network, iterations=iterations, seeds=[seed], reference=reference, **arguments)
        gap = abs(float(run.objective_gap[0, -1]))
        where = f"{getattr(algorithm, '__name__', algorithm)} ({iterations} iterations, seed {seed})"
        replay = _this_test()
    _record_convergence(algorithm if isinstance(algorithm, str) else where, gap, tolerance, replay)
    if not gap <= tolerance:
        raise AssertionError(f"{where} does not reach the CVXPY optimum: relative objective gap {gap:.3e} > "
                             f"{tolerance:.0e}" + (f"\n  replay: {replay}" if replay and replay != where else ""))
    return gap


def _record_convergence(subject: str, gap: float, tolerance: float, command: str | None,
                        violation: float | None = None) -> None:
    """Record one convergence assertion (its gap, the constraints' largest violation where it has constraints)."""
    reached = gap <= tolerance and (violation is None or violation <= tolerance)
    figures = f"relative objective gap {gap:.3e}" + ("" if violation is None else
                                                      f", largest constraint violation {violation:.3e}")
    _record({"kind": "converges", "subject": subject, "verdict": "pass" if reached else "fail",
             "objective_gap": gap, "tolerance": tolerance, "constraint_violation": violation, "command": command,
             "line": f"[{subject}]: {figures} ({'<=' if reached else 'above'} tolerance {tolerance:.0e})",
             "properties": {"verdict": "pass" if reached else "fail", "objective_gap": gap,
                            "command": command or ""}})


def _is_cvxpy_problem(value: Any) -> bool:
    if value is None or "cvxpy" not in sys.modules:  # a CVXPY problem means cvxpy is imported already
        return False
    import cvxpy

    return isinstance(value, cvxpy.Problem)


def _reaches(optimiser: Callable[..., Any], problem: Any, tolerance: float, arguments: dict[str, object]) -> float:
    """:func:`assert_converges` of a user's own ``optimiser`` against a CVXPY ``problem`` of one variable."""
    import numpy as np

    variables = problem.variables()
    if len(variables) != 1:
        raise InvalidConfiguration(f"reference has {len(variables)} variables; write it with one, the point your "
                                   "optimiser returns (stack several into one vector)", parameter="reference")
    variable = variables[0]
    problem.solve()
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise InvalidConfiguration(f"CVXPY could not solve the reference (status {problem.status}); give a problem "
                                   "with an optimum", parameter="reference")
    best, solver = float(problem.value), problem.solver_stats.solver_name
    point = np.asarray(optimiser(**arguments), dtype=float)
    if point.shape != variable.shape:
        raise InvalidConfiguration(f"{_name(optimiser)} returned a point of shape {point.shape}; the reference's "
                                   f"variable has shape {variable.shape}", parameter="algorithm")
    variable.value = point
    value = float(problem.objective.value)
    violation = max((float(np.max(c.violation())) for c in problem.constraints), default=0.0)
    gap = abs(value - best) / max(abs(best), 1e-300)
    where = f"{_name(optimiser)}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
    replay = _this_test()
    _record_convergence(where, gap, tolerance, replay, violation)
    if not (gap <= tolerance and violation <= tolerance):
        raise AssertionError(f"{where} does not reach the CVXPY optimum: relative objective gap {gap:.3e} "
                             f"(F(x) = {value:.10g}, F* = {best:.10g} by {solver}), largest constraint violation "
                             f"{violation:.3e}; tolerance {tolerance:.0e}" + (f"\n  replay: {replay}" if replay else ""))
    return gap


def _name(function: Any) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


def _witness(certificate: dict[str, Any] | None) -> str:
    """A refuting certificate in words: the vector x with xᵀMx below (or at) zero."""
    if not certificate or "witness" not in certificate:
        return ""
    witness = certificate["witness"]
    return f"; certificate: x = [{', '.join(witness['vector'])}] gives x^T M x = {witness['value']}"


def assert_conditions_hold(algorithm: Any, *, strict: bool = True, **setting: object) -> Any:
    """Assert that convergence conditions hold, decided exactly; the failure names each condition refuted or not
    decided, with its certificate. Returns the result.

    * ``algorithm`` a registered name: its theorem's conditions on ``setting``, the fields of its conditions'
      setting (e.g. ``graph="ring:5", lipschitz=("1/4",)``). A field given as text is read as its flag reads it
      (``eta="1/2"`` is one value, ``eta="1/2,1/3"`` one per node), any other value as it is: a rational is an int,
      a :class:`fractions.Fraction`, a float (its exact binary value) or text such as ``"1/5"``; a per-node field
      takes one value or one per node.
    * ``algorithm`` a mapping of names to your own condition matrices (``{"M(t) > 0": M}``): each matrix positive
      definite (``strict``) or semidefinite on its quadratic form, decided over the rationals with an LDLᵀ
      factorisation or a refuting vector (:func:`admmcheck.conditions.certificates.decide_positive`); entries as
      above.

    Returns the :class:`~admmcheck.mechanisms.conditions.ConditionsResult` (``status``, ``as_dict()`` the report)."""
    if isinstance(algorithm, Mapping):
        return _own_conditions_hold(algorithm, strict, setting)
    from admmcheck.mechanisms.registry import REGISTRY

    conditions = REGISTRY[algorithm].require("conditions")
    known = {item.name: item for item in fields(conditions.setting_type)}
    read = {name: known[name].metadata["read"](value) if isinstance(value, str) and name in known
            and known[name].metadata.get("read") else value for name, value in setting.items()}
    typed = conditions.setting_type(**read)
    result = conditions.decide(typed)
    replay = shlex.join(["admmcheck", "conditions", algorithm, *as_flags(typed), "--json"])
    _record_conditions(f"{algorithm}: {conditions.theorem}", result.status, replay)
    if result.status != "pass":
        report = result.as_dict()
        failed = [check for check in report.get("conditions", [])
                  if check.get("holds") is not True] or [
                      {"name": name, **check} for name, check in report.get("checks", {}).items()
                      if check.get("holds") is not True]
        lines = [f"  {check['name']}: {'refuted' if check.get('holds') is False else 'not decided'}"
                 + _witness(check.get("certificate")) for check in failed]
        raise AssertionError(f"{conditions.theorem} does not hold ({result.status}):\n" + "\n".join(lines)
                             + f"\n  replay: {replay}")
    return result


def _own_conditions_hold(matrices: Mapping[str, Any], strict: bool, setting: Mapping[str, object]) -> Any:
    """:func:`assert_conditions_hold` on a user's own condition matrices."""
    from admmcheck.conditions.checks import matrix_check

    if setting:
        raise InvalidConfiguration(f"{', '.join(setting)}: a setting goes with a registered name; your own matrices "
                                   "are decided as they are", parameter=next(iter(setting)))
    if not matrices:
        raise InvalidConfiguration("no condition matrices: give {name: matrix, ...}", parameter="algorithm")
    kind = "positive definite" if strict else "positive semidefinite"
    checks = {name: matrix_check(str(name), f"{name} is {kind}", _square(name, matrix), strict=strict)
              for name, matrix in matrices.items()}
    from admmcheck.mechanisms.conditions import ConditionsResult

    status = "pass" if all(c.holds for c in checks.values()) else "fail"
    result = ConditionsResult({"status": status, "conditions": [check.as_dict() for check in checks.values()]},
                              tuple(f"  {'holds' if c.holds else 'FAILS':<6} {name}: {c.statement}"
                                    for name, c in checks.items()), status)
    failed = [check.as_dict() for check in checks.values() if check.holds is not True]
    replay = _this_test()
    _record_conditions(f"{len(checks)} condition matri{'x' if len(checks) == 1 else 'ces'} {kind}", status, replay)
    if failed:
        lines = [f"  {check['name']}: refuted{_witness(check['certificate'])}" for check in failed]
        raise AssertionError(f"{len(failed)} of {len(checks)} condition(s) not {kind}:\n" + "\n".join(lines)
                             + (f"\n  replay: {replay}" if replay else ""))
    return result


def _record_conditions(subject: str, status: str, command: str | None) -> None:
    """Record one conditions assertion: pass, fail or incomplete (exact: no budget share)."""
    _record({"kind": "conditions", "subject": subject, "verdict": status, "command": command,
             "line": f"[{subject}]: decided exactly, {status}",
             "properties": {"verdict": status, "command": command or ""}})


def _square(name: object, matrix: Any) -> Any:
    """``matrix`` as a sympy matrix of exact rationals, refused unless it is square."""
    import sympy

    from admmcheck.conditions.certificates import to_fraction

    rows = [list(row) for row in (matrix.tolist() if hasattr(matrix, "tolist") else matrix)]
    if not rows or any(len(row) != len(rows) for row in rows):
        raise InvalidConfiguration(f"{name}: a condition matrix is square, e.g. [[2, 1], [1, 2]]; got "
                                   f"{len(rows)} row(s) of {sorted({len(row) for row in rows})} entries",
                                   parameter="algorithm")
    return sympy.Matrix([[sympy.Rational(to_fraction(v).numerator, to_fraction(v).denominator) for v in row]
                         for row in rows])
