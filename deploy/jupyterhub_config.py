"""JupyterHub for a classroom on one machine: ``python3 tasks.py hub`` starts it with this file.

``nvcourse.devtools.hub`` prepares the state folder and sets one variable, ``NVCOURSE_HUB_DIR``; the rest is
read from files there:

* ``hub-settings.json`` (not secret): learners, address and port, the proxy, the TLS files, the limits, whether
  learners get Unix accounts of their own (``accounts``: the hub runs as root) and their control groups;
* ``secrets/hub.json`` (mode 0600 in a 0700 folder): each learner's own password, the instructor's password,
  the API token of the instructor's scripts. Secrets stay out of the environment, which servers could inherit.

Learners log in as learnerNN with the password on their own slip; each gets a JupyterLab server of their own in
``homes/learnerNN`` holding a learner copy of the course (no solutions). Run as root, each server runs as that
learner's own Unix account (``nvc-learnerNN``, home mode 0700, memory and CPU limits in a control group); not
root, as the hub's own user, which ``nvcourse.devtools.hub`` allows on loopback only. Idle kernels and idle
servers are culled; JupyterLab's news pop-up is off.
"""

# ruff: noqa: F821  (``c`` is JupyterHub's config object, injected when it reads this file)
import json
import os
import sys
from pathlib import Path

hub_dir = Path(os.environ["NVCOURSE_HUB_DIR"])
settings = json.loads((hub_dir / "hub-settings.json").read_text())
secret = json.loads((hub_dir / "secrets" / "hub.json").read_text())

c.JupyterHub.ip = settings["ip"]
c.JupyterHub.port = settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"  # the hub's own API stays on loopback whatever the public address
c.JupyterHub.hub_port = settings.get("hub_port", 8081)  # free ports chosen at start: two hubs never collide
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.get('proxy_api_port', 8001)}"
c.JupyterHub.db_url = f"sqlite:///{hub_dir / 'secrets' / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(hub_dir / "secrets" / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(hub_dir / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.pid_file = str(hub_dir / "proxy.pid")
if settings.get("ssl_cert"):  # a self-signed certificate made at start (nvcourse.devtools.hub_secrets)
    c.JupyterHub.ssl_cert = settings["ssl_cert"]
    c.JupyterHub.ssl_key = settings["ssl_key"]

# Each learner logs in with their own password (printed on their slip); the instructor account has its own.
c.JupyterHub.authenticator_class = "nvcourse.devtools.hub_auth.SlipAuthenticator"
c.SlipAuthenticator.passwords = secret["passwords"]
c.SlipAuthenticator.admin_password = secret["admin_password"]
c.Authenticator.allowed_users = set(settings["learners"])
c.Authenticator.admin_users = {"instructor"}

if settings["accounts"]:
    c.JupyterHub.spawner_class = "nvcourse.devtools.hub_spawner.CourseSpawner"
    c.CourseSpawner.account_prefix = settings["account_prefix"]
    c.CourseSpawner.cgroup_procs = settings.get("cgroup_procs", {})
else:  # the hub's own user for every learner: a personal hub on loopback
    c.JupyterHub.spawner_class = "simple"
    c.SimpleLocalProcessSpawner.home_dir_template = str(hub_dir / "homes" / "{username}")
c.Spawner.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
kernel_idle_s = int(settings.get("kernel_idle_s", 1800))
c.Spawner.args = [
    # Idle kernels are shut down (each holds 50-150 MiB); a learner reruns the notebook to get one back.
    f"--MappingKernelManager.cull_idle_timeout={kernel_idle_s}",
    "--MappingKernelManager.cull_interval=60",
    "--MappingKernelManager.cull_connected=True",
    "--MappingKernelManager.cull_busy=False",
]
c.Spawner.start_timeout = 300  # a loaded 2-core machine starts many servers at once
c.Spawner.http_timeout = 300
c.Spawner.mem_limit = settings.get("mem", 2**31)  # shown by JupyterLab; enforced by the control group when made
c.Spawner.cpu_limit = float(settings.get("cpus", 1))
# Only these reach a learner's server (plus JupyterHub's own per-user variables and token).
c.Spawner.env_keep = ["PATH", "LANG", "LC_ALL", "VIRTUAL_ENV"]
c.Spawner.environment = {
    "JUPYTER_PLATFORM_DIRS": "1",
    "JUPYTER_CONFIG_PATH": str(hub_dir / "jupyter-config"),  # labconfig/page_config.json: the news pop-up off
}


def copy_course(spawner):
    """Without accounts, give each learner a copy of the course the first time their server starts."""
    import shutil

    home = Path(spawner.home_dir)
    if not (home / "notebooks").is_dir():
        home.mkdir(parents=True, exist_ok=True)
        shutil.copytree(hub_dir / "course", home, dirs_exist_ok=True)


if not settings["accounts"]:
    c.Spawner.pre_spawn_hook = copy_course

token = secret.get("api_token")
services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={int(settings.get('idle_s', 3600))}"],
}]
roles = [{"name": "idle-culler", "services": ["idle-culler"],
          "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]}]
if token:  # the load benchmark and an instructor's scripts talk to the REST API with this token
    services.append({"name": "nvcourse-instructor", "api_token": token})
    roles.append({"name": "nvcourse-instructor", "services": ["nvcourse-instructor"],
                  "scopes": ["admin:users", "admin:servers", "access:servers", "list:users", "read:users"]})
c.JupyterHub.services = services
c.JupyterHub.load_roles = roles
