"""Trusted timestamps (RFC 3161) against a real time-stamping authority on loopback (OpenSSL's
``ts -reply`` behind a small HTTP server): ``freeze --timestamp`` stores a token over entry 0's
hash, ``audit --tsa-cert`` verifies it offline and reports the registration time as proven, and
fails on a token for another hash, a token checked against another authority's certificate, a
registration time-stamped after the data, or a missing token."""

from __future__ import annotations

import base64
import json

import pytest
from attack_project import ATTACK_STUDY, REPO_ROOT, make_project
from local_tsa import make_authority, serve_authority

AUDIT_FAILED, INVALID = 4, 2


@pytest.fixture(scope="module")
def authority(tmp_path_factory):
    with serve_authority(make_authority(tmp_path_factory.mktemp("tsa"))) as tsa:
        yield tsa


@pytest.fixture(scope="module")
def other_root(tmp_path_factory):
    return make_authority(tmp_path_factory.mktemp("other-tsa"), "Other") / "ca.pem"


@pytest.fixture(scope="module")
def stamped_run(tmp_path_factory, authority):
    """The attack study frozen with a token from the local authority, committed, run."""
    root = tmp_path_factory.mktemp("stamped")
    proj = make_project(root, "attack", ATTACK_STUDY)
    code, out = proj.cli("freeze", proj.prereg, "--timestamp", authority.url)
    assert code == 0 and f"time-stamped by {authority.url}" in out, out
    proj.commit("Pre-register the study, time-stamped")
    res = proj.snakemake()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return proj


@pytest.fixture()
def stamped(stamped_run, tmp_path):
    return stamped_run.copy(tmp_path / "stamped")


def test_the_token_is_over_the_entry_hash_and_the_audit_proves_the_time(stamped_run, authority):
    from rfc3161_client import decode_timestamp_response

    lock = json.loads(stamped_run.lock.read_text())
    entry = lock["chain"][0]
    (token,) = lock["timestamps"][entry["entry_hash"]]
    reply = decode_timestamp_response(base64.b64decode(token["token"]))
    assert reply.tst_info.message_imprint.message.hex() == entry["entry_hash"]
    code, out = stamped_run.audit("--tsa-cert", str(authority.root))
    assert code == 0, out
    assert "registration time proven: entry 0 existed by" in out
    code, out = stamped_run.audit()  # without the certificate: listed, never trusted
    assert code == 0 and "not verified: pass --tsa-cert" in out
    assert "registration time proven" not in out


def test_another_authoritys_certificate_fails(stamped_run, other_root):
    code, out = stamped_run.audit("--tsa-cert", str(other_root))
    assert code == AUDIT_FAILED
    assert "does not verify against" in out and "registration time is not proven" in out


def test_a_token_for_another_hash_fails(stamped, authority):
    """A genuine token, but over another entry (here: the forger's fresh entry 0), moved onto
    the registered entry and committed."""
    from tailgate.prereg.lock import entry_hash
    from tailgate.prereg.timestamp import request_token

    lock = json.loads(stamped.lock.read_text())
    h = lock["chain"][0]["entry_hash"]
    other = {**lock["chain"][0], "data_existed": True}
    other["entry_hash"] = entry_hash(other)
    lock["timestamps"][h] = [request_token(authority.url, other)]
    stamped.lock.write_text(json.dumps(lock, indent=2))
    stamped.commit("Replace the token")
    code, out = stamped.audit("--tsa-cert", str(authority.root))
    assert code == AUDIT_FAILED
    assert "the timestamp token of entry 0" in out and "Mismatch between messages" in out


def test_a_registration_time_stamped_after_the_data_fails(proj, authority):
    """Peek, then register: whatever the commit dates say, a token made after the first artifact
    proves the registration does not predate the data."""
    code, out = proj.cli("freeze", proj.prereg, "--timestamp", authority.url)
    assert code == 0 and "time-stamped by" in out, out
    proj.commit("Time-stamp the registration")
    code, out = proj.audit("--tsa-cert", str(authority.root))
    assert code == AUDIT_FAILED
    assert "entry 0 was time-stamped at" in out and "does not predate the data" in out


def test_a_missing_token_fails_when_the_reviewer_asks_for_proof(proj, authority):
    code, out = proj.audit("--tsa-cert", str(authority.root))
    assert code == AUDIT_FAILED and "entry 0 has no timestamp token" in out


def test_an_unreachable_authority_writes_nothing(tmp_path):
    proj = make_project(tmp_path, "attack", ATTACK_STUDY)
    code, out = proj.cli("freeze", proj.prereg, "--timestamp", "http://127.0.0.1:9/tsr")
    assert code == INVALID and "did not answer" in out and "Traceback" not in out
    assert not proj.lock.exists()


def test_committed_locks_without_tokens_keep_their_bytes():
    from tailgate.prereg.lock import read_lock

    locks = sorted((REPO_ROOT / "preregistrations").glob("*.lock.json"))
    assert locks
    for path in locks:
        lock = read_lock(path)
        lock.verify()
        assert lock.timestamps == {}
        assert lock.to_json() == json.loads(path.read_text())


def test_amend_time_stamps_the_new_entry(tmp_path, authority):
    proj = make_project(tmp_path, "attack", ATTACK_STUDY)
    assert proj.cli("freeze", proj.prereg)[0] == 0
    proj.replace("band_rule: all", "band_rule: headline")
    code, out = proj.cli("amend", proj.prereg, "--reason", "r", "--timestamp", authority.url)
    assert code == 0 and "time-stamped by" in out, out
    lock = json.loads(proj.lock.read_text())
    assert list(lock["timestamps"]) == [lock["chain"][1]["entry_hash"]]
