"""The classroom hub's secrets and TLS certificate, in files only root (or the hub's own user) can read.

``DIR/secrets/`` (mode 0700) holds ``hub.json`` (every learner's own password, the instructor's password, the
API token; mode 0600), ``instructor-password`` (the instructor's password alone, for the instructor to read) and
a self-signed certificate made at every start (``hub.crt``, ``hub.key``; valid 7 days, for ``localhost``, the
machine's name and its addresses). ``deploy/jupyterhub_config.py`` reads them from there, so no secret is in
the hub's environment, where a learner's server would inherit it.

Each learner has a password of their own (no shared password: with one, any learner could log in as any
other). They are kept in ``DIR/slips/`` (mode 0700, files 0600): ``passwords.json``, and the slips to print and
cut, one per learner, ``slips.txt`` and ``slips.html``. A later start of the same folder reuses them, so slips
printed the day before stay valid; delete ``DIR/slips`` for new ones.
"""

from __future__ import annotations

import html
import json
import os
import secrets
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


#: Letters and digits a learner cannot misread on paper (no 0/O, 1/l/I).
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def new_password(length: int = 10) -> str:
    """A random password from :data:`ALPHABET` (10 characters: about 49 bits)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def learner_passwords(hub_dir: Path, learners: list[str]) -> dict[str, str]:
    """Every learner's own password: those of ``DIR/slips/passwords.json`` when it has them all, else new ones
    (written there, mode 0600)."""
    d = _slips_dir(hub_dir)
    try:
        old = json.loads((d / "passwords.json").read_text())
    except (OSError, ValueError):
        old = {}
    if isinstance(old, dict) and all(isinstance(old.get(n), str) and old[n] for n in learners):
        return {n: old[n] for n in learners}
    passwords = {n: new_password() for n in learners}
    _private(d / "passwords.json", json.dumps(passwords, indent=1) + "\n")
    return passwords


def write_slips(hub_dir: Path, passwords: dict[str, str], urls: list[str]) -> Path:
    """One slip per learner (address, name, own password) in ``slips.txt`` and a printable ``slips.html`` (cut
    along the dashed lines), both mode 0600; returns the HTML's path."""
    d = _slips_dir(hub_dir)
    where = " or ".join(urls)
    text = "".join(f"nvcourse hub  {where}\n  name: {n}\n  password: {pw}\n{'-' * 60}\n"
                   for n, pw in passwords.items())
    _private(d / "slips.txt", text)
    cells = "".join(f'<div class="slip"><div>{html.escape(where)}</div><div>name: <b>{html.escape(n)}</b></div>'
                    f'<div>password: <b class="pw">{html.escape(pw)}</b></div></div>\n'
                    for n, pw in passwords.items())
    page = ('<!doctype html><meta charset="utf-8"><title>nvcourse hub: password slips</title><style>'
            "body{font-family:sans-serif;margin:1cm}.slip{display:inline-block;width:8.5cm;margin:0;"
            "padding:.5cm;border:1px dashed #000;font-size:12pt;line-height:1.6;break-inside:avoid}"
            ".pw{font-family:monospace;font-size:15pt;letter-spacing:.1em}</style>\n"
            f"<p>One slip per learner: print, cut along the dashed lines, hand out. Keep this page private.</p>\n"
            f"{cells}")
    _private(d / "slips.html", page)
    return d / "slips.html"


def _slips_dir(hub_dir: Path) -> Path:
    d = Path(hub_dir) / "slips"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    d.chmod(0o700)
    return d


def write_secrets(hub_dir: Path, *, passwords: dict[str, str], admin_password: str, api_token: str | None) -> Path:
    """Write the hub's secrets (``passwords``: each learner's own); returns the instructor's password file."""
    d = secrets_dir(hub_dir)
    _private(d / "hub.json", json.dumps({"passwords": passwords, "admin_password": admin_password,
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
