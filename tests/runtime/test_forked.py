"""Work beside this process (:mod:`tailgate.forked`): the child's answer, or the call made here.

A pytest-xdist worker runs other threads, where :func:`tailgate.forked.can_fork` refuses, so the
forking cases run in a fresh interpreter (one process, one thread), as the ``tailgate`` command.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tailgate.forked import Forked, can_fork


def _python(code: str) -> str:
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_the_answer_comes_from_a_child_and_equals_the_call_made_here():
    out = _python(
        """
        import os
        import numpy as np
        from tailgate.forked import Forked, can_fork

        def work(n):
            rng = np.random.default_rng(n)
            return os.getpid(), {"x": rng.normal(size=n), "n": n}

        assert can_fork()
        with Forked(work, 50) as pending:
            here = work(50)[1]
            pid, there = pending.result()
        assert pid != os.getpid(), "computed in a child"
        assert there["n"] == 50 and there["x"].tobytes() == here["x"].tobytes()
        print("ok")
        """
    )
    assert out == "ok\n"


def test_a_failed_child_leaves_the_call_to_this_process():
    out = _python(
        """
        import os
        from tailgate.forked import Forked

        parent = os.getpid()

        def work():
            if os.getpid() != parent:
                os._exit(3)  # the child dies without an answer
            return "made here"

        def torn():
            if os.getpid() != parent:
                import sys
                sys.stdout.flush()
                os._exit(0)  # exits cleanly, but wrote no answer
            return "made here too"

        print(Forked(work).result(), "|", Forked(torn).result())
        """
    )
    assert out == "made here | made here too\n"


def test_a_cancelled_child_is_stopped_and_reaped():
    out = _python(
        """
        import os, time
        from tailgate.forked import Forked

        start = time.monotonic()
        pending = Forked(time.sleep, 600)
        pid = pending._pid
        assert pid > 0
        pending.cancel()
        try:
            os.waitpid(pid, os.WNOHANG)
            print("still a child")
        except ChildProcessError:
            print("reaped", time.monotonic() - start < 60)
        """
    )
    assert out == "reaped True\n"


def test_with_another_thread_the_call_is_made_here():
    import os
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork()
        pending = Forked(os.getpid)
        assert pending._pid == 0, "no child beside a running thread"
        assert pending.result() == os.getpid()
    finally:
        stop.set()
        other.join()
