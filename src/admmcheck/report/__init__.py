"""The verification report: hold it (model.py) and render it (render.py); :mod:`admmcheck.commands.verify` runs the
checks that fill it."""

from admmcheck.report.model import Report, Verdict
from admmcheck.report.render import render

__all__ = ["Report", "Verdict", "render"]
