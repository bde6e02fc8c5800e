"""One real JupyterHub for the hub tests (module-scoped fixtures share it): demo accounts of their
own, a state folder of its own, the single-user environment kept between runs in
/var/tmp/tvm-course-hub-env (rebuilt when the package changes), and a real headless Chromium.
Skips, saying why, where the hub cannot run: not root, no npm, no Chromium or Playwright.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "site"))
from site_test_course import CHROMIUM  # noqa: E402

ENV_CACHE = Path("/var/tmp/tvm-course-hub-env")
STUDENTS = ["hubt-ada", "hubt-ben"]
INSTRUCTOR = "hubt-prof"
TIMINGS: dict[str, list[float]] = {}


def timed(name: str, seconds: float) -> None:
    """Recorded for the report (printed at the end of the session), not asserted."""
    TIMINGS.setdefault(name, []).append(seconds)


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.section("hub timings (seconds; one shared machine)")
        for name, values in TIMINGS.items():
            terminalreporter.write_line(f"{name}: " + ", ".join(f"{v:.1f}" for v in values))


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the hub needs root (a system user per demo account, servers spawned as them): run the tests as root"
    if shutil.which("npm") is None:
        return "npm is missing: the hub's proxy installs from npm (apt-get install npm; .ci/run does it as root)"
    if shutil.which("useradd") is None:
        return "useradd is missing (Debian: passwd)"
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install chromium); .ci/run installs it"
    from autograder.hub.accounts import HubError
    from autograder.hub.environment import base_interpreter

    try:
        base_interpreter()
    except HubError as err:
        return str(err)
    return None


@pytest.fixture(scope="package")
def hub():
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    from autograder.hub.accounts import remove_system_user
    from autograder.hub.server import Hub, HubSettings

    for name in [*STUDENTS, INSTRUCTOR]:  # fresh homes: nothing fetched or graded by an earlier run
        remove_system_user(name)
    state = Path(tempfile.mkdtemp(prefix="tvm-course-hub-test-", dir="/var/tmp"))
    settings = HubSettings(state=state, env=ENV_CACHE, port=0, students=STUDENTS, instructor=INSTRUCTOR)
    began = time.monotonic()
    running = Hub.start(settings, lambda message: print(message, file=sys.stderr))
    timed("hub start (accounts, environment check, release, JupyterHub up)", time.monotonic() - began)
    try:
        yield running
    finally:
        running.stop()
        left = running.leftovers()
        for name in [*STUDENTS, INSTRUCTOR]:
            remove_system_user(name)
        shutil.rmtree(state, ignore_errors=True)
        assert not left, f"still running after the hub stopped: {left}"

