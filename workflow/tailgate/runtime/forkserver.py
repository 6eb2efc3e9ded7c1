"""Warm start for local jobs: one process imports the numerical stack, each job is a fork of it.

A rule script is a fresh Python process, and most of a small job's time is its imports (numpy,
pyarrow, pandas, scipy, yaml, jsonschema: about 1.5 CPU-s of a demo fit job, against 0.5 s for
the rest). A run on this machine (Snakemake's local executor) therefore starts a **fork server**
when it starts and stops it when it ends:

* the server (this file, run as a script: ``python -P runtime/forkserver.py SOCKET``) imports
  :data:`PRELOAD` — third-party modules only, never ``tailgate`` — and listens on a Unix socket in
  a fresh private folder;
* a job's script hands itself over first thing (:func:`hand_over`, called by the scripts'
  ``_tailgate`` helper): it sends its standard streams, working directory, environment,
  ``sys.path`` and script to the server, which forks a child that runs the script from the top;
  the job exits with the child's status and passes on a signal it gets;
* the server forks only for a job of the same interpreter, working folder and environment, so
  the preloaded modules are what the job would have imported itself; any other job (a conda
  environment, a changed environment, no server or no answer) runs in its own process.

A study whose jobs load registered models (:mod:`tailgate.stages.model_jobs`) gets a second
server that has also imported :data:`MODEL_PRELOAD` (PyTorch and transformers: 4–7 CPU-s a job);
the ``models`` resource of the ``generate``, ``score`` and ``embed`` rules sends those jobs to it.
Its children see none of the model modules until the job imports ``torch`` or ``transformers``
(a finder puts them back then, with the environment variables those imports set), so a job that
loads no model has what it would have had in its own process.

The child imports ``tailgate`` from disk like any job, so its provenance record (code digest and
the runtime fingerprint of :mod:`tailgate.runtime.fingerprint`) is the same byte for byte, and so
is every result. The server does the fingerprint's costly part once, after the preload: under
:data:`DIGESTS` in ``sys.modules`` its children find the SHA-256 of every file it loaded, the site
folders' ``RECORD`` listings, its judgement of each loaded file and the bytecode check's answers,
each with the status of the files it was read from; what changed since, the job works out itself
(:mod:`tailgate.runtime.interpreter`). The workflow sets the address for each run (an inherited
``TAILGATE_FORKSERVER`` never reaches a job). ``TAILGATE_FORKSERVER=off`` turns the server off;
it runs only on Linux (fork after the macOS system frameworks is unsafe), never for cluster jobs.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = [
    "DIGESTS",
    "ENV",
    "ENV_MODELS",
    "JUDGED",
    "MODEL_PRELOAD",
    "PRELOAD",
    "RECORDS",
    "VOUCHED",
    "claim",
    "hand_over",
    "start",
    "stop",
]

#: the environment variable that carries the server's socket to the jobs of one run
ENV = "TAILGATE_FORKSERVER"
#: the ``sys.modules`` entry whose ``files`` map each preloaded module's real path to its
#: status and SHA-256, and whose ``origins`` map the path each module names as its file to that
#: real path (read in tailgate.runtime.interpreter)
DIGESTS = "_tailgate_preloaded_files"
#: the name, in the same module, of the site folders' ``RECORD`` listings: each folder's real
#: path → the status of its ``*.dist-info/RECORD`` files and every file they list (``.installed``)
RECORDS = "sites"
#: and of its bytecode check's answers for the package's and rule scripts' compiled files
JUDGED = "judged"
#: and of its judgement of each file in ``files`` (tailgate.runtime.installed's ``distributed``),
#: with the standard library and site folders it judged with (read in tailgate.runtime.interpreter)
VOUCHED = "vouched"
#: fewest jobs of a run for which a server starts (its preload costs about one job's imports)
MIN_JOBS = 2
#: and the model server's, for the jobs the plan marks as loading a model
ENV_MODELS = "TAILGATE_FORKSERVER_MODELS"
#: what the server imports before it forks (import-time only: no computation, no threads started)
PRELOAD = (
    "numpy",
    "pyarrow",
    "pyarrow.parquet",
    "pandas",
    "scipy.special",
    "scipy.optimize",
    "yaml",
    "jsonschema",
    "tqdm",
    "importlib.metadata",
    # the compiled kernels of the fits, bulk bootstraps and analyses (with their contexts,
    # :func:`_ready_numba`)
    "numba",
    "snakemake.iocontainers",
    "snakemake.logging",
    # the report's and the analyses' figures (1.3 s a job): matplotlib reads its settings from
    # the environment and from a ./matplotlibrc, so the server also serves one folder only
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "matplotlib.image",
)
#: what the model server imports on top of :data:`PRELOAD` (what :mod:`tailgate.models` and the
#: scorers load: the auto classes and ``modeling_utils`` pull in tokenizers and safetensors)
MODEL_PRELOAD = (
    "torch",
    "transformers",
    "transformers.modeling_utils",
    "transformers.models.auto.modeling_auto",
    "transformers.models.auto.tokenization_auto",
)
#: a job's import of one of these packages gives it every module the model preload added
_MODEL_TRIGGERS = frozenset({"torch", "transformers"})
#: what Snakemake sets for a job from its ``threads`` (numpy's BLAS reads them when it loads):
#: the server has the values of a one-thread job, so it serves the jobs of one thread
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
#: set per job by Snakemake (its ``tmpdir`` resource) or by the shell it starts the job with, and
#: read by no preloaded module when it loads: left out of the comparison (the child has the
#: job's values, and ``tempfile`` forgets the server's folder)
_PER_JOB = frozenset(
    {"TMPDIR", "TMP", "TEMP", "TEMPDIR", "PWD", "OLDPWD", "SHLVL", "_", "PS1", "PS2", "PS4"}
)
_FDS = 3  # stdin, stdout, stderr
_LEN = struct.Struct("!I")
_PID = struct.Struct("!q")
_CODE = struct.Struct("!i")


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        part = conn.recv(n - len(data))
        if not part:
            raise ConnectionError("the peer closed the connection")
        data += part
    return data


def _identity() -> dict[str, Any]:
    """What must be equal between a job and the server for a fork to be the job's own process."""
    flags = {
        name: getattr(sys.flags, name)
        for name in dir(sys.flags)
        if not name.startswith(("_", "n_")) and name not in ("count", "index", "safe_path")
    }  # safe_path (-P) only decides the start-up sys.path, which the job sends
    environ = {
        k: v for k, v in os.environ.items() if k not in (ENV, ENV_MODELS) and k not in _PER_JOB
    }
    return {
        "executable": sys.executable,
        "version": sys.version,
        "flags": flags,
        "xoptions": {str(k): str(v) for k, v in sys._xoptions.items()},
        "environ": environ,
        "cwd": os.getcwd(),
    }


# -- the job's side ------------------------------------------------------------------------------


def _marked_for_models(main: Any) -> bool:
    """Whether the plan marked this job as one that loads a model (its ``models`` resource)."""
    resources = getattr(getattr(main, "snakemake", None), "resources", None)
    try:
        return bool(int(getattr(resources, "models", 0) or 0))
    except (TypeError, ValueError):
        return False


def hand_over() -> None:
    """Run this job's script in a fork of the run's server and exit with its status; return
    without doing anything when there is no server or it does not take the job."""
    main = sys.modules.get("__main__")
    address = os.environ.get(ENV)
    if _marked_for_models(main) and os.environ.get(ENV_MODELS):
        address = os.environ[ENV_MODELS]
    # Snakemake's preamble points __file__ at the rule's script and keeps the one it runs (the
    # script with the preamble) in __real_file__
    script = getattr(main, "__real_file__", None) or getattr(main, "__file__", None)
    if not address or address == "off" or script is None or not hasattr(socket, "AF_UNIX"):
        return
    from tailgate.files.atomic import current_umask  # the job's side runs inside the package

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # a signal landing before the relay below is set waits for it (not orphaning the child)
    relayed = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, relayed)
    try:
        conn.connect(address)
        request = {
            **_identity(),
            "job_environ": dict(os.environ),
            "script": os.path.abspath(script),
            "argv": sys.argv,
            "path": sys.path,
            "umask": current_umask(),
        }
        payload = json.dumps(request).encode()
        socket.send_fds(conn, [_LEN.pack(len(payload))], [0, 1, 2])
        conn.sendall(payload)
        (pid,) = _PID.unpack(_recv_exact(conn, _PID.size))
    except OSError:  # no server, or it did not take the job: run here
        pid = 0
    if pid <= 0:
        conn.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return

    def forward(signum: int, _frame: Any) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in relayed:
        signal.signal(sig, forward)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a waiting signal is passed on now
    try:
        (code,) = _CODE.unpack(_recv_exact(conn, _CODE.size))
    except OSError:  # the child died without a status (killed)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# -- the server ----------------------------------------------------------------------------------


class _StashedModules:
    """A meta-path finder of the model server's children: the modules the model preload added,
    out of ``sys.modules`` until the job imports ``torch`` or ``transformers``; then all of them
    go back (those the job has not loaded itself by then) and the import gets the preloaded
    module. An import of any other stashed name loads it from disk as in the job's own process.
    """

    def __init__(self, stash: dict[str, Any], environ: dict[str, str]) -> None:
        self.stash = stash
        #: variables the preload's imports set (PyTorch: TORCHINDUCTOR_CACHE_DIR), set for the
        #: job when it imports them, unless it has its own
        self.environ = environ

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.partition(".")[0] not in _MODEL_TRIGGERS or name not in self.stash:
            return None
        import importlib.machinery

        module = self.stash[name]
        return importlib.machinery.ModuleSpec(
            name,
            self,
            origin=getattr(module, "__file__", None),
            is_package=hasattr(module, "__path__"),
        )

    def create_module(self, spec: Any) -> Any:
        # every stashed module but this one goes back now (the import system registers this one)
        for key, value in self.environ.items():
            os.environ.setdefault(key, value)
        for name, module in self.stash.items():
            if name != spec.name:
                sys.modules.setdefault(name, module)
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        return self.stash[spec.name]

    def exec_module(self, module: Any) -> None:
        """The module ran in the server."""


def _preload(names: tuple[str, ...]) -> None:
    """Import each of the modules ``names`` that can be imported here."""
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _ready_numba() -> None:
    """Build numba's typing and target contexts, which a job builds at its first compiled
    kernel, loaded from numba's cache or compiled (they load about 400 of numba's modules, and
    compile nothing)."""
    if "numba" not in sys.modules:
        return
    try:
        from numba.core.registry import cpu_target

        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()
    except Exception:  # another numba: the jobs build them themselves
        pass


def _ready_transformers() -> None:
    """Build transformers' table of checkpoint conversions, which a job builds at its first
    ``from_pretrained`` (0.1 of the 0.25 CPU-s an embed job spends loading its model); it loads
    no module, and each load takes a copy of the table, as in the job's own process."""
    try:
        from transformers.conversion_mapping import get_checkpoint_conversion_mapping

        get_checkpoint_conversion_mapping("")
    except Exception:  # another transformers: the jobs build it themselves
        pass


def _stopped_at_start_up(_signum: int, _frame: Any) -> None:
    raise SystemExit(130)


def _survey() -> None:
    """Put what each job's provenance record would otherwise work out alone under
    :data:`DIGESTS` in ``sys.modules`` (module docstring): the SHA-256 of every loaded module's
    file, the site folders' ``RECORD`` listings and the bytecode check's answers, each with the
    status of the files it was read from."""
    import types

    installed = _standalone("installed.py")
    bytecode = _standalone("bytecode.py")
    table = types.ModuleType(DIGESTS)
    table.files, table.origins = _loaded_file_digests(installed)  # type: ignore[attr-defined]
    sites = _site_records(installed) if installed is not None else {}
    setattr(table, RECORDS, sites)
    if installed is not None:
        setattr(table, VOUCHED, _vouched(installed, table.files, sites))  # type: ignore[attr-defined]
    package = Path(__file__).resolve().parents[1]
    judged = bytecode.judged([package, package.parent / "scripts"]) if bytecode else {}
    setattr(table, JUDGED, judged)
    sys.modules[DIGESTS] = table


def _standalone(name: str) -> Any:
    """A module of this package (``tailgate/runtime``) that imports no other tailgate module (the
    ``RECORD`` reader, the bytecode check), run from its source file (never from compiled code) and
    not left in ``sys.modules``; None where it cannot be run."""
    import types

    source = Path(__file__).resolve().parent / name
    module = types.ModuleType(f"_tailgate_{source.stem}")
    module.__file__ = str(source)
    try:
        code = compile(source.read_bytes(), str(source), "exec", dont_inherit=True)
        sys.modules[module.__name__] = module  # while it runs (dataclasses, annotations)
        exec(code, module.__dict__)
    except (OSError, SyntaxError, ImportError):
        return None
    finally:
        sys.modules.pop(module.__name__, None)
    return module


def _loaded_file_digests(
    installed: Any,
) -> tuple[dict[str, tuple[tuple[int, int, int, int], bytes]], dict[str, str]]:
    """Each loaded module's file (real path) → its status and SHA-256; and the path each module
    names as its file → that real path (none without the ``RECORD`` reader's status)."""
    import hashlib

    files: dict[str, tuple[tuple[int, int, int, int], bytes]] = {}
    origins: dict[str, str] = {}
    if installed is None:
        return files, origins
    for module in list(sys.modules.values()):
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        origin = origin or getattr(module, "__file__", None)
        if not isinstance(origin, str) or not os.path.isfile(origin):
            continue  # a FIFO or a folder is never opened (a FIFO would block the server)
        real = os.path.realpath(origin)
        origins[origin] = real
        if real in files:
            continue
        try:
            # non-blocking: a file replaced by a FIFO since the check opens at once
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
            with open(fd, "rb") as fh:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    continue
                digest = hashlib.file_digest(fh, "sha256").digest()
        except OSError:
            continue
        files[real] = (installed.status_of(st), digest)
    return files, origins


def _vouched(installed: Any, files: dict[str, Any], sites: dict[str, Any]) -> tuple[Any, ...]:
    """``installed.distributed`` of every file in ``files``, with the folders it was judged with."""
    stdlib, folders = installed.stdlib_folders(), installed.site_folders(sys.path)

    def listing(d: str) -> dict[str, str]:
        return sites[d][1] if d in sites else {}

    def digest(real: str) -> str:
        return installed.record_digest(files[real][1])

    verdicts = {r: installed.distributed(r, stdlib, folders, listing, digest) for r in files}
    return stdlib, folders, verdicts


def _site_records(installed: Any) -> dict[str, Any]:
    """``site_records`` of every folder on this server's import path and of its site folders
    that holds a distribution, keyed by real path."""
    import site

    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    sites = {}
    for d in dict.fromkeys(os.path.realpath(d) for d in [*dirs, *sys.path] if d):
        if os.path.isdir(d):
            statuses, listing = installed.site_records(d)
            if statuses:
                sites[d] = (statuses, listing)
    return sites


def _child(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become the job, run its script, report its status. Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # until the job's stage begins, Ctrl-C ends it quietly, as in its own process
        # (scripts/_tailgate.py; tailgate.stages.rule.run hands Ctrl-C to the stage)
        signal.signal(signal.SIGINT, _stopped_at_start_up)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update(request["job_environ"])
        os.environ.pop(ENV, None)  # the job's own `_tailgate` must not hand over again
        os.environ.pop(ENV_MODELS, None)
        tempfile.tempdir = None  # found again from the job's TMPDIR
        # The exit functions the preloaded modules registered belong to the server: they may
        # wait for its threads, which a fork does not have (pyarrow 14 joins its AWS event-loop
        # thread at exit and hangs in the child). The job's own are run when it ends.
        atexit._clear()
        sys.argv = list(request["argv"])
        sys.path[:] = list(request["path"])
        conn.sendall(_PID.pack(os.getpid()))
        code = _run_script(request["script"])
        conn.sendall(_CODE.pack(code))
    finally:
        os._exit(code)


def _run_script(script: str) -> int:
    """Run ``script`` as ``python script`` would, ending as the interpreter ends; its status."""
    import runpy
    import threading
    import traceback

    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    except BaseException:  # an uncaught exception: its traceback, status 1
        traceback.print_exc()
        code = 1
    for thread in threading.enumerate():  # the interpreter waits for its non-daemon threads
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # and runs the exit functions the job registered
    if "logging" in sys.modules:  # logging's own (registered when the server imported it)
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(address: str, models: bool = False) -> None:
    """Bind ``address``, import :data:`PRELOAD` (and with ``models`` :data:`MODEL_PRELOAD`,
    stashed: :class:`_StashedModules`), then fork a child for each job that asks."""
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C ends the jobs and the run, then this
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)  # jobs that arrive during the imports wait here
    _preload(PRELOAD)
    _ready_numba()
    own = _identity()  # the environment a job must have (before the model preload sets any)
    stash: _StashedModules | None = None
    added: set[str] = set()
    environ = dict(os.environ)
    if models:
        before = set(sys.modules)
        _preload(MODEL_PRELOAD)
        _ready_transformers()
        added = set(sys.modules) - before
    _survey()  # the model preload's files too, before they are stashed
    if models:
        stash = _StashedModules(
            {name: sys.modules.pop(name) for name in added},
            {k: v for k, v in os.environ.items() if environ.get(k) != v},
        )
    stopping = False

    def stop_serving(_signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop_serving)
    listener.settimeout(0.5)
    while not stopping and os.getppid() == parent:
        _reap()
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        except InterruptedError:
            continue
        conn.settimeout(60.0)  # a job sends its request at once
        try:
            head, fds, _flags, _addr = socket.recv_fds(conn, _LEN.size, _FDS)
            head += _recv_exact(conn, _LEN.size - len(head))
            request = json.loads(_recv_exact(conn, _LEN.unpack(head)[0]))
        except (OSError, ValueError):
            conn.close()
            continue
        same = all(request.get(k) == v for k, v in own.items())
        if not same or len(fds) != _FDS:
            for fd in fds:
                os.close(fd)
            try:
                conn.sendall(_PID.pack(0))  # not taken: the job runs in its own process
            finally:
                conn.close()
            continue
        conn.settimeout(None)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            listener.close()
            # the job imports tailgate from disk itself (this server never imports it)
            for name in [m for m in sys.modules if m == "tailgate" or m.startswith("tailgate.")]:
                del sys.modules[name]
            if stash is not None:
                sys.meta_path.insert(0, stash)
            _child(conn, request, fds)
        for fd in fds:
            os.close(fd)
        conn.close()
    listener.close()
    while True:  # wait for the jobs still running (their status goes to their own jobs)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break


# -- the workflow's side ---------------------------------------------------------------------------


def claim() -> bool:
    """Remove an inherited ``TAILGATE_FORKSERVER`` (and model server address) from this
    process's environment, so that only a server this run starts can reach its jobs; False when
    it asked for no server (``off``)."""
    os.environ.pop(ENV_MODELS, None)
    return os.environ.pop(ENV, None) != "off"


def start(
    workflow: Any, wanted: bool = True, *, models: bool = False
) -> subprocess.Popen[bytes] | None:
    """Start the run's server and point this process's future jobs at it (None: not here); with
    ``models`` (a study with jobs that load a model) also the model server, as ``.models`` of
    the returned process.

    ``workflow`` is Snakemake's: the server is for runs on this machine with the host's Python
    (no cluster executor, no conda or container deployment)."""
    os.environ.pop(ENV, None)
    os.environ.pop(ENV_MODELS, None)
    if not wanted or sys.platform != "linux":
        return None
    try:
        local = bool(workflow.local_exec) and not workflow.dryrun
        methods = {str(m).lower() for m in workflow.deployment_settings.deployment_method}
    except AttributeError:
        return None
    if not local or any("conda" in m or "apptainer" in m for m in methods):
        return None
    environ = {k: v for k, v in os.environ.items() if k not in (ENV, ENV_MODELS)}
    environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    plain, marked = _scheduled_jobs(workflow)
    models = models and marked >= MIN_JOBS
    if plain < MIN_JOBS and not models:
        return None
    try:
        folder = tempfile.mkdtemp(prefix="tailgate-fork-")
        address = str(Path(folder) / "socket")
        model_address = str(Path(folder) / "models")
        proc = _launch(address, environ)
        model_proc = _launch(model_address, environ, "--models") if models else None
    except OSError as exc:  # no temporary folder, no process: the jobs start on their own
        print(f"tailgate: no warm start for this run's jobs ({exc})", file=sys.stderr)
        return None
    # a server binds before its imports: wait for that (a tenth of a second), so the first
    # jobs find it and queue for it instead of starting on their own
    deadline = time.monotonic() + 30
    for server, where in ((proc, address), (model_proc, model_address)):
        while (
            server is not None
            and not os.path.exists(where)
            and server.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
    os.environ[ENV] = address
    if model_proc is not None:
        os.environ[ENV_MODELS] = model_address
    proc.folder = folder  # type: ignore[attr-defined]
    proc.models = model_proc  # type: ignore[attr-defined]
    atexit.register(stop, proc)  # also when the run ends without its onsuccess/onerror
    return proc


def _scheduled_jobs(workflow: Any) -> tuple[int, int]:
    """The script jobs this run will run: those not marked with the ``models`` resource and
    those marked. A server pays for its preload (2 CPU-seconds; 4–7 with the models) from its
    second job on, so a run of fewer jobs starts none: the later-stage re-run of
    ``audit --reproduce`` (every generation and scoring job done) starts no model server, a
    re-run of one stale job no server at all. Many of each where Snakemake's plan cannot be
    read, as before."""
    try:
        jobs = [job for job in workflow.dag.needrun_jobs() if job.rule.script]
        marked = sum(1 for job in jobs if int(getattr(job.resources, "models", 0) or 0))
    except (AttributeError, TypeError, ValueError):
        return MIN_JOBS, MIN_JOBS
    return len(jobs) - marked, marked


def _launch(address: str, environ: dict[str, str], *flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-P", str(Path(__file__).resolve()), address, *flags],
        stdin=subprocess.DEVNULL,
        env=environ,
    )


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """Stop the run's servers (after their running jobs) and remove their folder."""
    os.environ.pop(ENV, None)
    os.environ.pop(ENV_MODELS, None)
    if proc is None:
        return
    for server in (proc, getattr(proc, "models", None)):
        if server is None or server.poll() is not None:
            continue
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=600)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    folder = Path(getattr(proc, "folder", ""))
    for child in folder.glob("*") if folder.name else ():
        child.unlink(missing_ok=True)
    if folder.name:
        try:
            folder.rmdir()
        except OSError:
            pass


if __name__ == "__main__":
    serve(sys.argv[1], models="--models" in sys.argv[2:])
