"""What the installed distributions' ``RECORD`` files list, the status they were read with, and
whether a file is one of the standard library's or a distribution's.

The runtime fingerprint vouches for a loaded module's file when a ``RECORD`` of its site folder
lists it with its SHA-256 (:mod:`tailgate.runtime.interpreter`). Reading every ``RECORD`` costs a
job about a tenth of a second; the run's warm server (:mod:`tailgate.runtime.forkserver`) reads them
once and a forked job takes its reading while each ``RECORD`` still has the status it was read with
(:func:`record_statuses`). A ``RECORD`` that is not a regular file (a FIFO) is never opened for
reading. :func:`distributed` is the judgement of a loaded file itself, which the server makes
for every file it loaded and a job for the rest.

This module imports no other tailgate module: the server, which imports no tailgate package,
runs it from its source file.
"""

from __future__ import annotations

import base64
import csv
import os
import site
import stat
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "Status",
    "distributed",
    "record_digest",
    "record_entries",
    "record_statuses",
    "site_folders",
    "site_records",
    "status_of",
    "stdlib_folders",
    "under",
]

#: a file's device, inode, size and modification time (ns)
Status = tuple[int, int, int, int]


def status_of(st: os.stat_result) -> Status:
    """The :data:`Status` of a file from its ``os.stat`` result."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def record_digest(sha256: bytes) -> str:
    """A SHA-256 digest as a ``RECORD`` lists it (URL-safe base64 without padding)."""
    return base64.urlsafe_b64encode(sha256).rstrip(b"=").decode()


def _read_regular(path: str | os.PathLike[str]) -> tuple[Status, bytes] | None:
    """A regular file's status and bytes, read through one descriptor; None for anything else
    (opened without blocking: a FIFO never stalls the reader)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            return status_of(st), fh.read()
        except OSError:
            return None


def record_entries(text: str) -> dict[str, str]:
    """The files one ``RECORD`` lists (as written there: relative, ``/``-separated) → their
    SHA-256 (URL-safe base64). Lines are split at their last two commas; a quoted one (a path
    with a comma) is read as CSV."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith('"'):
            try:
                row = next(csv.reader([line]))
            except (csv.Error, StopIteration):
                continue
        else:
            row = line.rsplit(",", 2)
        if len(row) > 1 and row[1].startswith("sha256="):
            out[row[0]] = row[1][len("sha256=") :]
    return out


def record_statuses(sitedir: str) -> tuple[tuple[str, Status | None], ...]:
    """Each ``*.dist-info`` folder of ``sitedir`` with the status of its ``RECORD`` (None: not
    a regular file), in name order."""
    out = []
    for info in sorted(Path(sitedir).glob("*.dist-info")):
        try:
            st = os.stat(info / "RECORD")
        except OSError:
            out.append((info.name, None))
            continue
        out.append((info.name, status_of(st) if stat.S_ISREG(st.st_mode) else None))
    return tuple(out)


def site_records(
    sitedir: str,
) -> tuple[tuple[tuple[str, Status | None], ...], dict[str, str]]:
    """Every file the ``RECORD`` files of ``sitedir`` list → its SHA-256
    (:func:`record_entries`), with the statuses they had when read (as
    :func:`record_statuses` gives them)."""
    statuses = []
    out: dict[str, str] = {}
    for info in sorted(Path(sitedir).glob("*.dist-info")):
        read = _read_regular(info / "RECORD")
        try:
            text = read[1].decode("utf-8") if read is not None else None
        except UnicodeDecodeError:
            text = None
        statuses.append((info.name, read[0] if read is not None else None))
        if text is not None:
            out.update(record_entries(text))
    return tuple(statuses), out


def stdlib_folders() -> tuple[str, ...]:
    """The standard library's folders (real paths)."""
    paths = sysconfig.get_paths()
    return tuple(
        dict.fromkeys(os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths)
    )


def site_folders(entries: Iterable[str]) -> tuple[str, ...]:
    """Folders that may hold installed distributions (real paths, longest first): the site
    folders and every folder of ``entries`` (an import path) with a ``*.dist-info`` folder in
    it."""
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    dirs += [p for p in entries if p and os.path.isdir(p)]
    out = []
    for d in dict.fromkeys(os.path.realpath(d) for d in dirs):
        try:
            if any(n.endswith(".dist-info") for n in os.listdir(d)):
                out.append(d)
        except OSError:
            continue
    return tuple(sorted(out, key=len, reverse=True))


def under(path: str, folders: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or inside one."""
    return any(path == f or path.startswith(f + os.sep) for f in folders)


def distributed(
    real: str,
    stdlib: tuple[str, ...],
    sites: tuple[str, ...],
    listing: Callable[[str], dict[str, str]],
    digest: Callable[[str], str | None],
) -> bool | None:
    """Whether the file at ``real`` (a real path) is vouched for by where it lies: True for the
    standard library's (outside every site folder) and for a file a ``RECORD`` of its site
    folder lists with its SHA-256 (``digest``: URL-safe base64, as listed), and for a file
    outside the site folders that one lists so (a console script in the environment's ``bin/``,
    listed as ``../../../bin/snakemake``); False for a file of a site folder that is not listed
    so; None for any other file. ``listing``: a site folder's ``RECORD`` entries
    (:func:`site_records`)."""
    if under(real, stdlib) and not under(real, sites):
        return True
    for d in sites:
        if under(real, (d,)):
            listed = listing(d).get(Path(real[len(d) + 1 :]).as_posix())
            return listed is not None and digest(real) == listed
    for d in sites:
        listed = listing(d).get(Path(os.path.relpath(real, d)).as_posix())
        if listed is not None:
            return digest(real) == listed
    return None
