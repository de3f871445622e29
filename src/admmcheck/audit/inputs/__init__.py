"""What an audit is given: the mechanism and neighbour contract (:mod:`.contract`), how its outputs are read and
encoded (:mod:`.outputs`), neighbours from data files (:mod:`.datafiles`) and neighbourhoods searched around a
dataset (:mod:`.neighbourhoods`). Depends on nothing else of the audit engine."""
