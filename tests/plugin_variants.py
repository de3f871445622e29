"""A researcher's variant with a parameter of its own (issue 60, item 2), registered in-process by the tests: PVP
whose noise parameter alpha is multiplied by ``scale`` (the noise divided by it), claiming the setting's epsilon.
``scale`` is a field of the variant's own setting, a subclass of the consensus family's."""

from __future__ import annotations

from dataclasses import dataclass, replace

from admmcheck.foundations.formulas import parse_number
from admmcheck.mechanisms.registry import REGISTRY, constant_eta
from admmcheck.mechanisms.settings import ConsensusSetting
from admmcheck.foundations.parameters import parameter

NAME = "pvp-scaled"


@dataclass(frozen=True)
class ScaledSetting(ConsensusSetting):
    """The consensus setting and ``scale``, which divides the noise PVP draws (1: PVP's own)."""

    scale: float = parameter(1.0, "divides the noise the mechanism draws (1: PVP's own)", read=parse_number)


def scaled_arguments(setting: ScaledSetting) -> dict[str, object]:
    """PVP's keyword arguments with alpha multiplied by ``scale``."""
    return {"eta": constant_eta(setting.eta, setting.iterations, setting.nodes, NAME),
            "alpha": setting.alpha * setting.scale}


def register_scaled() -> None:
    """Register ``pvp-scaled`` (the caller unregisters it)."""
    REGISTRY.register(replace(REGISTRY.mechanism("pvp"), name=NAME, title="PVP with its noise divided by --scale",
                              setting=ScaledSetting, arguments=scaled_arguments))
