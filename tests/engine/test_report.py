"""report.py: the Result's JSON, text and HTML forms."""
from __future__ import annotations

import json

import pytest

from autograder.engine.report import Check, Result


def sample() -> Result:
    return Result(
        problem="tile-fused-conv",
        target="cpu",
        status="passed",
        score=0.9,
        correct=True,
        speedup=1.96,
        checks=[Check("correctness", True, "ok"), Check("fusion", True, "1 KiB <tiles>")],
        messages=["ran on this machine"],
        speedup_spread={"median": 1.96, "q1": 1.9, "q3": 2.0, "minimum": 1.8, "maximum": 2.1, "cv": 0.02, "n": 5},
        student_output="hello\n",
    )


def test_json_has_the_contract_fields_and_round_trips():
    data = json.loads(sample().to_json())
    for key in ("problem", "target", "status", "score", "correct", "speedup", "checks", "messages"):
        assert key in data
    assert data["checks"][0] == {"name": "correctness", "passed": True, "message": "ok"}
    assert Result.from_dict(data) == sample()


def test_unknown_status_is_refused():
    with pytest.raises(ValueError):
        Result(problem="p", target="cpu", status="ok")


def test_text_shows_verdict_checks_speedup_and_output():
    text = sample().to_text()
    assert text.startswith("tile-fused-conv (cpu): PASSED  score 0.90")
    assert "1.96x" in text and "[ok  ] fusion" in text and "hello" in text


def test_html_escapes_what_it_shows():
    html = sample()._repr_html_()
    assert "PASSED" in html and "&lt;tiles&gt;" in html and "<tiles>" not in html


def test_lookup_of_a_check():
    assert sample().check("fusion").passed
    assert sample().check("speed") is None
    assert sample().passed


def test_a_rejections_message_is_shown_once_beside_its_failed_check():
    # evaluate puts a rejection's message in `messages` too (the JSON keeps both): shown once
    hint = "block 'pad_temp' is not bound to GPU threads: ..."
    rejected = Result(problem="gpu-fused-conv", target="cuda", status="rejected", score=0.0,
                      checks=[Check("interface", True, "ok"), Check("binding", False, hint)],
                      messages=[hint, "another note"])
    text = rejected.to_text()
    assert text.count("'pad_temp' is not bound") == 1 and "another note" in text
    html = rejected._repr_html_()
    assert html.count("&#x27;pad_temp&#x27; is not bound") == 1 and "another note" in html
    assert json.loads(rejected.to_json())["messages"] == [hint, "another note"]
