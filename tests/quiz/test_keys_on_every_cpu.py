"""Each quiz's code questions, their keys graded by the real `tvm-course quiz check` under the four
CPUs the lessons were read on: this machine's own, an AVX2 core, an SSE-only core and an AVX-512
core, so a key that only holds on one CPU fails here. (This machine's own CPU, and every other
question, whose key does not depend on the CPU, test_commands checks once: both copies, with the
code graded.)"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.quiz.loading import load_instructor

from .conftest import COURSE_QUIZZES, REPO

SCRIPT = Path(sys.executable).with_name("tvm-course")
CPUS = ["haswell", "x86-64-v2", "skylake-avx512"]  # and this machine's: test_key_then_check_with_code_questions_graded
# A question scoped to CPUs with FMA (its prompt says so): on an SSE-only core its key misses the speed band.
SCOPED = {("two-levels", "fused-and-faster"): ("x86-64-v2",)}


def _host_runs(mcpu):
    from autograder.engine.cpus import UnknownCPU, cpu_target

    try:
        cpu_target(mcpu)
    except UnknownCPU as refused:
        return str(refused)
    return None


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """An answers file per quiz holding the key of its code questions only."""
    import yaml

    from autograder.quiz.key import answer_key

    folder = tmp_path_factory.mktemp("keys")
    paths = {}
    for path in COURSE_QUIZZES:
        quiz, _ = load_instructor(path)
        key = answer_key(quiz)
        paths[path.stem] = folder / f"{path.stem}.yaml"
        paths[path.stem].write_text(yaml.safe_dump({q.id: key[q.id] for q in quiz.questions if q.type == "code"}))
    return paths


@pytest.mark.slow
@pytest.mark.parametrize("mcpu", CPUS)
@pytest.mark.parametrize("quiz_path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_the_key_is_right_on_every_cpu(keys, quiz_path, mcpu):
    refused = _host_runs(mcpu)
    if refused:
        pytest.skip(refused)
    environment = {k: v for k, v in __import__("os").environ.items() if k != "TVM_COURSE_MCPU"}
    if mcpu:
        environment["TVM_COURSE_MCPU"] = mcpu
    result = subprocess.run([str(SCRIPT), "quiz", "check", str(quiz_path), str(keys[quiz_path.stem]), "--json"],
                            capture_output=True, text=True, timeout=600, cwd=REPO, env=environment)
    report = json.loads(result.stdout)
    graded = {q["id"]: q for q in report["questions"] if q["type"] == "code"}
    assert graded and all(q["status"] in ("correct", "wrong") for q in graded.values()), graded
    wrong = {qid: q for qid, q in graded.items() if q["status"] != "correct"}
    scoped = {qid for (quiz, qid), cpus in SCOPED.items() if quiz == quiz_path.stem and mcpu in cpus}
    assert set(wrong) == scoped, json.dumps(wrong, indent=1)[:3000]
    quiz, _ = load_instructor(quiz_path)
    for qid in scoped:  # the prompt tells the student where the question holds, and only speed is missed
        assert mcpu in quiz.question(qid).prompt
        assert [line.split(":")[0] for line in wrong[qid]["feedback"][:-1]] == ["speed"], wrong[qid]["feedback"]
