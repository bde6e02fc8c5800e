import pytest

from autograder.quiz.patterns import MAX_EXPANSIONS, PatternError, expand


def test_optional_group_and_escapes():
    assert expand(r"(sch\.)?compute_at") == ["compute_at", "sch.compute_at"]
    assert expand(r"a\(b\)") == ["a(b)"]


def test_alternatives_multiply_out_and_nest():
    assert len(expand("(one|1) (tile|tiles) per (axis|side)")) == 8
    assert expand("a((b|c)d)?e") == ["ae", "abde", "acde"]
    assert expand("x|y") == ["x", "y"]


def test_duplicates_are_removed_in_order():
    assert expand("(a|a)b") == ["ab"]


@pytest.mark.parametrize("pattern, message", [
    ("(a", "unclosed"),
    ("a)", "unmatched"),
    ("?a", "must follow a group"),
    ("a\\", "backslash"),
])
def test_malformed_patterns_say_what_is_wrong(pattern, message):
    with pytest.raises(PatternError, match=message):
        expand(pattern)


def test_patterns_that_match_too_many_strings_are_refused():
    pattern = "(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)(a|b)"  # 512 strings
    assert 2**9 > MAX_EXPANSIONS
    with pytest.raises(PatternError, match="more than"):
        expand(pattern)
