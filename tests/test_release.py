"""The learner copy (``tasks.py release --learners DIR``) holds the course without its solutions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nvcourse.devtools import release

ROOT = Path(__file__).resolve().parents[1]


def _all_sources(folder: Path) -> str:
    text = []
    for nb in folder.rglob("*.ipynb"):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            src = cell["source"]
            text.append("".join(src) if isinstance(src, list) else src)
    return "\n".join(text)


@pytest.fixture(scope="module")
def learner_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("learners") / "course"
    release.release_learners(target)
    return target


def test_copy_has_no_solutions_and_keeps_the_course(learner_copy: Path):
    assert not (learner_copy / "solutions").exists()
    assert not (learner_copy / "tests").exists()
    chapters = sorted(p.name for p in (learner_copy / "notebooks").glob("*.ipynb"))
    assert chapters == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    exercises = sorted(p.name for p in (learner_copy / "exercises").glob("*.ipynb"))
    assert exercises and exercises == sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb"))
    assert (learner_copy / "nvcourse" / "checks").is_dir()
    assert (learner_copy / "environment.yml").is_file() and (learner_copy / "postBuild").is_file()


def test_no_notebook_in_the_copy_points_into_solutions(learner_copy: Path):
    original = _all_sources(ROOT / "notebooks")
    assert "solutions/" in original  # the rewrite below has something to do
    copied = _all_sources(learner_copy)
    assert "solutions/" not in copied
    assert release.PENDING in copied


def test_a_french_notebook_s_links_two_folders_up_are_rewritten_too():
    # notebooks/fr/09 links to ../../solutions/09_capstone_reference_design.ipynb (the edition is one folder deeper)
    text = "[la conception de référence](../../solutions/09_capstone_reference_design.ipynb), `../../solutions/`"
    out = release.rewrite_solution_links(text, None)
    assert "solutions/" not in out and release.PENDING in out


def test_links_point_to_the_published_solutions():
    text = ("A worked design is in [`../solutions/09_capstone_reference_design.ipynb`]"
            "(../solutions/09_capstone_reference_design.ipynb); answers in `solutions/`.")
    out = release.rewrite_solution_links(text, "https://example.org/course-solutions/")
    assert "(https://example.org/course-solutions/09_capstone_reference_design.ipynb)" in out
    assert "[`09_capstone_reference_design.ipynb`]" in out
    assert "<https://example.org/course-solutions/>" in out
    assert "../solutions" not in out


def test_without_url_links_become_text_with_a_note():
    out = release.rewrite_solution_links("see [the design](../solutions/09_x.ipynb).", None)
    assert out == f"see the design ({release.PENDING})."


def test_refuses_a_non_empty_target_with_exit_2(tmp_path: Path):
    (tmp_path / "keep.txt").write_text("mine")
    proc = subprocess.run([sys.executable, "-m", "nvcourse.devtools.release", "--learners", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "not empty" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_refuses_a_target_inside_the_checkout():
    with pytest.raises(release.ReleaseError, match="inside the course checkout"):
        release.release_learners(ROOT / "artifacts" / "learners-inside")


def test_the_copy_holds_no_quiz_answers_and_no_dead_link_to_what_it_withholds(learner_copy: Path):
    """The instructor guide (misconceptions with their answers) stays with the instructor, and the README's
    links to it and to solutions/ become text that says where they are."""
    assert not (learner_copy / "docs" / "instructor-guide.md").exists()
    readme = (learner_copy / "README.md").read_text(encoding="utf-8")
    assert "](docs/instructor-guide.md" not in readme and "](solutions/" not in readme
    assert release.INSTRUCTOR_ONLY in readme
    for path in [*learner_copy.rglob("*.md"), *learner_copy.rglob("*.ipynb")]:
        assert "instructor-guide.md)" not in path.read_text(encoding="utf-8"), path
