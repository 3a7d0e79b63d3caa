"""Chapter 08b's module: its tables (built by nvcourse.tables) escape text, and the views render."""

from nvcourse.chapters import ch08b_security_and_observability as ch
from nvcourse.observability import counters, drill


def test_table_escapes_cells_and_dollar_signs():
    out = ch.table(["what", "cost"], [["<script>", "$5 & up"]]).data
    assert 'class="nvcourse-table' in out
    assert ">&lt;script&gt;</td>" in out and ">&#36;5 &amp; up</td>" in out and "<script>" not in out


def test_signals_table_has_one_row_per_signal():
    out = ch.signals_table().data
    assert out.count("<tr>") == 1 + len(counters.signals())
    # four columns, the long counter names and paths free to break: with six, "how to read it" was one letter wide
    assert out.count("<th ") == 4
    assert out.count("overflow-wrap:anywhere") == 2 * len(counters.signals())


def test_drill_view_lists_the_components_that_moved():
    run = drill.incident("A", seed=0)
    fig, text = ch.drill_view(run)
    assert fig is not None
    assert text.count('class="nvcourse-table') == 3 and ">component</th>" in text
    assert any(f">{c}</td>" in text for c in run.ports)


def test_thresholds_dashboard_shows_its_table():
    dash = ch.thresholds_dashboard()
    assert dash.last_error is None
    assert ">critical</th>" in dash.readout.value and "busbw / baseline" in dash.readout.value
