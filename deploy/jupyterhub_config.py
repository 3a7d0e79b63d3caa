"""JupyterHub for a classroom on one machine: ``python3 tasks.py hub`` starts it with this file.

Everything room-specific comes from environment variables that ``nvcourse.devtools.hub`` sets (and an
instructor may set by hand):

* ``NVCOURSE_HUB_DIR``        state folder (database, cookie secret, learners' homes, the course copy);
* ``NVCOURSE_HUB_IP`` / ``_PORT`` where learners connect (default 127.0.0.1:8000; ``0.0.0.0`` for a room);
* ``NVCOURSE_HUB_USERS``      how many learner accounts, named learner01 … learnerNN;
* ``NVCOURSE_HUB_PASSWORD``   the shared workshop password (written on the board);
* ``NVCOURSE_HUB_ADMIN_PASSWORD`` the instructor account's password (JupyterHub wants 32+ characters);
* ``NVCOURSE_HUB_ADMIN_TOKEN`` an API token for the instructor's scripts (the load benchmark uses it);
* ``NVCOURSE_HUB_PROXY``      the configurable-http-proxy executable (npm registry);
* ``NVCOURSE_HUB_MEM`` / ``_CPU`` per-learner limits, e.g. ``2G`` and ``1``;
* ``NVCOURSE_HUB_IDLE_S``     idle servers are culled after this many seconds (default 3600).

Learners log in as learnerNN with the shared password; each gets a JupyterLab server of their own, as the
hub's Unix user, in ``homes/learnerNN`` holding a fresh learner copy of the course (no solutions).
"""

# ruff: noqa: F821  (``c`` is JupyterHub's config object, injected when it reads this file)
import os
import shutil
import sys
from pathlib import Path

hub_dir = Path(os.environ["NVCOURSE_HUB_DIR"])
course = hub_dir / "course"
users = int(os.environ.get("NVCOURSE_HUB_USERS", "30"))

c.JupyterHub.ip = os.environ.get("NVCOURSE_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("NVCOURSE_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"  # the hub's own API stays on loopback whatever the public address
c.JupyterHub.db_url = f"sqlite:///{hub_dir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(hub_dir / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(hub_dir / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True
c.ConfigurableHTTPProxy.command = [os.environ.get("NVCOURSE_HUB_PROXY", "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(hub_dir / "proxy.pid")

# A shared workshop password; the instructor account has its own.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["NVCOURSE_HUB_PASSWORD"]
c.Authenticator.allowed_users = {f"learner{i:02d}" for i in range(1, users + 1)}
c.Authenticator.admin_users = {"instructor"}
c.SharedPasswordAuthenticator.admin_password = os.environ["NVCOURSE_HUB_ADMIN_PASSWORD"]  # >= 32 characters

# One server per learner as the hub's Unix user (no system accounts to create for a one-day room).
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(hub_dir / "homes" / "{username}")
c.Spawner.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
if hasattr(os, "geteuid") and os.geteuid() == 0:
    # Jupyter Server refuses to run as root unless told: a container or CI often is root.
    c.Spawner.args = ["--ServerApp.allow_root=True"]
c.Spawner.start_timeout = 300  # a loaded 2-core machine starts 8 servers at once
c.Spawner.http_timeout = 300
# LocalProcessSpawner passes these to the server (MEM_LIMIT/CPU_LIMIT, shown by jupyter-resource-usage)
# but cannot enforce them; on a shared machine enforce them with systemd or the Kubernetes set-up.
c.Spawner.mem_limit = os.environ.get("NVCOURSE_HUB_MEM", "2G")
c.Spawner.cpu_limit = float(os.environ.get("NVCOURSE_HUB_CPU", "1"))
c.Spawner.environment = {"JUPYTER_PLATFORM_DIRS": "1"}


def copy_course(spawner):
    """Give each learner their own copy of the course the first time their server starts."""
    home = Path(spawner.home_dir)
    if not (home / "notebooks").is_dir():
        home.mkdir(parents=True, exist_ok=True)
        shutil.copytree(course, home, dirs_exist_ok=True)


c.Spawner.pre_spawn_hook = copy_course

# The load benchmark and an instructor's scripts talk to the REST API with this token.
token = os.environ.get("NVCOURSE_HUB_ADMIN_TOKEN")
services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                f"--timeout={int(os.environ.get('NVCOURSE_HUB_IDLE_S', '3600'))}"],
}]
roles = [{"name": "idle-culler", "services": ["idle-culler"],
          "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
if token:
    services.append({"name": "nvcourse-instructor", "api_token": token})
    roles.append({"name": "nvcourse-instructor", "services": ["nvcourse-instructor"],
                  "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]})
c.JupyterHub.services = services
c.JupyterHub.load_roles = roles
