"""A validated pre-registration as the rest of tailgate reads it: :class:`Study`, made only by
:func:`tailgate.prereg.study.load`, and where a project keeps a study's files (the lock beside
the pre-registration, ``results/<study>``, the project root). Its own module so that the layers
that take a study (the analyses' kinds, whose cross-field checks ``load`` runs) need not import
the loader.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tailgate.prereg.protocol_blocks as blocks
from tailgate.prereg.answer import protocol_registered

__all__ = ["Study", "lock_path_for", "prereg_for", "project_root", "results_dir_for"]


@dataclass(frozen=True, eq=False)
class Study:
    """A validated pre-registration.

    ``data`` is the canonical document (defaults applied, numbers normalised): treat it as
    read-only. Two studies are equal when their canonical hashes are.
    """

    path: Path
    data: dict[str, Any] = field(repr=False)
    canonical_hash: str
    raw_hash: str

    @property
    def name(self) -> str:
        return str(self.data["study"])

    @property
    def seed(self) -> int:
        return int(self.data["seed"])

    @property
    def protocol(self) -> dict[str, Any]:
        return self.data["protocol"]

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))

    def hypotheses(self) -> dict[str, Any]:
        """The registered hypotheses by name (none: empty)."""
        return dict(self.data.get("hypotheses") or {})

    @property
    def schema_version(self) -> int:
        return int(self.data["schema_version"])

    @property
    def sample_cap(self) -> int:
        """``sample_cap``: the most prompts per condition."""
        return int(self.data["sample_cap"])

    @property
    def accepted_power(self) -> float | None:
        """``accepted_power``: the power the registrant accepts (absent: none recorded)."""
        ap = self.data.get("accepted_power")
        return None if ap is None else float(ap)

    def source(self) -> dict[str, Any]:
        """The registered ``data`` block: the ``backend`` (``simulate``, ``transformers`` or
        ``import``), its ``prompts`` and ``import`` blocks."""
        return self.data["data"]

    @property
    def backend(self) -> str:
        return str(self.data["data"]["backend"])

    def generation(self) -> dict[str, Any]:
        """The registered ``generation`` block (sampling settings and ``shards``)."""
        return dict(self.data["generation"])

    @property
    def shards(self) -> int:
        return int(self.data["generation"]["shards"])

    @property
    def epsilon(self) -> float:
        """``transform.epsilon``: bounded scores are clipped into [ε, 1 − ε] before the logit."""
        return float(self.data["transform"]["epsilon"])

    @property
    def scales(self) -> list[str]:
        """``transform.scales``: the scales a bounded scorer is analysed on."""
        return [str(s) for s in self.data["transform"]["scales"]]

    def analyses(self) -> dict[str, Any]:
        """The registered analyses by name, in name order (none: empty)."""
        specs = self.data.get("analyses") or {}
        return {name: specs[name] for name in sorted(specs)}

    def models(self) -> dict[str, Any]:
        """The registered ``models`` block (none: empty)."""
        return dict(self.data.get("models") or {})

    # typed readers of the protocol's blocks (tailgate.prereg.protocol_blocks); the G1/G2
    # tolerances are read by scorer and scale (tailgate.protocol.registered.tolerances_for)
    rules = blocks.Reader(blocks.Rules)
    tolerances = blocks.Reader(blocks.Tolerances)
    bootstrap = blocks.Reader(blocks.Bootstrap)
    stability = blocks.Reader(blocks.Stability)
    thresholds = blocks.Reader(blocks.Thresholds)
    gof = blocks.Reader(blocks.Gof)
    sensitivity = blocks.Reader(blocks.Sensitivity)
    power_simulation = blocks.Reader(blocks.PowerSimulation)
    operating_characteristics = blocks.Reader(blocks.OperatingCharacteristics)

    @property
    def has_protocol(self) -> bool:
        """Whether the study registers the tail-shape protocol of Zhou (2026) (absent
        ``protocol.enabled``: it does; :mod:`tailgate.prereg.answer`)."""
        return protocol_registered(self.data)

    def protocol_conditions(self) -> list[str]:
        """The conditions the protocol fits: those its registered pairs name, in registration
        order (none when the protocol is not registered)."""
        if not self.has_protocol:
            return []
        used = {c for pair in self.pairs() for c in pair}
        return [c["name"] for c in self.data["conditions"] if c["name"] in used]

    @property
    def lock_path(self) -> Path:
        return lock_path_for(self.path)

    def conditions(self) -> list[dict[str, Any]]:
        return list(self.data["conditions"])

    def condition(self, name: str) -> dict[str, Any]:
        for cond in self.data["conditions"]:
            if cond["name"] == name:
                return cond
        raise KeyError(f"study {self.name!r} has no condition {name!r}")

    def scorers(self) -> list[dict[str, Any]]:
        return list(self.data["scorers"])

    def scorer(self, name: str) -> dict[str, Any]:
        for sc in self.data["scorers"]:
            if sc["name"] == name:
                return sc
        raise KeyError(f"study {self.name!r} has no scorer {name!r}")

    def pairs(self) -> list[tuple[str, str]]:
        """The registered condition pairs (``pairs: all`` expands to every unordered pair)."""
        names = [c["name"] for c in self.data["conditions"]]
        reg = self.protocol["pairs"]
        if reg == "all":
            return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        return [(a, b) for a, b in reg]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Study) and other.canonical_hash == self.canonical_hash

    def __hash__(self) -> int:
        return hash(self.canonical_hash)


def results_dir_for(prereg_path: str | Path) -> Path:
    """``<project>/results/<stem>`` for ``<project>/preregistrations/<stem>.yaml`` (the path as
    written, made absolute; links are not followed, so a linked results folder stays visible)."""
    p = Path(os.path.abspath(prereg_path))
    return p.parent.parent / "results" / p.stem


def project_root(prereg_path: str | Path) -> Path:
    """``<project>`` of ``<project>/preregistrations/<stem>.yaml``; relative paths resolve here.

    The one root of a project for pins, the import job and the audit alike: the folder that
    holds ``preregistrations/`` as named, never the place a link there points to, so that a
    linked ``preregistrations/`` cannot make the pins be checked in another folder than the
    one the data is read from."""
    return Path(os.path.abspath(prereg_path)).parent.parent


def prereg_for(results_dir: str | Path) -> Path:
    """``<project>/preregistrations/<study>.yaml`` beside ``<project>/results/<study>``, found
    from the path as written (a linked results folder does not lead elsewhere)."""
    rd = Path(results_dir)
    return Path(os.path.abspath(rd)).parent.parent / "preregistrations" / f"{rd.name}.yaml"


def lock_path_for(prereg_path: str | Path) -> Path:
    """``<stem>.lock.json`` beside the pre-registration."""
    p = Path(prereg_path)
    return p.with_name(f"{p.stem}.lock.json")
