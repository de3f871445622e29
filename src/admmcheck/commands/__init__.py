"""What each ``admmcheck`` command does, on typed settings (:mod:`admmcheck.mechanisms.settings`): plain data in,
results out.

One module per command: :mod:`~admmcheck.commands.consensus` (the papers' experiments on the consensus problem),
:mod:`~admmcheck.commands.audit` (one audit pipeline for every registered mechanism, black and white box, and the
audit of third-party code), :mod:`~admmcheck.commands.attack` and :mod:`~admmcheck.commands.verify` (the whole
verification). What ``run`` and ``bound`` do is each family's (:mod:`admmcheck.mechanisms.families`). Convergence
conditions are a capability of each algorithm's spec
(:mod:`admmcheck.mechanisms.conditions`). Nothing here parses arguments or prints: that is :mod:`admmcheck.cli`.
"""
