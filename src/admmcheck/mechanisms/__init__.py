"""Our private mechanisms as auditable objects: what each releases, its neighbours, and where
the noise law is known its exact privacy loss and worst case.

:mod:`~admmcheck.mechanisms.consensus` (PP, DVP, PVP, private R-ADMM; replace-one neighbours),
:mod:`~admmcheck.mechanisms.privacy_loss` and :mod:`~admmcheck.mechanisms.worst_case` (their
exact loss), :mod:`~admmcheck.mechanisms.kkt_attack` (the Appendix E attack on PP),
:mod:`~admmcheck.mechanisms.sharing` (DP ADMM sharing) and :mod:`~admmcheck.mechanisms.dpsda`
(DPSDA-C/PS). The audit engine (:mod:`admmcheck.audit`) knows none of them.
"""
