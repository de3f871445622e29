"""The foundations every layer may use: the error hierarchy, the safe formula grammar, checked inputs and
outputs (strict JSON, atomic writes), progress and time budgets, argument validation, the parameter fields the
command line's flags are generated from (:mod:`~admmcheck.foundations.flags`), and the types every command's result
(:mod:`~admmcheck.foundations.results`) and the report's figures (:mod:`~admmcheck.foundations.figures`) share.
Nothing here knows an algorithm, a claim or an audit."""
