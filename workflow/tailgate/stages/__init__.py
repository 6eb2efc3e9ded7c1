"""The protocol workflow's stages: the functions the Snakemake rules call (DESIGN, "The DAG").

One module per stage, each testable without Snakemake, each refusing on a changed
pre-registration and recording every artifact it writes:

``data``         prompts → generate[condition, shard] → score[scorer, condition, shard] → merge
``transform``    transform[scorer, scale, condition], transform_summary[scorer, scale]
``fit``          fit[scorer, scale, condition]
``bulk``         bulk[scorer, condition]
``gates``        gates[scorer, scale]
``sensitivity``  sensitivity[scorer, scale]
``power``        power
``verdict``      verdict.json
``report``       report.html, report.md and the standalone figures
``audit``        the verdict re-derivation that ``tailgate audit`` runs
``rule``         the adapter between a Snakemake job and a stage function
"""
