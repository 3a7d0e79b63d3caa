"""The classroom hub: its defaults, its secrets and certificate, its refusals; and, as root, two simulated
learners who log in through the form over TLS, open chapter 04, its exercises and the quiz, run the chapter's
live all-reduce, and probe (from their own kernels, with their own uids) what they can reach.

The full load (30 learners) is ``benchmarks/hub_load.py``; this is its small sample (about a minute).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from nvcourse.devtools import hub as hubmod
from nvcourse.devtools import hub_accounts, hub_secrets
from nvcourse.devtools.hub_load import secrets_seen, simulate

ROOT = Path(__file__).resolve().parents[1]
needs_npm = pytest.mark.skipif(shutil.which("npm") is None,
                               reason="the hub's proxy comes from npm: apt-get install npm")
needs_root = pytest.mark.skipif(not hub_accounts.is_root() or shutil.which("useradd") is None,
                                reason="one Unix account per learner needs root and useradd")


def test_the_default_state_folder_is_outside_the_checkout(monkeypatch, tmp_path):
    monkeypatch.setattr(hub_accounts, "is_root", lambda: True)
    assert hubmod.default_dir() == Path("/var/lib/nvcourse-hub")
    monkeypatch.setattr(hub_accounts, "is_root", lambda: False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert hubmod.default_dir() == tmp_path / "nvcourse-hub"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert ROOT not in hubmod.default_dir().parents


@pytest.mark.parametrize("kw, word", [({"users": 0}, "--users"), ({"port": 0}, "--port"),
                                      ({"ip": "0.0.0.0", "tls": False}, "--no-tls")])
def test_prepare_refuses_bad_usage(kw, word, tmp_path):
    args = {"users": 2, **kw}
    with pytest.raises(ValueError, match=word):
        hubmod.prepare(tmp_path, **args)
    assert not (tmp_path / "secrets").exists()  # refused before anything was written


def test_without_root_a_room_address_is_refused_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(hub_accounts, "is_root", lambda: False)
    assert hubmod.main(["--users", "30", "--ip", "0.0.0.0", "--dir", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs root" in err and "sudo python3 tasks.py hub" in err


def test_secrets_are_files_only_their_owner_reads(tmp_path):
    pw_file = hub_secrets.write_secrets(tmp_path, passwords={"learner01": "p" * 10}, admin_password="a" * 32,
                                        api_token="t" * 32)
    for f in (pw_file, tmp_path / "secrets" / "hub.json"):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "secrets").stat().st_mode) == 0o700
    assert pw_file.read_text().strip() == "a" * 32
    assert hub_secrets.read_secrets(tmp_path)["api_token"] == "t" * 32


def test_each_learner_has_an_own_password_on_a_private_slip_kept_across_starts(tmp_path):
    learners = hub_accounts.learner_names(3)
    passwords = hub_secrets.learner_passwords(tmp_path, learners)
    assert sorted(passwords) == learners and len(set(passwords.values())) == 3
    assert all(len(pw) == 10 and set(pw) <= set(hub_secrets.ALPHABET) for pw in passwords.values())
    html = hub_secrets.write_slips(tmp_path, passwords, ["https://192.0.2.2:8000/"])
    text = html.with_suffix(".txt").read_text()
    for name, pw in passwords.items():
        assert f"name: {name}\n  password: {pw}\n" in text and f"<b>{name}</b>" in html.read_text()
    assert html.read_text().count('class="slip"') == 3 and "https://192.0.2.2:8000/" in text
    slips = tmp_path / "slips"
    assert stat.S_IMODE(slips.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in slips.iterdir()} == {0o600}
    # A restart of the same folder keeps the printed slips valid; more learners than before get new ones.
    assert hub_secrets.learner_passwords(tmp_path, learners) == passwords
    assert hub_secrets.learner_passwords(tmp_path, learners[:2]) == {n: passwords[n] for n in learners[:2]}
    assert hub_secrets.learner_passwords(tmp_path, hub_accounts.learner_names(4))["learner01"] != \
        passwords["learner01"]


def _login(auth, name: str, password: str) -> str | None:
    """The authenticator's answer, run on an event loop of its own in a thread: earlier tests of the suite (the
    browser tests' Playwright) can leave a loop running in this thread, where asyncio.run() refuses to start."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, auth.authenticate(None, {"username": name, "password": password})).result()


def test_a_learners_password_opens_their_own_account_only():
    from nvcourse.devtools.hub_auth import SlipAuthenticator

    auth = SlipAuthenticator(passwords={"learner01": "aaaa2222bb", "learner02": "cccc3333dd"},
                             admin_password="i" * 32, admin_users={"instructor"})
    assert _login(auth, "learner02", "cccc3333dd") == "learner02"
    assert _login(auth, "learner02", "aaaa2222bb") is None  # learner01's password is no skeleton key
    assert _login(auth, "instructor", "aaaa2222bb") is None and _login(auth, "learner01", "i" * 32) is None
    assert _login(auth, "instructor", "i" * 32) == "instructor"
    assert _login(auth, "learner03", "") is None and _login(auth, "learner01", "") is None


def test_the_console_names_the_slips_and_prints_no_password(capsys, tmp_path, monkeypatch):
    passwords = {"learner01": "aaaa2222bb", "learner02": "cccc3333dd"}
    prep = hubmod.Prepared(env={}, accounts=True, cert=None, fingerprint="", instructor_file=tmp_path / "pw",
                           limits="limits x", passwords=passwords, slips=tmp_path / "slips" / "slips.html")
    hubmod._announce(hubmod._parser().parse_args(["--users", "2", "--no-tls"]), prep)
    out, err = capsys.readouterr()
    assert out.strip().splitlines()[-1].endswith("learner02 with the password on their own slip")
    assert "for the board" in err.strip().splitlines()[-1]  # the board line comes last, under its banner
    monkeypatch.setattr(hub_secrets, "addresses", lambda ip: ["192.0.2.2", "127.0.0.1"])
    assert hubmod.board_urls("0.0.0.0", 8000) == ["https://192.0.2.2:8000/"]  # no loopback for the room
    assert str(tmp_path / "slips" / "slips.html") in err
    assert not [pw for pw in passwords.values() if pw in out + err]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_the_certificate_names_this_machine(tmp_path):
    cert, key, fingerprint = hub_secrets.make_certificate(tmp_path, "127.0.0.1")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(fingerprint.split(":")) == 32
    text = subprocess.run(["openssl", "x509", "-in", str(cert), "-noout", "-text"], capture_output=True,
                          text=True).stdout
    assert "IP Address:127.0.0.1" in text and "DNS:localhost" in text


def test_stop_strays_stops_the_hubs_processes_in_the_homes_and_nothing_else(tmp_path: Path):
    # a learner's server runs in a session of its own, out of the hub's process group
    home = tmp_path / "homes" / "learner01"
    home.mkdir(parents=True)
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    env = {**os.environ, "JUPYTERHUB_USER": "learner01"}  # what the hub gives every server
    server = subprocess.Popen(sleep, cwd=home, env=env, start_new_session=True)
    other = subprocess.Popen(sleep, cwd=tmp_path, env=env, start_new_session=True)
    shell = subprocess.Popen(sleep, cwd=home, start_new_session=True)  # the instructor's own, in a learner's home
    try:
        assert hubmod.stop_strays(tmp_path, wait_s=5) == [server.pid]
        assert server.wait(timeout=5) is not None
        assert other.poll() is None  # the hub folder itself (and anything outside the homes) is left alone
        assert shell.poll() is None  # not started by the hub
    finally:
        for proc in (server, other, shell):
            proc.kill()
            proc.wait()


def _port_free(port: int) -> bool:
    """Nothing listens on ``port`` (closed connections may linger in TIME_WAIT: a new server binds anyway)."""
    return not [c for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == port
                and c.status == psutil.CONN_LISTEN]


def _form_login(hub, name: str, password: str) -> int:
    import requests

    http = requests.Session()
    http.trust_env, http.verify = False, hub.cert
    http.get(f"{hub.url}/hub/login", timeout=60).raise_for_status()
    xsrf = http.cookies.get("_xsrf", path="/hub/") or http.cookies.get("_xsrf") or ""
    r = http.post(f"{hub.url}/hub/login?next=", data={"username": name, "password": password, "_xsrf": xsrf},
                  timeout=120, allow_redirects=False)
    return r.status_code


@pytest.mark.slow
@needs_npm
@needs_root
def test_two_learners_isolated_over_tls_and_nothing_left(monkeypatch):
    monkeypatch.setattr(hub_accounts, "PREFIX", "nvt-")  # never the accounts of a hub running on this machine
    hub_dir = Path(tempfile.mkdtemp(prefix="nvcourse-hub-test-"))  # pytest's tmp_path is 0700: learners need o+x
    try:
        with hubmod.Hub(hub_dir, users=2) as hub:
            pid, port = hub.proc.pid, hub.port
            # through the real login form: learner01's password does not open learner02's account
            assert _form_login(hub, "learner02", hub.password_of("learner01")) == 403
            assert _form_login(hub, "learner02", hub.password_of("learner02")) == 302
            # this checkout (its history, solutions, the answer key) is closed to a learner's account
            for path in (ROOT, ROOT / ".git" / "HEAD", ROOT / "solutions", ROOT / "artifacts"):
                probe = subprocess.run(["runuser", "-u", "nvt-learner01", "--", "ls", str(path)], capture_output=True)
                assert probe.returncode != 0, f"learner01 reads {path}"
            runs = simulate(hub, 2)
            seen = secrets_seen(hub, runs)
            uids = {a.pw_name: a.pw_uid for a in hub_accounts.ours(hub_dir)}
            enforced = hub.prepared.limits.startswith("limits enforced")
            with pytest.raises(OSError):  # TLS only: plain HTTP on the hub's port gets no page
                urllib.request.urlopen(f"http://127.0.0.1:{port}/hub/login", timeout=10)
            with pytest.raises((ssl.SSLError, OSError)):  # and a client that does not trust the certificate fails
                urllib.request.urlopen(f"{hub.url}/hub/login", timeout=10, context=ssl.create_default_context())
        assert [r.error for r in runs] == ["", ""]
        assert all(r.correct and r.news_off and r.kernels == 3 for r in runs)
        for r in runs:
            p = r.probe
            assert p["uid"] == uids[f"nvt-{r.name}"] and p["uid"] != 0  # the learner's own account, not root
            assert not (p["list_other_home"] or p["read_other_file"]), "a learner reached another's home"
            assert not (p["read_secrets"] or p["read_hub_environ"]), "a learner reached the hub's secrets"
            assert not p["write_course"]
            assert not [k for k in p["env"] if k.startswith("NVCOURSE_HUB")]
            if enforced:
                assert "nvcourse-hub-" in p["cgroups"] and f"/{r.name}" in p["cgroups"]
        assert seen == []
        assert len({r.probe["uid"] for r in runs}) == 2
        names = [n for r in runs for n in r.shm_names]
        assert names and len(names) == len(set(names)), "two learners used the same shared-memory name"
        # Stopped: no account, home, process, port, secret or shared-memory segment left.
        assert hub_accounts.ours(hub_dir) == [] and not any((hub_dir / "homes").iterdir())
        assert not [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in
                    uids.values()]
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        assert _port_free(port) and not (hub_dir / "secrets").exists()
        assert not set(names) & set(os.listdir("/dev/shm"))  # the learners' segments are gone
    finally:
        hubmod.teardown(hub_dir)
        shutil.rmtree(hub_dir, ignore_errors=True)


@pytest.mark.slow
@needs_npm
@needs_root
def test_a_real_hub_whose_terminal_closes_stops_and_leaves_nothing():
    hub_dir = Path(tempfile.mkdtemp(prefix="nvcourse-hub-test-"))
    port = hubmod.free_port()
    env = {**os.environ, "NVCOURSE_HUB_ACCOUNT_PREFIX": "nvt-", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "nvcourse.devtools.hub", "--users", "1", "--port", str(port), "--dir", str(hub_dir)]
    out = hub_dir.parent / f"{hub_dir.name}.out"
    try:
        with open(out, "w") as o:
            p = subprocess.Popen(cmd, env=env, stdout=o, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while "learners open" not in out.read_text() and p.poll() is None and time.monotonic() < deadline:
                time.sleep(1)
            assert "learners open" in out.read_text(), out.read_text()[-2000:]
            assert len(hub_accounts.ours(hub_dir)) == 1
            second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
            assert second.returncode == 1 and "--stop --dir" in second.stderr and "Traceback" not in second.stderr
            assert len(hub_accounts.ours(hub_dir)) == 1  # the refused start tore nothing down
            os.killpg(p.pid, signal.SIGHUP)
            assert p.wait(180) == 0
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        assert hub_accounts.ours(hub_dir) == [] and not (hub_dir / "secrets").exists()
        assert _port_free(port)
        assert not [q for q in psutil.process_iter(["cwd"]) if q.info["cwd"] and
                    q.info["cwd"].startswith(str(hub_dir))]
        assert "hub: stopped" in (hub_dir / "hub-console.log").read_text()
    finally:
        hubmod.stop_strays(hub_dir)
        subprocess.run([*cmd[:3], "--stop", "--dir", str(hub_dir)], env=env, capture_output=True, timeout=300)
        shutil.rmtree(hub_dir, ignore_errors=True)
        out.unlink(missing_ok=True)


def test_a_state_folder_inside_the_checkout_is_refused_naming_dir(capsys):
    inside = ROOT / "artifacts" / "hub-test-never-made"
    assert hubmod.main(["--users", "2", "--dir", str(inside)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"hub: error: --dir {inside} is inside the course checkout")
    assert not inside.exists()  # refused before anything was made (no proxy installed there)


@needs_root
def test_learners_cannot_read_the_checkout_its_history_or_the_answer_key(monkeypatch):
    from nvcourse.devtools import handouts, hub_protect

    base = Path(tempfile.mkdtemp(prefix="nvcourse-checkout-test-"))  # a checkout as git clones it (0755, 0644)
    root = base / "course"
    for rel in (".git/HEAD", "solutions/01.ipynb", "tests/test_x.py", "docs/instructor-guide.md",
                "nvcourse/__init__.py", "locales/fr.po", ".venv/bin/python"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    for d in [base, *root.rglob("*"), root]:
        d.chmod(0o755 if d.is_dir() else 0o644)
    monkeypatch.setattr(handouts, "answer_key", lambda *_a, **_k: "# answer key: 42\n")
    key = handouts.write_answer_key(root / "artifacts" / "handouts")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    monkeypatch.setattr(hub_protect.sys, "prefix", str(root / ".venv"))
    monkeypatch.setattr(hub_protect.sys, "executable", str(root / ".venv" / "bin" / "python"))
    closed = hub_protect.close_checkout(root)
    assert root in closed and root / ".git" in closed and root / "nvcourse" not in closed
    name = f"nvt-probe{os.getpid() % 100000}"
    subprocess.run(["useradd", "--no-create-home", "--comment", "nvcourse-hub test", name], check=True)
    try:
        def can_read(path: Path) -> bool:
            cmd = ["runuser", "-u", name, "--", "cat" if path.is_file() else "ls", str(path)]
            return subprocess.run(cmd, capture_output=True).returncode == 0

        for secret in (root, root / ".git" / "HEAD", root / "solutions" / "01.ipynb", key,
                       root / "artifacts" / "handouts", root / "docs" / "instructor-guide.md"):
            assert not can_read(secret), f"a learner's account reads {secret}"
        for runtime in (root / "nvcourse" / "__init__.py", root / "locales" / "fr.po",
                        root / ".venv" / "bin" / "python"):
            assert can_read(runtime), f"the learners' servers need {runtime}"
        reopen = subprocess.run(["bash", "-c", hub_protect.reopen_command(root)], capture_output=True)
        assert reopen.returncode == 0 and can_read(root / "solutions" / "01.ipynb") and not can_read(key)
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def test_the_hubs_internal_ports_come_from_its_settings(tmp_path, monkeypatch):
    from traitlets.config import Config

    settings = {"ip": "127.0.0.1", "port": 8765, "learners": ["learner01"], "proxy": "chp", "accounts": False,
                "hub_port": 40123, "proxy_api_port": 40124}
    (tmp_path / "hub-settings.json").write_text(json.dumps(settings))
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "hub.json").write_text(json.dumps({"passwords": {"learner01": "p" * 10},
                                                               "admin_password": "a" * 32, "api_token": None}))
    monkeypatch.setenv("NVCOURSE_HUB_DIR", str(tmp_path))
    c = Config()
    exec(compile((ROOT / "deploy" / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"), {"c": c})
    assert c.JupyterHub.hub_port == 40123 and c.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:40124"
    assert c.JupyterHub.authenticator_class.endswith("SlipAuthenticator")
    assert c.SlipAuthenticator.passwords == {"learner01": "p" * 10}


def test_a_start_refused_by_the_lock_leaves_the_checkout_as_it_was(monkeypatch, capsys, tmp_path):
    """A second hub on a folder another hub holds stops at the lock: before the checkout is closed to learners,
    before anything is prepared (the first hub's instructor would find their checkout's permissions changed)."""
    touched = []
    monkeypatch.setattr(hubmod.hub_protect, "close_checkout", lambda *a, **k: touched.append("closed") or [])
    monkeypatch.setattr(hubmod, "prepare", lambda *a, **k: touched.append("prepared"))
    monkeypatch.setattr(hubmod.signal, "signal", lambda *a: None)  # main's handlers stay out of pytest's process
    other = hubmod.stopping.acquire(tmp_path)  # the hub already running there
    try:
        assert hubmod.main(["--dir", str(tmp_path), "--users", "2"]) == 1
        err = capsys.readouterr().err
        assert "is already running" in err and "--stop --dir" in err
        with pytest.raises(hubmod.stopping.HubRunning):
            hubmod.Hub(tmp_path, users=2).__enter__()
    finally:
        hubmod.stopping.release(tmp_path, other)
    assert touched == []
