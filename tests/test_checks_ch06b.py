"""Checkers of chapter 06b: a right answer passes, the stub says 'not done yet', typical mistakes get named."""

import re

from nvcourse.checks import answer, ch06b, expected_answer
from nvcourse.nccl.diagnose import cases


def _stub(*_a):
    raise NotImplementedError()


def gdr_right(text):
    via = re.findall(r"via (NET/\S+(?: \S+)?)", text)
    if via:
        return any("GDRDMA" in v for v in via)
    if "GPU Direct RDMA Disabled" in text:
        return False
    return None


def gdr_naive(text):  # matches the words, not the meaning
    return "GPU Direct RDMA" in text or "GDRDMA" in text


def nvls_right(text):
    if "NVLS multicast support is not available" in text or " 0 nvls channels" in text:
        return "off"
    if "NVLS multicast support is available" in text:
        return "on"
    return "unknown"


def nvls_off_by_default(text):
    return "on" if "NVLS multicast support is available" in text else "off"


def slow_right(pairs):
    nodes = {n for p in pairs for n in p}
    return min(nodes, key=lambda n: sum(v for p, v in pairs.items() if n in p) / sum(1 for p in pairs if n in p))


def slow_pair(pairs):
    return min(pairs, key=pairs.get)


def test_questions_expected_from_data():
    assert expected_answer("06b.quote_busbw") == 237.94  # last row of the A100 fixture, read by the reader
    assert answer("06b.quote_busbw", 237.94).passed
    r = answer("06b.quote_busbw", 66.4834)
    assert not r.passed and "Avg bus bandwidth" in r.hint
    assert answer("06b.which_op", "c").passed
    assert "in-place" in answer("06b.which_op", "a").hint
    assert answer("06b.beats_nic_cause", "b").passed


def test_beats_nic_ratio_and_mistakes():
    x = expected_answer("06b.beats_nic")
    assert 1.1 < x < 1.4  # 237.94 GB/s over 8 HDR NICs' ~188 GB/s achievable
    assert answer("06b.beats_nic", x).passed
    assert "one NIC" in answer("06b.beats_nic", x * 8).hint


def test_gdr_state():
    assert ch06b.gdr_state(gdr_right).passed
    assert ch06b.gdr_state(_stub).status == "todo"
    r = ch06b.gdr_state(gdr_naive)
    assert not r.passed and ("Disabled" in r.hint or "None" in r.hint)


def test_nvls_state():
    assert ch06b.nvls_state(nvls_right).passed
    r = ch06b.nvls_state(nvls_off_by_default)
    assert not r.passed and "Absence" in r.hint


def test_slow_node():
    assert ch06b.slow_node(slow_right).passed
    r = ch06b.slow_node(slow_pair)
    assert not r.passed and "pair" in r.hint
    assert ch06b.slow_node(_stub).status == "todo"


def test_pair_table_levels_come_from_the_cited_case():
    c = cases()["slow_rank"]
    t = ch06b.pair_table("n2", 4)
    assert len(t) == 6
    slow = [v for p, v in t.items() if "n2" in p]
    assert max(slow) < c["good_pair_busbw_GBps"] * 0.9 and min(v for p, v in t.items() if "n2" not in p) > 70


def test_the_which_test_quiz_sample_does_not_name_its_answer():
    from nvcourse.checks import ch06b
    from nvcourse.nccl import read_nccl_tests

    name = "sendrecv_a40_2nodes_truncated.txt"
    shown = ch06b.unlabelled_sample(name)
    assert "sendrecv" not in shown.lower() and "https://github.com/NVIDIA/nccl-tests/issues/214" in shown
    assert read_nccl_tests(shown).op == read_nccl_tests(ch06b.sample(name)).op == "sendrecv"
