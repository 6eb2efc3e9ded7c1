"""``tailgate export mlflow``: every run of a study's ledger as an MLflow run.

Each line of ``results/<study>/runs.jsonl`` (:mod:`tailgate.runs.ledger`) becomes one run of the
experiment (default: the study's name):

* **params**: the lock entry the run used (``lock.*``: sequence, type, time, entry, canonical and
  raw hashes, previous entry, whether data existed, tool versions, pins), its design
  (``derived.*``) and every field of the registered pre-registration at that entry, flattened
  (``prereg.protocol.alpha``, ``prereg.conditions.0.name``, …);
* **metrics**: per scorer and scale the H1 verdict (1 PASS, 0 KILL), and for the run whose
  ``verdict.json`` is on disk (the latest) every gate's value and outcome per pair and threshold
  (``gate/<scorer>/<scale>/<a> vs <b>/q<q>/<gate>`` and ``….passed``; per threshold ``passed``
  and ``delta_xi``) and every criterion's value;
* **tags**: the outcome, run number, git commit, code digest, verdicts and criteria outcomes as
  text, the amendments up to the run's lock entry (reason, fields, whether data existed) and the
  deviations;
* **artifacts**: ``verdict.json``, ``report.html`` and the ledger, on the latest run.

**Only what audits is exported.** The plain audit (:func:`tailgate.audit.audit`) runs first; when
it fails, the export is refused (exit 4, the failing checks listed) and nothing is logged, so a
tracker never holds a verdict that the files under audit could not back. Each exported run
carries the audit's outcome (``tailgate.audit``), the **results digest** (``tailgate.results``:
the SHA-256 over every recorded artifact's path and SHA-256, the ledger included) of the results
it describes, a description (the registered title and hypotheses, the answer, the run's outcome),
its start and end as the run's own (the ledger line's; the start from Snakemake's log name), the
figures under ``figures/`` as artifacts, and the registration's pinned data files (``data.*``
pins: the import files) as MLflow dataset inputs with their SHA-256 digests. Outcomes are the
verdict's own words (``PASS``/``KILL`` for H1, the criteria's ``PASS``/``FAIL``); a tag without a
value is left out rather than written as ``None``.

Export is idempotent: a run's identity is the SHA-256 of its ledger line (the hash the next
line names), kept in the tag ``tailgate.ledger_line_sha256``; a run that already carries it is
left alone (one left unfinished by an interrupted export is deleted and made again). The run that
carries the files (``tailgate.describes`` = ``results``) describes the results as they were:
exporting again after the results changed logs the latest run again with the new digest and tags
every earlier run that described other results ``tailgate.superseded`` = ``true`` (with
``tailgate.superseded_by``, the run that describes the results now). The default
tracking store is the file store ``results/mlruns`` beside the study's results (MLflow keeps file
stores in maintenance mode behind ``MLFLOW_ALLOW_FILE_STORE``, which the export sets for a file
store unless it is set already; the file store needs no database package); any MLflow tracking
URI works (``--tracking-uri``, e.g. a server or ``sqlite:///results/mlflow.db``). MLflow's client
is an optional extra (:func:`tailgate.errors.install_fix`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tailgate.cli.base import Verbs, verb
from tailgate.errors import EXIT_AUDIT_FAILED, EXIT_OK, InputError, TailgateError, install_fix
from tailgate.files.safe_read import load_json
from tailgate.plans.layout import Layout
from tailgate.prereg.study import lock_path_for, prereg_for

IDENTITY_TAG = "tailgate.ledger_line_sha256"
RESULTS_TAG = "tailgate.results"
DESCRIBES_TAG = "tailgate.describes"
SUPERSEDED_TAG = "tailgate.superseded"
EXTRA = "mlflow"
_PARAM_MAX = 6000  # MLflow's longest param value
_BATCH = 100  # params, tags or metrics per log_batch call (MLflow's limits: 100, 100, 1000)
_BAD_KEY = re.compile(r"[^A-Za-z0-9_\-. /:]")


class ExportRefused(TailgateError):
    """The plain audit failed: nothing is exported (exit 4, the audit's code)."""

    exit_code = EXIT_AUDIT_FAILED


@dataclass(frozen=True)
class ExportResult:
    """What one export did: the experiment, and ledger run number → MLflow run id, split into
    runs created now and runs that were already there."""

    tracking_uri: str
    experiment: str
    created: dict[int, str]
    existing: dict[int, str]
    #: the results digest the export describes, and the MLflow runs it marked superseded
    results_digest: str = ""
    superseded: tuple[str, ...] = ()


def _mlflow() -> Any:
    try:
        import mlflow  # noqa: F401
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise InputError(
            "tailgate export mlflow needs the MLflow client, which is not installed. Fix: "
            f"{install_fix(EXTRA)}."
        ) from None
    return MlflowClient


def ledger_lines(results: Path) -> list[tuple[dict[str, Any], str]]:
    """The ledger's runs with the SHA-256 of each line (refused when the chain is broken)."""
    from tailgate.runs.ledger import LEDGER, ledger_text, read_ledger, verify_ledger

    runs = read_ledger(results)  # raises on a damaged line
    problems = verify_ledger(results)
    if problems:
        raise InputError(
            f"{results / LEDGER}: the run ledger's chain is broken ({'; '.join(problems)}). Fix: "
            f"restore the ledger; 'tailgate audit {results}' reports what changed."
        )
    lines = [x for x in ledger_text(results).splitlines() if x.strip()]
    return [
        (run, hashlib.sha256(line.encode()).hexdigest())
        for run, line in zip(runs, lines, strict=True)
    ]


def flatten(value: Any, prefix: str) -> dict[str, str]:
    """``value`` as ``{dotted.key: text}``: mappings and lists of mappings by key and index; a
    list of plain values and every non-text leaf as canonical JSON."""
    out: dict[str, str] = {}
    if isinstance(value, dict) and value:
        for k in sorted(value, key=str):
            out.update(flatten(value[k], f"{prefix}.{k}"))
    elif isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}.{i}"))
    else:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        out[prefix] = text
    return out


def _key(text: str) -> str:
    return _BAD_KEY.sub("_", text)[:250]


def _param_value(text: str) -> str:
    if len(text) <= _PARAM_MAX:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()
    tail = f"… (cut; sha256 {digest})"
    return text[: _PARAM_MAX - len(tail)] + tail


def _params(entry: dict[str, Any]) -> dict[str, str]:
    lock = {k: v for k, v in entry.items() if k not in ("prereg", "derived", "changes")}
    out = flatten(lock, "lock")
    out.update(flatten(entry.get("derived") or {}, "derived"))
    out.update(flatten(entry.get("prereg") or {}, "prereg"))
    return {_key(k): _param_value(v) for k, v in out.items()}


def _verdict_metrics(verdict: dict[str, Any]) -> tuple[dict[str, float], dict[str, str]]:
    """Gate and criterion values as metrics, their outcomes as metrics and tags."""
    from tailgate.generate.harness_groups import finite

    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    h1 = (verdict.get("h1") or {}).get("verdict")
    if h1:
        tags["h1"] = str(h1)
    for g in verdict.get("gates") or []:
        where = f"{g.get('scorer')}/{g.get('scale')}"
        for pair in g.get("pairs") or []:
            at = f"{where}/{pair.get('a')} vs {pair.get('b')}"
            if pair.get("verdict") is not None:
                tags[f"pair.{at}"] = str(pair.get("verdict"))
            for t in pair.get("thresholds") or []:
                q = f"gate/{at}/q{t.get('q')}"
                metrics[f"{q}/passed"] = float(bool(t.get("passed")))
                if finite(t.get("delta_xi")) is not None:
                    metrics[f"{q}/delta_xi"] = float(t["delta_xi"])
                for gate, result in sorted((t.get("gates") or {}).items()):
                    value = finite(result.get("value"))
                    if value is not None:
                        metrics[f"{q}/{gate}"] = value
                    # ".passed", not "/passed": a file store keeps each metric in a file named
                    # by its key, so no key may be a folder of another
                    metrics[f"{q}/{gate}.passed"] = float(bool(result.get("passed")))
    for c in verdict.get("criteria") or []:
        name = f"{c.get('analysis')}/{c.get('name')}"
        value = finite(c.get("value"))
        if value is not None:
            metrics[f"criterion/{name}"] = value
        metrics[f"criterion/{name}.pass"] = float(c.get("outcome") == "PASS")
        if c.get("outcome") is not None:
            tags[f"criterion.{name}"] = str(c.get("outcome"))
    for i, d in enumerate(verdict.get("deviations") or []):
        tags[f"deviation.{i}"] = json.dumps(d, sort_keys=True, default=str)
    return metrics, tags


def _run_payload(
    run: dict[str, Any], line_hash: str, entry: dict[str, Any] | None, lock: Any, study: str
) -> tuple[dict[str, str], dict[str, float], dict[str, str]]:
    """Params, metrics and tags of one ledger run (without ``verdict.json``); ``entry``: the
    lock entry it ran under (None where the lock no longer holds it)."""
    from tailgate.generate.harness_groups import finite
    from tailgate.prereg.deviations import amendment_log

    head = run.get("lock_head") or {}
    params = _params(entry) if entry is not None else {}
    git = run.get("git") or {}
    answer = run.get("answer") or {}
    tags = {
        IDENTITY_TAG: line_hash,
        "tailgate.study": study,
        "tailgate.run": str(run.get("run")),
        "tailgate.time": run.get("time"),
        "tailgate.started": run.get("started"),
        "tailgate.outcome": run.get("outcome"),
        "tailgate.mode": run.get("mode"),
        "tailgate.answer": answer.get("outcome"),
        "tailgate.lock_seq": None if head.get("seq") is None else str(head.get("seq")),
        "tailgate.lock_entry_hash": head.get("entry_hash"),
        "tailgate.code_digest": run.get("code_digest"),
        "tailgate.git_commit": git.get("commit") or "not in a git repository",
        "tailgate.git_dirty": None if not git else str(bool(git.get("dirty"))).lower(),
        "tailgate.previous_line_sha256": run.get("previous") or "first run of the ledger",
        "tailgate.jobs_total": None if run.get("jobs_total") is None else str(run["jobs_total"]),
    }
    if entry is None:
        tags["tailgate.lock_entry"] = "not in the lock (the lock was replaced since this run)"
    metrics: dict[str, float] = {"jobs_total": float(run.get("jobs_total") or 0)}
    for rule, n in sorted((run.get("jobs") or {}).items()):
        if finite(n) is not None:
            metrics[f"jobs/{rule}"] = float(n)
    for v in run.get("verdicts") or []:
        where = f"{v.get('scorer')}/{v.get('scale')}"
        metrics[f"h1/{where}"] = float(v.get("verdict") == "PASS")
        tags[f"verdict.{where}"] = str(v.get("verdict"))
    amendments, deviations = amendment_log(lock)
    seq = head.get("seq")
    upto = [a for a in amendments if isinstance(seq, int) and a["seq"] <= seq]
    for a in upto:
        tags[f"amendment.{a['seq']}"] = json.dumps(
            {k: a[k] for k in ("reason", "time", "classes", "data_existed", "entry_hash")}
            | {"fields": [f["path"] for f in a["fields"]]},
            sort_keys=True,
            default=str,
        )
    for i, d in enumerate(x for x in deviations if x["amendment"] in {a["seq"] for a in upto}):
        tags[f"deviation.amendment.{i}"] = str(d["what"])
    return params, metrics, {k: str(v) for k, v in tags.items() if v is not None and v != ""}


def _log_batches(client: Any, run_id: str, params: dict, metrics: dict, tags: dict) -> None:
    from mlflow.entities import Metric, Param, RunTag

    p = [Param(_key(k), v) for k, v in sorted(params.items())]
    t = [RunTag(_key(k), v[:8000]) for k, v in sorted(tags.items())]
    m = [Metric(_key(k), v, 0, 0) for k, v in sorted(metrics.items())]
    for i in range(0, max(len(p), len(t), len(m)), _BATCH):
        client.log_batch(
            run_id, params=p[i : i + _BATCH], tags=t[i : i + _BATCH], metrics=m[i : i + _BATCH]
        )


def default_tracking_uri(results: Path) -> str:
    """A file store ``<results>/../mlruns`` beside the study folders (never inside one: every
    file in ``results/<study>`` is audited)."""
    return (results.resolve().parent / "mlruns").as_uri()


def results_digest(results: Path) -> str:
    """SHA-256 over every recorded artifact's path and SHA-256 (the ledger included), in path
    order: which results an exported run describes."""
    from tailgate.runs.ledger import results_digest as digest
    from tailgate.runtime.provenance import iter_records

    return digest({r.path: r.sha256 for r in iter_records(results)})


def _audited(results: Path, prereg: Path, no_git: bool) -> Any:
    """The plain audit's report; :class:`ExportRefused` (listing the failing checks) when it
    fails."""
    from tailgate.audit import audit

    report = audit(results, prereg=prereg, no_git=no_git)
    if not report.ok:
        failed = [c for c in report.checks if not c.ok]
        lines = [
            f"tailgate export mlflow: refused: the audit of {results} fails "
            f"({len(report.failures)} problem(s) in {len(failed)} check(s)), so its results are "
            "not exported and nothing was logged:"
        ]
        for c in failed:
            lines.append(f"  [FAILED] {c.name}: {c.detail}")
            lines.extend(f"      {f}" for f in c.failures[:5])
            if len(c.failures) > 5:
                lines.append(f"      … and {len(c.failures) - 5} more")
        lines.append(
            f"Fix: restore the results the workflow wrote (or re-run it), then 'tailgate audit "
            f"{results}' and export again."
        )
        raise ExportRefused("\n".join(lines))
    return report


def export_mlflow(
    results: str | Path,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    no_git: bool = False,
) -> ExportResult:
    """Audit ``results`` (``results/<study>``), then log every ledger run that the store lacks
    (module docstring); ``no_git``: audit without git, as ``tailgate audit --no-git``."""
    from tailgate.prereg.lock import read_lock

    client_cls = _mlflow()
    results = Path(results)
    if not results.is_dir():
        raise InputError(
            f"tailgate export mlflow: {results} is not a results folder. Fix: pass "
            f"results/<study> of a study that has run."
        )
    runs = ledger_lines(results)
    if not runs:
        raise InputError(
            f"tailgate export mlflow: {results} has no run ledger (runs.jsonl), so there is no "
            f"run to export. Fix: run the study with Snakemake first."
        )
    prereg = prereg_for(results)
    report = _audited(results, prereg, no_git)
    study = results.name
    lock = read_lock(lock_path_for(prereg))
    uri = tracking_uri or default_tracking_uri(results)
    if uri.startswith("file:") or "://" not in uri:
        # MLflow keeps its file store in maintenance mode behind this opt-in; a file store is
        # what was asked for (or the default, which needs no database package)
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.exceptions import MlflowException

    audit_tags = {
        "tailgate.audit": "passed",
        "tailgate.audit_checks": str(len(report.checks)),
        "tailgate.audit_mode": "without git" if no_git else "with git",
        RESULTS_TAG: results_digest(results),
    }
    context = _Context(lock, study, results, prereg, audit_tags)
    try:
        return _export(client_cls(tracking_uri=uri), uri, runs, context, experiment)
    except MlflowException as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"tailgate export mlflow: the tracking store {uri} refused the export ({first[:400]})."
            f" Fix: check the --tracking-uri and that the server is running; runs already "
            f"logged stay, and exporting again logs only the missing ones."
        ) from None


@dataclass(frozen=True)
class _Context:
    lock: Any
    study: str
    results: Path
    prereg: Path
    audit_tags: dict[str, str]


def _millis(text: Any) -> int | None:
    """Milliseconds since the epoch of a ledger time (``…Z``), None when there is none."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _description(run: dict[str, Any], entry: dict[str, Any] | None, ctx: _Context) -> str:
    """The run's description (MLflow's note): the registered title and hypotheses, the answer,
    the run's outcome and the audit's."""
    prereg = (entry or {}).get("prereg") or {}
    lines = [f"# {prereg.get('title') or ctx.study}", ""]
    hypotheses = prereg.get("hypotheses")
    if isinstance(hypotheses, dict):
        lines += [f"- **{k}**: {v}" for k, v in hypotheses.items()] + [""]
    elif isinstance(hypotheses, list):
        lines += [f"- {h}" for h in hypotheses] + [""]
    answer = run.get("answer") or {}
    if answer:
        lines.append(f"**Answer: {answer.get('outcome')}** — {answer.get('summary')}")
    else:
        lines.append(f"Run {run.get('run')} ended {run.get('outcome')}; it recorded no answer.")
    lines += [
        "",
        f"Run {run.get('run')} of the study's ledger, {run.get('outcome')}, ended "
        f"{run.get('time')}; lock entry {(run.get('lock_head') or {}).get('seq')}. The plain "
        f"audit of the results passed when this run was exported (results digest "
        f"{ctx.audit_tags[RESULTS_TAG][:12]}…).",
    ]
    return "\n".join(lines)


def _datasets(entry: dict[str, Any] | None) -> list[Any]:
    """The registration's pinned data files (``data.*`` pins) as MLflow dataset inputs."""
    from mlflow.entities import Dataset, DatasetInput, InputTag

    out = []
    for field, pin in sorted(((entry or {}).get("pins") or {}).items()):
        if not field.startswith("data.") or not isinstance(pin, dict) or not pin.get("sha256"):
            continue
        profile = {k: pin[k] for k in ("bytes", "rows", "files", "type") if k in pin}
        dataset = Dataset(
            name=Path(str(pin.get("path"))).name,
            digest=str(pin["sha256"])[:32],  # MLflow keeps at most 36 characters
            source_type="local",
            source=str(pin.get("path")),
            profile=json.dumps(profile, sort_keys=True),
        )
        tags = [InputTag("mlflow.data.context", "evaluation")]
        tags += [InputTag("tailgate.sha256", str(pin["sha256"])), InputTag("tailgate.field", field)]
        out.append(DatasetInput(dataset, tags))
    return out


def _export(
    client: Any,
    uri: str,
    runs: list[tuple[dict[str, Any], str]],
    ctx: _Context,
    experiment: str | None,
) -> ExportResult:
    from mlflow.entities import RunStatus

    name = experiment or ctx.study
    found = client.get_experiment_by_name(name)
    exp_id = found.experiment_id if found is not None else client.create_experiment(name)
    latest = runs[-1][0].get("run")
    digest = ctx.audit_tags[RESULTS_TAG]
    created: dict[int, str] = {}
    existing: dict[int, str] = {}
    for run, line_hash in runs:
        number = int(run["run"])
        there = client.search_runs(
            [exp_id], filter_string=f"tags.`{IDENTITY_TAG}` = '{line_hash}'", max_results=50
        )
        done = [r for r in there if r.info.status == "FINISHED"]
        if number == latest:  # the run that carries the files: only one of these results
            done = [r for r in done if r.data.tags.get(RESULTS_TAG) == digest]
        if done:
            existing[number] = done[0].info.run_id
            continue
        for r in there:  # an export interrupted before it finished this run
            if r.info.status != "FINISHED":
                client.delete_run(r.info.run_id)
        created[number] = _log_run(client, exp_id, run, line_hash, ctx, number == latest)
        client.set_terminated(
            created[number],
            RunStatus.to_string(RunStatus.FINISHED),
            end_time=_millis(run.get("time")),
        )
    current = {**existing, **created}.get(int(latest))
    superseded = _supersede(client, exp_id, ctx.study, digest, current)
    return ExportResult(uri, name, created, existing, digest, tuple(superseded))


def _log_run(
    client: Any,
    exp_id: str,
    run: dict[str, Any],
    line_hash: str,
    ctx: _Context,
    is_latest: bool,
) -> str:
    """Log one ledger run (unfinished; the caller ends it at the run's own end time)."""
    from tailgate.runs.ledger import LEDGER

    head = run.get("lock_head") or {}
    entry = ctx.lock.entry_by_hash(str(head.get("entry_hash"))) if ctx.lock is not None else None
    params, metrics, tags = _run_payload(run, line_hash, entry, ctx.lock, ctx.study)
    tags.update(ctx.audit_tags)
    tags["mlflow.note.content"] = _description(run, entry, ctx)
    artifacts: list[tuple[Path, str | None]] = []
    if is_latest:
        tags[DESCRIBES_TAG] = "results"
        layout = Layout(ctx.results)
        verdict_path = layout.file("verdict")
        if verdict_path.is_file():
            more, more_tags = _verdict_metrics(load_json(verdict_path))
            metrics.update(more)
            tags.update(more_tags)
        artifacts = [(f, None) for f in (verdict_path, layout.file("report"), ctx.results / LEDGER)]
        artifacts += [
            (f, "figures") for f in sorted(layout.folder("figure").glob("*")) if f.is_file()
        ]
    else:
        tags[DESCRIBES_TAG] = "ledger line"
        tags["tailgate.artifacts"] = "on the run that describes the results (the latest)"
    started = _millis(run.get("started")) or _millis(run.get("time"))
    mlrun = client.create_run(
        exp_id,
        start_time=started,
        run_name=f"{ctx.study} run {run.get('run')}",
        tags={IDENTITY_TAG: line_hash},
    )
    run_id = mlrun.info.run_id
    _log_batches(client, run_id, params, metrics, tags)
    datasets = _datasets(entry)
    if datasets:
        client.log_inputs(run_id, datasets=datasets)
    for path, folder in artifacts:
        if path.is_file():
            client.log_artifact(run_id, str(path), folder)
    return run_id


def _supersede(client: Any, exp_id: str, study: str, digest: str, current: str | None) -> list[str]:
    """Tag every run of the study that described other results superseded by ``current``."""
    out = []
    runs = client.search_runs(
        [exp_id],
        filter_string=f"tags.`{DESCRIBES_TAG}` = 'results' and tags.`tailgate.study` = '{study}'",
        max_results=1000,
    )
    for r in runs:
        tags = r.data.tags
        if r.info.run_id == current or tags.get(RESULTS_TAG) == digest:
            continue
        if tags.get(SUPERSEDED_TAG) == "true":
            continue
        client.set_tag(r.info.run_id, SUPERSEDED_TAG, "true")
        if current is not None:
            client.set_tag(r.info.run_id, "tailgate.superseded_by", current)
        client.set_tag(r.info.run_id, "tailgate.superseded_results", digest)
        out.append(r.info.run_id)
    return out


def add_export(sub: Verbs) -> None:
    """``tailgate export mlflow RESULTS``."""
    p = verb(
        sub,
        "export",
        "log every run of a study's ledger to an experiment tracker (MLflow)",
        "Audit RESULTS first (the plain audit; exit 4 and nothing logged when it fails), then "
        "log each run of RESULTS/runs.jsonl as an MLflow run: the lock entry, its hashes and the "
        "registered decision fields as params; verdicts, gate and criterion values as metrics "
        "and tags; amendments and deviations as tags; verdict.json and report.html as artifacts. "
        "Each run carries the audit's outcome and the digest of the results it describes; a run "
        "that described results changed since is tagged superseded. A run already exported "
        "(same ledger line hash and results) is not logged again. Needs the mlflow "
        "extra.\n\nexample: tailgate export mlflow results/mystudy --tracking-uri "
        "http://127.0.0.1:5000",
        _cmd_export,
    )
    p.add_argument("tracker", choices=["mlflow"], help="the tracker (mlflow)")
    p.add_argument("results", metavar="RESULTS", help="results/<study>")
    p.add_argument(
        "--tracking-uri",
        metavar="URI",
        default=None,
        help="an MLflow tracking URI (default: a file store results/mlruns beside the study)",
    )
    p.add_argument(
        "--experiment", metavar="NAME", default=None, help="experiment name (default: study)"
    )
    p.add_argument(
        "--no-git",
        action="store_true",
        help="run the audit that comes first without git, as 'tailgate audit --no-git'",
    )


def _cmd_export(args: argparse.Namespace) -> int:
    res = export_mlflow(
        args.results,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        no_git=args.no_git,
    )
    print(f"audit of {args.results}: passed (results digest {res.results_digest[:12]}…)")
    for number, run_id in sorted({**res.created, **res.existing}.items()):
        print(f"run {number}: {'logged' if number in res.created else 'already there'} {run_id}")
    for run_id in res.superseded:
        print(f"superseded: {run_id} (it described results that changed since)")
    print(
        f"{len(res.created)} run(s) logged to experiment {res.experiment!r} at {res.tracking_uri}"
    )
    return EXIT_OK
