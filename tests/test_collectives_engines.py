"""Real engines behind ``nvcourse bench --backend torch|mpi``: skipped when the engine is missing."""

from __future__ import annotations

import glob

import pytest

from nvcourse import cli
from nvcourse.collectives import OPERATIONS, engines

needs_torch = pytest.mark.skipif(
    not engines.torch_available(), reason="torch not installed (pip install nvcourse[torch])"
)
needs_mpi = pytest.mark.skipif(not engines.mpi_available(), reason="mpi4py/Open MPI not installed")


@pytest.mark.parametrize("backend, hint", [("torch", "nvcourse[torch]"), ("mpi", "nvcourse[mpi]")])
def test_missing_engine_says_how_to_install(backend, hint, monkeypatch, capsys):
    monkeypatch.setattr(engines, f"{backend}_available", lambda: False)
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "allreduce", "--backend", backend, "--bytes", "64"])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and hint in err and "Traceback" not in err  # a runtime failure


@needs_torch
def test_torch_gloo_all_operations():
    rows = engines.run_torch(list(OPERATIONS), [8, 4096], 2, iters=2, warmup=1)  # one launch: torch imports slowly
    assert [(r["op"], r["bytes"]) for r in rows] == [(op, s) for op in OPERATIONS for s in (8, 4096)]
    assert all(r["correct"] and r["backend"] == "torch" and r["algo"] in ("gloo", "nccl") for r in rows)


@needs_mpi
def test_mpi_all_operations():
    rows = engines.run_mpi(list(OPERATIONS), [8, 4096], 2, iters=2, warmup=1)
    assert not glob.glob("/dev/shm/vader_segment.*"), "the MPI run left Open MPI segments in /dev/shm"
    assert [(r["op"], r["bytes"]) for r in rows] == [(op, s) for op in OPERATIONS for s in (8, 4096)]
    assert all(r["correct"] and r["backend"] == "mpi" and r["procs"] == 2 for r in rows)


LAUNCHER_ENVS = {"torch": {"RANK": "0", "WORLD_SIZE": "4", "MASTER_ADDR": "10.213.0.1"},
                 "mpi": {"OMPI_COMM_WORLD_SIZE": "4"}}


@pytest.mark.parametrize("engine", ["torch", "mpi"])
def test_under_a_launcher_the_default_backend_is_the_launchers(engine, monkeypatch):
    from nvcourse.collectives.cli import resolve_backend

    assert resolve_backend(None) == "shm"  # no launcher: our shared-memory group
    for k, v in LAUNCHER_ENVS[engine].items():
        monkeypatch.setenv(k, v)
    assert resolve_backend(None) == engine
    assert resolve_backend(engine) == engine


@pytest.mark.parametrize("engine, launcher", [("torch", "torchrun"), ("mpi", "mpirun")])
def test_under_a_launcher_shm_is_refused_in_one_line(engine, launcher, monkeypatch, capsys):
    for k, v in LAUNCHER_ENVS[engine].items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "allreduce", "--backend", "shm", "--procs", "4", "--bytes", "64"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"network between {launcher}'s ranks" in err and f"--backend {engine}" in err
