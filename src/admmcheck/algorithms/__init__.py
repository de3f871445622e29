"""Reference implementations of the published algorithms, one module each."""

from admmcheck.algorithms.admm import run_admm
from admmcheck.algorithms.admm_edge import run_admm_edge
from admmcheck.algorithms.madmm import run_madmm
from admmcheck.algorithms.pp import run_dvp, run_pp
from admmcheck.algorithms.private_radmm import run_private_radmm
from admmcheck.algorithms.pvp import run_pvp
from admmcheck.algorithms.radmm import run_radmm
from admmcheck.algorithms.sharing import run_dp_sharing, run_sharing

__all__ = [
    "run_admm", "run_admm_edge", "run_dp_sharing", "run_dvp", "run_madmm", "run_pp", "run_private_radmm", "run_pvp",
    "run_radmm", "run_sharing",
]
