"""``tailgate audit --reproduce``: re-run every derived stage from the data, compare every file.

The audit re-derives verdicts from stored statistics; this re-derives the statistics themselves.
**It runs nothing the audited repository chose.** A scratch project receives the registration,
its lock and the files it pins as committed in the repository's ``HEAD`` (git blobs read as data:
no configuration, attribute, hook or replace object of the repository applies), each at the path
the registration names relative to the project (the import job and the pins resolve them there),
so nothing else of the repository — no ``matplotlibrc``, ``.numba_config.yaml``,
``sitecustomize.py``, committed ``results/`` or ``.snakemake/`` — is in it; a pinned path inside a
hidden folder, one of the folders the re-run writes (``preregistrations/``, ``config/``,
``results/``), a top-level ``matplotlibrc`` or one leading out of the project is refused (not
run). That project folder is on no import path: Snakemake runs with an isolated interpreter
(``python -P -m snakemake``, and ``PYTHONSAFEPATH`` for every job and the warm server), so a pinned
data file named ``snakemake.py``, ``numpy.py`` or ``sitecustomize.py`` is only ever read as data,
and it reads no workflow profile (a pinned ``profiles/default/`` would be one). Every cache starts
empty in the scratch folder's ``.caches/`` (numba's kernels, matplotlib's configuration, so its
default settings; the XDG cache and the Hugging Face home;
:func:`tailgate.runtime.environment.fresh_caches`), and the auditor's own code runs only when none
of its compiled files differs from its source (:func:`tailgate.runtime.fingerprint.stale_bytecode`:
a planted ``.pyc`` in a checkout the auditor's ``tailgate`` is installed from); the output says so.
The study's data enters the project as follows, and then the project's own Snakemake DAG (the
auditor's ``Snakefile`` and ``tailgate`` package — the same stage functions, not a second
implementation) runs to the end:

* ``simulate`` and ``import`` backends: nothing is copied — the data is made again from the
  registered seed, or from the pinned import file;
* ``transformers`` backend: only the recorded prompts and generations (the registered plan's
  too, under ``registered/``) are taken from the study,
  each checked against its provenance record (whose inputs, the pinned prompt source among
  them, the plain audit checks). The DAG then runs in two steps. First, up to the ``score`` and
  ``embed`` rules: every score, per-token loss, judge grade and embedding is recomputed from
  the generations with the registered models and compared with the recorded file — what a
  model computed within :data:`~tailgate.audit.compare.MODEL_RTOL` (float32 model arithmetic
  rounds differently with the batch shapes and the device, which the registration leaves
  free), any other scorer's output like every file below; a difference is a failure naming
  the file and row, and the later stages are then not re-run. Else the recorded score and
  embedding files, so vouched for, replace the recomputed ones and every later stage runs from
  them, so that everything after the models is compared as exactly as for the other backends.
  A scorer or embedder whose model cannot be loaded here (:mod:`tailgate.runtime.loadable`: a
  hub id with no local copy while offline, a missing package) is not a failure: its recorded
  files are taken as they are, and the audit lists it, naming the scorer and the model, under
  what it cannot prove (:attr:`~tailgate.audit.findings.AuditReport.cannot_prove`).
  With ``generate`` (``--generate``) the prompts and generations are made again too, from the
  registered prompt source, seed and models: every row is sampled from its own seeded stream,
  so on the same kind of device and versions the generations come out byte-identical and a
  CPU-sized model re-generates in seconds to minutes; another device may round a logit
  differently and sample another token, which then fails as a differing generation.

The re-run stops before the report: the plain audit's report check renders the report from the
stored statistics and compares it with the stored one, and the re-run shows those statistics to
be what the data give (rendering the report again would prove nothing more; it must be there).
Every other file of the study (``logs/``, ``provenance/`` and the run ledger aside, whose times
differ by nature) is compared with its reproduction (:mod:`tailgate.audit.compare`): byte for byte
when the versions recorded with the file are the auditor's (runs are byte-identical across cores
and reruns, so any difference means the stored results were not made by this code from this data
under this registration); by decoded value otherwise — tables and statistics with floats within
a few ULP, the report by its text and what its figures plot — since other versions of pyarrow or
matplotlib write other bytes for the same values. Each differing, missing or extra file is a
failure naming it, and a differing value names itself and the versions.
``tailgate env RESULTS`` writes the recorded versions as a requirements file, to audit in the
recorded environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

import tailgate
from tailgate.errors import TailgateError
from tailgate.files.safe_read import load_json
from tailgate.plans.entries import BRANCH_DIR, entry_study
from tailgate.plans.registration import load
from tailgate.prereg.canonical import sha256_file
from tailgate.prereg.committed import commit_registration
from tailgate.prereg.gitinfo import repo_root, run_git
from tailgate.prereg.lock import read_lock
from tailgate.prereg.pins import project_root, registered_paths
from tailgate.prereg.study import lock_path_for, prereg_for
from tailgate.runs.ledger import LEDGER
from tailgate.runtime.environment import fresh_caches
from tailgate.runtime.fingerprint import stale_bytecode
from tailgate.runtime.loadable import model_needs, scorer_needs, why_unloadable
from tailgate.runtime.provenance import record_path

from .artifacts import result_files
from .compare import MODEL_RTOL, compare_made, compare_model_output
from .findings import AuditReport, Check

__all__ = ["reproduce", "snakefile"]

#: The recorded data a transformers study's reproduction starts from (relative to
#: results/<study>): what the registered models generated from the selected prompts.
_PROMPTS = ("prompts.parquet", "prompts.digest.json")
_GENERATIONS = "generations"
#: folders of what the registered models computed from the generations, per scorer or embedder
_COMPUTED = ("scores", "embeddings")


def snakefile() -> Path:
    """The ``Snakefile`` beside the imported ``tailgate`` package (the auditor's workflow)."""
    return Path(tailgate.__file__).resolve().parent.parent.parent / "Snakefile"


#: folders of the scratch project that the re-run writes itself
_OWN = frozenset({"preregistrations", "config", "results"})
#: the folder of the scratch project that holds its caches (:func:`fresh_caches`)
CACHES = ".caches"
_BLOB_MODES = {b"100644": 0o644, b"100755": 0o755}


def _committed(home: Path, *args: str) -> bytes | None:
    """``git ARGS`` in the repository holding ``home``, reading it as data (no configuration,
    attribute, hook or replace object of the repository; :func:`tailgate.prereg.gitinfo.run_git`);
    None when there is none or git fails. The reproduction's only git reads."""
    out = run_git(home, *args, text=False)
    return out if isinstance(out, bytes) else None


def _unplaceable(text: str) -> str | None:
    """Why a registered relative path cannot be a file of the scratch project (None: it can)."""
    parts = Path(text).parts
    if ".." in parts:
        return "it leads out of the project; register a path inside it, or an absolute one"
    if any(part.startswith(".") for part in parts):
        return "it lies in a hidden folder or file, where git, Snakemake and numba read settings"
    if parts[0] in _OWN:
        return f"the re-run writes {parts[0]}/ itself"
    if parts == ("matplotlibrc",):
        return "matplotlib reads its settings from ./matplotlibrc"
    return None


def _placed(study: Any) -> tuple[list[str], list[str]]:
    """The registered relative paths of the study's local inputs, and why each one that cannot
    be placed in the scratch project cannot (absolute paths are read where they are)."""
    rels, refused = [], []
    for field_name, (text, _) in registered_paths(study).items():
        if os.path.isabs(os.path.expanduser(text)):
            continue
        why = _unplaceable(text)
        if why is None:
            rels.append(Path(text).as_posix())
        else:
            refused.append(f"{field_name} = {text!r}: {why} (the reproduction was not run)")
    return rels, refused


def _blobs(home: Path, commit: str, rel: str) -> list[tuple[str, str, int]] | None:
    """(path below the project, blob id, file mode) of every file ``rel`` (a file or a folder
    below ``home``) is in ``commit``; None when the commit holds none (or a link)."""
    top = repo_root(home)
    if top is None:
        return None
    try:
        prefix = Path(os.path.realpath(home)).relative_to(Path(top).resolve()).as_posix()
    except ValueError:
        return None
    full = rel if prefix == "." else f"{prefix}/{rel}"
    out = _committed(home, "ls-tree", "-r", "-z", "--full-tree", commit, "--", full)
    found = []
    for entry in (out or b"").split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        fields = meta.split()
        name = os.fsdecode(path)
        if len(fields) != 3 or not (name == full or name.startswith(full + "/")):
            continue
        if fields[1] != b"blob" or fields[0] not in _BLOB_MODES:
            return None  # a link or a submodule: taken from the work tree
        below = name if prefix == "." else name[len(prefix) + 1 :]
        found.append((below, fields[2].decode(), _BLOB_MODES[fields[0]]))
    return found or None


def _take_committed(home: Path, rels: list[str], dst: Path) -> tuple[str | None, list[str]]:
    """Write each of ``rels`` (files or folders below the project ``home``) into ``dst`` as
    ``HEAD`` holds it, dated with the commit's time (older than anything the re-run makes);
    what ``HEAD`` does not hold is copied from the work tree (the re-run checks every pinned
    file against its pin before any job). Returns the commit (None outside git) and the paths
    taken from the work tree."""
    commit = _committed(home, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
    sha = commit.decode().strip() if commit else ""
    raw = _committed(home, "cat-file", "commit", sha) if sha else None
    stamps = [line.split() for line in (raw or b"").splitlines()]
    when = next((int(f[-2]) for f in stamps if f[:1] == [b"committer"] and len(f) > 2), None)
    loose = []
    for rel in rels:
        files = _blobs(home, sha, rel) if sha else None
        data = [(b, _committed(home, "cat-file", "blob", blob), m) for b, blob, m in files or []]
        if not data or any(d is None for _, d, _ in data):
            loose.append(rel)
            src, target = home / rel, dst / rel
            if src.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)
            elif src.is_dir():
                shutil.copytree(src, target, dirs_exist_ok=True, symlinks=False)
            continue
        for below, content, mode in data:
            target = dst / below
            if target.is_file() and not target.is_symlink() and target.read_bytes() == content:
                continue  # a kept scratch folder's, left with its time
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)
            target.write_bytes(content or b"")
            target.chmod(mode)
            if when is not None:
                os.utime(target, (when, when))
    return (sha or None), loose


@dataclass
class Taken:
    """What a transformers study's reproduction takes as recorded: the failures found checking
    the copied files against their records, and each scorer or embedder whose recorded files
    (``stand_ins``) stand in for a recomputation (``fallback``; with why, in ``unproven``, for
    the audit's cannot-prove list)."""

    failures: list[str] = field(default_factory=list)
    unproven: list[str] = field(default_factory=list)
    fallback: set[str] = field(default_factory=set)
    stand_ins: list[str] = field(default_factory=list)


def _trees(study: Any) -> list[tuple[str, Any]]:
    """(prefix, the study it was computed under) of each tree of results: the main one, and
    after an amendment the registered plan's (:mod:`tailgate.plans.entries`)."""
    lock = read_lock(study.lock_path)
    if lock is None or len(lock.chain) < 2:
        return [("", study)]
    return [("", study), (f"{BRANCH_DIR}/", entry_study(study, lock.chain[0]))]


def _unloadable(study: Any, rd: Path, root: Path) -> dict[str, str]:
    """``scores/<scorer>`` or ``embeddings/<key>`` (recorded folders, also the registered
    plan's under ``registered/``) → what the auditor's machine cannot load for it
    (:mod:`tailgate.runtime.loadable`)."""
    out = {}
    for prefix, plan in _trees(study):
        for top, needs in (("scores", scorer_needs), ("embeddings", model_needs)):
            folder = rd / f"{prefix}{top}"
            for sub in (
                sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
            ):
                why = why_unloadable(needs(plan, sub), root)
                if why:
                    out[f"{prefix}{top}/{sub}"] = why
    return out


def _branch(rel: str) -> tuple[str, str]:
    """(``registered/`` or ``""``, the path inside that tree)."""
    head, _, rest = rel.partition("/")
    return (f"{BRANCH_DIR}/", rest) if head == BRANCH_DIR and rest else ("", rel)


def _first(rel: str) -> str:
    """``scores/<scorer>`` or ``embeddings/<key>`` of a file under them; else its top folder
    (prefixed ``registered/`` in the registered plan's tree)."""
    prefix, inner = _branch(rel)
    parts = inner.split("/")
    return prefix + ("/".join(parts[:2]) if parts[0] in _COMPUTED else parts[0])


def _computed(rel: str) -> bool:
    """Whether ``rel`` lies in a folder of what a model computed (in either tree)."""
    return _branch(_first(rel))[1].split("/")[0] in _COMPUTED


def _copy_checked(rd: Path, dst: Path, rels: list[str], stamp: float) -> list[str]:
    """Copy each recorded ``rd / rel`` and its record into ``dst`` with the times ``stamp``,
    after checking it against that record; return the failures (files not copied)."""
    failures = []
    for rel in rels:
        src, rec = rd / rel, record_path(rd / rel, rd)
        try:
            recorded = load_json(rec)["sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            recorded = None
        if recorded != sha256_file(src):
            failures.append(
                f"{src}: does not match its provenance record {rec} (field sha256); the "
                "reproduction starts only from recorded files that their records vouch for"
            )
            continue
        for path in (src, rec):
            target = dst / path.relative_to(rd)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            os.utime(target, (stamp, stamp))
    return failures


def _take_recorded(study: Any, rd: Path, dst: Path, root: Path, *, generate: bool) -> Taken:
    """Copy into ``dst`` the recorded data of a transformers study (the prompts and
    generations, unless ``generate``) and the files of every scorer or embedder whose model
    cannot be loaded here (``root``: the study's project), each checked against its record.

    The prompts and generations are stamped older than anything the run writes (Snakemake
    re-runs every job after them); stand-ins newer than anything (no job of the first step
    re-makes them, also when ``generate`` re-makes the generations they were computed from;
    the second step copies them again with the time it starts)."""
    taken = Taken()
    fallback = _unloadable(study, rd, root)
    for prefix, why in fallback.items():
        kind, name = prefix.split("/")
        what = "scorer" if kind == "scores" else "embedding model"
        taken.unproven.append(
            f"{what} '{name}': {why}; its recorded {prefix}/ files were taken as they are, "
            "so the reproduction cannot prove they are what that model computes from the "
            "generations (audit where it loads to check them)"
        )
    rels = result_files(rd)
    data = [] if generate else [r for r in rels if _branch(r)[1] in _PROMPTS
                                or _branch(_first(r))[1] == _GENERATIONS]  # fmt: skip
    stand_in = [r for r in rels if _first(r) in fallback]
    taken.failures = _copy_checked(rd, dst, data, time.time() - 3600)
    taken.failures += _copy_checked(rd, dst, stand_in, time.time() + 86400)
    taken.stand_ins, taken.fallback = stand_in, set(fallback)
    return taken


def _by_model(study: Any, prefix: str) -> bool:
    """Whether ``scores/<scorer>`` or ``embeddings/<key>`` (in either tree) holds what a model
    computed."""
    tree, inner = _branch(prefix)
    plan = dict(_trees(study)).get(tree, study)
    kind, name = inner.split("/")
    needs = (scorer_needs if kind == "scores" else model_needs)(plan, name)
    return any(n.source or n.path or n.detoxify_head for n in needs)


def _check_computed(study: Any, rd: Path, out: Path, taken: Taken) -> tuple[list[str], list[str]]:
    """Compare every recorded score, per-token loss, judge grade and embedding file (but the
    stand-ins) with its recomputation in ``out``: a model's output within the model tolerance
    (:func:`tailgate.audit.compare.compare_model_output`), any other scorer's like every file
    (:func:`tailgate.audit.compare.compare_made`). Returns the failures and the files
    compared."""
    rels = [r for r in result_files(rd) if _computed(r)]
    rels = [r for r in rels if _first(r) not in taken.fallback]
    fails = [
        f"{rd / r}: not produced when the scores are recomputed"
        for r in rels
        if not (out / r).is_file()
    ]
    rels = [r for r in rels if (out / r).is_file()]
    model = [r for r in rels if _by_model(study, _first(r))]
    for rel in model:
        cmp = compare_model_output(rd / rel, out / rel)
        fails += [f"{rd / rel}: differs from its recomputation: {d}" for d in cmp.differences]
    others = [(r, out / r) for r in rels if r not in model]
    fails += compare_made(rd, others, "differs from its recomputation", rerun=True).failures
    return fails, rels


def _snakemake(root: Path, cores: int, log: Path, *extra: str) -> tuple[int, str, float]:
    """Run the auditor's workflow in ``root`` (to the end: up to the verdict, as
    :data:`REPORT_RULE` is left to the report check); return the exit status, the log's last
    lines and the seconds it took."""
    # Snakemake 9 runs every job of the DAG when --omit-from comes with --until
    omit = () if "--until" in extra else ("--omit-from", REPORT_RULE)
    # -P: neither the project folder (the working folder) nor any other is put first on the
    # import path; PYTHONSAFEPATH does the same for every job and the warm server. No workflow
    # profile: Snakemake would read one from the project's profiles/default/ (a pinned folder
    # could put it there), and a profile's resource expressions are Python it evaluates.
    cmd = [
        sys.executable, "-P", "-m", "snakemake", "-s", str(snakefile()), "-d", str(root),
        "--workflow-profile", "none", "--cores", str(cores), "--rerun-triggers", "mtime",
        "--quiet", "rules", *omit, *extra,
    ]  # fmt: skip
    env = {**fresh_caches(root / CACHES), "PYTHONSAFEPATH": "1"}
    started = time.perf_counter()
    with open(log, "a", encoding="utf-8") as fh:
        res = subprocess.run(
            cmd, stdout=fh, stderr=subprocess.STDOUT, check=False, cwd=root, env=env
        )
    wall = time.perf_counter() - started
    return res.returncode, log.read_text(encoding="utf-8", errors="replace")[-1500:], wall


#: the rule that renders the report from the verdict and the statistics. The re-run stops
#: before it: the plain audit's report check renders the report from the stored statistics and
#: compares it with the stored one, and the re-run shows those statistics to be what the data
#: give, so the stored report is the re-run's too; rendering it a second time (a serial job at
#: the end of the DAG, most of it drawing figures) would prove nothing more.
REPORT_RULE = "report"


def reproduce(
    results_dir: Path,
    *,
    cores: int = 2,
    keep: str | Path | None = None,
    generate: bool = False,
) -> tuple[Check, list[str]]:
    """The ``reproduce`` check of ``results_dir`` and what it could not prove (module
    docstring); ``generate``: re-generate a transformers study's prompts and generations too,
    instead of starting from them."""
    rd = Path(results_dir)
    prereg = prereg_for(rd)
    try:
        study = load(prereg)
    except TailgateError as exc:
        return Check("reproduce", "not run", [str(exc)]), []
    scratch = Path(keep) if keep is not None else Path(tempfile.mkdtemp(prefix="tailgate-repro-"))
    try:
        return _run(rd, study, prereg, scratch, cores, generate)
    finally:
        if keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


def with_reproduction(report: AuditReport, check: Check, unproven: list[str]) -> AuditReport:
    """``report`` with the ``reproduce`` check after its own and what that could not prove."""
    return replace(
        report,
        checks=[*report.checks, check],
        cannot_prove=[*report.cannot_prove, *unproven],
    )


def _generating_models(study: Any, root: Path) -> list[str]:
    """Why each condition's model cannot be loaded here (``--generate`` needs them all)."""
    out = []
    for cond in study.conditions():
        if cond.get("model") is None:
            continue
        why = why_unloadable(model_needs(study, str(cond["model"])), root)
        if why:
            out.append(f"condition '{cond['name']}': {why}")
    return out


def _stale_own_code() -> list[str]:
    """A failure for each compiled file of the auditor's package and rule scripts that Python
    would run in place of its source but that is not compiled from it."""
    package = Path(tailgate.__file__).resolve().parent
    found = [(f, s) for f in (package, package.parent / "scripts") for s in stale_bytecode(f)]
    return [
        f"{folder}/{what}: the auditor's own code would not run as its source says; delete the "
        "__pycache__ folders of that checkout (the reproduction was not run)"
        for folder, what in found
    ]


def _isolation(commit: str | None, pinned: int, loose: list[str]) -> str:
    """The line saying what the re-run starts from and what it runs with (module docstring)."""
    source = f"commit {commit[:12]}" if commit else "the work tree (no git repository)"
    taken = f"; from the work tree, not committed: {', '.join(loose)}" if loose else ""
    return (
        f"isolated re-run: the registration, its lock and {pinned} pinned input(s) as in "
        f"{source}{taken}, nothing else of the project; the auditor's Snakefile and code; "
        "an isolated interpreter (python -P, PYTHONSAFEPATH: no project folder on the import "
        "path); fresh caches (numba, matplotlib, XDG, Hugging Face) and matplotlib's default "
        "settings; the auditor's code checked against its compiled files"
    )


def _failed(rd: Path, code: int, tail: str, notes: list[str]) -> Check:
    return Check(
        "reproduce",
        f"the workflow failed in the scratch project (exit {code})",
        [f"{rd}: the results cannot be reproduced from the data; last lines:\n{tail}"],
        notes,
    )


def _run(
    rd: Path, study: Any, prereg: Path, root: Path, cores: int, generate: bool
) -> tuple[Check, list[str]]:
    """The ``reproduce`` check and what it could not prove (module docstring)."""
    name, home = rd.name, project_root(prereg)
    pinned, refused = _placed(study)
    if refused or (refused := _stale_own_code()):
        return Check("reproduce", "not run", refused), []
    (root / "config").mkdir(parents=True, exist_ok=True)
    shutil.rmtree(root / CACHES, ignore_errors=True)  # a kept scratch folder's too
    registration = [f"preregistrations/{p.name}" for p in (prereg, lock_path_for(prereg))]
    commit, loose = _take_committed(home, [*registration, *pinned], root)
    # default operational settings with ``study`` set to this study: the re-run never reads
    # the project's config/config.yaml, so no operational setting there can shape the results
    # it is compared with (every result is independent of them)
    config = yaml.safe_dump({"study": name}, sort_keys=False)
    (root / "config" / "config.yaml").write_text(config, encoding="utf-8")
    try:
        commit_registration(root, ["preregistrations"])  # a confirmatory re-run
    except OSError as exc:
        return Check("reproduce", "not run", [f"the scratch project: {exc}"]), []
    out, log = root / "results" / name, root / "reproduce.log"
    isolated = _isolation(commit, len(pinned), loose)
    print(
        f"tailgate audit --reproduce: re-running every stage of study {name} in {root} "
        f"(a few minutes; follow it in {log}) …\n{isolated}",
        file=sys.stderr,
    )
    if study.backend != "transformers":
        notes = [isolated, "data regenerated from the registration (seed or pinned import file)"]
        if generate:
            notes.append("--generate changes nothing here: this backend's data is always re-made")
        code, tail, wall = _snakemake(root, cores, log)
        if code != 0:
            return _failed(rd, code, tail, notes), []
        return _compare_all(rd, out, study, notes, wall, cores, []), []
    if generate and (missing := _generating_models(study, home)):
        fails = [f"{rd}: cannot re-generate here: {m}" for m in missing]
        return Check("reproduce", "not run: --generate needs every generating model", fails), []
    taken = _take_recorded(study, rd, out, home, generate=generate)
    if taken.failures:
        return Check("reproduce", "not run", taken.failures), taken.unproven
    start = (
        "prompts and generations re-made with the registered seed, prompt source and models"
        if generate
        else "the recorded prompts and generations taken as they are (checked against their "
        "records)"
    )
    notes = [
        isolated,
        f"{start}; scores, per-token losses, judge grades and embeddings recomputed from them "
        "with the registered models and compared with the recorded ones (a model's floats "
        f"within relative {MODEL_RTOL:g})",
        *(f"taken as recorded (cannot be recomputed here): {p}/" for p in sorted(taken.fallback)),
    ]
    sampled = 0.0  # (a rule serves both plans: the registered plan's branch runs with it)
    if generate:
        # 0. the generations first: a job after one that runs is run too, so a stand-in
        # (a file of a model that cannot be loaded here) would be re-made, not taken
        code, tail, sampled = _snakemake(root, cores, log, "--until", "generate")
        if code != 0:
            return _failed(rd, code, tail, notes), taken.unproven
    # 1. recompute what the models compute from the generations, and compare
    code, tail, first = _snakemake(root, cores, log, "--until", "score", "embed")
    first += sampled
    if code != 0:
        return _failed(rd, code, tail, notes), taken.unproven
    computed_fails, computed = _check_computed(study, rd, out, taken)
    if computed_fails:
        notes.append(f"recomputation took {first:.0f} s on {cores} core(s)")
        detail = (
            f"{len(computed)} score and embedding file(s) recomputed from the generations with "
            "the registered models; later stages not re-run (they would start from recorded "
            "files that the models do not give)"
        )
        return Check("reproduce", detail, computed_fails, notes), taken.unproven
    # 2. every later stage from the recorded scores (now vouched for), compared exactly
    stamp = time.time()
    copy_fails = _copy_checked(rd, out, [*computed, *taken.stand_ins], stamp)
    notes.append("every later stage re-run from the recorded scores, so vouched for")
    code, tail, then = _snakemake(root, cores, log)
    if code != 0:
        return _failed(rd, code, tail, notes), taken.unproven
    check = _compare_all(rd, out, study, notes, first + then, cores, copy_fails)
    return check, taken.unproven


def _compare_all(
    rd: Path, out: Path, study: Any, notes: list[str], wall: float, cores: int, fails: list[str]
) -> Check:
    """Compare every file of the study with the scratch project's ``out`` (module docstring);
    the report's files are the report check's (:data:`REPORT_RULE`), and must be there."""
    from tailgate.report.stage import rerendered

    own = {LEDGER}  # each run keeps its own history
    mine, theirs = set(result_files(rd)) - own, set(result_files(out)) - own
    report = set(rerendered(study).values())
    for rel in sorted(mine | theirs | report):
        if rel in report:
            if rel not in mine:
                fails.append(f"{rd / rel}: missing from the results (the report rule makes it)")
        elif rel not in theirs:
            fails.append(f"{rd / rel}: not produced when the workflow is re-run")
        elif rel not in mine:
            fails.append(f"{rd / rel}: missing from the results (the re-run produces it)")
    if report & mine:
        notes.append(
            "the report: re-rendered from the stored statistics by the report check, which "
            "this re-run reproduced"
        )
    both = sorted(mine & theirs)
    found = compare_made(
        rd, [(rel, out / rel) for rel in both], "differs from its reproduction", rerun=True
    )
    notes.append(f"re-run took {wall:.0f} s on {cores} core(s)")
    return Check(
        "reproduce",
        f"{len(both)} file(s) compared with a re-run from the data, {found.mode}",
        [*fails, *found.failures],
        notes,
    )
