"""autograder/lessons/predictions.py: predict-then-run checks that never stop a lesson."""
import pytest

from autograder.lessons import predictions


def said(check, *arguments) -> str:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert check(*arguments) is None  # prints, so that a notebook cell shows no extra Out[]
    return out.getvalue()


def test_an_unanswered_prediction_says_what_to_write():
    assert "replace None with a number" in said(predictions.number, None, 1.3, "speedup")
    assert "'faster' or 'slower'" in said(predictions.choice, None, "slower", ("faster", "slower"), "outcome")


@pytest.mark.parametrize(
    "guess, says",
    [(1.3, "close (+0%)"), (0.9, "too low (-31%)"), (2.0, "too high (+54%)"), ("1.3", "should be a number"),
     (float("nan"), "should be a number"), (True, "should be a number")],
)
def test_a_number_is_compared_with_the_measurement(guess, says):
    assert says in said(predictions.number, guess, 1.3, "speedup")


def test_a_choice_is_compared_with_the_measurement():
    options = ("faster", "slower")
    assert "that is what this machine measured" in said(predictions.choice, " Slower", "slower", options, "outcome")
    assert "this machine measured 'slower'" in said(predictions.choice, "faster", "slower", options, "outcome")
    assert "should be one of" in said(predictions.choice, "same", "slower", options, "outcome")
