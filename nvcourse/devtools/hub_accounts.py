"""The classroom hub's Unix accounts: one per learner, made when the hub starts and removed when it stops.

Run as root, ``tasks.py hub`` makes ``nvc-learner01`` … (the hub's learner01 … with a prefix, so no existing
account is ever touched) with a locked password, a private group and a home ``DIR/homes/learnerNN`` (mode 0700)
holding a learner copy of the course. Every account it makes carries the comment ``nvcourse-hub DIR``; only
accounts with that comment are removed (their processes first, then the account, its group and its home).
Before a home goes, the files the learner changed are copied to ``DIR/collected/TIME/learnerNN`` (root only),
so the instructor keeps quiz answers and edited notebooks.

Memory and CPU limits: a control group per learner (cgroup v2, or the v1 ``memory`` and ``cpu`` hierarchies)
that the learner's server joins before it drops root (:mod:`nvcourse.devtools.hub_spawner`); its kernels
inherit it. Where no control group can be made (a container without a writable ``/sys/fs/cgroup``) the limits
are only displayed, and :func:`make_limits` says so.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

PREFIX = os.environ.get("NVCOURSE_HUB_ACCOUNT_PREFIX", "nvc-")
CGROUP = Path("/sys/fs/cgroup")
CACHES = frozenset({".cache", ".local", ".jupyter", ".ipython", ".config", ".npm", ".ipynb_checkpoints"})


class AccountError(RuntimeError):
    """An account could not be made or removed (exit status 1)."""


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def learner_names(users: int) -> list[str]:
    """The hub's learner names, learner01 … learnerNN."""
    return [f"learner{i:02d}" for i in range(1, users + 1)]


def unix_name(learner: str, prefix: str | None = None) -> str:
    """The Unix account of hub user ``learner`` (``prefix`` defaults to :data:`PREFIX`)."""
    return f"{PREFIX if prefix is None else prefix}{learner}"


def marker(hub_dir: Path) -> str:
    """The comment (GECOS) of every account this hub makes."""
    return f"nvcourse-hub {Path(hub_dir).resolve()}"


def ours(hub_dir: Path) -> list[pwd.struct_passwd]:
    """Accounts this hub (this state folder) made."""
    mark = marker(hub_dir)
    return [p for p in pwd.getpwall() if p.pw_gecos == mark]


def create(hub_dir: Path, learners: list[str], skel: Path, prefix: str | None = None) -> list[str]:
    """Make one locked account per learner with a private 0700 home holding ``skel``; returns the Unix names.

    Accounts left by a hub of this folder that was killed are removed first; an account of the same name that
    this hub did not make is an error (nothing is changed then).
    """
    remove(hub_dir)
    names = [unix_name(n, prefix) for n in learners]
    clash = [n for n in names if _exists(n)]
    if clash:
        raise AccountError(f"Unix account {clash[0]} exists and was not made by this hub; remove it, or set "
                           "NVCOURSE_HUB_ACCOUNT_PREFIX to another prefix")
    homes = Path(hub_dir) / "homes"
    homes.mkdir(mode=0o711, exist_ok=True)
    homes.chmod(0o711)  # learners reach their own home; nobody lists the others
    try:
        for learner, name in zip(learners, names, strict=True):
            home = homes / learner
            _run(["useradd", "--create-home", "--home-dir", str(home), "--skel", str(skel), "--shell", "/bin/bash",
                  "--comment", marker(hub_dir), "--user-group", name])
            home.chmod(0o700)
            (home / ".nvcourse-created").touch()
    except BaseException:
        remove(hub_dir, collect_to=None)
        raise
    return names


def remove(hub_dir: Path, collect_to: Path | None = None) -> list[str]:
    """Stop every process of this hub's accounts, keep the learners' changed files, remove the accounts.

    ``collect_to``: a folder (root only) that gets ``learnerNN/...`` with each file changed since its home was
    made; None keeps nothing. Returns the Unix names removed.
    """
    gone = []
    accounts = ours(hub_dir)
    kill_user_processes({acc.pw_uid for acc in accounts})
    for acc in accounts:
        home = Path(acc.pw_dir)
        if collect_to is not None and home.is_dir():
            collect(home, collect_to / home.name)
        _run(["userdel", "--remove", acc.pw_name], ok=(0, 12))  # 12: home already gone
        if home.exists():  # userdel leaves a home it did not make
            shutil.rmtree(home, ignore_errors=True)
        gone.append(acc.pw_name)
    return gone


def collect(home: Path, dest: Path) -> int:
    """Copy the files of ``home`` changed since it was made into ``dest`` (mode 0700); returns how many."""
    stamp = home / ".nvcourse-created"
    since = stamp.stat().st_mtime if stamp.exists() else 0.0
    count = 0
    for path in home.rglob("*"):
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_mtime <= since or path == stamp:
                continue
            rel = path.relative_to(home)
            if CACHES.intersection(rel.parts[:-1]):
                continue  # caches and settings, not work (the quiz answers in .nvcourse/ are kept)
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copy2(path, target)
            count += 1
        except OSError:
            continue
    if dest.exists():
        dest.chmod(0o700)
    return count


def end_processes(procs: list, wait_s: float = 10) -> None:
    """Terminate ``procs`` (psutil processes), wait up to ``wait_s`` seconds, kill those still alive and wait
    again: a process gets its chance to clean up (a server its kernels, a kernel its shared memory)."""
    import psutil

    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=wait_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=wait_s)


def kill_user_processes(uids: set[int], wait_s: float = 10) -> list[int]:
    """Terminate, then kill, every process whose real or effective uid is in ``uids``; returns their pids."""
    import psutil

    if not uids:
        return []
    procs = []
    for proc in psutil.process_iter(["uids"]):
        ids = proc.info["uids"]
        if ids is not None and (ids.real in uids or ids.effective in uids):
            procs.append(proc)
    end_processes(procs, wait_s)
    return [p.pid for p in procs]


# -- limits -----------------------------------------------------------------------------------------
def _cgroup_dirs(group: str) -> dict[str, Path] | None:
    """Where this machine keeps control groups: {"v2": dir} or {"memory": dir, "cpu": dir}; None if nowhere."""
    if (CGROUP / "cgroup.controllers").exists():
        return {"v2": CGROUP / group} if os.access(CGROUP, os.W_OK) else None
    mem, cpu = CGROUP / "memory", CGROUP / "cpu"
    if mem.is_dir() and cpu.is_dir() and os.access(mem, os.W_OK) and os.access(cpu, os.W_OK):
        return {"memory": mem / group, "cpu": cpu / group}
    return None


def make_limits(hub_dir: Path, learners: list[str], mem_bytes: int, cpus: float) -> tuple[dict[str, list[str]], str]:
    """A control group per learner with ``mem_bytes`` of memory and ``cpus`` CPUs.

    Returns ({learner: [cgroup.procs files the server joins]}, a sentence for the console saying what is enforced).
    """
    group = "nvcourse-hub-" + hashlib.sha1(str(Path(hub_dir).resolve()).encode()).hexdigest()[:8]
    dirs = _cgroup_dirs(group) if is_root() else None
    if dirs is None:
        return {}, ("limits not enforced (no writable control groups here: run the hub as root on a host, or use "
                    "deploy/z2jh); each learner is only shown the limit")
    (Path(hub_dir) / "cgroup-name").write_text(group)
    quota = max(1000, int(cpus * 100_000))
    try:
        if "v2" in dirs:
            _write(CGROUP / "cgroup.subtree_control", "+memory +cpu")
            dirs["v2"].mkdir(exist_ok=True)
            _write(dirs["v2"] / "cgroup.subtree_control", "+memory +cpu")
        else:
            for d in dirs.values():
                d.mkdir(exist_ok=True)
        out = {}
        for learner in learners:
            files = []
            for kind, base in dirs.items():
                d = base / learner
                d.mkdir(exist_ok=True)
                if kind in ("v2", "memory"):
                    _write(d / ("memory.max" if kind == "v2" else "memory.limit_in_bytes"), str(mem_bytes))
                if kind == "v2":
                    _write(d / "cpu.max", f"{quota} 100000")
                elif kind == "cpu":
                    _write(d / "cpu.cfs_period_us", "100000")
                    _write(d / "cpu.cfs_quota_us", str(quota))
                files.append(str(d / "cgroup.procs"))
            out[learner] = files
    except OSError as exc:
        remove_limits(hub_dir)
        return {}, f"limits not enforced (control groups refused: {exc.strerror}); each learner is only shown them"
    how = "cgroup v2" if "v2" in dirs else "cgroup v1"
    return out, f"limits enforced per learner ({how}): {mem_bytes / 2**30:g} GiB memory, {cpus:g} CPU"


def remove_limits(hub_dir: Path) -> None:
    """Remove this hub's control groups (after its processes are gone)."""
    name_file = Path(hub_dir) / "cgroup-name"
    if not name_file.exists():
        return
    group = name_file.read_text().strip()
    for base in (CGROUP / group, CGROUP / "memory" / group, CGROUP / "cpu" / group):
        if base.is_dir():
            for d in sorted(base.iterdir(), reverse=True):
                if d.is_dir():
                    _rmdir(d)
            _rmdir(base)
    name_file.unlink(missing_ok=True)


def _rmdir(d: Path) -> None:
    for _ in range(20):  # a control group can be removed once its last process has been reaped
        try:
            d.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _run(cmd: list[str], ok: tuple[int, ...] = (0,)) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in ok:
        raise AccountError(f"{cmd[0]} {cmd[-1]} failed: {(proc.stderr or proc.stdout).strip() or proc.returncode}")
