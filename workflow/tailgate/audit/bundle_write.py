"""``tailgate bundle``: one archive that holds what a reviewer's audit needs, and nothing that runs.

A reviewer gets a deposit (Zenodo, WorkflowHub, a conference's supplementary material), not the
researcher's working copy, whose ``.git/config``, attributes, hooks and refs would be in force.
The bundle is one gzip-compressed tar, ``<study>/`` holding:

* ``history.bundle`` — a ``git bundle`` of the branch checked out (every commit that touched the
  registration, its lock, its amendments and its pinned inputs, up to ``HEAD``), every other
  branch that holds a version of them ``HEAD`` does not, and the tags ``prereg/<study>/*``; made
  by the hardened git of :mod:`tailgate.prereg.gitinfo` (no configuration, hook or replace
  object of the repository applies; no replace ref is named, so none is in it). A repository
  with replace refs, grafts or a shallow history is refused: its history is not the published
  one;
* ``results/<study>/`` — the results folder as the run left it (every artifact, ``runs.jsonl``,
  ``provenance/``, ``logs/``); a file larger than ``--max-file-mb`` is left out and named in
  ``bundle.json`` with its SHA-256 and size;
* ``receipts.json`` — every lock entry's receipt (``entry_hash``, ``canonical_hash``) and every
  run receipt (the SHA-256 of its ledger line, :mod:`tailgate.runs.ledger`), with each run's results
  digest; ``timestamps/`` — each RFC 3161 token the lock holds (DER, one ``.tsr`` file each);
* ``requirements.txt`` — the run's environment as ``tailgate env`` writes it; ``Snakefile`` —
  the workflow that ran;
* ``bundle.json`` — the study, the project's folder in the repository, the commit bundled and
  the files left out;
* ``ro-crate-metadata.json`` — made with ``rocrate`` (Soiland-Reyes et al. 2022, "Packaging
  research artefacts with RO-Crate", Data Science 5(2)), following the Workflow Run RO-Crate
  profiles (Leo et al. 2024, "Recording provenance of workflow runs with RO-Crate", PLOS ONE
  19(9)): the ``Snakefile`` as the main ``ComputationalWorkflow``, the registration as a
  ``CreativeWork`` identified by its canonical hash (one per lock entry), one ``CreateAction``
  per run of the ledger (its receipt, times, status, the registration it ran under and the files
  it left that the folder still holds), and every file with its SHA-256 and size.

The same study gives the same bytes: entries in path order, every entry dated 0 and owned by
0:0 with mode 0644, gzip's header dated 0 and nameless, the crate's publication date the newest
run's. ``tailgate audit FILE`` opens it (:mod:`tailgate.audit.bundle_open`).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tailgate.code import code_digest
from tailgate.errors import InputError
from tailgate.files.atomic import atomic_output
from tailgate.files.safe_read import sha256_file
from tailgate.plans.registration import load
from tailgate.prereg.gitinfo import is_shallow, repo_root, rewritten_history, run_git
from tailgate.prereg.lock import read_lock
from tailgate.prereg.pins import registered_paths
from tailgate.prereg.study import lock_path_for, results_dir_for
from tailgate.runs.ledger import LEDGER, ledger_text, read_ledger, results_digest, run_results
from tailgate.runtime.environment import recorded, requirements
from tailgate.runtime.provenance import iter_records

from .reproduce import snakefile

__all__ = [
    "BUNDLE_VERSION",
    "CRATE",
    "HISTORY",
    "MANIFEST",
    "RECEIPTS",
    "WORKFLOW",
    "Written",
    "write_bundle",
]

#: ``bundle.json``'s ``bundle_version``
BUNDLE_VERSION = 1
#: names inside ``<study>/``
HISTORY = "history.bundle"
MANIFEST = "bundle.json"
RECEIPTS = "receipts.json"
REQUIREMENTS = "requirements.txt"
WORKFLOW = "Snakefile"
CRATE = "ro-crate-metadata.json"
TIMESTAMPS = "timestamps"
#: the profiles the crate conforms to (Workflow Run RO-Crate 0.5 and Workflow RO-Crate 1.0)
PROFILES = (
    ("https://w3id.org/ro/wfrun/process/0.5", "Process Run Crate", "0.5"),
    ("https://w3id.org/ro/wfrun/workflow/0.5", "Workflow Run Crate", "0.5"),
    ("https://w3id.org/workflowhub/workflow-ro-crate/1.0", "Workflow RO-Crate", "1.0"),
)
_STATUS = {"success": "CompletedActionStatus"}


@dataclass(frozen=True)
class Written:
    """A bundle written: its path, SHA-256, size and the results files left out."""

    path: Path
    sha256: str
    size: int
    left_out: list[dict[str, Any]]


def _refuse(where: Path | str, what: str, fix: str) -> InputError:
    return InputError(f"{where}: {what}. Fix: {fix}")


def _results_files(rd: Path) -> list[str]:
    """Every file of the results folder (relative, sorted); a link or anything but a regular
    file or folder is refused (the audit would fail it)."""
    out = []
    for top, dirs, files in os.walk(rd):
        for name in sorted(dirs + files):
            p = Path(top) / name
            mode = os.lstat(p).st_mode
            if stat.S_ISREG(mode):
                out.append(p.relative_to(rd).as_posix())
            elif not stat.S_ISDIR(mode):
                raise _refuse(p, "not a regular file or folder", "remove it and re-run the study")
    return sorted(out)


def _git(where: Path, *args: str) -> str:
    out = run_git(where, *args)
    if out is None:
        raise _refuse(where, f"'git {' '.join(args)}' failed", "check the repository with git")
    return str(out)


def _history_refs(prereg: Path, study: str, paths: list[Path]) -> list[str]:
    """The refs bundled (module docstring): the branch checked out, each other branch with a
    commit touching ``paths`` that ``HEAD`` lacks, and the study's tags."""
    branch = run_git(prereg, "symbolic-ref", "-q", "HEAD")
    if not branch:
        raise _refuse(prereg, "HEAD is detached", "check out the branch the study ran on")
    top = repo_root(prereg)
    assert top is not None
    rels = [os.path.relpath(os.path.realpath(p), top) for p in paths]
    refs = [str(branch)]
    for other in _git(prereg, "for-each-ref", "--format=%(refname)", "refs/heads/").splitlines():
        if other != branch and _git(
            prereg, "log", "-1", "--format=%H", other, "^HEAD", "--", *rels
        ):
            refs.append(other)
    tags = _git(prereg, "for-each-ref", "--format=%(refname)", f"refs/tags/prereg/{study}/")
    return refs + sorted(tags.splitlines())


def _receipts(lock: Any, runs: list[dict[str, Any]], rd: Path) -> dict[str, Any]:
    lines = [x for x in ledger_text(rd).splitlines() if x.strip()]
    mappings, _ = run_results(runs)
    return {
        "lock": [
            {k: e.get(k) for k in ("seq", "kind", "time", "entry_hash", "canonical_hash")}
            for e in lock.chain
        ],
        "runs": [
            {
                "run": r.get("run"),
                "outcome": r.get("outcome"),
                "time": r.get("time"),
                "receipt": hashlib.sha256(line.encode()).hexdigest(),
                "results_sha256": None if m is None else results_digest(m),
            }
            for r, line, m in zip(runs, lines, mappings, strict=True)
        ],
        "timestamps": lock.timestamps,
    }


def _json(obj: Any) -> bytes:
    return (json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _crate(
    study: Any,
    lock: Any,
    runs: list[dict[str, Any]],
    receipts: dict[str, Any],
    files: dict[str, tuple[str, int]],
    results_prefix: str,
) -> bytes:
    """``ro-crate-metadata.json`` (module docstring); ``files``: path in the crate → (SHA-256,
    size) of every file, left-out ones included."""
    # imported here: rocrate (with requests) costs 0.3-0.4 CPU-s, which every plain audit
    # would pay before it starts (the command imports the bundle reader, which reads names
    # from this module)
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    crate = ROCrate(version="1.1")
    root = crate.root_dataset
    root["name"] = f"tailgate review bundle of the study {study.name}"
    root["description"] = (
        "A pre-registered tailgate study: its registration history (history.bundle, a git "
        "bundle), its results as the run left them, the receipts and the environment. Audit it "
        "with 'tailgate audit <this archive>'."
    )
    root["datePublished"] = str(runs[-1].get("time")) if runs else str(lock.head.get("time"))
    profiles = [
        crate.add(ContextEntity(crate, pid, properties={
            "@type": ["CreativeWork", "Profile"], "name": name, "version": version,
        }))
        for pid, name, version in PROFILES
    ]  # fmt: skip
    root["conformsTo"] = profiles
    entities = {}
    for path, (digest, size) in sorted(files.items()):
        props = {"sha256": digest, "contentSize": str(size), "name": path.rsplit("/", 1)[-1]}
        if path == WORKFLOW:
            entities[path] = crate.add_workflow(
                dest_path=path, main=True, lang="snakemake", properties={
                    **props, "name": "tailgate workflow", "version": code_digest(),
                },
            )  # fmt: skip
        else:
            entities[path] = crate.add_file(dest_path=path, properties=props)
    workflow = entities[WORKFLOW]
    param_in = crate.add_formal_parameter(
        "registration", "File", identifier="#param-registration", valueRequired=True,
        description="the pre-registration (its lock entry's canonical hash identifies it)",
    )  # fmt: skip
    param_out = crate.add_formal_parameter(
        "results", "Dataset", identifier="#param-results",
        description=f"the results folder {results_prefix}",
    )  # fmt: skip
    workflow["input"] = [param_in]
    workflow["output"] = [param_out]
    registrations = {}
    for e in lock.chain:
        registrations[e["seq"]] = crate.add(ContextEntity(crate, f"#registration-{e['seq']}",
            properties={
                "@type": "CreativeWork",
                "name": f"{study.path.name} at lock entry {e['seq']} ({e.get('kind')})",
                "identifier": f"sha256:{e.get('canonical_hash')}",
                "version": str(e["seq"]),
                "dateCreated": str(e.get("time")),
                "exampleOfWork": param_in,
                "description": f"lock entry hash {e.get('entry_hash')}",
            }))  # fmt: skip
    pins = [
        crate.add(ContextEntity(crate, f"#input-{name}", properties={
            "@type": "CreativeWork", "name": name, "description": text,
        }))
        for name, (text, _) in sorted(registered_paths(study).items())
    ]  # fmt: skip
    mappings, _ = run_results(runs)
    for run, mapping, receipt in zip(runs, mappings, receipts["runs"], strict=True):
        head = run.get("lock_head") if isinstance(run.get("lock_head"), dict) else {}
        seq = head.get("seq") if isinstance(head.get("seq"), int) else lock.head["seq"]
        made = [
            entities[f"{results_prefix}/{p}"]
            for p, d in sorted((mapping or {}).items())
            if files.get(f"{results_prefix}/{p}", ("",))[0] == d
        ]
        status = _STATUS.get(str(run.get("outcome")), "FailedActionStatus")
        props = {
            "name": f"run {run.get('run')} of the workflow ({run.get('outcome')})",
            "identifier": f"sha256:{receipt['receipt']}",
            "endTime": str(run.get("time")),
            "actionStatus": {"@id": f"http://schema.org/{status}"},
        }  # fmt: skip
        if run.get("started"):
            props["startTime"] = str(run["started"])
        crate.add_action(
            workflow, identifier=f"#run-{run.get('run')}", object=[registrations.get(seq), *pins],
            result=made or None, properties=props,
        )  # fmt: skip
    return _json(crate.metadata.generate())


def _add(
    tf: tarfile.TarFile, name: str, data: bytes | None = None, path: Path | None = None
) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    info.mode = 0o644
    if path is not None:
        info.size = os.stat(path).st_size
        with path.open("rb") as fh:
            tf.addfile(info, fh)
    else:
        info.size = len(data or b"")
        tf.addfile(info, io.BytesIO(data or b""))


def write_bundle(
    prereg: str | Path, out: str | Path | None, *, max_file_mb: float | None
) -> Written:
    """Write the study's review bundle (module docstring) to ``out`` (default
    ``<study>.bundle.tar.gz`` in the current folder). :class:`InputError` (nothing written)
    when the study cannot be bundled: no results, no run, a history that is not the published
    one."""
    study = load(prereg)
    prereg_path = Path(study.path)
    rd = results_dir_for(prereg_path)
    lock = read_lock(lock_path_for(prereg_path))
    if lock is None:
        raise _refuse(prereg_path, "not frozen", f"run 'tailgate freeze {prereg_path}' first")
    if not (rd / LEDGER).is_file() or not (runs := read_ledger(rd)):
        raise _refuse(rd, "no run in the ledger", "run the workflow before bundling it")
    top = repo_root(prereg_path)
    if top is None:
        raise _refuse(prereg_path, "not in a git repository", "commit the registration first")
    if is_shallow(prereg_path) or (rewritten := rewritten_history(prereg_path)):
        why = "a shallow clone" if is_shallow(prereg_path) else "; ".join(rewritten)
        raise _refuse(top, f"the history here is not the published one ({why})",
                      "bundle from a full clone without replace refs or grafts")  # fmt: skip
    project = os.path.relpath(os.path.realpath(prereg_path.parent.parent), os.path.realpath(top))
    name = study.name
    limit = None if max_file_mb is None else int(max_file_mb * 1024 * 1024)
    results_prefix = f"results/{name}"
    kept: dict[str, Path] = {}
    left_out = []
    digests: dict[str, tuple[str, int]] = {}
    for rel in _results_files(rd):
        path = rd / rel
        size = os.stat(path).st_size
        digest = sha256_file(path)
        digests[f"{results_prefix}/{rel}"] = (digest, size)
        if (
            limit is not None
            and size > limit
            and rel != LEDGER
            and not rel.startswith("provenance/")
        ):
            left_out.append({"path": f"{results_prefix}/{rel}", "sha256": digest, "size": size})
        else:
            kept[f"{results_prefix}/{rel}"] = path
    receipts = _receipts(lock, runs, rd)
    blobs: dict[str, bytes] = {
        REQUIREMENTS: requirements(recorded(iter_records(rd))).encode(),
        RECEIPTS: _json(receipts),
    }
    for e in lock.chain:
        for i, token in enumerate(lock.timestamps.get(e["entry_hash"], [])):
            blobs[f"{TIMESTAMPS}/{e['seq']}-{i}.tsr"] = base64.b64decode(token["token"])
    blobs[MANIFEST] = _json({
        "bundle_version": BUNDLE_VERSION, "study": name, "project": Path(project).as_posix(),
        "commit": _git(prereg_path, "rev-parse", "HEAD"), "left_out": left_out,
    })  # fmt: skip
    dest = Path(out) if out is not None else Path(f"{name}.bundle.tar.gz")
    with tempfile.TemporaryDirectory(prefix="tailgate-bundle-") as tmp:
        history = Path(tmp) / HISTORY
        paths = [prereg_path, lock_path_for(prereg_path)]
        paths += [
            prereg_path.parent.parent / text
            for text, _ in registered_paths(study).values()
            if (prereg_path.parent.parent / text).exists()
        ]
        refs = _history_refs(prereg_path, name, paths)
        if run_git(prereg_path, "-c", "pack.threads=1", "bundle", "create", "-q", str(history),
                   *refs) is None:  # fmt: skip
            raise _refuse(top, "'git bundle create' failed", "check the repository with git")
        kept[HISTORY] = history
        kept[WORKFLOW] = snakefile()
        for member, data in blobs.items():
            digests[member] = (hashlib.sha256(data).hexdigest(), len(data))
        for member in (HISTORY, WORKFLOW):
            digests[member] = (sha256_file(kept[member]), os.stat(kept[member]).st_size)
        blobs[CRATE] = _crate(study, lock, runs, receipts, digests, results_prefix)
        entries = sorted([*kept, *blobs])
        with atomic_output(dest) as tmp_out, tmp_out.open("wb") as raw:
            _write_tar(raw, name, entries, kept, blobs)
    return Written(dest, sha256_file(dest), os.stat(dest).st_size, left_out)


def _write_tar(
    raw: IO[bytes], top: str, entries: list[str], kept: dict[str, Path], blobs: dict[str, bytes]
) -> None:
    """The deterministic tar.gz (module docstring)."""
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tf,
    ):
        for member in entries:
            if member in kept:
                _add(tf, f"{top}/{member}", path=kept[member])
            else:
                _add(tf, f"{top}/{member}", data=blobs[member])
