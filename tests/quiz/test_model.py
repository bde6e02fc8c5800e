from autograder.quiz.model import Question


def ordering(items, qid="order"):
    return Question.from_data({"id": qid, "type": "ordering", "prompt": "p", "explanation": "e",
                               "feedback": "f", "items": items})


def test_display_order_is_a_fixed_shuffle_that_never_gives_the_answer_away():
    for n in range(3, 9):
        for qid in ("a", "b", "order", "trace-order"):
            question = ordering([f"item {i}" for i in range(n)], qid)
            order = question.display_order()
            assert sorted(order) == list(range(n))
            assert order != list(range(n))
            assert order == question.display_order()


def test_the_ordering_key_lists_display_letters_in_the_correct_order():
    question = ordering(["first", "second", "third", "fourth"])
    shown = [question.items[i] for i in question.display_order()]
    by_letter = dict(zip("abcd", shown))
    assert [by_letter[letter] for letter in question.ordering_key()] == question.items


def test_choices_and_correct_letters():
    question = Question.from_data({"id": "q", "type": "multiple", "prompt": "p", "explanation": "e",
                                   "choices": [{"text": "x", "correct": True}, {"text": "y"},
                                               {"text": "z", "correct": True}]})
    assert question.correct_letters() == ["a", "c"]
    assert question.choices[1].correct is False
