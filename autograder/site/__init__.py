"""The course website: `tvm-course site build` and `tvm-course site serve`.

Modules: executed (lesson notebooks run once by a real kernel, cached), notebook_html (an
executed notebook as page HTML), quiz_html (a lesson's released quiz as a form), course_map
(the map page), pages (templates and filters), build (the whole site), serve (a local server).
Package data: templates/*.html, static/ (site.css, quiz-hashing.js, quiz.js).
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_OUT = Path("_site")  # where `tvm-course site build` writes, relative to the working folder

__all__ = ["build_site", "executed_notebook"]


def __getattr__(name: str):
    # Importing the package stays cheap; nbconvert and Jinja load when a build needs them.
    if name == "build_site":
        from .build import build_site

        return build_site
    if name == "executed_notebook":
        from .executed import executed_notebook

        return executed_notebook
    raise AttributeError(f"module 'autograder.site' has no attribute {name!r}")
