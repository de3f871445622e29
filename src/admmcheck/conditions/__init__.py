"""Exact convergence conditions of the papers, PSD certificates and lemma checks (issue 5).

* :mod:`.certificates` decides M ≻ 0 / M ⪰ 0 on the quadratic form over ℚ and re-checks
  certificates; :mod:`.intervals` encloses irrational spectral quantities exactly.
* :mod:`.radmm` (R-ADMM Thm III.1) and :mod:`.madmm` (M-ADMM Thms 3.1, 3.2) build the
  conditions and the proof claims; :mod:`.gamma_search` finds the certified minimal γ.
* :mod:`.lemmas` checks the lemmas of the privacy proofs; :mod:`.constants` computes m_i, M_i.
"""

from admmcheck.conditions.certificates import Certificate, decide_positive, verify_certificate
from admmcheck.conditions.checks import ConditionCheck
from admmcheck.conditions.gamma_search import minimal_gamma, verify_uniform_witness
from admmcheck.conditions.madmm import MadmmSetting, theorem_31_checks, theorem_32_checks
from admmcheck.conditions.radmm import RadmmSetting, radmm_conditions

__all__ = [
    "Certificate",
    "ConditionCheck",
    "MadmmSetting",
    "RadmmSetting",
    "decide_positive",
    "minimal_gamma",
    "radmm_conditions",
    "theorem_31_checks",
    "theorem_32_checks",
    "verify_certificate",
    "verify_uniform_witness",
]
