from autograder.quiz.loading import load

from .conftest import SAMPLE_QUIZ


def problems(write_file, text):
    return load(write_file("q.yaml", text)).problems


def messages(found):
    return [p.message for p in found]


def line_of(text, fragment):
    return next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)


def test_the_sample_quiz_has_no_problems(write_file):
    assert problems(write_file, SAMPLE_QUIZ) == []


def test_single_choice_needs_exactly_one_correct_choice(write_file):
    two = SAMPLE_QUIZ.replace("      - text: wrong two\n        feedback: two is not it either\n",
                              "      - text: wrong two\n        correct: true\n")
    [problem] = problems(write_file, two)
    assert "exactly one choice with correct: true (found 2)" in problem.message
    assert problem.key == "questions[0].choices" and problem.line == line_of(two, "    choices:")
    none = SAMPLE_QUIZ.replace("      - text: right one\n        correct: true\n", "      - text: right one\n        feedback: f\n")
    assert any("(found 0)" in m for m in messages(problems(write_file, none)))


def test_wrong_choices_need_feedback_and_correct_ones_must_not_have_it(write_file):
    text = SAMPLE_QUIZ.replace("        feedback: one is not it\n", "").replace(
        "      - text: yes A\n        correct: true\n", "      - text: yes A\n        correct: true\n        feedback: spoiler\n")
    found = messages(problems(write_file, text))
    assert any("a wrong choice needs feedback" in m for m in found)
    assert any("feedback on a correct choice is never shown" in m for m in found)


def test_duplicate_ids_point_at_the_first_use(write_file):
    text = SAMPLE_QUIZ.replace("id: ratio", "id: count")
    [problem] = problems(write_file, text)
    assert problem.message == f"duplicate question id 'count' (first used on line {line_of(text, 'id: count')})"


def test_numeric_mistakes_must_be_outside_the_tolerance_and_apart(write_file):
    text = SAMPLE_QUIZ.replace("    feedback: old over new\n", "    mistakes:\n      - answer: 2.55\n        feedback: x\n"
                               "      - answer: 4\n        feedback: y\n      - answer: 4.05\n        feedback: z\n"
                               "    feedback: old over new\n")
    found = messages(problems(write_file, text))
    assert any("within the tolerance of the right one" in m for m in found)
    assert any("overlaps mistake 2" in m for m in found)


def test_short_text_needs_answers_valid_patterns_and_distinct_mistakes(write_file):
    no_answers = SAMPLE_QUIZ.replace("    accept: [compute_at]\n", "").replace('    patterns: ["(sch\\\\.)?compute_at(\\\\(\\\\))?"]\n', "")
    assert any("needs 'accept' answers or 'patterns'" in m for m in messages(problems(write_file, no_answers)))
    bad_pattern = SAMPLE_QUIZ.replace('compute_at(\\\\(\\\\))?"]', 'compute_at(\\\\(\\\\)"]')
    assert any("unclosed '('" in m for m in messages(problems(write_file, bad_pattern)))
    mistake_is_right = SAMPLE_QUIZ.replace("answer: reverse_compute_at", "answer: sch.compute_at")
    assert any("also an accepted answer" in m for m in messages(problems(write_file, mistake_is_right)))


def test_feedback_that_gives_the_answer_away_is_a_warning(write_file):
    text = SAMPLE_QUIZ.replace("divide the extent by the factor", "it is 14, obviously")
    [problem] = problems(write_file, text)
    assert problem.severity == "warning" and "contains the answer '14'" in problem.message


def test_ordering_items_must_differ(write_file):
    text = SAMPLE_QUIZ.replace("items: [first, second, third, fourth]", "items: [first, second, First, fourth]")
    assert any("the same text as item 1" in m for m in messages(problems(write_file, text)))


CODE_QUESTION = """\
  - id: code
    type: code
    prompt: Tile it
    problem: tile-fused-conv
    require: {checks: [correctness, fusion]}
    feedback: split, reorder, reverse_compute_at
    explanation: the journal's trace
    solution: |
      def schedule(sch):
          return None
"""


def test_code_questions_name_a_known_problem_and_define_schedule(write_file):
    assert problems(write_file, SAMPLE_QUIZ + CODE_QUESTION) == []
    unknown = SAMPLE_QUIZ + CODE_QUESTION.replace("tile-fused-conv", "tile-fused-con")
    assert any("unknown problem 'tile-fused-con'" in m for m in messages(problems(write_file, unknown)))
    no_schedule = SAMPLE_QUIZ + CODE_QUESTION.replace("def schedule(sch)", "def plan(sch)")
    assert any("must define a top-level function schedule(sch)" in m for m in messages(problems(write_file, no_schedule)))


def test_a_syntax_error_in_a_solution_points_at_its_line(write_file):
    text = SAMPLE_QUIZ + CODE_QUESTION.replace("return None", "return = None")
    [problem] = problems(write_file, text)
    assert "Python syntax error in the solution" in problem.message
    assert problem.line == line_of(text, "return = None")


def _single(qid, correct_at, count=4):
    choices = "".join(f"      - text: choice {i} of {qid}\n        correct: true\n" if i == correct_at else
                      f"      - text: choice {i} of {qid}\n        feedback: choice {i} is wrong\n" for i in range(count))
    return (f"  - id: {qid}\n    type: single\n    prompt: Which one?\n    choices:\n{choices}"
            f"    explanation: choice {correct_at}\n")


def test_correct_answers_all_at_one_letter_are_a_warning(write_file):
    # The sample's pick-one is right at b; two more right at b make a pattern a student can learn.
    same = SAMPLE_QUIZ + _single("more", 1) + _single("again", 1, count=3)
    path = write_file("same.yaml", same)
    loaded = load(path)
    [problem] = loaded.problems
    assert problem.severity == "warning" and loaded.errors == []
    assert problem.key == "questions" and problem.line == line_of(same, "questions:")
    assert str(problem).startswith(f"{path}:{problem.line}: warning: questions: in same.yaml, all 3 single-choice")
    assert "correct answer at choice b" in problem.message and "without reading the question" in problem.message
    # One question elsewhere breaks the pattern; two questions are too few to call it one.
    assert problems(write_file, SAMPLE_QUIZ + _single("more", 1) + _single("again", 3)) == []
    assert problems(write_file, SAMPLE_QUIZ + _single("more", 1)) == []


def test_questions_with_errors_do_not_count_towards_the_pattern(write_file):
    broken = _single("again", 1).replace("        feedback: choice 3 is wrong\n", "")
    found = problems(write_file, SAMPLE_QUIZ + _single("more", 1) + broken)
    assert [p.severity for p in found] == ["error"]


def test_an_answer_readable_in_another_question_is_a_warning(write_file):
    """All questions are on screen at once: a prompt, choice, item, hint or the intro must not hold
    another question's text answer, or a numeric answer that is a whole number."""
    text = (SAMPLE_QUIZ.replace("title: Sample quiz\n", "title: Sample quiz\nintro: Each axis has 14 tiles.\n")
            .replace("prompt: Put in order", "prompt: Put the uses of `compute_at` in order")
            .replace("      - text: wrong two\n", "      - text: wrong two, like sch.compute_at()\n")
            .replace("feedback: some are right, some are not", "feedback: some are right, 1,014 are not")
            .replace("items: [first, second, third, fourth]", "items: [first, second, 14 third, fourth]"))
    found = problems(write_file, text)
    assert {p.severity for p in found} == {"warning"}
    where = {(p.key, p.line) for p in found}
    assert where == {("intro", line_of(text, "intro:")),
                     ("questions[5].prompt", line_of(text, "Put the uses")),
                     ("questions[0].choices[2].text", line_of(text, "wrong two, like")),
                     ("questions[5].items[2]", line_of(text, "items: ["))}
    [intro] = [p for p in found if p.key == "intro"]
    assert f"contains '14', an answer of question 'count' (line {line_of(text, 'id: count')})" in intro.message
    [choice] = [p for p in found if p.key.startswith("questions[0]")]
    assert "contains 'sch.compute_at()', an answer of question 'name'" in choice.message


def test_near_misses_of_an_answer_are_not_reported(write_file):
    text = (SAMPLE_QUIZ.replace("prompt: Put in order", "prompt: Use reverse_compute_at, 14.5 or 0.14 or 140 or 3,214")
            .replace("prompt: Which is right?", "prompt: Which of 1,024 or 6,422,528 bytes or 16x14 is right?"))
    assert problems(write_file, text) == []
    big = text.replace("answer: 14\n", "answer: 6422528\n").replace("answer: 196\n", "answer: 3211264\n")
    [problem] = problems(write_file, big)
    assert problem.key == "questions[0].prompt" and "contains '6,422,528'" in problem.message


def _single_longest_correct(qid, correct_at):
    return _single(qid, correct_at).replace(f"choice {correct_at} of {qid}\n        correct: true",
                                            f"choice {correct_at} of {qid}, the careful and complete one\n"
                                            "        correct: true")


def test_the_correct_choice_longest_in_most_single_choice_questions_is_a_warning(write_file):
    text = SAMPLE_QUIZ + _single_longest_correct("more", 2) + _single_longest_correct("again", 3)
    [problem] = problems(write_file, text)
    assert problem.severity == "warning" and problem.key == "questions"
    assert "the correct choice is the longest in 2 of 3 single-choice questions (more, again)" in problem.message
    # One of three is chance; a tie for longest does not count; two questions are too few.
    assert problems(write_file, SAMPLE_QUIZ + _single_longest_correct("more", 2) + _single("again", 3)) == []
    assert problems(write_file, SAMPLE_QUIZ + _single_longest_correct("more", 2)) == []


# A question like two-levels' old `relax-name`, whose id named its answer.
GRAPH_IR_QUESTION = """\
  - id: {qid}
    type: text
    prompt: What is the graph-level IR of TVM 0.27?
    accept: [Relax]
    patterns: ["(tvm\\\\.)?relax( ir)?"]
    feedback: look at the module lesson 1 imports
    explanation: Relax, after NNVM and Relay
"""


def test_an_id_that_names_a_text_answer_is_a_warning(write_file):
    text = SAMPLE_QUIZ + GRAPH_IR_QUESTION.format(qid="relax-name")
    [problem] = problems(write_file, text)
    assert problem.severity == "warning" and problem.key == "questions[6].id"
    assert problem.line == line_of(text, "id: relax-name")
    assert problem.message.startswith("the id 'relax-name' contains 'relax', a word of its accepted answer 'relax';")
    assert "rename the question after its topic, not its answer" in problem.message
    # The words of every accepted string count: compute_at's are compute and at (too short).
    renamed = SAMPLE_QUIZ.replace("  - id: name\n", "  - id: compute-primitive\n")
    assert [p.key for p in problems(write_file, renamed)] == ["questions[4].id"]


def test_a_neutral_id_is_not_reported(write_file):
    # 'ir' is too short to count and 'tvm' is in the prompt; 'relaxed' is not the word 'relax'.
    for qid in ("current-graph-ir", "tvm-graph-ir", "relaxed-graph"):
        assert problems(write_file, SAMPLE_QUIZ + GRAPH_IR_QUESTION.format(qid=qid)) == [], qid
    # A word the prompt shows adds nothing in the id (a prompt that shows the answer has its own warning).
    shown = GRAPH_IR_QUESTION.format(qid="relax-version").replace("What is", "Relax came after Relay; what is")
    assert [p.key for p in problems(write_file, SAMPLE_QUIZ + shown)] == ["questions[6].prompt"]


def test_an_id_that_names_a_correct_choice_or_a_whole_number_answer_is_a_warning(write_file):
    text = SAMPLE_QUIZ.replace("id: pick-many", "id: pick-yes").replace("id: count", "id: count-14")
    found = problems(write_file, text)
    assert [(p.key, p.severity) for p in found] == [("questions[1].id", "warning"), ("questions[2].id", "warning")]
    assert "the id 'pick-yes' contains 'yes', a word of its correct choice a that no wrong choice has;" in found[0].message
    assert "the id 'count-14' contains '14', its answer 14;" in found[1].message
    # A word that a wrong choice has too says nothing about which choice is right; 'right' is in the prompt.
    assert problems(write_file, SAMPLE_QUIZ.replace("id: pick-one", "id: pick-one-wrong")) == []
    assert problems(write_file, SAMPLE_QUIZ.replace("id: pick-one", "id: pick-right")) == []
