"""Reference implementations of the published algorithms, one module each."""

from admmcheck.algorithms.admm import run_admm
from admmcheck.algorithms.admm_edge import run_admm_edge
from admmcheck.algorithms.madmm import run_madmm
from admmcheck.algorithms.radmm import run_radmm

__all__ = ["run_admm", "run_admm_edge", "run_madmm", "run_radmm"]
