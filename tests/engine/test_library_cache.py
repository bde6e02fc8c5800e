"""library_cache.py: the grader's own libraries are built once per key, whole, and privately."""
from __future__ import annotations

import pytest

from autograder.engine import library_cache
from autograder.problems import get_problem

pytestmark = pytest.mark.slow


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_COURSE_CACHE", str(tmp_path))
    return tmp_path


def target(mcpu=None):
    from autograder.engine.cpus import cpu_target

    return cpu_target(mcpu)


def yardstick_build(counter):
    def build():
        import tvm

        from autograder.engine.evaluate import yardstick_module

        counter.append(1)
        return tvm.compile(yardstick_module(get_problem("tile-fused-conv"), target()), target=target())

    return build


def test_a_library_is_built_on_a_miss_and_reused_on_a_hit(cache):
    builds: list[int] = []
    first = library_cache.library("tile-fused-conv", target(), "yardstick", yardstick_build(builds))
    second = library_cache.library("tile-fused-conv", target(), "yardstick", yardstick_build(builds))
    assert first == second and first.is_file() and len(builds) == 1
    assert oct(first.parent.stat().st_mode & 0o777) == "0o700"
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".")]  # no half-written file left


def test_the_key_changes_with_the_cpu_and_the_problem(cache):
    keys = {library_cache.key("tile-fused-conv", target()), library_cache.key("gpu-fused-conv", target())}
    from tvm.target import codegen

    if "avx2" in codegen.llvm_get_cpu_features(target()):
        keys.add(library_cache.key("tile-fused-conv", target("haswell")))
        assert len(keys) == 3
    assert len(keys) >= 2


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("TVM_COURSE_CACHE", str(blocked))  # not even root makes folders inside a file
    assert library_cache.library("tile-fused-conv", target(), "yardstick", yardstick_build([])) is None
