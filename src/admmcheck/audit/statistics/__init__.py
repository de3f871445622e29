"""What an audit concludes from its samples: the intervals (:mod:`.estimators`, :mod:`.additive`), the
distinguishing events (:mod:`.events`), the (ε, δ) curve (:mod:`.curve`), counting blocks against events
(:mod:`.counting`) and the distribution of a white box's losses (:mod:`.loss_profile`). Reads the inputs' types;
runs no code under audit."""
