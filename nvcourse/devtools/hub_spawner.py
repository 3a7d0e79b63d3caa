"""The classroom hub's spawner: each learner's server runs as that learner's own Unix account.

``deploy/jupyterhub_config.py`` selects :class:`CourseSpawner` when the hub runs as root (see
:mod:`nvcourse.devtools.hub_accounts`). Hub user ``learner01`` runs as Unix account ``nvc-learner01`` in its
0700 home; before the server drops root it joins the learner's control groups, so the memory and CPU limits
hold for the server and every kernel it starts. The environment it gets is short (``env_keep``): no variable of
the hub's own, so nothing the instructor set reaches a learner.
"""

from __future__ import annotations

import os
import pwd

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Dict, Unicode


class CourseSpawner(LocalProcessSpawner):
    """A local process spawner with a Unix-name prefix and per-learner control groups."""

    account_prefix = Unicode("nvc-", config=True, help="Unix account = prefix + hub user name")
    cgroup_procs = Dict(config=True, help="{hub user: [cgroup.procs files the server joins before dropping root]}")

    def _unix(self) -> str:
        return f"{self.account_prefix}{self.user.name}"

    def make_preexec_fn(self, name: str):
        setuid = set_user_setuid(self._unix())
        files = list(self.cgroup_procs.get(self.user.name, []))

        def preexec() -> None:
            pid = str(os.getpid())
            for path in files:  # still root here: join the learner's control groups, then become the learner
                with open(path, "w") as f:
                    f.write(pid)
            setuid()

        return preexec

    def user_env(self, env: dict) -> dict:
        entry = pwd.getpwnam(self._unix())
        env.update(USER=entry.pw_name, HOME=entry.pw_dir, SHELL=entry.pw_shell or "/bin/bash")
        return env
