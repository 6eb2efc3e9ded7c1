"""Analysis kind ``perturbation``: the composite-null test of Acharyya et al. (2025) on binary
responses.

Each registered condition is one query; its rows are the responses, and a response is a "yes"
when the registered ``scorer``'s severity exceeds ``threshold`` [0.5] (a 0/1 score, a regex
match, a classifier probability). The conditions play four roles:

- ``pilot``: m0 semantically irrelevant perturbations of the base query; the first
  ``pilot_responses`` [all] responses of each (in prompt-id order) estimate the null interval
  [â, b̂] by Algorithm B (``interval`` [order_statistics] or ``moments``; methods note A6);
- the design (m, n, τ) is then derived from [â, b̂], the registered ``budget`` B and ``alpha``
  [protocol.alpha] by Algorithm C (methods note A7) — a **derived value of the registration**: the
  rule
  was frozen, so deriving it from the pilot is not a change. The statistics store it beside the
  pilot counts it came from (``design.derived_from``), and every criterion re-derives it from
  those counts first: a stored design that does not follow from them makes every criterion
  that reads it NOT_TESTED, so the audit's re-derivation disagrees with a forged one. Changing
  the pilot, the perturbation lists or the budget after data exists is a decision-rule change
  (refused until amended, then a reported deviation);
- ``null_queries``: the first m of them, n responses each, are the sampled null queries;
- ``test_queries``: each gets the decision T̂ = min_i |p̂_t − p̂_i| > τ on its first n responses,
  the exact plug-in size and average power (methods note A5), and beside it the classical
  two-proportion
  test against ``base_query`` [the first null query] on all their responses (Eq. 1 of Acharyya et
  al. (2025),
  which the composite null replaces).

- ``embedding`` [none] = {model, responses, resamples}: the energy-distance test on embedded
  responses (methods note A8). Each response is embedded by the registered local model (the
  mean-pooled last hidden state, :mod:`tailgate.score.embedding`); each test query's first
  ``responses`` responses are tested against the null queries' first ``responses`` pooled, and
  against each null query alone (pairwise), with ``resamples`` label permutations whose seeds
  derive from the study seed. On the simulate backend every test and null query must be a
  ``bernoulli`` condition (the only simulated rows with a response text, "Yes." or "No.").

If fewer than m null queries or fewer than n responses per query are available, the design is
not met: the decisions are not made and criteria on them are NOT_TESTED. When every pilot query
answered alike (estimated width 0) no design exists: a reported status, and every criterion but
``naive_pvalue`` is NOT_TESTED.

Criteria statistics: ``reject(t)`` (1 reject, 0 keep), ``pvalue(t)`` (plug-in composite p-value),
``naive_pvalue(t)``, ``statistic(t)`` (T̂), and ``size``, ``average_power``, ``width`` (b̂ − â),
``m``, ``n``, ``tau`` of the design; with ``embedding``: ``energy_pvalue(t)`` and
``energy_statistic(t)`` (against the pooled null queries) and ``energy_pvalue(t, q)``,
``energy_statistic(t, q)`` (against null query q).
"""

from .statistics import *  # noqa: F403 (the statistics are the package's public face)
from .statistics import __all__  # noqa: F401
