"""A real RFC 3161 time-stamping authority on loopback, for tests: OpenSSL makes a root CA and a
TSA certificate (critical extended key usage timeStamping) and answers each query with
``openssl ts -reply`` behind a small HTTP server on 127.0.0.1 (a free port)."""

from __future__ import annotations

import http.server
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_TSA_CONFIG = """\
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {dir}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.99999.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""

_TSA_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
"""


def _openssl(cwd: Path, *args: str) -> None:
    res = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert res.returncode == 0, f"openssl {' '.join(args)}: {res.stderr}"


def make_authority(folder: Path, name: str = "Test") -> Path:
    """A root CA (``ca.pem``) and a TSA key and certificate it signed, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    _openssl(
        folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
        "-out", "ca.pem", "-days", "3650", "-subj", f"/CN={name} Root CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    _openssl(
        folder, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "tsa.key", "-out", "tsa.csr",
        "-subj", f"/CN={name} TSA",
    )  # fmt: skip
    (folder / "tsa.ext").write_text(_TSA_EXTENSIONS)
    _openssl(
        folder, "x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "tsa.pem", "-days", "3650", "-extfile", "tsa.ext",
    )  # fmt: skip
    (folder / "serial").write_text("01\n")
    (folder / "tsa.cnf").write_text(_TSA_CONFIG.format(dir=folder))
    return folder


@dataclass(frozen=True)
class Authority:
    url: str
    folder: Path

    @property
    def root(self) -> Path:
        return self.folder / "ca.pem"


@contextmanager
def serve_authority(folder: Path) -> Iterator[Authority]:
    """Serve the authority in ``folder`` on 127.0.0.1 until the block ends."""
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            query = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                (folder / "query.tsq").write_bytes(query)
                res = subprocess.run(
                    ["openssl", "ts", "-reply", "-config", str(folder / "tsa.cnf"),
                     "-queryfile", "query.tsq", "-out", "reply.tsr"],
                    cwd=folder, capture_output=True, check=False,
                )  # fmt: skip
                reply = (folder / "reply.tsr").read_bytes() if res.returncode == 0 else b""
            self.send_response(200 if reply else 500)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Authority(f"http://127.0.0.1:{server.server_address[1]}/tsr", folder)
    finally:
        server.shutdown()
        server.server_close()
