# Rule script of every stage: the job's rule names its stage (its {plan} wildcard the plan it
# computes under), and the stage's function runs with what the rule declares, through
# tailgate.stages.rule.run (one log per job, a user error's message and exit code). A job
# imports only its own stage's module (the report package alone pulls in matplotlib).
import _tailgate  # noqa: F401, I001 - the repository's tailgate first (conda environments)
import signal
from importlib import import_module

from tailgate.stages.rule import results_of, run

sm = snakemake  # noqa: F821 - injected by Snakemake
wc, inp, out, params = sm.wildcards, sm.input, sm.output, sm.params


def _plan():
    """The plan the stage computes under (the rule's ``plan`` parameter, from its wildcard)."""
    return {"plan": params.plan}


def _select_prompts():
    return {**_plan(), "out": out.prompts, "options": dict(params.options)}


def _generate():
    return {
        **_plan(),
        "condition": wc.condition,
        "shard": int(wc.shard),
        "out": out.generations,
        "options": dict(params.options),
        "prompts": inp.get("prompts"),
    }


def _score():
    return {
        **_plan(),
        "scorer": wc.scorer,
        "condition": wc.condition,
        "generations": inp.generations,
        "out": out.scores,
        "options": dict(params.options),
    }


def _embed():
    # one job embeds every shard its rule lists (params.shards: the plan and condition of each)
    shards = [
        (plan, condition, generations, embeddings)
        for (plan, condition), generations, embeddings in zip(
            params.shards, inp.generations, out.embeddings, strict=True
        )
    ]
    return {
        "model": wc.embedder,
        "shards": list(shards),
        "options": dict(params.options),
    }


def _transform():
    return {
        **_plan(),
        "scorer": wc.scorer,
        "scale": wc.scale,
        "condition": wc.condition,
        "scores": list(inp.scores),
        "out": out.severities,
    }


def _transform_summary():
    names = list(params.conditions)
    n = int(params.shards)  # the inputs are every condition's shards, condition-major
    shards = list(inp.scores)
    return {
        **_plan(),
        "scorer": wc.scorer,
        "scale": wc.scale,
        "scores": {c: shards[i * n : (i + 1) * n] for i, c in enumerate(names)},
        "summary": out.summary,
    }


def _fit():
    return {
        **_plan(),
        "scorer": wc.scorer,
        "scale": wc.scale,
        "condition": wc.condition,
        "severities": inp.severities,
        "transform_summary": inp.summary,
        "out": out.fits,
        "workers": int(sm.threads),
    }


def _bulk():
    return {
        **_plan(),
        "scorer": wc.scorer,
        "condition": wc.condition,
        "severities": dict(zip(params.scales, inp.severities, strict=True)),
        "out": out.bulk,
    }


def _gates():
    names = list(params.conditions)
    return {
        **_plan(),
        "scorer": wc.scorer,
        "scale": wc.scale,
        "fits": dict(zip(names, inp.fits, strict=True)),
        "bulk": dict(zip(names, inp.bulk, strict=True)),
        "out": out.gates,
    }


def _sensitivity():
    return {"gates": inp.gates, "out": out.sensitivity}


def _power():
    return {"out": out[0], "workers": int(sm.threads)}


def _analysis():
    return {
        **_plan(),
        "analysis": wc.analysis,
        "inputs": {name: list(getattr(inp, name)) for name in params.inputs},
        "out": out.measures,
        "threads": int(sm.threads),
    }


def _grade():
    return {**_plan(), "analysis": wc.analysis, "measures": inp.measures, "out": out.stats}


def _verdict():
    return {
        "gates": list(inp.gates),
        "sensitivity": list(inp.sensitivity),
        "fits": list(inp.fits),
        "analyses": list(inp.analyses),
        "generations": list(inp.generations),
        "registered_gates": list(inp.registered_gates),
        "registered_analyses": list(inp.registered_analyses),
        "out": out.verdict,
    }


def _report():
    # a study without the protocol has no fits, power statistics or protocol figures
    return {
        "verdict": inp.verdict,
        "fits": list(inp.fits),
        "power": next(iter(inp.power), None),
        "analyses": list(inp.analyses),
        "out_html": out.html,
        "out_md": out.md,
        "figure_paths": dict(
            zip(["power", "stability"] if out.figures else [], out.figures, strict=True)
        ),
        "processes": int(sm.resources.get("draw", 1)),
    }


#: stage (rule) -> its function's module and name, and its arguments beyond the registration
#: and the results folder
STAGES = {
    "select_prompts": ("tailgate.stages.data", "prompts_stage", _select_prompts),
    "generate": ("tailgate.stages.data", "generate_stage", _generate),
    "score": ("tailgate.stages.data", "score_stage", _score),
    "embed": ("tailgate.stages.data", "embed_stage", _embed),
    "transform": ("tailgate.stages.transform", "transform_stage", _transform),
    "transform_summary": (
        "tailgate.stages.transform",
        "transform_summary_stage",
        _transform_summary,
    ),
    "fit": ("tailgate.stages.fit", "fit_stage", _fit),
    "bulk": ("tailgate.stages.bulk", "bulk_stage", _bulk),
    "gates": ("tailgate.stages.gates", "gates_stage", _gates),
    "sensitivity": ("tailgate.stages.sensitivity", "sensitivity_stage", _sensitivity),
    "power": ("tailgate.stages.power", "power_stage", _power),
    "operating": ("tailgate.stages.power", "operating_stage", _power),
    "analysis": ("tailgate.stages.analyses", "analysis_stage", _analysis),
    "grade": ("tailgate.stages.analyses", "grade_stage", _grade),
    "verdict": ("tailgate.stages.verdict", "verdict_stage", _verdict),
    "report": ("tailgate.report.stage", "report_stage", _report),
}

module, function, arguments = STAGES[sm.rule]
try:
    run(
        sm.log[0],
        getattr(import_module(module), function),
        prereg=params.prereg,
        results=results_of(params.prereg),
        **arguments(),
    )
finally:
    # the job's work is over: a Ctrl-C now would only break the interpreter's exit (its
    # clean-up at exit) with a traceback; the job ends as it would have
    signal.signal(signal.SIGINT, signal.SIG_IGN)
