"""The course's quizzes: valid, big enough, varied, on the topics the unit promises."""
import pytest

from autograder.quiz.answers import AnswerSheet
from autograder.quiz.checking import check_quiz
from autograder.quiz.key import answer_key
from autograder.quiz.loading import load, load_instructor

from .conftest import COURSE_QUIZZES

# Topics from the course design, and the question that covers each.
TOPICS = {
    "two-levels": {
        "why two levels": "why-two-levels",
        "what the cost model replaces": "cost-model-replaces",
        "a fused kernel slower than the pair": "fused-slower",
        "fusion and speed, in code": "fused-and-faster",
    },
    "tiling-trace": {
        "a split that does not divide": "split-that-does-not-divide",
        "tiles per channel": "tiles-per-channel",
        "bytes of a tile": "tile-bytes",
        "which intermediate a half-fused tile leaves whole": "half-fused-tile",
        "reverse_compute_at vs compute_at": "reverse-vs-compute-at",
        "what a PrimFunc is, and what building it makes": "what-a-primfunc-is",
        "a tile's input window": "halo-window",
        "the journal's trace, in code": "journal-schedule",
    },
    "gpu-trace": {
        "unbound GPU schedules": "unbound-cuda",
        "shared memory vs L1": "shared-memory-vs-l1",
        "binding loops to threads": "thread-axis",
        "registers for what one thread reads": "where-the-sum-lives",
        "barriers around a staged chunk": "staged-chunk-steps",
        "what staging saves": "reads-per-fetch",
        "when no barrier is needed": "why-no-barrier",
        "what verify_gpu_code checks": "verify-gpu-code-covers",
        "what a run on an OpenCL device proves": "opencl-proves",
        "binding and scopes, in code": "bind-and-keep-local",
    },
}


def test_there_is_one_quiz_per_lesson():
    assert sorted(p.stem for p in COURSE_QUIZZES) == sorted(TOPICS)


@pytest.mark.parametrize("path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_each_quiz_is_valid_varied_and_on_topic(path):
    loaded = load(path)
    assert loaded.problems == [], [str(p) for p in loaded.problems]
    quiz = loaded.quiz
    assert quiz.id == quiz.lesson == path.stem
    assert len(quiz.questions) >= 8
    assert len({q.type for q in quiz.questions}) >= 4
    ids = {q.id for q in quiz.questions}
    assert set(TOPICS[quiz.id].values()) <= ids


@pytest.mark.parametrize("path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_no_question_id_names_its_answer(path):
    """Ids are in the website's pages and the released copy; `validate` warns when one names its answer."""
    named = [str(p) for p in load(path).problems if p.key.endswith(".id")]
    assert named == []


@pytest.mark.parametrize("path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_every_wrong_choice_teaches(path):
    quiz, _ = load_instructor(path)
    for question in quiz.questions:
        for choice in question.choices:
            if not choice.correct:
                assert len(choice.feedback.split()) >= 12, (question.id, choice.text)
        if question.type != "single":
            assert len(question.feedback.split()) >= 5, question.id


def test_the_tiling_code_question_requires_correctness_and_fusion():
    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace"))
    question = quiz.question("journal-schedule")
    assert question.problem == "tile-fused-conv"
    assert question.require == {"checks": ["correctness", "fusion"]}


def test_the_numbers_in_the_tiling_quiz():
    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace"))
    answers = {q.id: q.answer for q in quiz.questions if q.type == "numeric"}
    assert answers == {"tiles-per-channel": (224 // 16) ** 2, "tile-bytes": 16 * 16 * 4, "halo-window": (16 + 3 - 1) ** 2}


def test_the_numbers_in_the_gpu_quiz():
    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "gpu-trace"))
    answers = {q.id: q.answer for q in quiz.questions if q.type == "numeric"}
    assert answers == {"head-blocks": (128 // 32) * (512 // 32), "reads-per-fetch": 256 // 32}


@pytest.mark.parametrize("path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_the_key_scores_full_marks_in_process(path):
    quiz, _ = load_instructor(path)
    report = check_quiz(load(path).released, AnswerSheet(answers=answer_key(quiz)), skip_code=True)
    assert report.correct == report.total == len(quiz.questions) - 1


def test_the_likeliest_near_miss_of_the_cost_model_verb_gets_its_own_feedback():
    quiz = load(next(p for p in COURSE_QUIZZES if p.stem == "two-levels")).released
    question = next(q for q in quiz.questions if q.id == "cost-model-verb")
    from autograder.quiz.checking import check_question

    for typed in ("predicts", " Predicts ", "predict"):
        result = check_question(question, quiz.key, typed)
        assert result.status == "wrong" and result.feedback[0].startswith("Close: the model predicts"), typed


@pytest.mark.parametrize("path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_a_speed_threshold_named_in_a_prompt_is_the_graders_lowest_band(path):
    import re

    from autograder.problems import get_problem

    quiz, _ = load_instructor(path)
    for question in quiz.questions:
        if question.type != "code" or "speed" not in question.require.get("checks", []):
            continue
        lowest = min(band.min_speedup for band in get_problem(question.problem).speed_bands)
        named = [float(x) for x in re.findall(r"at least ([0-9.]+)x", question.prompt)]
        assert named and all(x == lowest for x in named), (question.id, named, lowest)
