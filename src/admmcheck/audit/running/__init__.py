"""Running the code under audit, never in the main process: worker processes (:mod:`.worker`,
:mod:`.worker_process`) under a supervisor (:mod:`.supervisor`) with limits (:mod:`.limits`), a shared progress
record (:mod:`.progress`) and a checked protocol (:mod:`.channel`); loading Python and Octave code (:mod:`.loading`,
:mod:`.octave`); drawing blocks of samples on them or on Dask (:mod:`.sampling`, :mod:`.dask_executor`); and the
settings of a run (:mod:`.settings`). Kept light: a worker imports only what it needs."""
