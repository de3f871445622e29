"""Checkpoints of an audit: every finished block stored atomically (one SQLite transaction).

A selection block is stored as its samples (:meth:`Block.to_bytes`: they choose the events);
a bounding block only as its event and histogram counts, so a resumed audit never redraws or loses a block and the stored data
stays small. Events are not stored: they are recomputed from the stored selection samples,
deterministically, so a resumed audit equals an uninterrupted one for the same seed. The
file holds numbers only (``numpy.save`` without pickle) and the audit's configuration,
which must match on resume.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import numpy as np

from admmcheck.audit.inputs.outputs import Block
from admmcheck.foundations.errors import InvalidConfiguration, OutputError
from admmcheck.foundations.output import output_file


class Checkpoint:
    """An SQLite file of finished blocks for one audit configuration."""

    def __init__(self, path: str | Path, configuration: dict[str, object]) -> None:
        self.path = output_file(path, "checkpoint")
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._db.execute("CREATE TABLE IF NOT EXISTS blocks (phase TEXT, pair INT, side INT, block INT, "
                             "data BLOB, PRIMARY KEY (phase, pair, side, block))")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise OutputError(f"checkpoint {self.path} is not an admmcheck checkpoint ({exc})",
                              parameter="checkpoint") from None
        text = json.dumps(configuration, sort_keys=True)
        stored = self._db.execute("SELECT value FROM meta WHERE key = 'configuration'").fetchone()
        if stored is None:
            with self._db:
                self._db.execute("INSERT INTO meta VALUES ('configuration', ?)", (text,))
        elif stored[0] != text:
            raise InvalidConfiguration(
                f"checkpoint {self.path} belongs to another audit (different mechanism, seed, samples or "
                "claim); use a new file or the same settings to resume", parameter="checkpoint"
            )

    def load(self, phase: str) -> dict[tuple[int, int, int], np.ndarray]:
        """Every stored block of ``phase`` ("selection" or "bounding"), by (pair, side, block)."""
        rows = self._db.execute("SELECT pair, side, block, data FROM blocks WHERE phase = ?", (phase,))
        return {(pair, side, block): np.load(io.BytesIO(data), allow_pickle=False)
                for pair, side, block, data in rows}

    def load_blocks(self, phase: str) -> dict[tuple[int, int, int], Block]:
        """Every stored block of samples of ``phase``, by (pair, side, block)."""
        rows = self._db.execute("SELECT pair, side, block, data FROM blocks WHERE phase = ?", (phase,))
        return {(pair, side, block): Block.from_bytes(data) for pair, side, block, data in rows}

    def store_block(self, phase: str, pair: int, side: int, block: int, samples: Block) -> None:
        """Store one finished block of samples (atomic)."""
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?)",
                             (phase, pair, side, block, samples.to_bytes()))

    def store(self, phase: str, pair: int, side: int, block: int, array: np.ndarray) -> None:
        """Store one finished block (atomic: a crash leaves either nothing or the whole block)."""
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?)",
                             (phase, pair, side, block, buffer.getvalue()))

    def note(self, key: str, value: str) -> None:
        """Remember ``value`` under ``key`` (kept on the first write: it describes the earliest draws)."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (f"note:{key}", value))

    def noted(self, key: str) -> str | None:
        """What :meth:`note` stored under ``key``, or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (f"note:{key}",)).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self._db.close()
