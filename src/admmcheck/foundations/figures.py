"""The report's figures as typed values: one class per kind of figure, each drawing itself (:meth:`Figure.figure`,
matplotlib imported only then) and serialising itself with its kind (:meth:`Figure.as_dict`, the ``report.json``
contract; :meth:`Figure.from_dict` reads it back). A figure names the ``algorithms`` it is about, which places it
in the report. Kinds drawn by a layer above this one (an experiment's panels, the black-box (ε, δ) curves) are
subclasses defined there; they register by subclassing."""

from __future__ import annotations

from abc import ABC
from dataclasses import dataclass, fields
from typing import Any, ClassVar

#: every kind of figure by the name report.json gives it (filled by subclassing :class:`Figure`)
KINDS: dict[str, type[Figure]] = {}


@dataclass(frozen=True)
class Figure(ABC):
    """A figure: its ``title``, the ``algorithms`` it is about (None: none in particular), its data in the fields
    of its kind."""

    kind: ClassVar[str]
    title: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            KINDS[cls.kind] = cls

    def as_dict(self) -> dict[str, object]:
        """Its JSON: the kind, and every field that is set."""
        return {"kind": self.kind, **{item.name: getattr(self, item.name) for item in fields(self)
                                     if getattr(self, item.name) is not None}}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Figure:
        """The figure of a report.json entry (its ``kind`` names the class)."""
        kind = KINDS.get(data.get("kind"))
        if kind is None:
            raise ValueError(f"a figure of kind {data.get('kind')!r}; the kinds are {sorted(KINDS)}")
        return kind(**{key: value for key, value in data.items() if key != "kind"})

    def rows(self) -> list[tuple[str, str]] | None:
        """Its rows, for a figure shown as a table (None: it is drawn)."""
        return None

    def draw(self, axis: Any) -> None:
        """Draw the data on ``axis`` (a matplotlib Axes)."""
        raise NotImplementedError(f"a {self.kind} figure is drawn by its own figure()")

    def figure(self) -> Any:
        """The matplotlib figure, or None for a table."""
        if self.rows() is not None:
            return None
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axis = plt.subplots(figsize=(9, 3.6))
        self.draw(axis)
        axis.set_title(self.title)
        figure.tight_layout()
        return figure


@dataclass(frozen=True)
class Bars(Figure):
    """One bar per check of each problem (``series``: problem -> {check: value}), on a log axis, with the
    ``threshold`` they are checked against."""

    kind = "bars"
    series: dict[str, dict[str, float]]
    threshold: float
    algorithms: list[str] | None = None

    def draw(self, axis: Any) -> None:
        labels, values = [], []
        for problem, checks in self.series.items():
            for check, value in checks.items():
                labels.append(f"{check}\n{problem.split()[0]}")
                values.append(max(abs(value), 1e-17))
        axis.bar(range(len(values)), values, color="#4c72b0")
        axis.axhline(self.threshold, color="#c44e52", ls="--", label=f"threshold {self.threshold:g}")
        axis.set_yscale("log")
        axis.set_xticks(range(len(labels)), labels, fontsize=6, rotation=30, ha="right")
        axis.legend(fontsize=8)


@dataclass(frozen=True)
class PrivacyBars(Figure):
    """Per mechanism, its claimed β beside the white box's worst and largest sampled loss and the black box's bound."""

    kind = "privacy-bars"
    series: dict[str, dict[str, float]]
    algorithms: list[str] | None = None
    KEYS: ClassVar[tuple[str, ...]] = ("claimed_beta", "white_box_worst", "white_box_max_sampled",
                                       "black_box_lower_bound")

    def draw(self, axis: Any) -> None:
        names = list(self.series)
        for k, key in enumerate(self.KEYS):
            axis.bar([i + 0.2 * k for i in range(len(names))], [self.series[n][key] for n in names], width=0.2,
                     label=key.replace("_", " "))
        axis.set_xticks([i + 0.3 for i in range(len(names))], names)
        axis.set_ylabel("privacy loss")
        axis.legend(fontsize=8)


@dataclass(frozen=True)
class Curves(Figure):
    """Curves against t = 0, 1, ... (``series``: label -> values)."""

    kind = "curves"
    series: dict[str, list[float]]
    xlabel: str | None = None
    log: bool | None = None
    algorithms: list[str] | None = None

    def draw(self, axis: Any) -> None:
        for label, values in self.series.items():
            axis.plot(range(len(values)), values, label=label)
        axis.set_xlabel(self.xlabel or "t")
        if self.log:
            axis.set_yscale("log")
        axis.legend(fontsize=8)


@dataclass(frozen=True)
class XY(Figure):
    """Curves of points (``series``: label -> {"x": [...], "y": [...]})."""

    kind = "xy"
    series: dict[str, dict[str, list[float]]]
    xlabel: str | None = None
    ylabel: str | None = None
    log: bool | None = None
    algorithms: list[str] | None = None

    def draw(self, axis: Any) -> None:
        for label, points in self.series.items():
            axis.plot(points["x"], points["y"], marker=".", label=label)
        axis.set(xlabel=self.xlabel or "x", ylabel=self.ylabel or "y")
        if self.log:
            axis.set_yscale("log")
        axis.legend(fontsize=8)


@dataclass(frozen=True)
class Histograms(Figure):
    """Densities of binned values (``series``: label -> {"edges", "counts", "infinite", "beta"}), each with its β
    dotted; a log axis."""

    kind = "histograms"
    series: dict[str, dict[str, Any]]
    xlabel: str | None = None
    algorithms: list[str] | None = None

    def draw(self, axis: Any) -> None:
        import matplotlib.pyplot as plt
        import numpy as np

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for k, (label, histogram) in enumerate(self.series.items()):
            colour, style = colours[k % len(colours)], ("-", "--", "-.")[k % 3]  # equal laws stay visible
            edges, counts = np.asarray(histogram["edges"], float), np.asarray(histogram["counts"], float)
            if counts.size:
                density = counts / (counts.sum() * np.diff(edges))
                infinite = f", {histogram['infinite']} infinite" if histogram["infinite"] else ""
                axis.stairs(density, edges, color=colour, ls=style, lw=2.2 - 0.5 * (k % 3), label=f"{label}{infinite}")
            axis.axvline(histogram["beta"], color=colour, ls=":")
        axis.set(xlabel=self.xlabel or "x", ylabel="density")
        axis.set_yscale("log")
        axis.legend(fontsize=8)


@dataclass(frozen=True)
class Table(Figure):
    """A table: one row per key of ``series``, nested values as ``key = value`` pairs."""

    kind = "table"
    series: dict[str, Any]
    algorithms: list[str] | None = None

    def rows(self) -> list[tuple[str, str]]:
        def text(value: object) -> str:
            if isinstance(value, dict):
                return "; ".join(f"{k} = {text(v)}" for k, v in value.items())
            if isinstance(value, float):
                return f"{value:.6g}"
            return "none" if value is None else str(value)
        return [(str(key), text(value)) for key, value in self.series.items()]
