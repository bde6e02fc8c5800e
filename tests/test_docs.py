"""The README and the guides in docs/ say only what is true of this repository: every `make`
target, `tvm-course` command and option, and repository path they name exists (a path the course
generates, such as build/ or course/release/, is one git ignores), the commands answer `--help`,
and every relative link resolves, to its file and, for `#section`, to a heading there (with the
anchor GitHub gives it). The checks are tried on a page with one mistake of each kind, so that
they are known to fail.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.cli import build_parser
from autograder.site.guides import anchors, markdown_headings

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Other Markdown in the repository that links into these pages.
LINKING = [ROOT / "quizzes" / "README.md", ROOT / "course" / "solutions" / "README.md"]
TOP = ("autograder", "course", "tests", "lessons", "quizzes", "hub", "docs", ".ci", "build", "_site")
PLACEHOLDER = re.compile(r"[A-Z]{2,}(?![a-z])")  # STUDENT, ASSIGNMENT, QUIZ, ...: not a real path


# ---- reading a page --------------------------------------------------------------------------------


def code_texts(text: str) -> list[str]:
    """Each fenced block's lines and each inline code span (whitespace made single), in order."""
    found, prose = [], []
    fence = None
    for line in text.splitlines():
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker:
            fence = None if fence else marker.group(1)
            continue
        (found.append(line) if fence else prose.append(line))
    joined = "\n".join(prose)
    found += [" ".join(m.group(2).split()) for m in re.finditer(r"(`+)(.+?)\1", joined, re.S)]
    return found


def prose_links(text: str) -> list[str]:
    """The targets of the page's Markdown links, outside code."""
    text = re.sub(r"^\s*(```|~~~).*?^\s*\1", "", text, flags=re.S | re.M)
    text = re.sub(r"(`+).+?\1", "", text, flags=re.S)
    return [m.group(1) for m in re.finditer(r"\]\(([^)\s]+)\)", text)]


def make_commands(code: str) -> list[str]:
    code = re.sub(r"(^|\s)#.*$", "", code, flags=re.M)  # a comment is prose
    return re.findall(r"(?:^|[\s;&(])make\s+([a-z][\w-]*)", code)


def tvm_course_commands(code: str) -> list[list[str]]:
    """The words after each `tvm-course` of a command (comments and [brackets] dropped)."""
    commands = []
    for match in re.finditer(r"(?:^|\s|\.venv/bin/)tvm-course\s+([^#\n`]*)", code):
        command = re.split(r"&&|;|\|\|", match.group(1))[0]
        words = [w.strip("[]|") for w in command.replace("|", " ").split()]
        commands.append([w for w in words if w])
    return commands


def repository_paths(code: str) -> list[str]:
    paths = []
    for word in re.split(r"[\s,;=()'\"]+", code):
        word = word.rstrip(".:")
        if re.match(rf"^(?:{'|'.join(map(re.escape, TOP))})/[\w./*-]*$", word) or word in (
                "pyproject.toml", "Makefile", "README.md"):
            if not PLACEHOLDER.search(word):
                paths.append(word)
    return paths


# ---- what exists ----------------------------------------------------------------------------------


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):(?!=)", text, re.M))


def command_tree(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def resolve_command(words: list[str]) -> tuple[list[str], argparse.ArgumentParser, list[str]]:
    """(the subcommand path, its parser, the option words) of `tvm-course WORDS`; KeyError names
    a subcommand that does not exist."""
    parser, path = build_parser(), []
    rest = list(words)
    while rest and not rest[0].startswith("-"):
        choices = command_tree(parser)
        if not choices:
            break
        if rest[0] not in choices:
            raise KeyError(" ".join(path + [rest[0]]))
        path.append(rest.pop(0))
        parser = choices[path[-1]]
    return path, parser, [w.split("=", 1)[0] for w in rest if re.match(r"^--?[a-zA-Z]", w)]


def git_ignores(path: str) -> bool:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: cannot tell a generated path from a missing one")
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT).returncode == 0


# ---- the checks, each returning what is wrong -----------------------------------------------------


def wrong_make_targets(text: str) -> list[str]:
    targets = makefile_targets()
    return sorted({f"make {t}" for code in code_texts(text) for t in make_commands(code) if t not in targets})


def wrong_commands(text: str) -> list[str]:
    wrong = []
    for code in code_texts(text):
        for words in tvm_course_commands(code):
            try:
                path, parser, options = resolve_command(words)
            except KeyError as missing:
                wrong.append(f"tvm-course {missing.args[0]}: no such command")
                continue
            if not path and not options:
                continue
            known = set(parser._option_string_actions)
            wrong += [f"tvm-course {' '.join(path)} {option}: no such option" for option in options if option not in known]
    return sorted(set(wrong))


def wrong_paths(text: str) -> list[str]:
    wrong = []
    for code in code_texts(text):
        for path in repository_paths(code):
            # docs/architecture.md names modules by their room: course/grading_run.py, lms/download
            candidates = [ROOT / path, ROOT / "autograder" / path, ROOT / "autograder" / f"{path}.py"]
            exists = any(ROOT.glob(path)) if "*" in path else any(c.exists() for c in candidates)
            if not exists and not git_ignores(path):
                wrong.append(path)
    return sorted(set(wrong))


def wrong_links(page: Path, text: str) -> list[str]:
    wrong = []
    for link in prose_links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):
            continue
        target, _, fragment = link.partition("#")
        file = (page.parent / target).resolve() if target else page
        if target and not file.exists():
            wrong.append(f"{link}: no such file")
        elif fragment:
            if file.suffix != ".md":
                wrong.append(f"{link}: a section of a file that is not Markdown")
            elif fragment not in anchors(markdown_headings(file.read_text(encoding="utf-8") if target else text)):
                wrong.append(f"{link}: {file.name} has no such section")
    return wrong


# ---- the repository's pages -----------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_make_target_named_exists(page):
    assert wrong_make_targets(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_tvm_course_command_and_option_named_exists(page):
    assert wrong_commands(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_repository_path_named_exists_or_is_generated(page):
    assert wrong_paths(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES + LINKING, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    assert wrong_links(page, page.read_text(encoding="utf-8")) == []


def test_each_guide_opens_with_a_title_and_one_line_on_whom_it_is_for():
    for page in sorted((ROOT / "docs").glob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n\n")
        assert lines[0].startswith("# ") and "\n" not in lines[0], page.name
        assert re.match(r"^(For |What )", lines[1]), f"{page.name}: the first paragraph says whom it is for"


def test_the_readme_fits_a_screen_or_two():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 60


def test_every_make_target_named_runs_dry():
    """`make -n TARGET` for each target the pages name: the recipe expands (nothing is run)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    named = sorted({t for page in PAGES for code in code_texts(page.read_text(encoding="utf-8"))
                    for t in make_commands(code)})
    assert named, "the pages name no make target"
    for target in named:
        result = subprocess.run(["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"make -n {target}: {result.stderr}"


def test_every_command_named_answers_help():
    """Each `tvm-course ...` command the pages name prints its help and exits 0; the console script
    itself too, where this environment installed it."""
    named = set()
    for page in PAGES:
        for code in code_texts(page.read_text(encoding="utf-8")):
            for words in tvm_course_commands(code):
                named.add(tuple(resolve_command(words)[0]))
    assert ("grade",) in named and ("quiz", "take") in named
    for path in sorted(named):
        with contextlib.redirect_stdout(io.StringIO()) as out, pytest.raises(SystemExit) as exit:
            build_parser().parse_args([*path, "--help"])
        assert exit.value.code == 0 and out.getvalue().startswith("usage: tvm-course"), path
    script = Path(sys.executable).parent / "tvm-course"
    if script.is_file():
        result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and "grade-schedule" in result.stdout


# ---- the checks fail where they should ------------------------------------------------------------

BROKEN = """# A page

For nobody. See [the students](docs/students.md#no-such-section), [a page](docs/nothing.md),
[grading](docs/grading.md#what-is-graded) and [a section here](#a-page).

```
make demo
make no-such-target
tvm-course grade tiling --no-such-option
tvm-course quiz fly
tvm-course grade-schedule tile-fused-conv course/solutions/no_such_file.py --json
```

Generated: `build/student-edition/`, `course/release/tiling/`; named: `autograder/no_such_module.py`.
"""


def test_the_checks_find_each_kind_of_mistake():
    page = ROOT / "BROKEN.md"  # never written: links resolve from the repository root
    assert wrong_make_targets(BROKEN) == ["make no-such-target"]
    assert wrong_commands(BROKEN) == ["tvm-course grade --no-such-option: no such option",
                                      "tvm-course quiz fly: no such command"]
    assert wrong_paths(BROKEN) == ["autograder/no_such_module.py", "course/solutions/no_such_file.py"]
    assert wrong_links(page, BROKEN) == ["docs/students.md#no-such-section: students.md has no such section",
                                         "docs/nothing.md: no such file"]


def test_anchors_are_githubs():
    assert anchors(["A term, step by step", "One grading (`engine/`)", "Tests", "Tests"]) == [
        "a-term-step-by-step", "one-grading-engine", "tests", "tests-1"]
