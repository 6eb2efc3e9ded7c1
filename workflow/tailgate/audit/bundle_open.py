"""Opening a review bundle (:mod:`tailgate.audit.bundle_write`) for ``tailgate audit FILE``.

The archive is hostile input, like the repository it replaces. It is opened in a fresh scratch
folder of the auditor's, and everything below happens there:

1. **Unpacking** (:func:`_unpack`), streamed once: only regular files and folders under one
   top folder named as a study, each name relative with no ``..``, no absolute path, link,
   device, named pipe or other special member, no name twice; at most :data:`MAX_MEMBERS`
   members, and the bytes decompressed are counted as they are read, so a decompression bomb
   stops at :data:`MAX_RATIO` times the archive's size (at least :data:`MIN_LIMIT`, at most
   :data:`MAX_UNPACKED`) before it is written. Python's ``tarfile`` ``data`` filter applies on
   top (Python's documentation, "Extraction filters", PEP 706).
2. **History** (:func:`_clone`): a repository is made with no template, and the git bundle is
   fetched into it by the hardened git of :mod:`tailgate.prereg.gitinfo` (no configuration,
   hooks or replace objects of anyone's; objects checked as they arrive). A bundle naming a ref
   other than a branch or a tag — a replace ref (``refs/replace/``) above all, which would
   rewrite the history — is refused before anything is fetched. The commit the newest successful
   run of the ledger names is checked out: the registration and lock as that run read them.
3. **Results**: the bundle's ``results/<study>`` is placed in that checkout, where the run made
   it; the RO-Crate metadata must describe every file of the archive, each with the SHA-256 and
   size it has, and describe no file the archive lacks but those ``bundle.json`` names as left
   out (each the digest the newest run recorded); the receipts must be the ledger's — every run
   receipt a line of it (``--expected-run``), the head lock entry's receipt in the chain
   (``--expected-hash``).

Then the audit runs on the checkout exactly as on a researcher's; any failure above is a failed
``bundle`` check (exit 4) naming what is wrong.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import unquote

from tailgate.files.safe_read import load_json, open_regular, sha256_file
from tailgate.prereg.gitinfo import own_git
from tailgate.prereg.study import NAME_RE
from tailgate.runs.ledger import read_ledger, run_results

from .bundle_write import CRATE, HISTORY, MANIFEST, RECEIPTS, WORKFLOW
from .findings import DAMAGE, Check

__all__ = ["MAX_MEMBERS", "MAX_RATIO", "MAX_UNPACKED", "MIN_LIMIT", "Opened", "open_bundle"]

#: the most bytes a bundle may unpack to, whatever its size
MAX_UNPACKED = 32 * 1024**3
#: the most a bundle may expand (unpacked bytes per archive byte) above :data:`MIN_LIMIT`
MAX_RATIO = 100
#: what any bundle may unpack to (tailgate's JSON compresses up to 30-fold)
MIN_LIMIT = 64 * 1024**2
#: the most members a bundle may hold
MAX_MEMBERS = 200_000
_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_FIX = "ask the researcher for the bundle 'tailgate bundle' wrote, unchanged"


class _Hostile(Exception):
    """What is wrong with the bundle, in words naming it."""


@dataclass
class Opened:
    """A bundle opened: the ``bundle`` check, and (when it passed) the results folder in the
    checkout and the receipts the audit must find."""

    check: Check
    sha256: str
    results: Path | None = None
    expected_hash: str | None = None
    expected_runs: list[str] = field(default_factory=list)


class _Bounded:
    """A reader that fails once more than ``limit`` bytes were read through it."""

    def __init__(self, inner: IO[bytes], limit: int, where: Path) -> None:
        self.inner, self.limit, self.where, self.count = inner, limit, where, 0

    def read(self, n: int = -1) -> bytes:
        data = self.inner.read(n if n >= 0 else self.limit + 1 - self.count)
        self.count += len(data)
        if self.count > self.limit:
            raise _Hostile(
                f"{self.where}: unpacks to more than {self.limit} bytes (a decompression bomb, "
                f"or larger than any bundle {os.stat(self.where).st_size} bytes long holds); "
                "nothing past the limit was written"
            )
        return data


def _member_problem(m: tarfile.TarInfo, top: str | None) -> str | None:
    """Why member ``m`` may not be unpacked (None: it may)."""
    if m.issym() or m.islnk():
        return f"a link (to {m.linkname!r})"
    if m.ischr() or m.isblk():
        return "a device"
    if m.isfifo():
        return "a named pipe (FIFO)"
    if not (m.isreg() or m.isdir()):
        return "not a regular file or folder"
    name = PurePosixPath(m.name)
    if m.name.startswith("/") or name.is_absolute() or "\\" in m.name or ":" in name.parts[0]:
        return "an absolute path"
    if any(part in ("..", "") for part in m.name.rstrip("/").split("/")):
        return "a path with '..' (it leads out of the folder it is unpacked in)"
    if top is not None and name.parts[0] != top:
        return f"outside the bundle's top folder {top}/"
    return None


def _unpack(fh: IO[bytes], where: Path, size: int, dest: Path) -> str:
    """Unpack the archive read from ``fh`` into ``dest`` (module docstring, 1.); its top
    folder's name."""
    limit = min(MAX_UNPACKED, max(MIN_LIMIT, MAX_RATIO * size))
    top: str | None = None
    seen: set[str] = set()
    total = 0
    try:
        with (
            gzip.GzipFile(fileobj=fh, mode="rb") as gz,
            tarfile.open(fileobj=_Bounded(gz, limit, where), mode="r|") as tf,  # type: ignore[call-overload]
        ):
            for n, m in enumerate(tf):
                if n >= MAX_MEMBERS:
                    raise _Hostile(f"{where}: more than {MAX_MEMBERS} members")
                why = _member_problem(m, top)
                if why is not None:
                    raise _Hostile(f"{where}: member {m.name!r} is {why}; it was not unpacked")
                top = top or PurePosixPath(m.name).parts[0]
                if not NAME_RE.match(top):
                    raise _Hostile(f"{where}: top folder {top!r} is not a study's name")
                key = m.name.rstrip("/")
                if key in seen:
                    raise _Hostile(f"{where}: member {m.name!r} is in the archive twice")
                seen.add(key)
                total += m.size
                if total > limit:
                    raise _Hostile(f"{where}: its members hold more than {limit} bytes")
                tf.extract(m, dest, filter="data")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise _Hostile(f"{where}: not a tailgate bundle (a .tar.gz): {exc}") from None
    if top is None:
        raise _Hostile(f"{where}: an empty archive")
    return top


def _files(root: Path) -> dict[str, Path]:
    """Every file below ``root`` by its relative POSIX path."""
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            p = Path(folder) / name
            out[p.relative_to(root).as_posix()] = p
    return out


def _crate_problems(root: Path, left_out: dict[str, str]) -> list[str]:
    """Where ``ro-crate-metadata.json`` disagrees with the archive's files (module docstring,
    3.); ``left_out``: path → SHA-256 of the files ``bundle.json`` names as left out."""
    where = root / CRATE
    doc = load_json(where)
    graph = doc.get("@graph") if isinstance(doc, dict) else None
    if not isinstance(graph, list):
        return [f"{where}: no @graph"]
    described: dict[str, dict[str, Any]] = {}
    actions = 0
    main = None
    for ent in graph:
        if not isinstance(ent, dict) or not isinstance(ent.get("@id"), str):
            return [f"{where}: an entity without an @id"]
        types = ent.get("@type")
        types = types if isinstance(types, list) else [types]
        if "File" in types:
            described[unquote(ent["@id"])] = ent
        if "CreateAction" in types and ent.get("instrument") == {"@id": WORKFLOW}:
            actions += 1
        if ent["@id"] == "./":
            main = ent.get("mainEntity")
    fails = []
    if main != {"@id": WORKFLOW} or actions == 0:
        fails.append(
            f"{where}: the main entity is not the workflow {WORKFLOW}, or no run of it "
            "(CreateAction) is described"
        )
    files = _files(root)
    for rel in sorted(set(files) - set(described) - {CRATE}):
        fails.append(f"{where}: does not describe the archive's file {rel}")
    for rel, ent in sorted(described.items()):
        digest = ent.get("sha256")
        if rel not in files:
            if left_out.get(rel) is None or left_out[rel] != digest:
                fails.append(f"{where}: describes {rel}, which the archive does not hold")
        elif digest != sha256_file(files[rel]) or ent.get("contentSize") != str(
            files[rel].stat().st_size
        ):
            fails.append(
                f"{where}: {rel} is described with the SHA-256 {str(digest)[:12]}… and size "
                f"{ent.get('contentSize')}; the file has {sha256_file(files[rel])[:12]}… and "
                f"{files[rel].stat().st_size} bytes"
            )
    return fails


def _clone(history: Path, dest: Path) -> None:
    """A repository at ``dest`` holding the git bundle's branches and tags (module docstring,
    2.); :class:`_Hostile` for a ref that is neither, or a bundle git refuses."""
    dest.mkdir()
    try:
        own_git(dest, "init", "-q", "--template=")
        heads = own_git(dest, "bundle", "list-heads", str(history))
    except OSError as exc:
        raise _Hostile(f"{history}: not a git bundle ({exc})") from None
    refs = [line.partition(" ")[2] for line in heads.splitlines() if line.strip()]
    odd = [r for r in refs if not r.startswith(("refs/heads/", "refs/tags/"))]
    if odd:
        replace = [r for r in odd if r.startswith("refs/replace/")]
        raise _Hostile(
            f"{history}: names "
            + (
                f"replace refs ({', '.join(replace)}), which rewrite the history; "
                if replace
                else ""
            )
            + f"refs other than branches and tags: {', '.join(odd)}; nothing was fetched"
        )
    try:
        own_git(
            dest, "-c", "transfer.fsckObjects=true", "fetch", "-q", "--update-head-ok",
            "--no-write-fetch-head", str(history), "refs/heads/*:refs/heads/*",
            "refs/tags/*:refs/tags/*",
        )  # fmt: skip
    except OSError as exc:
        raise _Hostile(f"{history}: git refuses it ({exc})") from None


def _registration_commit(results: Path) -> str:
    """The commit the newest successful run of the ledger names."""
    runs = [r for r in read_ledger(results) if r.get("outcome") == "success"]
    commit = (runs[-1].get("git") or {}).get("commit") if runs else None
    if not isinstance(commit, str) or not _HEX.match(commit):
        raise _Hostile(
            f"{results / 'runs.jsonl'}: no successful run naming the commit it ran at; {_FIX}"
        )
    return commit


def _checkout(clone: Path, commit: str) -> None:
    try:
        own_git(clone, "rev-parse", "--verify", "-q", "--end-of-options", f"{commit}^{{commit}}")
    except OSError:
        raise _Hostile(
            f"{HISTORY}: does not hold the commit {commit[:12]} the newest run of the ledger ran "
            "at: the history was rewritten after the run, or the bundle is not this study's"
        ) from None
    branches = own_git(clone, "branch", "--format=%(refname:short)", "--points-at", commit).split()
    own_git(clone, "checkout", "-q", *(branches[:1] or ["--detach", commit]))


def _project(manifest: Any, top: str) -> str:
    """``bundle.json``'s project folder, checked to be a plain relative path."""
    if not isinstance(manifest, dict) or manifest.get("study") != top:
        raise _Hostile(f"{MANIFEST}: does not name the study {top}; {_FIX}")
    project = manifest.get("project")
    parts = PurePosixPath(str(project)).parts
    if (
        not isinstance(project, str)
        or PurePosixPath(project).is_absolute()
        or any(p == ".." or (p.startswith(".") and p != ".") for p in parts)
    ):
        raise _Hostile(f"{MANIFEST}: project {project!r} is not a folder inside the repository")
    return project


def _left_out(manifest: dict[str, Any], latest: dict[str, str] | None, top: str) -> dict[str, str]:
    """Path → SHA-256 of each file left out, each the digest the newest run recorded."""
    out = {}
    for item in manifest.get("left_out") or []:
        path, digest = str(item.get("path")), item.get("sha256")
        below = path.removeprefix(f"results/{top}/")
        if latest is None or latest.get(below) != digest:
            raise _Hostile(
                f"{MANIFEST}: left out {path} with the SHA-256 {str(digest)[:12]}…, which is not "
                "the digest the newest run of the ledger recorded for it"
            )
        out[path] = str(digest)
    return out


def _receipts(root: Path) -> tuple[str | None, list[str]]:
    """The head lock entry's receipt and every run receipt of ``receipts.json``."""
    doc = load_json(root / RECEIPTS)
    lock = doc.get("lock") if isinstance(doc, dict) else None
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(lock, list) or not isinstance(runs, list):
        raise _Hostile(f"{RECEIPTS}: not the receipts tailgate bundle writes; {_FIX}")
    head = lock[-1].get("entry_hash") if lock and isinstance(lock[-1], dict) else None
    return (str(head) if head else None), [str(r.get("receipt")) for r in runs]


def open_bundle(archive: str | Path, scratch: str | Path) -> Opened:
    """Open the bundle ``archive`` in the empty folder ``scratch`` (module docstring)."""
    archive, scratch = Path(archive), Path(scratch)
    digest = hashlib.sha256()
    try:
        with open_regular(archive) as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
            size = fh.tell()
            fh.seek(0)
            sha = digest.hexdigest()
            top = _unpack(fh, archive, size, scratch / "unpacked")
        root = scratch / "unpacked" / top
        manifest = load_json(root / MANIFEST)
        project = _project(manifest, top)
        results = root / "results" / top
        latest = run_results(read_ledger(results))[0]
        newest = next((m for m in reversed(latest) if m is not None), None)
        fails = _crate_problems(root, _left_out(manifest, newest, top))
        if fails:
            return Opened(Check("bundle", f"{archive} sha256:{sha}", fails), sha)
        commit = _registration_commit(results)
        clone = scratch / "checkout"
        _clone(root / HISTORY, clone)
        _checkout(clone, commit)
        home = clone / project
        placed = home / "results" / top
        if placed.is_symlink() or placed.is_file():
            placed.unlink()
        shutil.rmtree(placed, ignore_errors=True)
        placed.parent.mkdir(parents=True, exist_ok=True)
        os.replace(results, placed)
        expected_hash, expected_runs = _receipts(root)
    except _Hostile as exc:
        return Opened(Check("bundle", str(archive), [str(exc)]), locals().get("sha", ""))
    except DAMAGE as exc:
        fail = f"{archive}: damaged ({type(exc).__name__}: {str(exc)[:300]}); {_FIX}"
        return Opened(Check("bundle", str(archive), [fail]), locals().get("sha", ""))
    notes = [f"{p} was left out of the bundle (too large)" for p in manifest.get("left_out") or []]
    detail = (
        f"{archive} sha256:{sha}: unpacked safely; history cloned without anyone's git "
        f"configuration, checked out at {commit[:12]} (the newest run's); RO-Crate metadata "
        "agrees with every file"
    )
    return Opened(Check("bundle", detail, [], notes), sha, placed, expected_hash, expected_runs)
