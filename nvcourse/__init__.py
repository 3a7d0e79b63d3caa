"""nvcourse: the package behind the course notebooks.

Data flows one way: ``data/*.toml`` (sourced figures, read by ``_data``) → ``catalog`` → models by concept
(``linkmodel``, ``topology``, ``costmodel``, ``fabric``, ``collectives``, ``training``, ``reliability``,
``capstone``) → drawing (``plots``, ``widgets``, ``*/draw*.py``) → ``chapters/chNN_*.py``, one per notebook.
Models never import ipywidgets or matplotlib (``tests/test_layout.py``; see docs/architecture.md).
"""

__version__ = "0.1.0"
