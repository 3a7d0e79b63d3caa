"""Chapter 04's lines about its worker processes: ranks and a clean stop, never process ids."""

import re

from nvcourse.chapters import ch04_collectives as ch
from nvcourse.collectives import ProcessGroup


def test_started_and_stopped_lines_name_ranks_and_cleanup_not_pids():
    with ProcessGroup(2) as pg:
        res = pg.run("allreduce", "64KiB", algo="ring", iters=1)
        started = ch.workers_started(pg)
        running = ch.workers_stopped(pg)
    stopped = ch.workers_stopped(pg)
    assert res.correct
    assert started == "2 worker processes started (ranks 0, 1), one per simulated GPU"
    assert "2 of 2 worker processes still running" in running
    assert stopped == "group closed: True; all 2 worker processes stopped; shared-memory segments left: none"
    for line in (started, stopped):
        assert not any(str(p) in re.findall(r"\d+", line) for p in pg.pids)
