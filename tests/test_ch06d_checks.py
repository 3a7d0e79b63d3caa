"""Chapter 06d's checkers: a right solution passes, the stub reads 'not done', typical mistakes get their hint."""

from __future__ import annotations

import re

from nvcourse.chapters import ch06d_runbook as ch
from nvcourse.checks import ch06d as check


def _stub(*_):
    raise NotImplementedError()


def test_acs_redirects():
    assert check.acs_redirects(lambda line: bool(re.search(r"(ReqRedir|CmpltRedir)\+", line))).passed
    assert check.acs_redirects(_stub).status == "todo"
    wrong = check.acs_redirects(lambda line: "SrcValid+" in line)
    assert not wrong.passed and "SrcValid+ only checks" in wrong.hint
    assert not check.acs_redirects(lambda line: "yes").passed


def test_lane_fraction():
    assert check.lane_fraction(ch.link_fraction).passed
    assert check.lane_fraction(_stub).status == "todo"
    raw_rate = check.lane_fraction(lambda a, b, s, w: s * w / (a * b))
    assert not raw_rate.passed and "8b/10b" in raw_rate.hint


def _gid(rows):
    for index, gid, version in rows:
        if version == "v2" and not gid.startswith("fe80") and ("::ffff:" in gid or ":ffff:" in gid):
            return index
    return None


def test_gid_index():
    assert check.gid_index(_gid).passed
    link_local = check.gid_index(lambda rows: next(i for i, g, v in rows if g.startswith("fe80") and v == "v2"))
    assert not link_local.passed and "link-local" in link_local.hint
    v1 = check.gid_index(lambda rows: next(i for i, g, v in rows if not g.startswith("fe80") and v == "v1"))
    assert not v1.passed and "RoCE v1" in v1.hint


def test_drill():
    r = check.drill("no_peermem", ["nccl_log"])
    assert r.passed and "1 step;" in r.summary
    assert not check.drill("acs_redirect", ["acs"]).passed
    assert not check.drill("disk_full", ["acs"]).passed
    assert not check.drill("no_peermem", ["reboot"]).passed
    assert check.drill(None, None).status == "todo"


def test_drill_takes_a_function():
    assert check.drill(lambda: ("no_peermem", ["nccl_log"])).passed
    assert check.drill(_stub).status == "todo"
    assert not check.drill(lambda: "no_peermem").passed
