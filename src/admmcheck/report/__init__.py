"""The verification report: collect every check (collect.py), hold it (model.py), render it (render.py)."""

from admmcheck.report.collect import PROFILES, Profile, collect
from admmcheck.report.model import Report, Verdict
from admmcheck.report.render import render

__all__ = ["PROFILES", "Profile", "Report", "Verdict", "collect", "render"]
