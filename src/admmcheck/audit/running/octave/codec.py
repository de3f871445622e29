"""Values between Python and GNU Octave, in the byte layout of ``admmcheck_pack.m`` and
``admmcheck_unpack.m``: a one-byte tag, the dimensions (a byte giving their number, then one
little-endian uint64 each) and the elements in column-major order.

=====================================  ======================================================
Octave                                 Python
=====================================  ======================================================
1x1 double                             ``float``
any other double matrix                ``numpy.ndarray`` float64 of the same shape (a row
                                       vector is ``(1, n)``, a column ``(n, 1)``, ``[]`` is
                                       ``(0, 0)``)
single, int8 ... uint64                numpy scalar (1x1) or array of that dtype
complex                                ``complex`` (1x1) or complex128 array
logical                                ``bool`` (1x1) or bool array
char row (or ``''``)                   ``str`` (bytes read as UTF-8)
char matrix                            ``list`` of its rows, each a ``str``
1x1 struct                             ``dict`` (field order kept)
struct array                           a 1xn row: ``list`` of ``dict``; otherwise a ``list`` of
                                       its rows, each a ``list`` of ``dict``
cell row (or ``{}``)                   ``list``
any other 2-D cell array               ``list`` of its rows, each a ``list``
=====================================  ======================================================

Python to Octave: ``float``/``int`` → 1x1 double, ``bool`` → logical, ``complex`` → complex,
``str`` → char row, ``None`` → ``[]``, ``dict`` (keys valid Octave names) → 1x1 struct,
``list``/``tuple`` → 1xn cell (so an ``(X, y)`` dataset is the cell ``{X, y}``), numpy arrays keep
their dtype (float64 → double, float32 → single, intN → intN, bool → logical), a 1-D array of
length n becomes an n x 1 column, other arrays keep their shape. Anything else is refused with a
message naming it.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from admmcheck.foundations.errors import InvalidConfiguration

_NUMERIC = {"D": np.float64, "S": np.float32, "b": np.int8, "B": np.uint8, "h": np.int16, "H": np.uint16,
            "i": np.int32, "I": np.uint32, "q": np.int64, "Q": np.uint64}
_TAG_OF = {np.dtype(dtype): tag for tag, dtype in _NUMERIC.items()}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def pack(value: Any) -> bytes:
    """``value`` as bytes ``admmcheck_unpack.m`` reads (the table in the module docstring)."""
    parts: list[bytes] = []
    _pack(value, parts, "the dataset")
    return b"".join(parts)


def _dims(shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<B{len(shape)}Q", len(shape), *shape)


def _pack(value: Any, parts: list[bytes], where: str) -> None:
    if value is None:
        parts.append(b"D" + _dims((0, 0)))
    elif isinstance(value, (bool, np.bool_)):
        parts.append(b"L" + _dims((1, 1)) + bytes([bool(value)]))
    elif isinstance(value, (int, float)) and not isinstance(value, np.generic):
        parts.append(b"D" + _dims((1, 1)) + struct.pack("<d", float(value)))
    elif isinstance(value, complex):
        parts.append(b"Z" + _dims((1, 1)) + struct.pack("<dd", value.real, value.imag))
    elif isinstance(value, str):
        text = value.encode("utf-8", "surrogateescape")
        parts.append(b"C" + _dims((1, len(text))) + text)
    elif isinstance(value, (np.ndarray, np.generic)):
        _pack_array(np.asarray(value), parts, where)
    elif isinstance(value, Mapping):
        names = list(value)
        for name in names:
            if not isinstance(name, str) or not _NAME.match(name):
                raise InvalidConfiguration(f"{where} has the key {name!r}, which cannot name an Octave struct field; "
                                           "use keys that start with a letter and hold letters, digits and _")
        head = b"s" + _dims((1, 1)) + struct.pack("<I", len(names))
        parts.append(head + b"".join(struct.pack("<I", len(n)) + n.encode() for n in names))
        for name in names:
            _pack(value[name], parts, f"{where}[{name!r}]")
    elif isinstance(value, (list, tuple)):
        parts.append(b"c" + _dims((1, len(value))))
        for k, item in enumerate(value):
            _pack(item, parts, f"{where}[{k}]")
    else:
        raise InvalidConfiguration(f"{where} holds a {type(value).__name__}, which admmcheck cannot give to Octave; "
                                   "use numbers, numpy arrays, bool, str, None, dicts, lists or tuples")


def _pack_array(array: np.ndarray, parts: list[bytes], where: str) -> None:
    shape = array.shape if array.ndim >= 2 else ((array.size, 1) if array.ndim == 1 else (1, 1))
    if array.dtype == np.bool_:
        parts.append(b"L" + _dims(shape) + array.reshape(shape).astype(np.uint8).tobytes(order="F"))
    elif np.issubdtype(array.dtype, np.complexfloating):
        flat = array.reshape(shape).astype(np.complex128).ravel(order="F")
        parts.append(b"Z" + _dims(shape) + flat.real.astype("<f8").tobytes() + flat.imag.astype("<f8").tobytes())
    elif array.dtype in _TAG_OF:
        tag = _TAG_OF[array.dtype]
        parts.append(tag.encode() + _dims(shape) + array.reshape(shape).astype(array.dtype.newbyteorder("<"))
                     .tobytes(order="F"))
    else:
        raise InvalidConfiguration(f"{where} is a numpy array of dtype {array.dtype}, which admmcheck cannot give "
                                   "to Octave; use numbers (float, int, bool, complex) or a list of str")


def unpack(data: bytes) -> Any:
    """The value ``admmcheck_pack.m`` wrote into ``data`` (the table in the module docstring)."""
    value, end = _unpack(memoryview(data), 0)
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes left after the value")
    return value


def _unpack(data: memoryview, at: int) -> tuple[Any, int]:
    tag = chr(data[at])
    count = data[at + 1]
    shape = struct.unpack_from(f"<{count}Q", data, at + 2)
    at += 2 + 8 * count
    n = math.prod(shape)
    if tag in _NUMERIC:
        dtype = np.dtype(_NUMERIC[tag]).newbyteorder("<")
        array = np.frombuffer(data, dtype, n, at).reshape(shape, order="F").astype(dtype.newbyteorder("="))
        at += n * dtype.itemsize
        if shape == (1, 1):
            return (float(array[0, 0]) if tag == "D" else array[0, 0]), at
        return array, at
    if tag == "Z":
        real = np.frombuffer(data, "<f8", n, at)
        imag = np.frombuffer(data, "<f8", n, at + 8 * n)
        array = (real + 1j * imag).reshape(shape, order="F")
        return (complex(array[0, 0]) if shape == (1, 1) else array), at + 16 * n
    if tag == "L":
        array = np.frombuffer(data, np.uint8, n, at).reshape(shape, order="F").astype(bool)
        return (bool(array[0, 0]) if shape == (1, 1) else array), at + n
    if tag == "C":
        raw = np.frombuffer(data, np.uint8, n, at).reshape(shape, order="F")
        at += n
        if len(shape) == 2 and (shape[0] == 1 or n == 0):
            return raw.tobytes().decode("utf-8", "surrogateescape"), at
        return [row.tobytes().decode("utf-8", "surrogateescape") for row in raw.reshape(shape[0], -1, order="F")], at
    if tag == "c":
        items = []
        for _ in range(n):
            item, at = _unpack(data, at)
            items.append(item)
        return _rows(items, shape), at
    if tag == "s":
        (fields,) = struct.unpack_from("<I", data, at)
        at += 4
        names = []
        for _ in range(fields):
            (size,) = struct.unpack_from("<I", data, at)
            names.append(bytes(data[at + 4:at + 4 + size]).decode())
            at += 4 + size
        records = []
        for _ in range(n):
            record = {}
            for name in names:
                record[name], at = _unpack(data, at)
            records.append(record)
        if shape == (1, 1):
            return records[0], at
        return _rows(records, shape), at
    raise ValueError(f"unknown tag {tag!r}")


def _rows(items: list, shape: tuple[int, ...]) -> list:
    """A row (or an empty array) as one list; a 2-D array as a list of its rows; higher dimensions in
    column-major order."""
    if len(shape) != 2 or shape[0] == 1 or not items:
        return items
    rows, columns = shape
    return [[items[r + rows * c] for c in range(columns)] for r in range(rows)]
