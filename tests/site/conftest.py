"""Fixtures for the website's tests: a tiny course (two short notebooks in two units, one quiz with
every question type and one with a single question) built into a real site, and a real headless
Chromium driven by Playwright.

The tiny course keeps most tests fast: its notebooks are executed by a real kernel once per
session (into a session cache folder). The real course is built once per session, by the
slow end-to-end test only.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from site_test_course import write_tiny_course


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """A cache folder for the tiny course's executed notebook, shared by the whole session."""
    return tmp_path_factory.mktemp("executed-cache")


@pytest.fixture
def use_cache(monkeypatch, session_cache):
    """Point TVM_COURSE_CACHE at the session cache (the tiny notebook then runs once per session)."""
    monkeypatch.setenv("TVM_COURSE_CACHE", str(session_cache))
    return session_cache


@pytest.fixture(scope="session")
def tiny_course(tmp_path_factory) -> Path:
    """The tiny course's syllabus path (its root is two folders up)."""
    return write_tiny_course(tmp_path_factory.mktemp("tiny-course"))


@pytest.fixture(scope="session")
def tiny_site(tmp_path_factory, tiny_course, session_cache) -> Path:
    """The tiny course built into a real site, once per session."""
    from autograder.site.build import build_site

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TVM_COURSE_CACHE", str(session_cache))
        report = build_site(tmp_path_factory.mktemp("tiny-site") / "site", tiny_course)
    return report.out



class PageErrors(list):
    """JavaScript errors and console errors seen by a page; tests assert it stays empty."""


@pytest.fixture
def page(browser):
    """A fresh page (laptop-sized) that records script errors and refuses any non-local request."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.errors = PageErrors()
    page.on("pageerror", lambda error: page.errors.append(f"page error: {error}"))
    page.on("console", lambda message: page.errors.append(f"console: {message.text}")
            if message.type == "error" else None)
    page.remote_requests = []

    def only_local(route):
        url = route.request.url
        if url.startswith(("file://", "http://127.0.0.1", "data:", "about:")):
            route.continue_()
        else:
            page.remote_requests.append(url)
            route.abort()

    context.route("**/*", only_local)
    yield page
    context.close()


def copy_site(site: Path, destination: Path) -> Path:
    shutil.copytree(site, destination)
    return destination
