"""Analysis kind ``dominance``: stochastic dominance, mean–risk and the metrics portfolio (Nitsure
et al. (2024)).

Parameters (``$defs/analysis_dominance`` of the schema; an absent field means the default in
brackets): ``conditions`` (≥ 2) and ``scorers`` (≥ 1) to compare; ``scale`` [the protocol's
headline scale where the scorer has it, else identity]; ``orientation`` per scorer [from the
scorer's one declaration ``worse``; a registered entry must agree with it: ``higher_is_worse`` is
``worse: higher``]: the severities are the scores oriented so that larger is worse
(:func:`tailgate.prereg.study.worse_of`), and they are negated so that "dominates" means
"safer" (methods note D);
``orders`` [1, 2]; ``alpha`` [``protocol.alpha``], tested at α/k²; ``resamples`` B [1000];
``resampling`` [``protocol.bootstrap.resampling``]: ``paired`` resamples prompts jointly and needs
every condition on the same prompts; ``eps0`` [none] absolute ε₀-tests; ``risk_level`` p of
−TVaR and the quantile MAD [1 − ``protocol.tvar_level``]; ``weights`` λ of the portfolio [equal];
``aggregation`` of ranks across metrics and risks [borda]; ``calibration`` of the absolute and
relative tests' upper bounds [``logit_percentile``; ``normal`` is ε̂ + z·σ̂ of Eqs. 11–13, methods
note D7]. ``calibration`` has no schema default, so registrations frozen before it existed keep
their hash; absent means ``logit_percentile``, and the stored statistics and the report say which
calibration each bound used.

Targets: each scorer on its own (test @ M), and with two or more scorers the ``portfolio``
(Eq. 9; test @ P) and the ``aggregate`` of the per-metric ranks (RA(test @ M)).

Criteria statistics (``[target:]name(args)``; the target may be left out with one scorer):

============================  =====================================================
``eps_fsd(a, b)``             ε_W2 of "a dominates b" (Eq. 4); ``eps_ssd`` ε_IQ (Eq. 5)
``eps_fsd_ucb(a, b)``         upper bound of ε at 1 − α/k² (``calibration``): the
                              absolute test passes at ε₀ if ≤ ε₀
``delta_fsd(a, b)``           Δε_ab = ε_a − ε_b (Eq. 8)
``r_fsd(a, b)``               upper bound of Δε_ab at 1 − α/k²: "a R-FSD-dominates b"
                              if ≤ 0
``rank_fsd(a)``               Borda rank of the relative test (1 = best)
``rank_mean_risk(a)``         mean–risk rank aggregated over the SSD-consistent risks
``score_gini_tail(a)``, …     μ − r for r in sd, semi_deviation, neg_tvar, mad_quantile,
                              gini_tail
``mwr(a)``, ``rank_mwr(a)``   mean win rate (Eq. 15) and its rank
============================  =====================================================

(and the same with ``ssd``). The ``aggregate`` target has the ``rank_*`` statistics. The bound
statistics ``r_*`` and ``eps_*_ucb`` read 1 where the distinctness guard does not reject equal
distributions, because a win needs it (so a criterion passes exactly where the test wins,
methods note D9); ``eps_*`` and ``delta_*`` are point estimates; a rank's note says whether it
rests on the wins or, tied in wins, on point estimates.
"""

# The statistics (:mod:`.statistics`, whose numba kernels compile on first use) are not imported
# here: a job that only validates a study, or registers no dominance analysis, never loads them.
