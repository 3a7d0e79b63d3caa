"""nvcourse: the package behind the course notebooks.

Data flows one way: ``catalog`` (sourced hardware figures) → models (``linkmodel``, ``costmodel``,
``topology``, ``training``, ``reliability``) → demos and UI (``collectives``, ``widgets``, ``plots``).
Models never import widgets.
"""

__version__ = "0.1.0"
