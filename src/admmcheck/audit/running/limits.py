"""The limits every audit worker runs under, and how the worker puts them on itself.

* **time**: each call of third-party code at most ``timeout`` seconds, enforced from outside the worker by its
  supervisor (:mod:`admmcheck.audit.running.supervisor`);
* **memory**: the worker's data segment (``RLIMIT_DATA``: heap and anonymous mappings, which is where numpy,
  Python and C code allocate) at most ``memory`` bytes, soft and hard, inherited by what it starts (its Octave).
  An allocation past it fails (Python's ``MemoryError``) instead of the kernel's out-of-memory killer choosing a
  process of the machine. Default: half the machine's memory shared out among the workers;
* **output**: one output at most ``max_output`` bytes as float64 numbers, checked before it is encoded;
* **CPU time**: a backstop under the watchdog, ``RLIMIT_CPU`` set before each block to the CPU time used so
  far plus the block's whole allowance (``timeout`` per sample) and :data:`CPU_SLACK`: a worker past it gets
  SIGXCPU;
* **open files**: :data:`OPEN_FILES` descriptors (``RLIMIT_NOFILE``, soft and hard).

The worker sets its own limits when it starts, before any third-party code is loaded; a hard limit lowered
cannot be raised again by the code under audit (only the CPU backstop's soft limit is moved, block by block).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MIB = 1 << 20
#: Descriptors a worker may hold open (its own use is about 10; GNU Octave's a few dozen).
OPEN_FILES = 1024
#: Seconds of CPU time beyond a block's allowance before the backstop's SIGXCPU.
CPU_SLACK = 60.0
#: The default output limit, MiB: a release of 8 million numbers.
MAX_OUTPUT_MIB = 64.0
#: The least memory limit that lets a worker start (Python, numpy and the sampling engine: about 100 MiB).
MIN_MEMORY_MIB = 256.0


def machine_memory() -> int:
    """Bytes of memory this machine has (physical, or the cgroup's limit where lower); 0 where unknown."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 0
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < (physical or 1 << 62):
            physical = int(text)
    return physical


def available_cores() -> int:
    """Every core this process may use (its CPU affinity where the system has one, e.g. under ``taskset`` or a
    container's cpuset): the default number of workers."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_memory_mib(workers: int) -> float:
    """Half the machine's memory shared out among ``workers`` (at least :data:`MIN_MEMORY_MIB`)."""
    total = machine_memory()
    if total <= 0:
        return 4096.0
    return max(MIN_MEMORY_MIB, total / 2 / max(workers, 1) / MIB)


@dataclass(frozen=True)
class WorkerLimits:
    """What one worker may use: ``timeout`` seconds per call, ``memory_mib`` of data segment (None: this machine's
    share, :func:`default_memory_mib` over its cores), ``max_output_mib`` per output; and the ``sandbox`` it runs in
    (auto, on or off: :mod:`admmcheck.audit.running.sandbox`)."""

    timeout: float
    memory_mib: float | None
    max_output_mib: float = MAX_OUTPUT_MIB
    sandbox: str = "auto"

    @property
    def max_output_bytes(self) -> int:
        return int(self.max_output_mib * MIB)

    def worker_settings(self) -> dict[str, float | int]:
        """What the worker needs to limit itself (:func:`apply`) and check its outputs."""
        memory = self.memory_mib if self.memory_mib is not None else default_memory_mib(available_cores())
        return {"memory": int(memory * MIB), "max_output": self.max_output_bytes}

    def most_block_bytes(self, count: int) -> int:
        """The largest answer a block of ``count`` samples can be (its outputs, their kinds, the ``.npz`` frame)."""
        return count * (self.max_output_bytes + 64) + MIB


def apply(memory: int) -> None:
    """Put the memory and open-file limits on this process (the worker, at its start)."""
    import resource

    _lower(resource, getattr(resource, "RLIMIT_DATA", resource.RLIMIT_AS), memory)
    _lower(resource, resource.RLIMIT_NOFILE, OPEN_FILES)


def _lower(resource, which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    new = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (new, new))


def cpu_backstop(seconds: float) -> None:
    """Let this process use ``seconds`` more CPU time (plus :data:`CPU_SLACK`) before SIGXCPU."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(spent + seconds + CPU_SLACK) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
