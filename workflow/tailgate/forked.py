"""Work done beside this process: a forked child computes one call and hands back its answer.

The audit spends most of its time re-rendering the report's figures; the other checks (hashes,
records, the ledger, the verdicts) do not read what that computes. :class:`Forked` runs such a
call in a forked child while this process goes on, and :meth:`Forked.result` returns what the
child computed (pickled through a temporary file, so the child never waits for this process to
read). The child runs the same code on the same inputs as this process would, so the answer is
the same; where a fork is not safe (:func:`can_fork`), or the child fails in any way, the call
is made here when the answer is asked for, which is what it would have been without a child.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import IO, Any, Generic, TypeVar

__all__ = ["Forked", "can_fork", "fork_child"]

T = TypeVar("T")


def can_fork() -> bool:
    """Whether a fork of this process is safe: on Linux (a fork after the macOS system
    frameworks is not) and with no other Python thread (a lock another thread holds at the fork
    would stay held in the child)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def fork_child(work: Callable[[], object]) -> int:
    """Fork a child that runs ``work()`` and leaves without cleanup (no exit functions of this
    process), with status 0, or 1 where ``work`` raised; return the child's process id."""
    sys.stdout.flush()  # nothing buffered here is written again by the child
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            work()
            sys.stdout.flush()
            sys.stderr.flush()
            code = 0
        finally:
            os._exit(code)
    return pid


class Forked(Generic[T]):
    """``fn(*args)`` computed in a forked child from now on; :meth:`result` waits for it (or
    computes it here, where no child could be forked or the child failed). Use it as a context
    manager, or call :meth:`result` or :meth:`cancel`: a child is never left behind."""

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self._fn, self._args = fn, args
        self._pid = 0
        self._sink: IO[bytes] | None = None
        if not can_fork():
            return
        sink = tempfile.TemporaryFile()

        def answer() -> None:
            pickle.dump(fn(*args), sink, protocol=pickle.HIGHEST_PROTOCOL)
            sink.flush()

        self._pid, self._sink = fork_child(answer), sink

    def result(self) -> T:
        """The child's answer, or ``fn(*args)`` computed here where there is none."""
        if self._pid:
            pid, sink = self._pid, self._sink
            self._pid, self._sink = 0, None
            assert sink is not None
            with sink:
                _, status = os.waitpid(pid, 0)
                if status == 0:
                    sink.seek(0)
                    try:
                        return pickle.load(sink)
                    except Exception:  # a torn answer: compute it here
                        pass
        return self._fn(*self._args)

    def cancel(self) -> None:
        """Stop the child, if any, and forget its answer."""
        if self._pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except OSError:
                pass
            self._pid = 0
        if self._sink is not None:
            self._sink.close()
            self._sink = None

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()
