"""The demo study's four demonstrations, computed with the stage functions at full size.

:func:`demonstrations` judges them from a study's fits and gates documents: those of the shipped
demo's own run in ``test_demo.py``, those :func:`demo_outcome` computes in-process for other
seeds in ``tests/benchmarks/demo_seeds.py`` (how often each demonstration happens). Only the
bootstrap sizes can be reduced there (``resamples``); sample sizes, truths and decision rules are
the registered ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit

REPO_ROOT = Path(__file__).resolve().parents[2]
PILOT_PAIRS = (
    ("pilot-s000", "pilot-s005"),
    ("pilot-s000", "pilot-s025"),
    ("pilot-s000", "pilot-s050"),
)


@dataclass(frozen=True)
class DemoOutcome:
    """What the demo shows for one seed (logit = headline scale)."""

    seed: int
    pilot_apparent_effect: bool  # some pilot pair has |Δξ̂| > Δfloor at some band threshold
    pilot_apparent_effect_headline: bool  # … at the headline threshold
    pilot_g3_rejects: bool  # G3 fails for every pilot pair at every band threshold
    saturation_g4_probability: bool  # nemo's probability-scale AD rejects at every threshold
    saturation_g4_logit_headline: bool  # nemo's logit-scale AD passes at the headline threshold
    saturation_g4_logit_majority: bool  # … at most band thresholds
    fishing_single_threshold: bool  # qwen vs llama3b passes all gates but G5 at some q
    fishing_killed: bool  # … and the pair is KILL (G5 fails wherever the rest passes)
    effect_passes: bool  # effect-a vs effect-b passes every gate at some q (H1 PASS)
    h1: str
    gates: dict


def demo_study(tmp: Path, seed: int | None = None, resamples: int | None = None):
    """The demo pre-registration, optionally with another seed or bootstrap size, loaded."""
    from tailgate.plans.registration import load

    text = (REPO_ROOT / "preregistrations" / "protocol-demo.yaml").read_text()
    if seed is not None:
        text = re.sub(r"^seed: \d+", f"seed: {seed}", text, count=1, flags=re.M)
    if resamples is not None:
        text = text.replace("resamples: 10000", f"resamples: {resamples}", 1)
        text = text.replace("    resamples: 200\n", "    resamples: 0\n", 1)
    path = tmp / "protocol-demo.yaml"
    path.write_text(text)
    return load(path)


def demo_outcome(tmp: Path, seed: int | None = None, resamples: int = 2000) -> DemoOutcome:
    """Simulate every demo condition, fit, bootstrap and evaluate the gates on both scales."""
    from tailgate.data.transform import transform_scores
    from tailgate.generate.simulate import simulate_condition, truth_from_spec
    from tailgate.seeds import seed_sequence
    from tailgate.stages.fit import fit_condition
    from tailgate.stages.gates import gates_document
    from tailgate.stats.risk import bulk_bootstrap_scales

    study = demo_study(tmp, seed, resamples)
    eps = float(study.data["transform"]["epsilon"])
    scorer = study.scorers()[0]["name"]
    fits: dict[str, dict] = {"probability": {}, "logit": {}}
    reps: dict[str, dict] = {"probability": {}, "logit": {}}
    for cond in study.conditions():
        name = cond["name"]
        truth = truth_from_spec(cond["simulate"])
        latent = simulate_condition(study.seed, name, truth, int(cond["prompts"]))
        scores = np.clip(expit(latent), np.nextafter(0.0, 1.0), np.nextafter(1.0, 0.0))
        x = {s: transform_scores(scores, s, eps).values for s in ("probability", "logit")}
        b = bulk_bootstrap_scales(
            x,
            int(study.protocol["bootstrap"]["resamples"]),
            seed_sequence(study.seed, "bulk", scorer, name),
        )
        for s in ("probability", "logit"):
            fits[s][name] = fit_condition(
                x[s], study=study, scorer=scorer, scale=s, condition=name, progress=False
            )
            reps[s][name] = (b[s].mean, b[s].tvar)
    gates = {s: gates_document(study, scorer, s, fits[s], reps[s]) for s in fits}
    return demonstrations(study, fits, gates)


def demonstrations(study, fits: dict[str, dict], gates: dict[str, dict]) -> DemoOutcome:
    """The four demonstrations from the ``fits`` (scale → condition → ``fits/…json`` document)
    and ``gates`` (scale → ``gates/…json`` document) of the demo ``study``."""
    floor = float(study.protocol["delta_floor"])
    head = float(study.protocol["thresholds"]["headline"])

    def at(scale, a, b):
        return [p for p in gates[scale]["protocol"]["pairs"] if (p["a"], p["b"]) == (a, b)]

    def gate(p, name):
        return next(g for g in p["gates"] if g["gate"] == name)

    pilot = [p for a, b in PILOT_PAIRS for p in at("logit", a, b)]
    nemo_p = [t for t in fits["probability"]["nemo"]["thresholds"]]
    nemo_l = [t for t in fits["logit"]["nemo"]["thresholds"]]
    alpha_gof = float(study.protocol["gof"]["alpha"])
    fishing = at("logit", "qwen", "llama3b")
    single = [
        p
        for p in fishing
        if all(gate(p, g)["passed"] for g in ("G1", "G2", "G3", "G4", "P1", "P2"))
        and not gate(p, "G5")["passed"]
    ]
    effect = at("logit", "effect-a", "effect-b")
    return DemoOutcome(
        seed=study.seed,
        pilot_apparent_effect=any(gate(p, "P2")["value"] > floor for p in pilot),
        pilot_apparent_effect_headline=any(
            gate(p, "P2")["value"] > floor for p in pilot if abs(p["q"] - head) < 1e-9
        ),
        pilot_g3_rejects=all(not gate(p, "G3")["passed"] for p in pilot),
        saturation_g4_probability=all(
            t["ad_p"] is not None and t["ad_p"] <= alpha_gof for t in nemo_p
        ),
        saturation_g4_logit_headline=any(
            abs(t["q"] - head) < 1e-9 and (t["ad_p"] or 0) > alpha_gof for t in nemo_l
        ),
        saturation_g4_logit_majority=sum((t["ad_p"] or 0) > alpha_gof for t in nemo_l)
        > len(nemo_l) / 2,
        fishing_single_threshold=bool(single),
        fishing_killed=not any(p["passed"] for p in fishing),
        effect_passes=any(p["passed"] for p in effect),
        h1=gates["logit"]["protocol"]["h1"],
        gates=gates,
    )
