"""`tvm-course site build` and `tvm-course site serve`, run as a student runs them."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

TVM_COURSE = [sys.executable, "-m", "autograder.cli"]


def _run(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*TVM_COURSE, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_build_then_rebuild_from_the_cache(tiny_course, session_cache, tmp_path):
    env = {"TVM_COURSE_CACHE": str(session_cache)}
    out = tmp_path / "site"
    first = _run("site", "build", "-o", str(out), "--syllabus", str(tiny_course), env=env)
    assert first.returncode == 0, first.stderr
    assert "built 5 pages" in first.stdout  # index, two lessons, two guides and f"open {(out / 'index.html').as_uri()}" in first.stdout
    second = _run("site", "build", "-o", str(out), "--syllabus", str(tiny_course), env=env)
    assert second.returncode == 0, second.stderr
    assert "0 lesson(s) executed, 2 lesson(s) from the cache" in second.stdout
    assert "lessons/tiny.ipynb: executed copy from the cache" in second.stderr


def test_build_refuses_a_folder_that_is_not_a_site(tiny_course, tmp_path):
    out = tmp_path / "documents"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = _run("site", "build", "-o", str(out), "--syllabus", str(tiny_course))
    assert result.returncode == 2
    assert "is not a site built by tvm-course" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("out", ["/proc/x", "/proc/x/site"])
def test_build_into_a_folder_that_cannot_be_created_is_a_usage_error(tiny_course, out):
    if not Path("/proc").is_dir():
        pytest.skip("needs Linux's /proc, where no folder can be created")
    result = _run("site", "build", "-o", out, "--syllabus", str(tiny_course))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvm-course site build: cannot build the site in /proc")
    assert "choose a folder you can write to with -o" in lines[0]


def test_build_reports_a_broken_course_map_without_a_traceback(tmp_path):
    (tmp_path / "course").mkdir()
    syllabus = tmp_path / "course" / "syllabus.yaml"
    syllabus.write_text("course: x\nunits:\n  - id: u\n    title: U\n    lessons:\n      - id: l\n        title: L\n"
                        "        notebook: lessons/l.ipynb\n        quiz: quizzes/l.yaml\n")
    result = _run("site", "build", "-o", str(tmp_path / "site"), "--syllabus", str(syllabus))
    assert result.returncode == 1
    assert "lessons/l.ipynb does not exist" in result.stderr and "Traceback" not in result.stderr


def test_serve_without_a_site_says_to_build_first(tmp_path):
    result = _run("site", "serve", "-d", str(tmp_path / "nothing"))
    assert result.returncode == 2 and "run `tvm-course site build` first" in result.stderr


def test_serve_answers_on_loopback_only(tiny_site):
    server = subprocess.Popen([*TVM_COURSE, "site", "serve", "-d", str(tiny_site), "-p", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith(f"serving {Path(tiny_site).resolve()} at http://127.0.0.1:"), line
        url = line.split(" at ")[1].split()[0]
        with urllib.request.urlopen(url + "lessons/tiny.html", timeout=10) as response:
            assert response.status == 200 and b"Check yourself" in response.read()
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)  # at load 14 (4 test workers beside it) 10 s was not always enough
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert server.returncode == 0


def test_site_help_lists_build_and_serve():
    result = _run("site", "--help")
    assert result.returncode == 0 and "build" in result.stdout and "serve" in result.stdout


@pytest.mark.parametrize("argv", [["site"], ["site", "build", "--no-such-flag"]])
def test_usage_errors_exit_2(argv):
    assert _run(*argv).returncode == 2


def test_a_repository_url_that_is_not_githubs_is_a_usage_error(tiny_course, tmp_path):
    result = _run("site", "build", "-o", str(tmp_path / "site"), "--syllabus", str(tiny_course),
                  "--repo-url", "https://gitlab.com/course/tvm")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "https://github.com/OWNER/REPO" in result.stderr and not (tmp_path / "site").exists()
