"""An audit worker process: ``python -m admmcheck.audit.worker FD``.

Reads length-prefixed pickled messages from the main process on stdin (``init``,
``pairs``, ``block``, ``tally``, ``count``) and writes each answer on file descriptor FD as two lengths, a JSON
header and, for a block, the samples as ``.npz`` bytes (:meth:`Block.to_bytes`, no pickle). ``tally``
gives the events a ``count`` reduces its block to (:class:`~admmcheck.audit.counting.Tally`); that
answer is the counts alone, as JSON integers. Once the mechanism was seen writing into its input dataset
(:func:`~admmcheck.audit.sampling.input_changed`), every header says where. The mechanism's own prints go to the
null device, never into the answers.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import sys


from admmcheck.audit.sampling import count_pairs, input_changed, run_block


def _answer(stream, header: dict, body: bytes = b"") -> None:
    text = json.dumps(header).encode("utf-8")
    stream.write(struct.pack("<QQ", len(text), len(body)) + text + body)
    stream.flush()


def _loaded(payload: bytes):
    """The :class:`~admmcheck.audit.counting.Tally` of ``Tally.to_bytes`` (written by the main process),
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


def serve(requests, answers) -> None:
    """Answer requests until stdin closes."""
    setup = tally = None
    while True:
        head = requests.read(8)
        if len(head) < 8:
            return
        (size,) = struct.unpack("<Q", head)
        message = pickle.loads(requests.read(size))  # written by the main process, trusted
        kind = message[0]
        if kind == "init":
            setup = message[1:]
        elif kind == "pairs":
            status, payload = count_pairs(setup[0], setup[1])
            _answer(answers, {"status": status, "pairs": payload[0], "identical": payload[1]} if status == "ok"
                    else {"status": status, "message": payload})
        elif kind == "tally":
            tally = _loaded(message[1])
        elif kind in ("block", "count"):
            mechanism, neighbours, seed, timeout, exceptions_are_outputs = setup
            (task,) = message[1:]
            status, payload = run_block(mechanism, neighbours, seed, timeout, task, exceptions_are_outputs)
            written = {"input_changed": input_changed()} if input_changed() else {}  # every answer after it says so
            if status != "ok":
                _answer(answers, {"status": status, "message": payload, **written})
            elif kind == "block":
                _answer(answers, {"status": "ok", **written}, payload.to_bytes())
            else:
                _answer(answers, {**_counted(tally, payload), **written})


def main() -> None:
    answers = os.fdopen(int(sys.argv[1]), "wb")
    requests = sys.stdin.buffer
    sys.stdin = open(os.devnull)  # the mechanism cannot read the requests
    serve(requests, answers)


if __name__ == "__main__":
    main()
