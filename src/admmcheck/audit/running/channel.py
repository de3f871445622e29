"""How an audit worker's answers are framed on their pipe: :data:`MAGIC`, the JSON header's length and the body's
length (little-endian 64-bit), the header, the body. Written by the worker (:mod:`admmcheck.audit.running.worker`), read and
checked by the process that drives it (:mod:`admmcheck.audit.running.worker_process`): an answer that does not start with
the magic bytes, or is larger than its request allows, was not written by the worker's own code."""

from __future__ import annotations

import json
import struct

#: Every answer starts with these bytes: a mechanism that writes into the answer pipe is caught at once.
MAGIC = b"ADMC"
PREFIX = struct.Struct("<4sQQ")


def frame(header: dict, body: bytes = b"") -> bytes:
    """One answer: the prefix, the JSON header, the body."""
    text = json.dumps(header).encode("utf-8")
    return PREFIX.pack(MAGIC, len(text), len(body)) + text + body
