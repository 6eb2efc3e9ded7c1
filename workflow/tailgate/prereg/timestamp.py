"""Trusted timestamps (RFC 3161) of lock entries: the one time the researcher cannot write.

Every time the audit otherwise reads — an entry's ``time``, a record's ``created``, a commit
date — is written by the person who runs tailgate (a clock, ``GIT_COMMITTER_DATE``, an editor).
A time-stamping authority (TSA) signs "this hash existed at time T" with a certificate the
researcher does not hold.

* **Asking** (:func:`request_token`, ``tailgate freeze|amend --timestamp URL``): the request's
  message is the entry's canonical content, so the token's message imprint (SHA-256) *is* the
  entry's ``entry_hash``: the token vouches for the whole entry — the registered file, its pins,
  the link to the entry before. The TSA's reply must be granted and carry the request's imprint
  and nonce; otherwise nothing is written.
* **Storing**: tokens live in the lock's ``timestamps`` map (entry hash → tokens), outside every
  entry, so entries and their hashes are unchanged (locks committed before stay valid) and a
  token can be added to an entry that was frozen earlier.
* **Verifying** (:func:`verify_tokens`, ``tailgate audit --tsa-cert FILE``), offline: the
  signature and its certificate chain up to a certificate in FILE (the TSA's root CA, with any
  intermediates), the time-stamping key usage, the imprint against the entry's hash, and the
  signed time. Entry 0's signed time is then the *proven* registration time; a proven time after
  the first recorded artifact fails the audit (the registration does not predate the data).

What a token proves, and only a token: that the entry existed no later than the signed time. It
does not prove that no data existed before it — data times remain the researcher's — but it
fixes the registration so that a study registered after the results cannot borrow an earlier
date. Public TSAs: https://freetsa.org/tsr (root: https://freetsa.org/files/cacert.pem),
http://timestamp.digicert.com (DigiCert's public roots), and others listed in the README.

The protocol is implemented by the maintained ``rfc3161-client`` library (the time-stamping
client of the Sigstore project); only the HTTP post is made here.
"""

from __future__ import annotations

import base64
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tailgate.errors import InputError
from tailgate.prereg.canonical import canonical_json

__all__ = ["TimestampCheck", "entry_message", "request_token", "verify_tokens"]

_QUERY = "application/timestamp-query"
_TIMEOUT_S = 60


def entry_message(entry: dict[str, Any]) -> bytes:
    """The bytes a token is requested over: the entry's canonical content, whose SHA-256 is its
    ``entry_hash`` (:func:`tailgate.prereg.lock.entry_hash`)."""
    return canonical_json({k: v for k, v in entry.items() if k != "entry_hash"})


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def request_token(url: str, entry: dict[str, Any]) -> dict[str, Any]:
    """Ask the TSA at ``url`` for a token over ``entry``; the stored token (``tsa``, ``time``,
    ``token``: the DER reply, base64). :class:`InputError` (nothing written) when the TSA cannot
    be reached or its reply is refused, malformed or over other data."""
    from rfc3161_client import (
        HashAlgorithm,
        PKIStatus,
        TimestampRequestBuilder,
        decode_timestamp_response,
    )

    request = (
        TimestampRequestBuilder()
        .data(entry_message(entry))
        .hash_algorithm(HashAlgorithm.SHA256)
        .nonce(nonce=True)
        .cert_request(cert_request=True)
        .build()
    )
    fix = (
        "Fix: check the URL and the network, try another time-stamping authority (see the "
        "README), or freeze without --timestamp and add a token later with "
        "'tailgate freeze PREREG --timestamp URL'"
    )
    post = urllib.request.Request(
        url, data=request.as_bytes(), method="POST", headers={"Content-Type": _QUERY}
    )
    try:
        with urllib.request.urlopen(post, timeout=_TIMEOUT_S) as res:
            reply = res.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise InputError(
            f"--timestamp {url}: the time-stamping authority did not answer ({exc}). {fix}"
        ) from None
    try:
        response = decode_timestamp_response(reply)
    except Exception as exc:  # the library raises its own parse errors
        raise InputError(
            f"--timestamp {url}: the reply is not an RFC 3161 response ({exc}). {fix}"
        ) from None
    if PKIStatus(response.status) != PKIStatus.GRANTED:
        raise InputError(
            f"--timestamp {url}: the authority refused the request (status "
            f"{response.status}). {fix}"
        )
    info = response.tst_info
    if info.message_imprint.message != bytes.fromhex(str(entry["entry_hash"])):
        raise InputError(
            f"--timestamp {url}: the token is over other data than entry {entry['seq']}. {fix}"
        )
    if info.nonce != request.nonce:
        raise InputError(
            f"--timestamp {url}: the reply's nonce is not the request's (a replayed reply). {fix}"
        )
    return {
        "tsa": url,
        "time": _utc(info.gen_time).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "token": base64.b64encode(reply).decode("ascii"),
    }


@dataclass(frozen=True)
class TimestampCheck:
    """The audit's reading of the lock's tokens: failures, notes, and the proven time of each
    entry with a verified token (entry seq → UTC time)."""

    failures: list[str]
    notes: list[str]
    proven: dict[int, datetime]


def _load_certificates(path: Path) -> list[Any]:
    from cryptography import x509

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"--tsa-cert {path}: cannot be read ({exc})") from None
    try:
        certs = (
            x509.load_pem_x509_certificates(data)
            if b"-----BEGIN" in data
            else [x509.load_der_x509_certificate(data)]
        )
    except ValueError as exc:
        raise InputError(
            f"--tsa-cert {path}: not a PEM or DER certificate ({exc}). Fix: pass the "
            "time-stamping authority's root certificate (e.g. freetsa.org's cacert.pem)"
        ) from None
    return certs


def _verifier(certs: list[Any]) -> Any:
    from rfc3161_client import VerifierBuilder

    builder = VerifierBuilder()
    for cert in certs:
        if cert.issuer == cert.subject:
            builder = builder.add_root_certificate(cert)
        else:
            builder = builder.add_intermediate_certificate(cert)
    return builder.build()


def verify_tokens(
    lock: Any, tsa_cert: Path | None, first: tuple[datetime, str] | None
) -> TimestampCheck:
    """Verify every token of ``lock`` against the certificates in ``tsa_cert`` (module
    docstring). Without ``tsa_cert`` the tokens are listed, not trusted."""
    from rfc3161_client import decode_timestamp_response

    tokens: dict[str, list[dict[str, Any]]] = getattr(lock, "timestamps", {}) or {}
    by_hash = {str(e["entry_hash"]): e for e in lock.chain}
    fails: list[str] = []
    notes: list[str] = []
    proven: dict[int, datetime] = {}
    name = Path(lock.path).name
    for h in tokens:
        if h not in by_hash:
            fails.append(
                f"{name}: a timestamp token names {h[:12]}…, which is no entry of the chain"
            )
    if tsa_cert is None:
        for e in lock.chain:
            for t in tokens.get(str(e["entry_hash"]), []):
                notes.append(
                    f"entry {e['seq']} carries a timestamp token from {t.get('tsa')} "
                    f"({t.get('time')}), not verified: pass --tsa-cert with the authority's "
                    "root certificate"
                )
        return TimestampCheck(fails, notes, proven)
    verifier = _verifier(_load_certificates(tsa_cert))
    for e in lock.chain:
        seq, h = int(e["seq"]), str(e["entry_hash"])
        for t in tokens.get(h, []):
            try:
                response = decode_timestamp_response(base64.b64decode(str(t["token"])))
                verifier.verify(response, bytes.fromhex(h))
            except Exception as exc:  # every failure of the token is a failed check
                fails.append(
                    f"{name}: the timestamp token of entry {seq} from {t.get('tsa')} does not "
                    f"verify against {tsa_cert} ({type(exc).__name__}: {exc}): it is for "
                    "another entry, another authority, or was altered"
                )
                continue
            when = _utc(response.tst_info.gen_time)
            proven[seq] = min(when, proven.get(seq, when))
    if 0 not in proven:
        fails.append(
            f"{name}: entry 0 has no timestamp token that verifies against {tsa_cert}, so the "
            "registration time is not proven. Fix: time-stamp the registration when freezing "
            "('tailgate freeze PREREG --timestamp URL')"
        )
    for seq, when in sorted(proven.items()):
        notes.append(
            f"entry {seq} existed by {when.isoformat()}: proven by a trusted timestamp "
            f"verified against {tsa_cert}"
        )
    if 0 in proven:
        notes.insert(0, f"registration time proven: entry 0 existed by {proven[0].isoformat()}")
        if first is not None and proven[0] > _utc(first[0]):
            fails.append(
                f"{name}: entry 0 was time-stamped at {proven[0].isoformat()}, after the first "
                f"artifact {first[1]} ({first[0].isoformat()}): the registration does not "
                "predate the data"
            )
    return TimestampCheck(fails, notes, proven)
