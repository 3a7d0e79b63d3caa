"""Alpha-beta link model: hand-worked cases and properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nvcourse import catalog, linkmodel


def test_hand_worked_nvlink4_gpu():
    # One H100: 18 NVLink 4 links x 25 GB/s x 0.824 = 370.8 GB/s achievable per direction; alpha = 3.4 us.
    p = linkmodel.link_params("nvlink4", links=18)
    assert p.beta_Bps == pytest.approx(370.8e9)
    assert p.alpha_s == pytest.approx(3.4e-6)
    # 1 GB takes 3.4 us + 1e9/370.8e9 s = 3.4e-6 + 2.69687e-3 = 2.70027e-3 s
    assert p.time(1e9) == pytest.approx(2.70027e-3, rel=1e-5)
    # n_1/2 = 3.4e-6 s x 370.8e9 B/s = 1.26072e6 bytes
    assert p.half_bandwidth_bytes == pytest.approx(1.26072e6)
    assert p.bandwidth(p.half_bandwidth_bytes) == pytest.approx(p.beta_Bps / 2)


def test_hand_worked_pcie4():
    # PCIe Gen4 x16: 31.5 GB/s x 0.88 = 27.72 GB/s; alpha 5.7 us; 64 KiB: 5.7e-6 + 65536/27.72e9 = 8.0642e-6 s
    p = linkmodel.link_params("pcie4")
    assert p.time(65536) == pytest.approx(5.7e-6 + 65536 / 27.72e9)
    assert p.time(65536) == pytest.approx(8.0642e-6, rel=1e-4)


def test_line_rate_view_ignores_efficiency():
    assert linkmodel.link_params("ib-ndr", use_efficiency=False).beta_Bps == 50e9
    assert linkmodel.link_params("ib-ndr").beta_Bps == pytest.approx(47e9)


def test_vectorised_and_scalar_agree():
    sizes = np.logspace(0, 10, 11)
    t = linkmodel.transfer_time(sizes, 2e-6, 1e10)
    assert t.shape == sizes.shape
    for n, ti in zip(sizes, t):
        assert linkmodel.transfer_time(n, 2e-6, 1e10) == pytest.approx(ti)


def test_sweep_every_link_at_ten_thousand_sizes():
    # Its speed (milliseconds) is measured in benchmarks/model_speed.py, not asserted here.
    sizes = np.logspace(0, 11, 10_000)
    ids, table = linkmodel.sweep_all_links(sizes)
    assert table.shape == (len(catalog.links()), 10_000)
    assert ids == list(catalog.links())
    # sanity on the values, not only the shape: the largest size is within 1 % of beta for every link
    betas = np.array([catalog.get_link(i).beta_Bps for i in ids])
    assert np.allclose(table[:, -1], betas, rtol=1e-2)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(nbytes=0, alpha_s=1e-6, beta_Bps=1e9), "nbytes"),
        (dict(nbytes=-5, alpha_s=1e-6, beta_Bps=1e9), "nbytes"),
        (dict(nbytes=10, alpha_s=-1e-6, beta_Bps=1e9), "alpha_s"),
        (dict(nbytes=10, alpha_s=1e-6, beta_Bps=0), "beta_Bps"),
        (dict(nbytes=float("nan"), alpha_s=1e-6, beta_Bps=1e9), "nbytes"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        linkmodel.transfer_time(**kwargs)


def test_bad_link_arguments():
    with pytest.raises(ValueError, match="unknown link 'nvlink9'; allowed: "):
        linkmodel.link_params("nvlink9")
    with pytest.raises(ValueError, match="links must be an integer >= 1"):
        linkmodel.link_params("nvlink4", links=0)


def test_fit_recovers_known_parameters():
    sizes = np.logspace(3, 8, 20)
    times = 5e-6 + sizes / 2e10
    fit = linkmodel.fit_alpha_beta(sizes, times)
    assert fit.alpha_s == pytest.approx(5e-6, rel=1e-6)
    assert fit.beta_Bps == pytest.approx(2e10, rel=1e-6)


def test_fit_rejects_bad_data():
    with pytest.raises(ValueError, match="two or more distinct sizes"):
        linkmodel.fit_alpha_beta([100, 100], [1e-6, 2e-6])
    with pytest.raises(ValueError, match="do not grow with size"):
        linkmodel.fit_alpha_beta([100, 1000, 10000], [3e-6, 2e-6, 1e-6])


alphas = st.floats(min_value=0, max_value=1e-3)
betas = st.floats(min_value=1e6, max_value=1e13)
sizes = st.floats(min_value=1, max_value=1e12)


@given(alphas, betas, sizes, sizes)
def test_time_grows_with_size(a, b, n1, n2):
    lo, hi = sorted((n1, n2))
    assert linkmodel.transfer_time(lo, a, b) <= linkmodel.transfer_time(hi, a, b)


@given(alphas, betas, betas, sizes)
def test_time_shrinks_with_bandwidth(a, b1, b2, n):
    lo, hi = sorted((b1, b2))
    assert linkmodel.transfer_time(n, a, hi) <= linkmodel.transfer_time(n, a, lo)


@given(alphas, betas, sizes)
def test_effective_bandwidth_never_exceeds_beta(a, b, n):
    assert linkmodel.effective_bandwidth(n, a, b) <= b * (1 + 1e-12)
