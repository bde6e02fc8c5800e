import json
import re

import yaml

from autograder.quiz.loading import load, load_instructor
from autograder.quiz.release import dump_yaml, release, write_released

from .conftest import COURSE_QUIZZES

SECRET_KEYS = {"correct", "answer", "tolerance", "mistakes", "patterns", "solution"}


def all_keys(data):
    if isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from all_keys(value)
    elif isinstance(data, list):
        for item in data:
            yield from all_keys(item)


def secrets_of(quiz):
    """Texts a released copy must not show in plain text."""
    texts = []
    for q in quiz.questions:
        if q.type != "code":
            texts.append(q.explanation)
        else:
            texts.append(q.solution)
        texts += [c.feedback for c in q.choices if c.feedback]
        texts += [m.feedback for m in q.mistakes]
    return texts


def test_no_plain_key_survives_in_released_copies(tmp_path, sample_quiz_file):
    for path in COURSE_QUIZZES + [sample_quiz_file]:
        quiz, _ = load_instructor(path)
        out = tmp_path / f"{quiz.id}.yaml"
        write_released(release(quiz), out)
        text = out.read_text()
        data = yaml.safe_load(text)
        assert not SECRET_KEYS & set(all_keys(data)), path
        assert "correct: true" not in text
        flat = " ".join(text.split())
        for secret in secrets_of(quiz):
            assert " ".join(secret.split()) not in flat, (path, secret[:40])
        for question in data["questions"]:
            for entry in question.get("accept", []) + question.get("respond", []):
                assert re.fullmatch(r"[0-9a-f]{64}", entry["check"])


def test_entries_are_sorted_so_their_order_says_nothing(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    for question in release(quiz)["questions"]:
        for field in ("accept", "respond"):
            checks = [e["check"] for e in question.get(field, [])]
            assert checks == sorted(checks)


def test_the_salt_stays_while_the_quiz_does_and_a_given_salt_is_reproducible(sample_quiz_file, tmp_path):
    """Releasing an unchanged quiz again gives the same copy (a student's kept answers still apply
    on a rebuilt site); any change to what the instructor copy says gives a new salt, and so new
    hashes for every question, while moving it in the file (its lines) does not."""
    quiz, _ = load_instructor(sample_quiz_file)
    first, second = release(quiz), release(quiz)
    assert first == second and len(first["released"]["salt"]) == 32
    moved = tmp_path / "moved.yaml"
    moved.write_text("# a comment that shifts every line\n\n" + sample_quiz_file.read_text(encoding="utf-8"), encoding="utf-8")
    assert release(load_instructor(moved)[0]) == first
    quiz.questions[-1].explanation += " (edited)"
    edited = release(quiz)
    assert edited["released"]["salt"] != first["released"]["salt"]
    assert edited["questions"][0]["accept"] != first["questions"][0]["accept"]
    assert release(quiz, "ab" * 16) == release(quiz, "ab" * 16)


def test_what_stays_plain(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    released = {q["id"]: q for q in release(quiz)["questions"]}
    assert released["pick-one"]["choices"] == ["wrong one", "right one", "wrong two"]
    assert released["count"]["unit"] == "tiles" and "step" not in released["count"]
    assert released["ratio"]["step"] == "0.01"
    assert len(released["ratio"]["accept"]) >= 20
    assert released["name"]["case_sensitive"] is False
    assert sorted(released["order"]["items"]) == sorted(["first", "second", "third", "fourth"])
    assert released["order"]["items"] != ["first", "second", "third", "fourth"]


def test_code_questions_keep_everything_but_the_solution():
    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace"))
    [code] = [q for q in release(quiz)["questions"] if q["type"] == "code"]
    assert code["problem"] == "tile-fused-conv"
    assert code["require"] == {"checks": ["correctness", "fusion"]}
    assert "def schedule(sch):" in code["starter"]
    assert "solution" not in code


def test_json_and_yaml_outputs_load_back_the_same(tmp_path, sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    document = release(quiz)
    write_released(document, tmp_path / "out.json")
    write_released(document, tmp_path / "out.yaml")
    assert json.loads((tmp_path / "out.json").read_text()) == document
    assert load(tmp_path / "out.json").problems == []
    assert load(tmp_path / "out.yaml").problems == []
    assert (tmp_path / "out.yaml").read_text().startswith("# Released copy of quiz 'sample'")


def test_multi_line_text_is_written_as_a_literal_block():
    assert dump_yaml({"code": "def f():\n    pass\n"}) == "code: |\n  def f():\n      pass\n"


def test_how_many_entries_a_choice_question_has_says_nothing_of_how_many_choices_are_right(tmp_path):
    from autograder.quiz.checking import ReleasedKey, picked_choice_feedback
    from autograder.quiz.model import ReleasedQuestion

    def released_with(correct: set[str]):
        choices = "".join(
            f"      - text: Choice {letter}\n"
            + ("        correct: true\n" if letter in correct else f"        feedback: Not {letter}, for a reason.\n")
            for letter in "abcd"
        )
        path = tmp_path / f"{''.join(sorted(correct))}.yaml"
        path.write_text("id: q\ntitle: T\nlesson: l\nquestions:\n  - id: pick\n    type: multiple\n    prompt: Pick.\n"
                        f"    choices:\n{choices}    feedback: Think again.\n    explanation: Because.\n", encoding="utf-8")
        quiz, problems = load_instructor(path)
        assert not [p for p in problems if p.severity == "error"], problems
        return release(quiz, "cd" * 16)["questions"][0]

    one, three = released_with({"a"}), released_with({"a", "b", "c"})
    assert len(one["respond"]) == len(three["respond"]) == 4 and len(one["accept"]) == len(three["accept"]) == 1
    assert len({len(e["text"]) for e in one["respond"]}) == 1  # decoys as long as the real feedback
    assert release(load_instructor(tmp_path / "a.yaml")[0], "cd" * 16)["questions"][0] == one  # reproducible
    # No answer opens a decoy: a wrong pick still gets exactly its own feedback.
    assert picked_choice_feedback(ReleasedQuestion(one, 1), ReleasedKey("cd" * 16), ["d"]) == ["(d) Not d, for a reason."]
