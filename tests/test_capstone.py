"""Capstone evidence gates: each gate fails for the reason it names, bad input is refused."""

import pytest

from nvcourse import capstone as cs

TARGETS = cs.Targets(
    model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6, min_goodput=0.9, min_efficiency=0.7, max_MW=3
)


def test_a_good_design_passes_every_gate():
    r = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8), TARGETS)
    assert r.passed, r.text()
    assert {g.name for g in r.gates} == {"memory", "placement", "time", "budget", "efficiency", "goodput", "power"}
    # 1,024 GPUs at the Llama 3 rate: 16 x 3.0931 h = 49.49 h between interruptions
    assert r.mtbi_hours == pytest.approx(49.49, rel=1e-3)
    # power: 1,024 x 1.275 kW x PUE 1.3 = 1,697 kW = 1.697 MW
    assert r.MW == pytest.approx(1.6973, rel=1e-3)


def test_each_gate_fails_for_its_reason():
    assert "memory" in [g.name for g in cs.evaluate(cs.Design("dgx-h100", 64, tp=1, pp=1), TARGETS).failed]
    bad_place = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8, placement="dp-first"), TARGETS)
    assert "placement" in [g.name for g in bad_place.failed]
    slow = cs.evaluate(cs.Design("dgx-h100", 256, tp=4, pp=4), TARGETS)
    assert "time" in [g.name for g in slow.failed]
    pricey = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8, usd_per_gpu_hour=10.0), TARGETS)
    assert [g.name for g in pricey.failed] == ["budget"]
    fragile = cs.evaluate(
        cs.Design("dgx-h100", 1024, tp=8, checkpoint_s=1200, restart_s=7200, failure_rate_factor=10), TARGETS
    )
    assert "goodput" in [g.name for g in fragile.failed]
    big = cs.evaluate(cs.Design("dgx-h100", 2048, tp=8), TARGETS)
    assert "power" in [g.name for g in big.failed]
    assert "FAIL" in big.text() and "✘ FAIL" in big.html()


def test_decision_log():
    r = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8), TARGETS)
    log = cs.decision_log(r, risks="price may rise")
    assert "price may rise" in log and "1024 GPUs of dgx-h100" in log
    assert cs.decision_log_template().count("\n| **") == len(cs.DECISION_LOG_FIELDS)
    with pytest.raises(ValueError, match="allowed: decision"):
        cs.decision_log(r, colour="blue")


def test_compare_systems_only_returns_fitting_designs():
    reports = cs.compare_systems(TARGETS, ["dgx-h100"], [8, 1024])
    assert [r.design.gpus for r in reports] == [1024]     # 70B does not fit in 8 H100


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"model": "gpt-9"}, "model"),
        ({"max_days": 0}, "max_days"),
        ({"min_goodput": 1.5}, "min_goodput"),
        ({"max_MW": -1}, "max_MW"),
    ],
)
def test_targets_bad_input(kwargs, name):
    base = dict(model="llama3-8b", training_tokens=1e12, max_days=10, max_usd=1e6)
    base.update(kwargs)
    with pytest.raises(ValueError, match=name):
        cs.Targets(**base)


def test_design_bad_input():
    with pytest.raises(ValueError, match="gpus"):
        cs.evaluate(cs.Design("dgx-h100", 100, tp=8), TARGETS)
    with pytest.raises(ValueError, match="failure_rate_factor"):
        cs.evaluate(cs.Design("dgx-h100", 1024, tp=8, failure_rate_factor=0), TARGETS)


def test_prices_of_one_date_come_from_the_data_file_and_reprice_a_design():
    from nvcourse import training

    h100 = training.system_costs("dgx-h100")
    assert cs.price_on("dgx-h100", h100["usd_date"]) == (h100["usd_per_gpu_hour"], h100["usd_label"])
    assert cs.price_on("dgx-h100", h100["usd_market_date"]) == (h100["usd_per_gpu_hour_market"],
                                                                       h100["usd_market_label"])
    assert cs.price_on("gb200-nvl72", "1999-01") is None
    # the one month every system has a price for: the H100's list price is older than the others'
    date = cs.common_price_date(["pcie-8gpu", "dgx-h100", "gb200-nvl72"])
    assert date == h100["usd_market_date"] == training.system_costs("gb200-nvl72")["usd_date"] != h100["usd_date"]
    assert cs.common_price_date(["dgx-h100"]) == max(h100["usd_date"], h100["usd_market_date"])
    assert cs.common_price_date(["dgx-a100", "gb200-nvl72"]) is None  # no month in common
    t = cs.Targets(model="llama3-70b", training_tokens=2e12, max_days=30, max_usd=3e6)
    r = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8), t)
    again = cs.at_price_date(r, date)
    # cost = GPU-hours x price: the same GPU-hours at the other price, everything else unchanged
    assert again.cost.gpu_hours == pytest.approx(r.cost.gpu_hours)
    assert again.cost.usd == pytest.approx(r.cost.gpu_hours * h100["usd_per_gpu_hour_market"])
    assert again.step == r.step and again.goodput == r.goodput
    assert cs.at_price_date(r, "1999-01") is None
    mine = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8, usd_per_gpu_hour=3.3), t)
    assert cs.at_price_date(mine, date) is mine  # a price the learner set is kept


def test_power_counts_whole_nvlink_domains_and_says_what_it_leaves_out():
    from nvcourse import catalog, training

    kw, pue = training.system_costs("gb200-nvl72")["kW_per_gpu"], training.electricity()["pue"]
    assert catalog.get_system("gb200-nvl72").gpus_per_domain == 72
    r = cs.evaluate(cs.Design("gb200-nvl72", 512, tp=4), TARGETS)
    assert r.MW == pytest.approx(8 * 72 * kw * pue / 1000)  # 512 GPUs = 7.1 racks: 8 racks are powered
    power = next(g for g in r.gates if g.name == "power")
    assert "(8 whole NVLink domains of 72 GPUs)" in power.measured
    assert "scale-out switches not counted" in power.measured
    # cost is per GPU-hour rented: the 512 GPUs, not the 576 powered
    assert r.cost.gpu_hours == pytest.approx(r.cost.hours * 512)
    whole = cs.evaluate(cs.Design("dgx-h100", 1024, tp=8), TARGETS)
    assert "whole NVLink domains" not in next(g for g in whole.gates if g.name == "power").measured
