"""One module per notebook: everything chapter NN shows (dashboards, figures, tables) lives in ``chNN_topic.py``.

The path a newcomer follows: ``notebooks/NN_*.ipynb`` -> ``nvcourse/chapters/chNN_*.py`` -> the model packages
(``linkmodel``, ``topology``, ``costmodel``, ``fabric``, ``collectives``, ``training``, ``reliability``, ...) ->
``nvcourse/checks/chNN.py`` for the exercise checkers. Models never import from here.
"""
