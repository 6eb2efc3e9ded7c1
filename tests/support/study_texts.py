"""Pre-registration text shared by the test suites: the decision rules of a small study.

Written out field by field (no defaults left implicit) so that tests can edit the text of a
study. Used by tests/prereg/conftest.py (``STUDY_TEXT``) and tests/support/tiny_project.py
(``PROTOCOL``); both import it as the top-level module ``study_texts``.
"""

from __future__ import annotations

__all__ = ["protocol_block"]


def protocol_block(*, bootstrap_resamples: int) -> str:
    """The ``transform``, ``protocol`` and ``analyses`` blocks of a small study (gates G1–G5,
    P1 and P2 of Zhou (2026)), with ``bootstrap.resamples`` as given."""
    return f"""\
transform: {{scales: [probability, logit], epsilon: 1.0e-6}}
protocol:
  headline_scale: logit
  alpha: 0.05
  multiplicity: bonferroni
  power: 0.80
  xi_bar: 0.0
  delta_floor: 0.10
  tolerances: {{mean: 0.10, tvar: 0.20}}
  tvar_level: 0.90
  min_exceedances: 500
  thresholds: {{headline: 0.95, band: [0.95, 0.96, 0.97, 0.98, 0.99]}}
  stability:
    delta: 0.02
    tolerance: 0.05
    scan: {{start: 0.70, stop: 0.985, step: 0.005}}
    min_exceedances: 200
  gof: {{alpha: 0.05}}
  bootstrap: {{resamples: {bootstrap_resamples}, level: 0.95, resampling: independent}}
  pairs: all
  sensitivity: {{tolerance_multipliers: [0.5, 1.0, 2.0]}}
  power_simulation: {{delta_xi: [0.0, 0.1], n_exc: [500, 1500], trials: 10, resamples: 10}}
  operating_characteristics: {{trials: 10}}
analyses: {{}}
"""
