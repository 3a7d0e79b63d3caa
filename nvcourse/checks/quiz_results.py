"""Where the misconceptions quiz keeps a learner's answers, and the short code a learner can paste into a form.

Each form's answers are one JSON file, ``~/.nvcourse/quiz/pre.json`` or ``post.json`` (``NVCOURSE_QUIZ_DIR``
moves the folder): on the classroom hub every learner has a home of their own, so the instructor collects the
files from the homes; on laptops the learner pastes the code :func:`score_code` prints instead. The file holds
an anonymous learner id (a hash of the user name and host, so a pre and a post file pair up without a name),
each answer with what it shows (right, the misconception, another mistake) and when it was given.

The code hides the verdicts from a glance (the pre-test gives no feedback) but is not a secret: it is a base-4
number of the verdicts, mixed with a fixed mask. :func:`decode_code` reads it back.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import socket
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

CLASSES = ("right", "misconception", "other", "open")
_MASK = 0x5A3C96E1F0  # mixes the digits so a glance at a code tells nothing; not a secret
_PREFIX = "NVQ1"


def results_dir() -> Path:
    """The folder of the learner's quiz files: ``$NVCOURSE_QUIZ_DIR`` or ``~/.nvcourse/quiz``."""
    env = os.environ.get("NVCOURSE_QUIZ_DIR")
    return Path(env) if env else Path.home() / ".nvcourse" / "quiz"


def results_file(form: str) -> Path:
    return results_dir() / f"{form}.json"


def shown_path(form: str) -> str:
    """The file's path as a learner reads it (``~/…`` under the home folder)."""
    path = results_file(form)
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def learner_id() -> str:
    """An anonymous id that is the same for the pre- and the post-test of one learner on one machine."""
    user = os.environ.get("JUPYTERHUB_USER") or getpass.getuser()
    return hashlib.sha256(f"{user}@{socket.gethostname()}".encode()).hexdigest()[:10]


def load(form: str, path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The saved answers of ``form`` ({qid: {"value", "class", "when"}}); empty when there are none or the
    file cannot be read (a quiz never fails on its own bookkeeping)."""
    try:
        data = json.loads((path or results_file(form)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    answers = data.get("answers") if isinstance(data, dict) else None
    return answers if isinstance(answers, dict) else {}


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def save_answer(form: str, qid: str, value: Any, cls: str) -> None:
    """Add (or replace) one answer in the form's file; written whole to a temporary file, then renamed, so an
    interrupted save never leaves half a file. A folder that cannot be written is skipped silently: the quiz
    still works, the instructor just gets no file from this learner."""
    path = results_file(form)
    answers = load(form)
    answers[qid] = {"value": _jsonable(value), "class": cls,
                    "when": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    data = {"form": form, "learner": learner_id(), "answers": answers}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp",
                                         encoding="utf-8") as tmp:
            json.dump(data, tmp, indent=1)
        os.replace(tmp.name, path)
    except OSError:
        return


def score_code(form: str, classes: list[str]) -> str:
    """``NVQ1-<form>-<hex>``: the verdict of every question (in the quiz's order) as one short code."""
    number = 0
    for cls in classes:
        number = number * 4 + CLASSES.index(cls)
    return f"{_PREFIX}-{form}-{len(classes)}-{number ^ _MASK:x}"


def decode_code(code: str) -> tuple[str, list[str]]:
    """(form, verdicts) of a code made by :func:`score_code`; ValueError for anything else."""
    try:
        prefix, form, count, digits = code.strip().split("-")
        n, number = int(count), int(digits, 16) ^ _MASK
    except ValueError as err:
        raise ValueError(f"code must look like {_PREFIX}-pre-11-1a2b3c; got {code!r}") from err
    if prefix != _PREFIX or form not in ("pre", "post") or not 0 < n <= 40 or number >= 4**n:
        raise ValueError(f"code must look like {_PREFIX}-pre-11-1a2b3c; got {code!r}")
    classes = []
    for _ in range(n):
        number, digit = divmod(number, 4)
        classes.append(CLASSES[digit])
    return form, classes[::-1]
