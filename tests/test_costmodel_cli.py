"""``nvcourse predict`` command line."""

import json

import pytest

from nvcourse.cli import main


def run(capsys, *argv):
    code = main(["predict", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_single_size_json(capsys):
    code, out, _ = run(capsys, "allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "64MiB", "--json")
    assert code == 0
    d = json.loads(out)
    for key in ("op", "system", "gpus", "nodes", "bytes", "algo", "time_s", "algbw_GBps", "busbw_GBps"):
        assert key in d
    assert d["bytes"] == 64 * 2**20 and d["nodes"] == 1 and d["algo"] != "auto"
    assert d["busbw_GBps"] == pytest.approx(d["algbw_GBps"] * 14 / 8)


def test_sweep_table_and_json(capsys):
    argv = ["allgather", "--system", "dgx-a100", "--gpus", "8", "--nodes", "2",
            "--min-bytes", "1KiB", "--max-bytes", "1MiB"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    rows = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(rows) == 11  # 1 KiB .. 1 MiB, factor 2
    assert "algbw" in out and "busbw" in out and "float" in out
    code, out, _ = run(capsys, *argv, "--step-factor", "4", "--json")
    data = json.loads(out)
    assert [d["bytes"] for d in data] == [1024, 4096, 16384, 65536, 262144, 1048576]
    assert all(d["algo"] == "ring" for d in data)


def test_fabric_and_algo(capsys):
    code, out, _ = run(capsys, "allreduce", "--system", "dgx-h100", "--gpus", "8", "--nodes", "2",
                       "--fabric", "roce-400g", "--algo", "hierarchical", "--bytes", "1GB", "--json")  # fmt: skip
    d = json.loads(out)
    assert code == 0 and d["fabric"] == "roce-400g" and d["algo"] == "hierarchical" and d["bytes"] == 10**9


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["allreduce", "--system", "dgx-a100", "--gpus", "8", "--bytes", "1MiB", "--algo", "nvls"], "nvls"),
        (["allreduce", "--system", "dgx-h100", "--gpus", "16", "--bytes", "1MiB"], "gpus"),
        (["allreduce", "--system", "nope", "--gpus", "8", "--bytes", "1MiB"], "system"),
        (["allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "12 parsecs"], "bytes"),
        (["allreduce", "--system", "dgx-h100", "--gpus", "8", "--min-bytes", "1MiB"], "max-bytes"),
        (["allreduce", "--system", "dgx-h100", "--gpus", "8", "--min-bytes", "1MiB", "--max-bytes", "1KiB"],
         "max-bytes"),
        (["allreduce", "--system", "dgx-h100", "--gpus", "8", "--bytes", "1MiB", "--fabric", "pcie4"], "fabric"),
    ],
)
def test_bad_input_exits_2_without_traceback(capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        main(["predict", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert needle in err and "Traceback" not in err
