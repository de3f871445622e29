"""What each ``admmcheck`` command does, on typed settings: plain data in, results out.

One module per command family: :mod:`~admmcheck.commands.consensus` (run, bound, experiment on
the consensus problem), :mod:`~admmcheck.commands.sharing`, :mod:`~admmcheck.commands.online`,
:mod:`~admmcheck.commands.conditions`, :mod:`~admmcheck.commands.audit` (black box),
:mod:`~admmcheck.commands.white_box` and :mod:`~admmcheck.commands.attack`. Nothing here parses
arguments or prints: that is :mod:`admmcheck.cli`.
"""
