"""Read the command line people paste above an nccl-tests output: the launcher, its rank count and hosts, and the
environment it passes (``mpirun -x VAR=VAL``, ``srun --export=ALL,VAR=VAL``, ``mpiexec -genv VAR VAL``,
``VAR=VAL cmd``, ``export VAR=VAL``).

Continuation lines (a trailing backslash) are joined first, and a shell prompt (``$ ``, ``# ``, ``user@host:~$ ``)
is dropped. Only a command that starts a ``*_perf`` binary is read as the launch; ``export`` lines anywhere count.

>>> launch = read_launch("mpirun --np 16 -H a:8,b:8 \\\\\\n -x NCCL_IB_HCA=mlx5_0:1,mlx5_1:1 ./all_reduce_perf -b 8\\n")
>>> launch["launcher"], launch["np"], launch["hosts"], launch["ib_hcas"]
('mpirun', 16, 'a:8,b:8', ['mlx5_0', 'mlx5_1'])
"""

from __future__ import annotations

import re
import shlex

from .paste import clean_line

__all__ = ["read_launch", "LAUNCHERS", "hca_list"]

#: programs that start the ranks (Open MPI, MPICH/Intel MPI hydra, Slurm, PMIx, LSF, Flux, Cray)
LAUNCHERS = ("mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra", "srun", "jsrun", "flux", "aprun")
_PERF = re.compile(r"(?:^|/)\w+_perf(?:_mpi)?$")
_PROMPT = re.compile(r"^(?:\[[^\]]*\][$#]\s+|\S*[@:]\S*[$#]\s+|[$#]\s+)")  # [root@host dir]#, user@host:~$, $
# a command people wrap in backticks in a sentence or a bullet: `srun ... all_reduce_perf -g 1`
_CODE_SPAN = re.compile(r"`([^`]*_perf(?:_mpi)?\b[^`]*)`")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
# a bare assignment on a line of its own counts only for an environment-variable name (upper case), so that a
# sentence such as "x=1 works" is not read as a setting
_ENV_LINE = re.compile(r"^[A-Z][A-Z0-9_]*=\S*$")
# options whose value is the rank count or the host list, per launcher family
_NP = {"mpi": {"-np", "--np", "-n", "-c", "--n"}, "srun": {"-n", "--ntasks"}}
_HOSTS = {"mpi": {"-H", "--host", "-host", "-hosts", "--hosts"}, "srun": {"-w", "--nodelist"}}


def hca_list(value: str) -> list[str]:
    """The devices ``NCCL_IB_HCA`` names: 'mlx5_0:1,mlx5_1:1' -> ['mlx5_0', 'mlx5_1']; a leading '=' (exact
    match) is NCCL's prefix, not part of a name; a leading '^' lists devices to leave out (NCCL's environment
    variable docs, NCCL_IB_HCA), so those are not the devices used: []."""
    if value.strip().startswith("^"):
        return []
    body = value.strip().lstrip("=")
    return [d.split(":")[0] for d in body.split(",") if d.split(":")[0]]


def _commands(text: str) -> list[str]:
    """Logical command lines: continuations joined, launcher prefixes and prompts removed."""
    out: list[str] = []
    buf = ""
    for raw in text.splitlines():
        line = clean_line(raw)
        if line.startswith("%%"):
            continue
        if buf:
            line = buf + " " + line
        if line.endswith("\\"):
            buf = line[:-1].rstrip()
            continue
        buf = ""
        if (m := _CODE_SPAN.search(line)) and len(m.group(1).split()) > 1:  # a command, not a name in a sentence
            line = m.group(1)
        out.append(_PROMPT.sub("", line))
    if buf:
        out.append(_PROMPT.sub("", buf))
    return out


def _split(cmd: str) -> list[str]:
    try:
        return shlex.split(cmd, comments=False)
    except ValueError:  # an unbalanced quote in a pasted line: fall back to whitespace
        return cmd.split()


def _read_option(toks: list[str], i: int, launch: dict) -> int:
    """Read the option at ``toks[i]``; return how many tokens it took."""
    tok = toks[i]
    name, eq, inline = tok.partition("=")
    value = inline if eq else (toks[i + 1] if i + 1 < len(toks) else "")
    took = 1 if eq else 2
    family = "srun" if launch["launcher"] == "srun" else "mpi"
    if name in _NP[family] and re.fullmatch(r"\d+", value):
        launch["np"] = int(value)
    elif family == "srun" and name in ("-N", "--nodes", "--ntasks-per-node") and re.fullmatch(r"\d+", value):
        # srun's count as nodes x tasks per node when -n is not given (kept aside until the command is read)
        launch.setdefault("_srun", {})["per_node" if name == "--ntasks-per-node" else "nodes"] = int(value)
    elif name in _HOSTS[family] and value:
        launch["hosts"] = value
    elif name == "-x" and value:
        var, has, val = value.partition("=")
        if has:
            launch["env"][var] = val
    elif name == "--export" and value:
        for part in value.split(","):
            if m := _ASSIGN.match(part):
                launch["env"][m.group(1)] = m.group(2)
    elif name in ("-genv", "-env", "--env") and i + 2 < len(toks) and "=" not in value:
        launch["env"][value] = toks[i + 2]
        took = 3
    elif name in ("-genv", "-env", "--env") and (m := _ASSIGN.match(value)):
        launch["env"][m.group(1)] = m.group(2)
    else:
        return 1
    return took


def _read_command(toks: list[str], launch: dict) -> None:
    i = 0
    while i < len(toks):  # VAR=VAL, env, sudo, time before the launcher
        if m := _ASSIGN.match(toks[i]):
            launch["env"][m.group(1)] = m.group(2)
        elif toks[i] not in ("env", "sudo", "time", "exec", "nohup"):
            break
        i += 1
    if i < len(toks) and toks[i].rsplit("/", 1)[-1] in LAUNCHERS:
        launch["launcher"] = toks[i].rsplit("/", 1)[-1]
        i += 1
        while i < len(toks) and not _PERF.search(toks[i]):
            if not toks[i].startswith("-") and (m := _ASSIGN.match(toks[i])):  # `srun ... VAR=VAL ./x_perf`
                launch["env"][m.group(1)] = m.group(2)
            i += _read_option(toks, i, launch) if toks[i].startswith("-") else 1
    srun = launch.pop("_srun", {})
    launch["nodes"] = srun.get("nodes")
    if launch["np"] is None and len(srun) == 2:
        launch["np"] = srun["nodes"] * srun["per_node"]
    for j in range(i, len(toks)):
        if _PERF.search(toks[j]):
            launch["binary"] = toks[j].rsplit("/", 1)[-1]
            launch["args"] = toks[j + 1:]
            break


def _read_exports(toks: list[str], launch: dict) -> None:
    for tok in toks[1 if toks[0] == "export" else 0:]:
        if m := _ASSIGN.match(tok):
            launch["env"][m.group(1)] = m.group(2)


def _inline_script(toks: list[str], launch: dict) -> list[str]:
    """``srun ... bash -c "module load ...; export A=1; ./build/x_perf -g 4"``: the launcher's part followed by the
    script's command that starts the binary; the script's ``export`` lines go to the environment."""
    for k in range(len(toks) - 2):
        if toks[k].rsplit("/", 1)[-1] in ("bash", "sh") and toks[k + 1] in ("-c", "-lc"):
            head, chosen = toks[:k], None
            for part in re.split(r"\s*(?:;|&&)\s*", toks[k + 2]):
                sub = _split(part)
                if sub and sub[0] == "export":
                    _read_exports(sub, launch)
                elif chosen is None and any(_PERF.search(t) for t in sub):
                    chosen = sub
            return head + chosen if chosen else toks
    return toks


def _starts_like_command(toks: list[str]) -> bool:
    """Whether the first word after ``VAR=VAL``, ``env``, ``sudo``... is a launcher or an nccl-tests binary."""
    rest = [t for t in toks if not _ASSIGN.match(t)]
    while rest and rest[0] in ("env", "sudo", "time", "exec", "nohup"):
        rest = rest[1:]
    return bool(rest) and (rest[0].rsplit("/", 1)[-1] in LAUNCHERS or bool(_PERF.search(rest[0])))


def read_launch(text: str) -> dict:
    """What the pasted command line says: launcher ('mpirun', 'srun', ... or None), np (ranks asked for), hosts
    (as written), env (variables the command or ``export`` lines set), ib_hcas (devices NCCL_IB_HCA names),
    binary and args (the ``*_perf`` program and its flags), nodes (srun's ``-N``/``--nodes``). Empty values when
    no command was pasted."""
    launch: dict = {"launcher": None, "np": None, "hosts": None, "env": {}, "ib_hcas": [], "binary": None,
                    "args": [], "nodes": None}
    found: list[list[str]] = []
    for cmd in _commands(text):
        toks = _split(cmd)
        if not toks:
            continue
        if toks[0] == "export" or all(_ENV_LINE.match(t) for t in toks):
            # "export A=1 B=2", or a line of bare assignments people paste as "the environment I ran with"
            _read_exports(toks, launch)
            continue
        toks = _inline_script(toks, launch)
        if any(_PERF.search(t) for t in toks):
            found.append(toks)
    # a line that starts the binary (or its launcher) is the command; a sentence that names it is not
    commands = [t for t in found if _starts_like_command(t)] or found
    if commands:
        _read_command(commands[0], launch)
    if "NCCL_IB_HCA" in launch["env"]:
        launch["ib_hcas"] = hca_list(launch["env"]["NCCL_IB_HCA"])
    return launch
