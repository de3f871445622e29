"""An audit worker process: ``python -m admmcheck.audit.running.worker SETTINGS``, started by its supervisor
(:mod:`admmcheck.audit.running.supervisor`).

Reads length-prefixed pickled messages from the driving process on a pipe of its own (``init``, ``pairs``,
``block``, ``tally``, ``count``) and writes each answer on another (:mod:`admmcheck.audit.running.channel`: a magic
number, two lengths, a JSON header and, for a block, the samples as ``.npz`` bytes, :meth:`Block.to_bytes`, no
pickle). ``tally`` gives the events a ``count`` reduces its block to (:class:`~admmcheck.audit.statistics.counting.Tally`);
that answer is the counts alone, as JSON integers. Once the mechanism was seen writing into its input dataset
(:func:`~admmcheck.audit.running.sampling.input_changed`), every header says where. SETTINGS (JSON) names the two pipes,
the shared progress record (:mod:`admmcheck.audit.running.progress`) and the limits the worker puts on itself before it
loads anything (:func:`admmcheck.audit.running.limits.apply`).

The protocol's descriptors are not the worker's stdin or stdout: stdin is the null device and stdout and stderr
are the supervisor's capture, so code that reads, prints, or closes descriptors 0 to 2 changes nothing. The
descriptors are not inherited by what the code starts, and a child of ``os.fork`` closes them. Where the worker
stops on its own (its answers cannot be written, an error outside any call), it leaves its last words in the
shared record for the fault message, and exits with :data:`EXIT_STOPPED`.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import struct
import sys

from admmcheck.audit.running import limits
from admmcheck.audit.running.channel import frame
from admmcheck.audit.running.progress import COUNTING, LOADING, OWN, SENDING, TAKEN, Progress
from admmcheck.audit.running.supervisor import die_with_parent

EXIT_STOPPED = 70


class _Channel:
    """The two protocol pipes."""

    def __init__(self, requests: int, answers: int, progress: Progress) -> None:
        self.requests, self.answers, self.progress = requests, answers, progress
        self.token = 0  # the current request's, carried by its answer (WorkerProcess.send)
        self._buffer = bytearray()

    def read(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            chunk = os.read(self.requests, max(1 << 16, size - len(self._buffer)))
            if not chunk:
                return None
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def answer(self, header: dict, body: bytes = b"") -> None:
        data = memoryview(frame({**header, "token": self.token}, body))
        self.progress.enter(SENDING)
        while data:
            data = data[os.write(self.answers, data):]


def _loaded(payload: bytes):
    """The :class:`~admmcheck.audit.statistics.counting.Tally` of ``Tally.to_bytes`` (written by the main process),
    or the exception that loading it raised (an event scored by a function this process cannot import)."""
    try:
        return pickle.loads(payload)
    except Exception as exc:
        return exc


def _counted(tally, block) -> dict:
    if isinstance(tally, Exception):
        return {"status": "error", "counting": True,
                "message": f"the worker could not load the chosen events ({type(tally).__name__}: {tally})"}
    try:
        return {"status": "ok", "counts": tally.count(block).tolist()}
    except Exception as exc:  # admmcheck's own fault (an event that cannot score these outputs), not the mechanism's
        return {"status": "error", "counting": True, "message": f"{type(exc).__name__}: {exc}"}


def serve(channel: _Channel) -> None:
    """Answer requests until the driving process closes them; each request taken up is counted in the shared
    record, and all the worker does for it is a stage its supervisor times."""
    from admmcheck.audit.running.sampling import count_pairs, input_changed, run_block, stage  # numpy, the engine

    progress = channel.progress
    setup = tally = None
    while True:
        progress.rest()
        head = channel.read(8)
        if head is None:
            return
        (size,) = struct.unpack("<Q", head)
        channel.token, message = pickle.loads(channel.read(size) or b"")  # written by the driving process, trusted
        progress.slots[TAKEN] += 1
        progress.enter(OWN)
        kind = message[0]
        if kind == "init":
            setup = message[1:]
        elif kind == "pairs":
            status, payload = count_pairs(setup[0], setup[1])
            channel.answer({"status": status, "pairs": payload[0], "identical": payload[1]} if status == "ok"
                           else {"status": status, "message": payload})
        elif kind == "tally":
            with stage(LOADING):  # the events' functions are imported as they are unpickled
                tally = _loaded(message[1])
        elif kind in ("block", "count"):
            mechanism, neighbours, seed, timeout, exceptions_are_outputs = setup[:5]
            (task,) = message[1:]
            status, payload = run_block(mechanism, neighbours, seed, timeout, task, exceptions_are_outputs)
            written = {"input_changed": input_changed()} if input_changed() else {}  # every answer after it says so
            if status != "ok":
                channel.answer({"status": status, "message": payload, **written})
            elif kind == "block":
                channel.answer({"status": "ok", **written}, payload.to_bytes())
            else:
                with stage(COUNTING):
                    counted = _counted(tally, payload)
                channel.answer({**counted, **written})


def main() -> None:
    settings = json.loads(sys.argv[1])
    die_with_parent()
    limits.apply(settings["memory"])
    progress = Progress(settings["progress"], bare=True)
    os.close(settings["progress"])
    channel = _Channel(settings["requests"], settings["answers"], progress)
    for fd in (channel.requests, channel.answers):
        os.set_inheritable(fd, False)  # not handed to what the mechanism starts
    from admmcheck.audit.running import sampling

    sampling.worker_started(progress, settings["memory"], settings["max_output"], (channel.requests, channel.answers))
    try:
        serve(channel)
    except BaseException as exc:  # noqa: BLE001 - whatever it is, it is said before the worker goes
        if isinstance(exc, OSError) and exc.errno in (errno.EBADF, errno.EPIPE):  # a protocol pipe closed or replaced
            words = (f"its protocol pipes were closed or replaced ({type(exc).__name__}: {exc}); the mechanism "
                     "closes file descriptors it does not own")
        else:
            words = f"the worker failed outside any call: {type(exc).__name__}: {exc}"
        progress.say(words)
        os._exit(EXIT_STOPPED)


if __name__ == "__main__":
    main()
