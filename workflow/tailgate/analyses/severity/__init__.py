"""Analysis kind ``severity``: severity index b, families and the deployment table (ERRORQUAKE
(2026)).

Data: the severities of one registered scorer (``scorer``; ``scale`` [identity]) for each of the
analysis's ``conditions``, every value on the registered grid 0, δ, …, top (0 = correct; an
imported column, a judge scorer's parsed grade, or simulated Gutenberg–Richter data). The
statistics are those of :mod:`tailgate.analyses.severity.statistics` (the methods note section B).

Parameters (``$defs/analysis_severity``; an absent field means the default in brackets):
``grid`` {``step`` [0.5], ``top`` [4.0]}; ``mc`` [``reselect``: m_c by KS in the data and in each
resample] or a fixed grid value; ``min_events`` [30] per m_c candidate (and ≥ 3 grid levels);
``resamples`` B [2000]; ``level`` of every CI [0.95]; ``tolerance`` of matched accuracy |Δε|
[0.05]; ``delta_b_floor`` a matched pair's |Δb| must reach to count [0]; ``x_min`` of the family
fits [the first positive level]; ``decisive`` {``pvalue`` [0.05], ``delta_bic`` [6],
``rule`` [``test``: the test of the BIC-best family against the runner-up must reject in its
favour, the likelihood-ratio test with the boundary χ² mixture for a nested pair and Vuong's
otherwise; ``paper``: that test's p < pvalue or ΔBIC > delta_bic, ERRORQUAKE (2026) Section 2]};
``thresholds`` of the deployment table [1.5, 2.0, 2.5, 3.0, 3.5, 4.0]; ``secondary`` [none] a
second judge (scorer) and ``aggregation`` [primary] of the two: ``primary``, ``secondary``,
``max``, ``min`` or ``mean`` rounded to the grid (halves up) over the rows both graded; with a
secondary judge every other aggregation's headline count is reported as a robustness check
(ERRORQUAKE (2026), Section 4.1, "Judge-aggregation robustness"), criterion statistic
``disjoint_pairs_under(rule)``.

Criteria statistics (``name(args)``):

==================================  ===========================================================
``disjoint_pairs``                  matched pairs with disjoint b CIs and |Δb| ≥ floor (ERRORQUAKE
(2026)'s
                                    headline); ``disjoint_pairs_low``/``_high`` its CI
``matched_pairs``                   pairs with |Δε| < tolerance
``b(c)``, ``b_low(c)``, ``b_high(c)``  finite-grid b̂ of condition c and its bootstrap CI
``error_rate(c)``                   ε = P(S > 0)
``delta_b(a, b)``                   b̂_a − b̂_b; ``delta_b_pvalue(a, b)`` its bootstrap test at the
                                    shared m_c (matched pairs only, ERRORQUAKE (2026), App. O)
``tail_ratio(c)``                   P(M ≥ 3)/P(M ≥ 1)
``per_million(c, t)``               events with severity ≥ t per million queries
``non_exponential``                 conditions whose BIC-best family is not the exponential
``decisive``                        conditions whose BIC-best family is decisive
==================================  ===========================================================
"""

from .statistics import *  # noqa: F403 (the statistics are the package's public face)
from .statistics import __all__  # noqa: F401
