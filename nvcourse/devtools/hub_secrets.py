"""The classroom hub's secrets and TLS certificate, in files only root (or the hub's own user) can read.

``DIR/secrets/`` (mode 0700) holds ``hub.json`` (the shared password, the instructor's password, the API
token; mode 0600), ``instructor-password`` (the instructor's password alone, for the instructor to read) and a
self-signed certificate made at every start (``hub.crt``, ``hub.key``; valid 7 days, for ``localhost``, the
machine's name and its addresses). ``deploy/jupyterhub_config.py`` reads them from there, so no secret is in
the hub's environment, where a learner's server would inherit it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path


class SecretsError(RuntimeError):
    """A secret or the certificate could not be written (exit status 1)."""


def secrets_dir(hub_dir: Path) -> Path:
    d = Path(hub_dir) / "secrets"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    d.chmod(0o700)
    return d


def _private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` created with mode 0600 (never readable by others, not even briefly)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def write_secrets(hub_dir: Path, *, password: str, admin_password: str, api_token: str | None) -> Path:
    """Write the hub's secrets; returns the path of the instructor's password file."""
    d = secrets_dir(hub_dir)
    _private(d / "hub.json", json.dumps({"password": password, "admin_password": admin_password,
                                         "api_token": api_token}))
    _private(d / "instructor-password", admin_password + "\n")
    return d / "instructor-password"


def read_secrets(hub_dir: Path) -> dict:
    return json.loads((Path(hub_dir) / "secrets" / "hub.json").read_text())


def addresses(ip: str) -> list[str]:
    """IPv4 addresses learners may use: ``ip`` itself, or every address of this machine for 0.0.0.0."""
    if ip not in ("0.0.0.0", ""):
        return [ip]
    import psutil

    found = [a.address for addrs in psutil.net_if_addrs().values() for a in addrs if a.family == socket.AF_INET]
    return sorted(set(found) | {"127.0.0.1"}, key=lambda a: (a.startswith("127."), a))


def make_certificate(hub_dir: Path, ip: str) -> tuple[Path, Path, str]:
    """A fresh self-signed certificate for this machine; returns (cert, key, SHA-256 fingerprint)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise SecretsError("openssl is needed to make the hub's TLS certificate (apt-get install openssl)")
    d = secrets_dir(hub_dir)
    cert, key = d / "hub.crt", d / "hub.key"
    names = [f"IP:{a}" for a in addresses(ip)] + ["DNS:localhost", f"DNS:{socket.gethostname()}"]
    key.unlink(missing_ok=True)
    old = os.umask(0o077)
    try:
        proc = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "7",
                               "-subj", "/CN=nvcourse classroom hub", "-addext", f"subjectAltName={','.join(names)}",
                               "-keyout", str(key), "-out", str(cert)], capture_output=True, text=True)
    finally:
        os.umask(old)
    if proc.returncode != 0:
        raise SecretsError(f"openssl could not make the certificate: {proc.stderr.strip().splitlines()[-1:]}")
    key.chmod(0o600)
    cert.chmod(0o644)
    fp = subprocess.run([openssl, "x509", "-in", str(cert), "-noout", "-fingerprint", "-sha256"],
                        capture_output=True, text=True).stdout.strip().split("=", 1)[-1]
    return cert, key, fp
