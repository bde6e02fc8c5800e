"""The course website: `tvm-course site build` and `tvm-course site serve`.

Modules: executed (lesson notebooks run once by a real kernel, cached), notebook_html (an
executed notebook as page HTML), figures (its plots as files, sharp and enlargeable),
page_structure (title, headings in order, table of contents), navigation (sidebar, breadcrumb,
previous / next), notebook_links (the notebook to download; Colab and Binder), quiz_html (a
lesson's released quiz as a form), guides (the repository's docs/ as pages), course_map (the
map page), pages (templates and filters),
build (the whole site), serve (a local server).
Package data: templates/*.html, static/ (site.css, site.js, quiz-hashing.js, quiz.js, favicon.svg).
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_OUT = Path("_site")  # where `tvm-course site build` writes, relative to the working folder

__all__ = ["executed_notebook"]  # build_site: from autograder.site.build (which imports DEFAULT_OUT from here)


def __getattr__(name: str):
    # Importing the package stays cheap; nbconvert and Jinja load when a build needs them.
    if name == "executed_notebook":
        from .executed import executed_notebook

        return executed_notebook
    raise AttributeError(f"module 'autograder.site' has no attribute {name!r}")
