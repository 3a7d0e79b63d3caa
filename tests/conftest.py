"""Shared test setup: every figure is drawn with the Agg backend (no display, same pixels everywhere), so no
test file selects a backend itself."""

import matplotlib

matplotlib.use("Agg")
