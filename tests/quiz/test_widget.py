"""The notebook widget: driven in this process, and rendered in a real Jupyter kernel."""
import json

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.quiz.key import answer_key
from autograder.quiz.loading import load_instructor
from autograder.quiz.widget import build_widget, to_html

from .conftest import COURSE_QUIZZES, REPO


def test_answering_and_checking_updates_feedback_and_the_running_score(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    key = answer_key(quiz)
    widget = build_widget(sample_quiz_file)
    assert widget.score.value == "0 / 6 correct"
    widget.view("pick-one").set_answer("c")
    widget.view("pick-one").check_button.click()
    assert "two is not it either" in widget.view("pick-one").feedback.value
    assert widget.score.value == "0 / 6 correct"
    for view in widget.views:
        view.set_answer(key[view.question.id])
        view.check_button.click()
    assert widget.score.value == "6 / 6 correct"
    assert "224 / 16" in widget.view("count").feedback.value


def test_unreadable_input_is_explained_in_place(sample_quiz_file):
    widget = build_widget(sample_quiz_file)
    view = widget.view("count")
    view.input.value = "fourteen"
    view.check_button.click()
    assert "type a number (in tiles)" in view.feedback.value
    assert widget.score.value == "0 / 6 correct"


def test_a_released_copy_renders_the_same_questions(tmp_path, sample_quiz_file):
    from autograder.quiz.release import release, write_released

    quiz, _ = load_instructor(sample_quiz_file)
    write_released(release(quiz), tmp_path / "r.json")
    widget = build_widget(tmp_path / "r.json")
    assert [v.question.id for v in widget.views] == [q.id for q in quiz.questions]
    assert widget.view("pick-one").input.options == (("a) wrong one", "a"), ("b) right one", "b"), ("c) wrong two", "c"))


def test_a_question_edited_after_release_is_shown_but_not_scored(tmp_path, sample_quiz_file):
    """As in the terminal and on the website: the question stays, marked, and leaves the score."""
    import yaml

    from autograder.quiz.release import release, write_released

    quiz, _ = load_instructor(sample_quiz_file)
    out = tmp_path / "r.yaml"
    write_released(release(quiz), out)
    data = yaml.safe_load(out.read_text())
    data["questions"][0]["choices"][0] = "wrong one (now looks right)"
    out.write_text(yaml.safe_dump(data))
    widget = build_widget(out)
    assert [v.question.id for v in widget.views] == [q.id for q in quiz.questions]
    view = widget.view("pick-one")
    assert view.check_button.disabled and "changed after the quiz was released" in view.feedback.value
    assert widget.score.value == "0 / 5 correct"
    view.set_answer("b")
    assert view.check().status == "edited"
    assert widget.score.value == "0 / 5 correct"
    widget.view("count").set_answer(14)
    widget.view("count").check_button.click()
    assert widget.score.value == "1 / 5 correct"


def test_prompt_text_becomes_safe_html():
    assert to_html("use `split` <now>\n\nnext") == "<p>use <code>split</code> &lt;now&gt;</p><p>next</p>"


NOTEBOOK_CODE = """
import json
import autograder.quiz as quiz_api
from autograder.quiz.key import answer_key
from autograder.quiz.loading import load_instructor

path = {path!r}
quiz_api.show(path)
widget = quiz_api.build_widget(path)
key = answer_key(load_instructor(path)[0])
states = [widget.score.value]
widget.view("tiles-per-channel").set_answer(14)
widget.view("tiles-per-channel").check_button.click()
wrong_feedback = widget.view("tiles-per-channel").feedback.value
for view in widget.views:
    if view.question.type != "code":
        view.set_answer(key[view.question.id])
        view.check_button.click()
states.append(widget.score.value)
print(json.dumps({{"states": states, "wrong_feedback": wrong_feedback, "count": len(widget.views)}}))
"""


@pytest.mark.slow
def test_the_widget_in_a_real_jupyter_kernel():
    path = str(next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(NOTEBOOK_CODE.format(path=path)))
    NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = notebook.cells[0].outputs
    widget_views = [o for o in outputs if o.output_type == "display_data"
                    and "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(widget_views) == 1, "show() renders exactly one widget view"
    printed = json.loads(next(o.text for o in outputs if o.output_type == "stream"))
    assert printed["count"] == 11
    assert printed["states"] == ["0 / 11 correct", "10 / 11 correct"]
    assert "rows of tiles times columns of tiles" in printed["wrong_feedback"]
