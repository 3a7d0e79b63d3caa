"""Local copies of the JavaScript that nbconvert's pages load from CDNs, so decks and handouts work offline.

The assets come from the npm registry (``npm install`` into ``DIR/_vendor``), pinned to the versions
nbconvert's templates were written for: reveal.js 4.0.2 (the reveal template's default), MathJax 2.7.7
(nbconvert's default MathJax), jQuery 2 and require.js 2. Nothing is committed: the folder is rebuilt
by ``tasks.py slides`` / ``tasks.py handouts`` when missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

PACKAGES = ("reveal.js@4.0.2", "mathjax@2.7.7", "jquery@2", "requirejs@2")
VENDOR = "_vendor"


class OfflineAssetsError(RuntimeError):
    """npm is missing or could not install the assets (a runtime failure: exit status 1)."""


def vendor_dir(out_dir: Path) -> Path:
    return out_dir / VENDOR / "node_modules"


def ensure_assets(out_dir: Path) -> Path:
    """Install the pinned assets under ``out_dir/_vendor`` unless present; return the node_modules folder."""
    modules = vendor_dir(out_dir)
    wanted = [modules / "reveal.js" / "dist" / "reveal.js", modules / "mathjax" / "MathJax.js",
              modules / "jquery" / "dist" / "jquery.min.js", modules / "requirejs" / "require.js"]
    if all(p.is_file() for p in wanted):
        return modules
    npm = shutil.which("npm")
    if npm is None:
        raise OfflineAssetsError("npm is needed once to fetch reveal.js and MathJax (apt-get install npm)")
    prefix = out_dir / VENDOR
    prefix.mkdir(parents=True, exist_ok=True)
    # A private cache: several npm processes sharing one cache corrupt it (seen when tests run in parallel).
    env = {**os.environ, "npm_config_cache": str(prefix / ".npm-cache")}
    cmd = [npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(prefix), *PACKAGES]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0 or not all(p.is_file() for p in wanted):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise OfflineAssetsError(f"npm install of {' '.join(PACKAGES)} failed: {tail[0]}")
    shutil.rmtree(prefix / ".npm-cache", ignore_errors=True)
    return modules


def exporter_urls(modules: Path, page_dir: Path) -> dict[str, str]:
    """nbconvert traits that point a page written in ``page_dir`` at the local assets (relative URLs)."""
    rel = Path(os.path.relpath(modules, page_dir)).as_posix()
    return {
        "reveal_url_prefix": f"{rel}/reveal.js",
        "mathjax_url": f"{rel}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
        "jquery_url": f"{rel}/jquery/dist/jquery.min.js",
        "require_js_url": f"{rel}/requirejs/require.js",
    }
