"""What an observer sees, as numbers the estimators can use, with every distinction kept.

A mechanism may return numbers, arrays of any shape and dtype, strings, booleans, ``None``,
lists and tuples (of any, data-dependent length), sets (their elements in sorted order), mappings, nested
freely, or (with
``exceptions_are_outputs``) raise. :func:`encode_output` splits one output into

* its **kind**: a readable signature of everything that is not a number: the structure
  (types, lengths, shapes, dtypes, mapping keys) and the categorical values (strings,
  ``None``, the type of a raised exception), e.g. ``{'label': 'cat', 'scores': list(float×3)}``;
* its **numbers**: the numeric leaves in order (booleans as 0/1), named by a :class:`Layout`.

Two outputs of different kinds are told apart by an observer for certain, so a kind seen under
one dataset and never under the other is a support mismatch (ε = ∞). On the main side,
:class:`Encoding` (built from the selection split) turns blocks of mixed kinds into one float
feature matrix: the numbers of the one kind when there is only one (today's fixed-length
outputs, unchanged), else one indicator column per kind (the rarest pooled as "another kind")
followed by the numbers of the most frequent kinds, each in a slice of its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import zipfile
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from admmcheck.foundations.inputs import json_nesting

MOST_KINDS = 64           # kinds with an indicator column of their own; the others share "another kind"
MOST_KINDS_WITH_NUMBERS = 8
MOST_COLUMNS = 4096       # numeric columns of all kinds together
LONG_TEXT = 200           # strings longer than this enter a signature as a prefix and a hash
KINDS_DEPTH = 5           # [[signature, [[name, [shape]], ...]], ...]: how deep a block's kinds nest


class NotAnOutput(TypeError):
    """An output admmcheck cannot encode (the message says what to return instead)."""


@dataclass(frozen=True)
class Layout:
    """Where each released quantity sits in the flat output vector: (name, shape) in order."""

    parts: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def size(self) -> int:
        """Length k of the flat output."""
        return int(sum(math.prod(shape) for _, shape in self.parts))

    def describe(self, index: int) -> str:
        """The name of flat coordinate ``index``, e.g. ``primal[3, 1]`` or ``x[0]``."""
        offset = 0
        for name, shape in self.parts:
            size = math.prod(shape)
            if index < offset + size:
                position = np.unravel_index(index - offset, shape) if shape else ()
                return f"{name}[{', '.join(str(int(p)) for p in position)}]" if shape else name
            offset += size
        raise IndexError(index)

    def as_dict(self) -> list[dict[str, object]]:
        return [{"name": name, "shape": list(shape)} for name, shape in self.parts]


@dataclass(frozen=True)
class Kind:
    """One kind of output: its signature and the layout of its numbers."""

    signature: str
    layout: Layout


def encode_output(output: object) -> tuple[Kind, np.ndarray]:
    """(kind, float64 numbers) of one output; raises :class:`NotAnOutput` for what cannot be encoded.

    A float and a numeric array of a shape seen before take a short way (their kind is remembered),
    with the same result as the long one: workers encode every output, and the long way costs more
    than drawing a Laplace number."""
    kind_of = type(output)
    if kind_of is float or kind_of is np.float64:
        return _FLOAT, np.array([output], dtype=np.float64)
    if kind_of is np.ndarray:
        known = _ARRAY_KINDS.get((output.dtype.str, output.shape))
        if known is not None:
            return known, output.astype(np.float64).ravel()
    numbers: list[np.ndarray] = []
    parts: list[tuple[str, tuple[int, ...]]] = []
    signature = _encode(output, "output", numbers, parts)
    flat = np.concatenate(numbers) if numbers else np.empty(0)
    kind = Kind(signature, Layout(tuple(parts)))
    if kind_of is np.ndarray and output.dtype.kind in "biuf" and len(_ARRAY_KINDS) < 256:
        _ARRAY_KINDS[(output.dtype.str, output.shape)] = kind
    return kind, flat


_FLOAT = Kind("float", Layout((("output", ()),)))
_ARRAY_KINDS: dict[tuple[str, tuple[int, ...]], Kind] = {}  # numeric arrays: (dtype, shape) -> kind


def raised_kind(exception: BaseException) -> Kind:
    """The kind of an output that is the raising of ``exception`` (its type only, not its message)."""
    kind = type(exception)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return Kind(f"raised {name}", Layout(()))


_SCALARS = (((bool, np.bool_), "bool"), ((int, np.integer), "int"), ((float, np.floating), "float"))


def _encode(value: Any, name: str, numbers: list, parts: list) -> str:
    if value is None:
        return "None"
    for types, label in _SCALARS:  # bool before int: True is an int to Python, not to an observer
        if isinstance(value, types):
            numbers.append(np.array([float(value)]))
            parts.append((name, ()))
            return label
    if isinstance(value, (complex, np.complexfloating)):
        numbers.append(np.array([value.real, value.imag], dtype=np.float64))
        parts.append((name, (2,)))
        return "complex"
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return _text(value)
    if isinstance(value, np.ndarray) or (hasattr(value, "__array__") and not isinstance(value, (list, tuple, Mapping))):
        return _array(value, name, numbers, parts)
    if isinstance(value, Mapping):
        keys = sorted(value, key=lambda key: (type(key).__name__, str(key)))
        inner = [f"{key!r}: {_encode(value[key], f'{name}.{key}' if name != 'output' else str(key), numbers, parts)}"
                 for key in keys]
        return "{" + ", ".join(inner) + "}"
    if isinstance(value, (set, frozenset)):  # what an observer sees is its elements, in no order: one order for all
        try:
            ordered = tuple(sorted(value, key=lambda v: (type(v).__name__, v)))
        except TypeError:
            raise NotAnOutput(f"returns a {type(value).__name__} whose elements cannot be put in one order; return "
                              "them as a sorted list") from None
        return type(value).__name__ + _encode(ordered, name, numbers, parts)[len("tuple"):]
    if isinstance(value, (list, tuple)):
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        if value and (all(isinstance(v, (float, np.floating)) for v in value) or
                      all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in value)):
            numbers.append(np.asarray(value, dtype=np.float64))  # a homogeneous run of numbers: one part
            parts.append((name, (len(value),)))
            element = "float" if isinstance(value[0], (float, np.floating)) else "int"
            return f"{type(value).__name__}{open_}{element}×{len(value)}{close}"
        inner = [_encode(v, f"{name}[{i}]", numbers, parts) for i, v in enumerate(value)]
        return f"{type(value).__name__}{open_}{_runs(inner)}{close}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return f"{type(value).__name__}{_encode(fields, name, numbers, parts)}"
    raise NotAnOutput(f"returns a {type(value).__module__}.{type(value).__qualname__}; return what an observer sees as "
                      "numbers, arrays, strings, booleans, None, lists, tuples, sets or dicts of them (e.g. model.coef_ "
                      "rather than the model)")


def _text(value: str | bytes) -> str:
    text = repr(value)
    if len(text) <= LONG_TEXT:
        return text
    digest = hashlib.sha256(value.encode() if isinstance(value, str) else bytes(value)).hexdigest()[:16]
    return f"{text[:60]}…({len(value)} characters, sha256 {digest})"


def _array(value: Any, name: str, numbers: list, parts: list) -> str:
    array = np.asarray(value)
    prefix = "" if isinstance(value, np.ndarray) else f"{type(value).__name__} "
    shape = tuple(int(s) for s in array.shape)
    if array.dtype.kind in "biuf":
        numbers.append(array.astype(np.float64, copy=False).ravel())
        parts.append((name, shape))
        return f"{prefix}array({array.dtype.name}, {shape})"
    if array.dtype.kind == "c":
        numbers.append(np.stack([array.real.ravel(), array.imag.ravel()], axis=1).astype(np.float64).ravel())
        parts.append((name, shape + (2,)))
        return f"{prefix}array({array.dtype.name}, {shape})"
    if array.dtype.kind in "USO":
        inner = [_encode(v, f"{name}{list(np.unravel_index(i, shape)) if shape else ''}", numbers, parts)
                 for i, v in enumerate(array.ravel().tolist())]
        return f"{prefix}array({array.dtype.kind}, {shape})[{_runs(inner)}]"
    raise NotAnOutput(f"returns an array of dtype {array.dtype}; return numbers, strings or objects of the kinds above")


def _runs(items: list[str]) -> str:
    """``a, a, a, b`` written ``a×3, b``."""
    out: list[str] = []
    i = 0
    while i < len(items):
        j = i
        while j < len(items) and items[j] == items[i]:
            j += 1
        out.append(items[i] if j - i == 1 else f"{items[i]}×{j - i}")
        i = j
    return ", ".join(out)


@dataclass
class Block:
    """Samples of one block: ``values`` (n, w) zero-padded numbers, ``kind_of`` (n,) indices into ``kinds``."""

    values: np.ndarray
    kind_of: np.ndarray
    kinds: tuple[Kind, ...]

    def __len__(self) -> int:
        return len(self.values)

    @classmethod
    def plain(cls, values: np.ndarray, kind: Kind) -> "Block":
        return cls(values, np.zeros(len(values), dtype=np.int64), (kind,))

    @classmethod
    def concatenate(cls, blocks: list["Block"]) -> "Block":
        """One block of all samples, kinds merged by signature (in order of first appearance)."""
        kinds: list[Kind] = []
        index: dict[str, int] = {}
        width = max((b.values.shape[1] for b in blocks), default=0)
        values, kind_of = [], []
        for block in blocks:
            mapping = np.empty(len(block.kinds), dtype=np.int64)
            for local, kind in enumerate(block.kinds):
                if kind.signature not in index:
                    index[kind.signature] = len(kinds)
                    kinds.append(kind)
                mapping[local] = index[kind.signature]
            padded = block.values
            if padded.shape[1] < width:
                padded = np.pad(padded, ((0, 0), (0, width - padded.shape[1])))
            values.append(padded)
            kind_of.append(mapping[block.kind_of] if len(block) else np.empty(0, dtype=np.int64))
        if not blocks:
            return cls(np.empty((0, 0)), np.empty(0, dtype=np.int64), ())
        return cls(np.concatenate(values), np.concatenate(kind_of), tuple(kinds))

    def to_bytes(self) -> bytes:
        """The block as ``.npz`` bytes (numbers, kind indices, the kinds as JSON text; never a pickle)."""
        buffer = io.BytesIO()
        kinds = json.dumps([[kind.signature, [[name, list(shape)] for name, shape in kind.layout.parts]]
                            for kind in self.kinds])
        np.savez(buffer, values=np.ascontiguousarray(self.values, dtype=np.float64),
                 kind_of=np.ascontiguousarray(self.kind_of, dtype=np.int64), kinds=np.array(kinds))
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Block":
        """Read :meth:`to_bytes`, trusting nothing: the archive's three members stored as :meth:`to_bytes` writes
        them (a compressed member could inflate a thousandfold; none is), the kinds' JSON nested as written, the
        numbers finite. Raises ValueError on anything else, saying what."""
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if sorted(member.filename for member in members) != ["kind_of.npy", "kinds.npy", "values.npy"]:
                raise ValueError("not the three arrays of a block")
            if any(member.compress_type != zipfile.ZIP_STORED or member.file_size > len(data) for member in members):
                raise ValueError("a compressed array (the worker stores its arrays as they are)")
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            values, kind_of, text = stored["values"], stored["kind_of"], str(stored["kinds"])
        if json_nesting(text) > KINDS_DEPTH:
            raise ValueError(f"kinds nested deeper than a block's ({KINDS_DEPTH} levels)")
        kinds = tuple(Kind(str(signature), Layout(tuple((str(name), tuple(int(v) for v in shape))
                                                        for name, shape in parts)))
                      for signature, parts in json.loads(text))
        if values.ndim != 2 or values.dtype != np.float64 or kind_of.shape != (len(values),) or \
                kind_of.dtype != np.int64 or (len(kind_of) and (kind_of.min() < 0 or kind_of.max() >= len(kinds))):
            raise ValueError("not a block of samples")
        if any(kind.layout.size > values.shape[1] for kind in kinds):
            raise ValueError("a kind has more numbers than the block")
        finite = np.isfinite(values).all(axis=1)
        if not finite.all():
            raise ValueError(f"NaN or inf in sample {int(np.argmin(finite))} of the block (the worker refuses them)")
        return cls(values, kind_of, kinds)

    def counts(self) -> dict[str, int]:
        """How many samples of each kind, by signature."""
        tally = np.bincount(self.kind_of, minlength=len(self.kinds))
        return {kind.signature: int(c) for kind, c in zip(self.kinds, tally)}


class Encoding:
    """The feature map of one audit, fixed by the selection split of both sides (see the module doc)."""

    def __init__(self, kinds: list[Kind], counts: dict[str, int]) -> None:
        ordered = sorted(kinds, key=lambda kind: (-counts.get(kind.signature, 0), kind.signature))
        self.kinds = tuple(ordered)
        self.single = len(ordered) == 1
        if self.single:
            self.indicated: tuple[Kind, ...] = ()
            self.with_numbers = ordered
            self.layout = ordered[0].layout
            self.offsets = {ordered[0].signature: 0}
            return
        self.indicated = tuple(ordered[:MOST_KINDS])
        self.with_numbers, self.offsets = [], {}
        offset = len(self.indicated) + 1
        for kind in ordered[:MOST_KINDS_WITH_NUMBERS]:
            if kind.layout.size and offset + kind.layout.size <= len(self.indicated) + 1 + MOST_COLUMNS:
                self.with_numbers.append(kind)
                self.offsets[kind.signature] = offset
                offset += kind.layout.size
        parts = [(f"kind = {_short(kind.signature)}", ()) for kind in self.indicated] + [("kind = another kind", ())]
        for kind in self.with_numbers:
            parts.extend((f"[{_short(kind.signature)}] {name}", shape) for name, shape in kind.layout.parts)
        self.layout = Layout(tuple(parts))

    @classmethod
    def fit(cls, sides: tuple[Block, Block]) -> "Encoding":
        """The encoding of the selection split, from each side's samples (kinds and their counts only)."""
        kinds = {kind.signature: kind for side in sides for kind in side.kinds}
        counts: dict[str, int] = {}
        for side in sides:
            for signature, n in side.counts().items():
                counts[signature] = counts.get(signature, 0) + n
        return cls(list(kinds.values()), counts)

    @property
    def categories(self) -> int:
        """Indicator columns (kinds of their own + "another kind"); 0 for a single kind."""
        return 0 if self.single else len(self.indicated) + 1

    def category_labels(self) -> list[str]:
        return [kind.signature for kind in self.indicated] + ["another kind"]

    def features(self, block: Block) -> np.ndarray:
        """(n, k) float features of ``block``: NaN rows for kinds the selection split never showed
        when there is a single kind (no event contains them), else indicators and numeric slices."""
        n = len(block)
        if self.single:
            kind = self.kinds[0]
            size = kind.layout.size
            own = [i for i, k in enumerate(block.kinds) if k.signature == kind.signature]
            if len(block.kinds) == 1 and own:
                return block.values[:, :size]
            out = np.full((n, size), np.nan)
            rows = np.isin(block.kind_of, own)
            out[rows] = block.values[rows, :size]
            return out
        out = np.zeros((n, self.layout.size))
        column = {kind.signature: j for j, kind in enumerate(self.indicated)}
        other = len(self.indicated)
        for local, kind in enumerate(block.kinds):
            rows = block.kind_of == local
            out[rows, column.get(kind.signature, other)] = 1.0
            offset = self.offsets.get(kind.signature)
            if offset is not None:
                out[rows, offset:offset + kind.layout.size] = block.values[rows, :kind.layout.size]
        return out

    def unseen(self, block: Block) -> int:
        """How many samples of ``block`` are of a kind the selection split never showed."""
        seen = {kind.signature for kind in self.kinds}
        return sum(n for signature, n in block.counts().items() if signature not in seen)

    def as_dict(self, counts: tuple[dict[str, int], dict[str, int]] | None = None) -> list[dict[str, object]]:
        """Every kind of the selection split with its numbers' layout (and counts per side)."""
        rows = []
        for kind in self.kinds:
            row: dict[str, object] = {"kind": kind.signature, "numbers": kind.layout.as_dict()}
            if counts is not None:
                row["selection_counts"] = [counts[0].get(kind.signature, 0), counts[1].get(kind.signature, 0)]
            rows.append(row)
        return rows


def _short(signature: str, limit: int = 80) -> str:
    return signature if len(signature) <= limit else signature[: limit - 1] + "…"


def seed_insensitive(whole: tuple[Block, Block], pair: int, pairs: int) -> list[str]:
    """A finding when every selection sample of a side was the same output: the outputs did not vary
    with the samples' seeds, so the mechanism's noise is a constant there."""
    constant = [f"d{side}" for side, block in enumerate(whole)
                if len(block) > 1 and np.all(block.kind_of == block.kind_of[0]) and np.all(block.values == block.values[0])]
    if not constant:
        return []
    where = " and ".join(constant) + (f" of pair {pair}" if pairs > 1 else "")
    return [f"the output did not vary with the sample's seed: all {len(whole[0])} selection samples on {where} were "
            "the same output, so the mechanism's noise is a constant there; a fixed seed inside the code (rng(1), "
            "rand(\"seed\", 1), randn(\"state\", 0), np.random.seed(0)) does this, and a mechanism that always "
            "releases the same output on a dataset is not randomised at all"]


REPEAT_Z = 8.0  # calls_repeat: how many standard deviations lag-1 equalities must exceed lag-n/2 ones to refuse
REPEAT_EXCESS = 10  # and by at least this many samples
REPEAT_SAMPLES = 20_000  # the first this many samples of a side are looked at (hashing 150,000 of 500 numbers: 2 s)


def calls_repeat(whole: tuple[Block, Block], name: str, where: str) -> str | None:
    """A message when consecutive samples of a side repeat each other more than samples far apart do: the
    mechanism's randomness comes from the clock or another source that repeats between calls
    (``default_rng(int(time.time() * 1000))``), so the samples are not independent draws, on which every bound
    rests; None otherwise.

    Independent samples are exchangeable, so sample i equals sample i + 1 as often, in law, as sample i equals
    sample i + L (L = n/2); over the m = n − L pairs of each, a = #{x_i = x_{i+1}} and b = #{x_i = x_{i+L}}. Each
    is a sum of m indicators of mean q = Σ p_v² whose neighbours overlap (x_{i+1} is in two of them), so its
    variance is m q(1 − q) + 2m |Σ p_v³ − q²|, with p the empirical law of the side's outputs; a − b is refused at
    REPEAT_Z times the square root of twice the sum of both variances (a bound whatever their correlation) and
    REPEAT_EXCESS samples, on the first REPEAT_SAMPLES samples of each side. Outputs of a discrete law repeat at
    every lag alike and pass."""
    for side, block in enumerate(whole):
        block = Block(block.values[:REPEAT_SAMPLES], block.kind_of[:REPEAT_SAMPLES], block.kinds)
        n = len(block)
        lag = n // 2
        m = n - lag
        if m < REPEAT_EXCESS + 1:
            continue
        ids = _output_ids(block)
        a = int(np.sum(ids[:m] == ids[1:m + 1]))
        b = int(np.sum(ids[:m] == ids[lag:lag + m]))
        p = np.bincount(ids) / n
        q, r = float(np.sum(p ** 2)), float(np.sum(p ** 3))
        variance = m * q * (1 - q) + 2 * m * abs(r - q * q)
        if a - b >= REPEAT_EXCESS and a - b > REPEAT_Z * math.sqrt(4 * variance):
            return (f"{name} gives consecutive calls the same output far more often than calls {lag} apart ({a} of {m} "
                    f"consecutive pairs of samples on d{side}{where} were equal, against {b} of {m} pairs {lag} apart): "
                    "its randomness repeats between calls, as a generator seeded from the clock does "
                    "(default_rng(int(time.time() * 1000))), so its samples are not independent draws and no bound "
                    "on them would hold. Draw from the rng argument, or seed from the operating system "
                    "(numpy.random.default_rng())")
    return None


def _output_ids(block: Block) -> np.ndarray:
    """One integer per sample, equal exactly for equal outputs (kind and numbers' bits): each number's bits mixed
    (splitmix64's finaliser: small integers' bits are mostly zeros) and summed with fixed odd 64-bit multipliers,
    twice, in wrapping integer arithmetic, which is exact in any order (a floating-point projection is not: BLAS may
    round equal rows differently at different places). Two numbers a sample, where a copy of the rows would take as
    much memory as the block."""
    bits = np.ascontiguousarray(block.values).view(np.uint64)
    multipliers = np.random.default_rng(0).integers(1, 2 ** 63, size=(bits.shape[1] + 1, 2), dtype=np.uint64) | 1
    keys = _mixed(block.kind_of.astype(np.uint64))[:, None] * multipliers[-1]
    for column in range(bits.shape[1]):
        keys += _mixed(bits[:, column])[:, None] * multipliers[column]
    return np.unique(keys, axis=0, return_inverse=True)[1].ravel()


def _mixed(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise on uint64: a bijection that spreads every input bit over the output."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))
