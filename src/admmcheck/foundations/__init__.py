"""The foundations every layer may use: the error hierarchy, the safe formula grammar, checked inputs and
outputs (strict JSON, atomic writes), progress and time budgets, argument validation and the parameter
fields the command line is generated from. Nothing here knows an algorithm, a claim or an audit."""
