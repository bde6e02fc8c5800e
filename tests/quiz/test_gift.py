"""GIFT export, read back with a small GIFT parser to confirm the questions it claims."""
import re

from autograder.quiz.gift import escape, to_gift
from autograder.quiz.loading import load_instructor

from .conftest import COURSE_QUIZZES


def unescape(text):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def split_unescaped(text, marks):
    """Split at unescaped occurrences of any character in `marks`, keeping the mark."""
    parts, current, i = [], "", 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            current += text[i:i + 2]
            i += 2
            continue
        if text[i] in marks:
            parts.append(current)
            current = text[i]
        else:
            current += text[i]
        i += 1
    parts.append(current)
    return parts


def parse_gift(text):
    """{title: {"kind", "prompt", "answers": [(mark, weight, text, feedback)], "general"}}."""
    questions = {}
    body = "\n".join(line for line in text.splitlines() if not line.startswith(("//", "$CATEGORY")))
    for block in filter(None, (b.strip() for b in body.split("\n\n"))):
        match = re.fullmatch(r"::(.+?)::(\[markdown\])?(.*?)\{(.*)\}", block, re.S)
        assert match, block
        title, prompt, answer_text = unescape(match.group(1)), unescape(match.group(3).strip()), match.group(4).strip()
        general = None
        if "####" in answer_text:
            answer_text, general = answer_text.split("####", 1)
            general = unescape(general.strip())
        kind = "numerical" if answer_text.startswith("#") else None
        answers = []
        for part in split_unescaped(answer_text.lstrip("#").strip(), "=~"):
            part = part.strip()
            if not part:
                continue
            mark, rest = part[0], part[1:]
            weight = None
            weight_match = re.match(r"%(-?[\d.]+)%", rest)
            if weight_match:
                weight, rest = float(weight_match.group(1)), rest[weight_match.end():]
            pieces = split_unescaped(rest, "#")
            feedback = unescape(pieces[1][1:]) if len(pieces) > 1 else None
            answers.append((mark, weight, pieces[0].strip(), feedback))
        if kind is None:
            if any(" -> " in a[2] for a in answers):
                kind = "matching"
            elif any(a[0] == "~" for a in answers):
                kind = "multichoice"
            else:
                kind = "shortanswer"
        questions[title] = {"kind": kind, "prompt": prompt, "answers": answers, "general": general}
    return questions


def test_course_quizzes_export_every_question_they_claim():
    for path in COURSE_QUIZZES:
        quiz, _ = load_instructor(path)
        text, notes = to_gift(quiz)
        parsed = parse_gift(text)
        non_code = [q for q in quiz.questions if q.type != "code"]
        assert list(parsed) == [q.id for q in non_code]
        for q in quiz.questions:
            if q.type == "code":
                assert any(q.id in note and "GIFT cannot grade code" in note for note in notes)
                assert f"// skipped code question {q.id!r}" in text
                continue
            gift = parsed[q.id]
            assert gift["general"] == q.explanation.strip()
            answers = gift["answers"]
            if q.type == "single":
                assert gift["kind"] == "multichoice"
                assert [unescape(a[2]) for a in answers if a[0] == "="] == [c.text for c in q.choices if c.correct]
                assert len(answers) == len(q.choices)
            elif q.type == "multiple":
                weights = {unescape(a[2]): a[1] for a in answers}
                right = [c.text for c in q.choices if c.correct]
                assert abs(sum(weights[t] for t in right) - 100) < 0.01
                assert all(weights[c.text] < 0 for c in q.choices if not c.correct)
            elif q.type == "numeric":
                assert gift["kind"] == "numerical"
                value, tolerance = answers[0][2].split(":")
                assert float(value) == q.answer and float(tolerance) == q.tolerance and answers[0][1] is None
                assert [(a[1], float(a[2].split(":")[0])) for a in answers[1:]] == [(0.0, m.answer) for m in q.mistakes]
            elif q.type == "text":
                assert gift["kind"] == "shortanswer"
                accepted = [unescape(a[2]) for a in answers if a[1] is None]
                assert q.accept[0].lower() in accepted
            elif q.type == "ordering":
                assert gift["kind"] == "matching"
                pairs = [unescape(a[2]).split(" -> ") for a in answers]
                assert pairs == [[item, str(i)] for i, item in enumerate(q.items, start=1)]


def test_special_characters_survive_the_round_trip():
    tricky = "a {b} = c ~ d # e : f \\ g\nline two"
    assert unescape(escape(tricky)) == tricky
    assert "\n" not in escape(tricky)


def test_sample_quiz_mistake_feedback_and_category(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    text, notes = to_gift(quiz)
    assert "$CATEGORY: tvm-course/two-levels" in text
    assert parse_gift(text)["count"]["answers"][1] == ("=", 0.0, "196:0", "that is both axes")
    assert any("matching question" in note for note in notes)
