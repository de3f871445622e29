"""Issue 5 acceptance: the minimal γ of R-ADMM (26)-(27) for ring, path, star and complete
graphs with N in {4, 5, 6}, η = 1/2, M_i = 1/4, and R-ADMM runs just above it."""

from __future__ import annotations

from fractions import Fraction as F

import networkx as nx
import numpy as np
import pytest

from admmcheck.algorithms import run_radmm
from admmcheck.conditions.certificates import verify_certificate
from admmcheck.conditions.constants import local_constants
from admmcheck.conditions.gamma_search import UniformWitness, minimal_gamma, verify_uniform_witness
from admmcheck.conditions.graph import exact_graph
from admmcheck.conditions.radmm import RadmmSetting, condition_24, condition_25
from admmcheck.problems.datasets import make_problem, synthetic
from admmcheck.problems.networks import network_by_name
from admmcheck.solving.oracle import centralized_optimum

GRAPHS = [(kind, n) for kind in ("ring", "path", "star", "complete") for n in (4, 5, 6)]
ETA, LIPSCHITZ = F(1, 2), F(1, 4)


def _float_margin(network, gamma: float) -> float:
    """min over (26), (27) of λ_min of the symmetric part, built independently in floats."""
    eta, m = 0.5, 0.25
    a, deg = network.adjacency.astype(float), network.degrees.astype(float)
    n = len(deg)
    d, lap, sig = np.diag(deg), np.diag(deg) - a, np.diag(deg) + a
    dt_inv = np.diag(1 / (2 * eta * deg + gamma))
    sigma = min(2 * eta * deg + gamma)
    m26 = np.eye(n) + eta * sig @ dt_inv - 2 / sigma / eta * m**2 * np.linalg.pinv(lap)
    m27 = eta * sig - 2 * eta**2 * sig @ dt_inv @ d - 2 / sigma * m**2 * np.eye(n)
    return min(np.linalg.eigvalsh((x + x.T) / 2)[0] for x in (m26, m27))


def _float_threshold(network) -> float | None:
    grid = np.linspace(0, 10, 2001)
    ok = [g for g in grid if _float_margin(network, g) > 0]
    if not ok:
        return None
    lo, hi = (grid[grid < ok[0]][-1] if ok[0] > 0 else 0.0), ok[0]
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _float_margin(network, mid) > 0 else (mid, hi)
    return hi


@pytest.mark.parametrize("kind,n", GRAPHS)
def test_minimal_gamma_for_the_twelve_graphs(kind, n):
    network = network_by_name(kind, n)
    setting = RadmmSetting(exact_graph(network), ETA, (LIPSCHITZ,))
    search = minimal_gamma(setting)
    expected = _float_threshold(network)
    if nx.is_bipartite(network.to_networkx()):
        # x in Null(D + A) makes the form of (27) equal -(2/σ_min) xᵀ D_M x < 0 for every γ
        assert search.interval is None and expected is None
        witness = search.no_gamma_certificate
        assert isinstance(witness, UniformWitness) and witness.condition == "(27)"
        assert verify_uniform_witness(witness, lambda g: condition_25(setting, g))
        return
    lo, hi = search.interval
    assert hi - lo <= F(1, 10**6)
    assert float(lo) - 1e-9 <= expected <= float(hi) + 1e-9
    assert any(not c.holds for c in search.fails_at_lo.values())
    for name, cert in search.fails_at_lo.items():
        assert verify_certificate(cert, (condition_24 if name == "(26)" else condition_25)(setting, lo))
    assert verify_certificate(search.holds_at_hi["(26)"], condition_24(setting, hi))
    assert verify_certificate(search.holds_at_hi["(27)"], condition_25(setting, hi))


@pytest.fixture(scope="module")
def data():
    return synthetic(250, 10, seed=0)


@pytest.mark.parametrize("kind,n", [("ring", 5), ("complete", 4), ("complete", 5), ("complete", 6)])
def test_radmm_converges_just_above_the_minimal_gamma(data, kind, n):
    problem = make_problem(data, n, C=1.0, rho=0.5, seed=0)
    # M_i = 1/4 must be a valid Lipschitz constant of grad O(., D_i) for this data
    assert max(local_constants(problem).lipschitz) <= LIPSCHITZ
    network = network_by_name(kind, n)
    _, hi = minimal_gamma(RadmmSetting(exact_graph(network), ETA, (LIPSCHITZ,))).interval
    gamma = float(hi + F(1, 1000))
    run = run_radmm(problem, network, eta=float(ETA), gamma=gamma, iterations=400, seeds=0,
                    reference=centralized_optimum(problem))
    assert abs(run.objective_gap[0, -1]) <= 1e-6
    assert run.consensus_error[0, -1] <= 1e-3


class _StepBudget:
    """A Budget that runs out after ``steps`` checks of ``expired()`` (deterministic, no clock)."""

    def __init__(self, steps: int) -> None:
        from admmcheck.foundations.progress import Budget

        self._inner, self.left = Budget(), steps

    def expired(self) -> bool:
        self.left -= 1
        return self.left < 0

    def steps(self, items, description, total=None):
        return iter(items)


@pytest.mark.parametrize("bisection_steps", [0, 3, 10])
def test_a_time_budget_keeps_the_best_certified_bracket(bisection_steps):
    setting = RadmmSetting(exact_graph(network_by_name("ring", 5)), ETA, (LIPSCHITZ,) * 5)
    full = minimal_gamma(setting)
    cut = minimal_gamma(setting, budget=_StepBudget(len(full.gap_samples) + bisection_steps))
    assert full.complete and not cut.complete
    lo, hi = cut.interval
    assert lo <= full.interval[0] and full.interval[1] <= hi and hi - lo > full.interval[1] - full.interval[0]
    for name, cert in cut.holds_at_hi.items():  # still certified: fails at lo, holds at hi
        build = condition_24 if name == "(26)" else condition_25
        assert cert.holds and verify_certificate(cert, build(setting, hi, 2, 2))
    assert cut.fails_at_lo and all(
        not c.holds and verify_certificate(c, (condition_24 if k == "(26)" else condition_25)(setting, lo, 2, 2))
        for k, c in cut.fails_at_lo.items())
    assert cut.as_dict()["complete"] is False


def test_a_budget_spent_before_any_gamma_holds_claims_nothing():
    setting = RadmmSetting(exact_graph(network_by_name("ring", 5)), ETA, (LIPSCHITZ,) * 5)
    cut = minimal_gamma(setting, budget=_StepBudget(0))
    assert cut.interval is None and not cut.complete
    assert "no_gamma_certificate" not in cut.as_dict()  # running out is not a proof that none exists


def test_cli_max_time_exits_4_with_the_partial_result(capsys):
    from admmcheck.cli import main
    from admmcheck.foundations.results import EXIT_INCOMPLETE

    code = main(["conditions", "radmm", "--graph", "ring:7", "--lipschitz", "1/4", "--find-gamma",
                 "--max-time", "1e-9", "--json"])
    out = __import__("json").loads(capsys.readouterr().out)
    assert code == EXIT_INCOMPLETE and out["status"] == "incomplete" and out["complete"] is False
    code = main(["conditions", "radmm", "--graph", "ring:7", "--lipschitz", "1/4", "--find-gamma",
                 "--max-time", "1e-9"])
    assert code == EXIT_INCOMPLETE and "time budget ran out" in capsys.readouterr().out


def test_long_horizons_stop_at_the_budget_and_say_how_far_they_got():
    from admmcheck.conditions.madmm import MadmmSetting, theorem_31_checks

    setting = MadmmSetting(exact_graph(network_by_name("ring", 5)), F(1, 2), (F(1, 2),), (F(101, 100),),
                           (F(1, 10),), (F(1, 4),))
    checks = theorem_31_checks(setting, 50, budget=_StepBudget(7))
    stopped = [c for c in checks if "stopped" in c.details]
    assert stopped and all(c.holds is None for c in stopped)
    assert stopped[0].details["checked_t"][1] < 49


def test_progress_is_shown_on_stderr_for_the_gamma_search(capsys):
    from admmcheck.cli import main

    assert main(["conditions", "radmm", "--graph", "complete:4", "--lipschitz", "1/4", "--find-gamma"]) == 0
    captured = capsys.readouterr()
    assert "gamma search: bisection" in captured.err
    assert "minimal gamma: in [1/8," in captured.out


def test_determinants_over_the_polynomial_ring_equal_sympys_generic_ones():
    import sympy

    from admmcheck.conditions.gamma_search import _cleared_symmetric, polynomial_determinant
    from admmcheck.conditions.radmm import GAMMA

    for kind, n in (("ring", 5), ("star", 4), ("complete", 4), ("path", 5)):
        setting = RadmmSetting(exact_graph(network_by_name(kind, n)), ETA, (LIPSCHITZ,) * n)
        for build in (condition_24, condition_25):
            cleared, _ = _cleared_symmetric(build(setting, GAMMA, 2, 2))
            assert polynomial_determinant(cleared) == sympy.Poly(cleared.det(method="berkowitz"), GAMMA)
