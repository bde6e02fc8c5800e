"""Read a quiz file (instructor or released copy), validate it, and build the model.

Problems inside one question drop that question and are reported; problems with the file as a
whole (not YAML, not a quiz, a broken header) raise QuizFileError. Nothing here prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import hashing, rules
from .checking import InstructorKey, ReleasedKey
from .diagnostics import Problem, QuizFileError
from .model import Question, Quiz, ReleasedQuestion, ReleasedQuiz
from .release import shown_fields
from .schema import schema_problems
from .yaml_lines import LinedData, YamlProblem, load_lined_file


@dataclass
class Loaded:
    kind: str  # "instructor" or "released"
    quiz: Quiz | None = None  # instructor copies only
    released: ReleasedQuiz | None = None  # always (for an instructor copy, its instructor_view)
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.is_error]


def is_released_data(data: object) -> bool:
    return isinstance(data, dict) and "released" in data


def load(path: str | Path) -> Loaded:
    """Load either copy; raise QuizFileError when nothing in it can be used."""
    file = str(path)
    lined = _read(file)
    if is_released_data(lined.data):
        return _load_released(lined, file)
    quiz, problems = _load_instructor(lined, file)
    return Loaded("instructor", quiz, instructor_view(quiz), problems)


def instructor_view(quiz: Quiz) -> ReleasedQuiz:
    """An instructor copy for taking or checking: each question shows what its released copy
    would show, and answers are checked against the plain key, with the results the released
    copy gives but without deriving its slow keys (see checking.InstructorKey)."""
    questions = [ReleasedQuestion(shown_fields(q), q.line) for q in quiz.questions]
    return ReleasedQuiz(quiz.id, quiz.title, quiz.lesson, InstructorKey(quiz), questions,
                        quiz.intro, quiz.path, from_instructor_copy=True)


def load_instructor(path: str | Path) -> tuple[Quiz, list[Problem]]:
    """The author's copy (for key, gift, release); a released copy is refused with a clear reason."""
    file = str(path)
    lined = _read(file)
    if is_released_data(lined.data):
        raise QuizFileError([Problem(file, 1, "released", "this is a released copy: it has no answer key; "
                                     "use the instructor copy in quizzes/")])
    return _load_instructor(lined, file)


def _read(file: str) -> LinedData:
    try:
        lined = load_lined_file(Path(file))
    except YamlProblem as err:
        raise QuizFileError([Problem(file, err.line, "", err.message)]) from None
    except OSError as err:
        raise QuizFileError([Problem(file, None, "", f"cannot read the file: {err.strerror}")]) from None
    if not isinstance(lined.data, dict):
        raise QuizFileError([Problem(file, 1, "", "a quiz file is a YAML mapping with id, title, lesson and questions")])
    return lined


def _split(problems: list[Problem], count: int) -> tuple[list[Problem], set[int]]:
    """File-level problems, and the indices of questions that have errors."""
    file_level = [p for p in problems if p.is_error and p.question_index is None]
    broken = {p.question_index for p in problems if p.is_error and p.question_index is not None}
    return file_level, {i for i in broken if i < count}


def _load_instructor(lined: LinedData, file: str) -> tuple[Quiz, list[Problem]]:
    data = lined.data
    problems = schema_problems(lined, file, "instructor")
    questions = data.get("questions") if isinstance(data.get("questions"), list) else []
    file_level, broken = _split(problems, len(questions))
    problems += rules.duplicate_ids(questions, lined, file)
    if file_level:
        raise QuizFileError(problems)
    for index, question in enumerate(questions):
        if index not in broken:
            problems += rules.question_problems(question, index, lined, file)
    _, broken = _split(problems, len(questions))
    problems += rules.answer_positions([q for i, q in enumerate(questions) if i not in broken], lined, file)
    problems += rules.longest_choice_correct([q for i, q in enumerate(questions) if i not in broken], lined, file)
    problems += rules.answers_in_other_texts(data, [(i, q) for i, q in enumerate(questions) if i not in broken],
                                             lined, file)
    kept = [Question.from_data(q, lined.line_of(("questions", i))) for i, q in enumerate(questions)
            if i not in broken]
    kept = _first_of_each_id(kept)
    quiz = Quiz(data["id"], data["title"], data["lesson"], kept, data.get("intro"), file)
    return quiz, sorted(problems, key=lambda p: (p.line or 0, p.key))


def _first_of_each_id(questions: list) -> list:
    seen: set[str] = set()
    unique = []
    for question in questions:
        if question.id not in seen:
            seen.add(question.id)
            unique.append(question)
    return unique


def _load_released(lined: LinedData, file: str) -> Loaded:
    data = lined.data
    problems = schema_problems(lined, file, "released")
    questions = data.get("questions") if isinstance(data.get("questions"), list) else []
    file_level, broken = _split(problems, len(questions))
    if file_level:
        raise QuizFileError(problems)
    salt = data["released"]["salt"]
    kept: list[ReleasedQuestion] = []
    edited: set[str] = set()
    for index, question in enumerate(questions):
        if index in broken:
            continue
        released = ReleasedQuestion(question, lined.line_of(("questions", index)))
        if hashing.question_integrity(salt, question) != question["integrity"]:
            edited.add(released.id)
            problems.append(Problem(file, released.line, f"questions[{index}]",
                                    f"question {released.id!r} was changed after release (its integrity hash "
                                    "does not match); it is shown but not scored", path=("questions", index)))
        kept.append(released)
    if hashing.header_integrity(data) != data["released"]["integrity"]:
        problems.append(Problem(file, lined.line_of(("released", "integrity")), "released.integrity",
                                "the file was changed after release (title, salt or the list of questions); "
                                "release it again from the instructor copy", "warning"))
    released_quiz = ReleasedQuiz(data["id"], data["title"], data["lesson"], ReleasedKey(salt), _first_of_each_id(kept),
                                 data.get("intro"), file, edited)
    return Loaded("released", None, released_quiz, sorted(problems, key=lambda p: (p.line or 0, p.key)))
