"""Shared test setup: every figure is drawn with the Agg backend (no display, same pixels everywhere), so no
test file selects a backend itself; Hypothesis draws the same examples on every run (derandomized, no example
database), so the suite is deterministic: a fuzz test that finds a bug once finds it every time."""

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")
settings.register_profile("nvcourse", derandomize=True, database=None)
settings.load_profile("nvcourse")
