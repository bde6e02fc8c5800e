"""Where a student takes a lesson's notebook to run it: a download, Colab, Binder.

Every lesson page links its notebook as the site publishes it, `notebooks/<file>.ipynb`: the
lesson's own notebook with outputs, execution counts and the site's run record stripped (a
notebook to run, not the one the page shows). When the site is built with the course's public
repository (`tvm-course site build --repo-url https://github.com/OWNER/REPO`, or
$TVM_COURSE_REPO_URL), each page also links "Open in Colab" and "Launch Binder" for the
notebook's path in that repository, on the given branch.
"""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..errors import TvmCourseError

NOTEBOOK_FOLDER = "notebooks"
REPO_URL_ENV = "TVM_COURSE_REPO_URL"
DEFAULT_BRANCH = "main"
_GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100}?)(?:\.git)?/?$")
_BRANCH = re.compile(r"^[A-Za-z0-9._/-]{1,200}$")


class RepositoryURLError(ValueError, TvmCourseError):
    """The repository URL cannot give Colab and Binder links; the message says what to give."""


@dataclass(frozen=True)
class Repository:
    owner: str
    name: str
    branch: str = DEFAULT_BRANCH

    @classmethod
    def parse(cls, url: str, branch: str = DEFAULT_BRANCH) -> "Repository":
        match = _GITHUB.match(url.strip())
        if not match:
            raise RepositoryURLError(f"--repo-url {url!r}: give the course's public GitHub repository as "
                                     "https://github.com/OWNER/REPO (Colab and Binder open notebooks from there)")
        if not _BRANCH.match(branch) or ".." in branch or branch.startswith(("/", "-")):
            raise RepositoryURLError(f"--repo-branch {branch!r}: not a branch name")
        return cls(match.group(1), match.group(2), branch)

    def blob(self, path: str) -> str:
        """A file's page in the repository, on the branch (GitHub shows a folder there too)."""
        return f"https://github.com/{self.owner}/{self.name}/blob/{urllib.parse.quote(self.branch)}/{urllib.parse.quote(path)}"

    def colab(self, path: str) -> str:
        return (f"https://colab.research.google.com/github/{self.owner}/{self.name}/blob/"
                f"{urllib.parse.quote(self.branch)}/{urllib.parse.quote(path)}")

    def binder(self, path: str) -> str:
        return (f"https://mybinder.org/v2/gh/{self.owner}/{self.name}/{urllib.parse.quote(self.branch, safe='')}"
                f"?labpath={urllib.parse.quote(path, safe='')}")


@dataclass(frozen=True)
class NotebookLinks:
    download: str  # relative to the site root
    download_name: str
    colab: str | None = None
    binder: str | None = None


def links_for(notebook: str, repository: Repository | None) -> NotebookLinks:
    """`notebook` is the lesson's path in the repository (as course/syllabus.yaml gives it)."""
    name = Path(notebook).name
    download = f"{NOTEBOOK_FOLDER}/{name}"
    if repository is None:
        return NotebookLinks(download, name)
    path = Path(notebook).as_posix()
    return NotebookLinks(download, name, repository.colab(path), repository.binder(path))


def stripped_notebook(path: str | Path) -> str:
    """The notebook at `path` as JSON text, without outputs, execution counts or run records."""
    from .executed import METADATA_KEY

    notebook = nbformat.read(path, as_version=4)
    notebook.metadata.pop("widgets", None)
    notebook.metadata.pop(METADATA_KEY, None)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("execution", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
    return nbformat.writes(notebook) + "\n"
