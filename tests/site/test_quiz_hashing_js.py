"""quiz-hashing.js in a real Chromium gives the same hashes, texts and canonical forms as hashing.py,
with WebCrypto's PBKDF2 and SHA-256 and with its own plain-JavaScript ones (for pages served over
plain http)."""
from __future__ import annotations

import json

import pytest

from autograder.quiz import hashing
from autograder.quiz.answers import AnswerError, parse_answer_text
from autograder.quiz.model import ReleasedQuestion
from autograder.site.build import STATIC_DIR
from autograder.site.quiz_html import released_document

from site_test_course import REPO


@pytest.fixture(scope="module", params=["webcrypto", "plain-js"])
def js(request, browser, tmp_path_factory):
    """A page with quiz-hashing.js loaded from file:// (a secure context, so WebCrypto is there),
    and the same page with WebCrypto taken away, as on a page served over plain http."""
    page_file = tmp_path_factory.mktemp("hashing-page") / "hashing.html"
    page_file.write_text(f'<!DOCTYPE html><meta charset="utf-8"><title>hashing</title>'
                         f'<script src="{(STATIC_DIR / "quiz-hashing.js").as_uri()}"></script>', encoding="utf-8")
    context = browser.new_context()
    if request.param == "plain-js":
        context.add_init_script("Object.defineProperty(Crypto.prototype, 'subtle', {get: () => undefined});")
    page = context.new_page()
    page.goto(page_file.as_uri())
    assert page.evaluate("TvmCourseQuizHashing.available()")
    assert page.evaluate("TvmCourseQuizHashing.webCrypto()") == (request.param == "webcrypto")

    def call(expression: str, *args):
        """Evaluate `(H, ...args) => expression` in the page; errors come back as {'error': message}."""
        return page.evaluate(
            "async ([body, args]) => { const H = TvmCourseQuizHashing;"
            " try { return {value: await (new Function('H', 'args', 'return (async () => ' + body + ')()'))(H, args)}; }"
            " catch (e) { return {error: String(e.message || e)}; } }",
            [expression, list(args)])

    yield call
    context.close()


def test_sha256_of_every_padding_case(js):
    """Messages around the 55/56/64-byte padding boundaries and over several blocks."""
    import hashlib
    import random

    rng = random.Random(14)
    messages = [bytes(rng.randrange(256) for _ in range(n)) for n in (0, 1, 3, 31, 32, 55, 56, 57, 63, 64, 65,
                                                                          119, 120, 127, 128, 129, 1000, 4097)]
    result = js("Promise.all(args[0].map(m => H.sha256(new Uint8Array(m)).then(H.hex)))",
                [list(m) for m in messages])
    assert result == {"value": [hashlib.sha256(m).hexdigest() for m in messages]}


def test_undecorated_texts_match_python(js):
    from autograder.quiz.checking import undecorated_texts

    samples = ["`compute_at`", "compute_at.", "`compute_at`.", "``ranks``;", "etc.", "`etc.`", "a . b", ".5", "`",
               "...", "rank ?!", "c++", "`sch.compute_at()`,"]
    assert js("args[0].map(t => H.undecoratedTexts(t))", samples) == {
        "value": [list(undecorated_texts(t)) for t in samples]}


KEY_CASES = [
    ("0123456789abcdef0123456789abcdef", "why-two-levels", "answer", "a"),
    ("salt", "fusion-saves-bytes", "answer", "exact:41588000000000000"),
    ("s\u00e4lt", "q-\u00fcnicode", "choice", "c"),
    ("", "", "answer", ""),
    ("salt", "multi\nline", "answer", "a,b,c"),
]


@pytest.mark.parametrize("salt,qid,purpose,canonical", KEY_CASES)
def test_key_and_check(js, salt, qid, purpose, canonical):
    key = hashing.derive_key(salt, qid, purpose, canonical)
    result = js("H.deriveKey(args[0], args[1], args[2], args[3]).then(k => H.checkOf(k).then(c => [H.hex(k), c]))",
                salt, qid, purpose, canonical)
    assert result == {"value": [key.hex(), hashing.check_of(key)]}


TEXTS = ["", "x", "a" * 31, "b" * 32, "c" * 33, "224 / 16 = 14 tiles; `split` then `reorder`.\n\nSecond paragraph.",
         "caf\u00e9 \u2014 \u00fcber \U0001F680 " * 9]


@pytest.mark.parametrize("text", TEXTS, ids=lambda t: f"{len(t)} chars")
def test_sealed_texts_open(js, text):
    entries = [hashing.entry("salt", "q", "answer", "right", text), hashing.entry("salt", "q", "answer", "other", "no")]
    assert js("H.openEntry(args[0], 'salt', 'q', 'answer', 'right')", entries) == {"value": text}
    assert js("H.openEntry(args[0], 'salt', 'q', 'answer', 'wrong')", entries) == {"value": None}


NORMALIZE = ["  Ranks ", "RANKS\t\n", "reverse_compute_at", "a\u00a0b", "a \u00a0 b", "Cafe\u0301", "\u03a3\u0391\u03a3",
             "\u03a3 \u039f\u0394\u039f\u03a3.", "\u03a3",
             "\u0130stanbul", "STRA\u00dfE", "x\x0by\x0cz", "x\x1cy", "tvm.Relax  IR", "  ", "\u212b"]


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_normalize_text(js, case_sensitive):
    expected = [hashing.normalize_text(t, case_sensitive) for t in NORMALIZE]
    assert js("args[0].map(t => H.normalizeText(t, args[1]))", NORMALIZE, case_sensitive) == {"value": expected}


def test_canonical_letters(js):
    cases = [(["c", "a"], False), (["c", "a", "b"], True), (["a"], False), ([], False)]
    expected = [hashing.canonical_letters(letters, keep) for letters, keep in cases]
    assert js("args[0].map(([l, k]) => H.canonicalLetters(l, k))", cases) == {"value": expected}


EXACT = [0.0, -0.0, 1024.0, 2.56, 0.1 + 0.2, 1e-300, 1.7976931348623157e308, -3.5, 6422528.0]


def test_canonical_exact(js):
    expected = [hashing.canonical_exact(v) for v in EXACT]
    # -0.0 travels to the page as 0 (JSON has no negative zero), so it is made in the page as well.
    assert js("args[0].map(v => H.canonicalExact(v)).concat([H.canonicalExact(-0)])", EXACT) == {
        "value": expected + [hashing.canonical_exact(-0.0)]}


@pytest.mark.parametrize("tolerance", [0.05, 0.1, 0.5, 1e-3, 3.0])
def test_canonical_number_on_the_grid(js, tolerance):
    step_text = hashing.format_step(hashing.grid_step(tolerance))
    values = [2.56, 2.51, 2.5099999999, 2.61, 2.6100000001, -3.7, 0.0, 1e-9, 14.0, 196.0, 1024.0, 0.46 / 0.18,
              -1e-12, 123456.789]
    expected = [hashing.canonical_number(v, float(step_text)) for v in values]
    assert js("args[0].map(v => H.canonicalNumber(v, parseFloat(args[1])))", values, step_text) == {"value": expected}
    # The released copy accepts the grid cells of [answer - tolerance, answer + tolerance]; the page
    # must land inside them at both ends and outside them a few cells further out.
    answer = 2.56
    accepted = {hashing.canonical_cell(c) for c in hashing.accepted_cells(answer, tolerance)}
    edges = [answer - tolerance, answer + tolerance, answer - tolerance * 1.25, answer + tolerance * 1.25]
    in_page = js("args[0].map(v => H.canonicalNumber(v, parseFloat(args[1])))", edges, step_text)["value"]
    assert [c in accepted for c in in_page] == [True, True, False, False]


def test_numbers_too_far_from_zero_are_refused_in_both(js):
    step = hashing.grid_step(1e-9)
    with pytest.raises(ValueError, match="too far from zero"):
        hashing.canonical_number(1e10, step)
    assert "too far from zero" in js("H.canonicalNumber(1e10, args[0])", step)["error"]
    assert "too far from zero" in js("H.canonicalNumber(1e300, args[0])", step)["error"]


TYPED_NUMBERS = ["1024", " 1,024 ", "1024 bytes", "1024bytes", "1024 BYTES", "1e3", ".5", "5.", "+3", "-0", "1,02",
                 "abc", "1e400", "\u00a01024\u00a0", "3,211,264", "1 024", "0x10", "bytes", "12 bytes bytes", "١٠", "\uff11\uff14",
                 "\uff11,\uff10\uff12\uff14"]


def test_typed_numbers_read_as_in_the_terminal(js):
    question = ReleasedQuestion({"id": "n", "type": "numeric", "prompt": "?", "unit": "bytes"})
    expected = []
    for text in TYPED_NUMBERS:
        try:
            expected.append({"value": parse_answer_text(question, text)})
        except AnswerError:
            expected.append("refused")
    in_page = js("args[0].map(t => { try { return {value: H.parseNumber(t, 'bytes')}; } catch (e) { return 'refused'; } })",
                 TYPED_NUMBERS)["value"]
    # Both read ASCII digits only: "١٠" and "１４" are refused alike.
    assert in_page == expected
    assert expected[-3:] == ["refused"] * 3


def test_strip_matches_python(js):
    spaces = "".join(chr(c) for c in range(0x3100) if chr(c).isspace())
    samples = [spaces + "x" + spaces, " x ", "\ufeffx", "x\u200by"]
    assert js("args[0].map(t => H.pythonStrip(t))", samples) == {"value": [s.strip() for s in samples]}


@pytest.mark.parametrize("quiz", sorted((REPO / "quizzes").glob("*.yaml")), ids=lambda p: p.stem)
def test_integrity_of_a_real_released_quiz(js, quiz):
    document = released_document(quiz)
    expected = [hashing.question_integrity(document["released"]["salt"], q) for q in document["questions"]]
    assert expected == [q["integrity"] for q in document["questions"]]
    result = js("Promise.all(args[0].questions.map(q => H.questionIntegrity(args[0].released.salt, q)))"
                ".then(qs => H.headerIntegrity(args[0]).then(h => [qs, h]))", document)
    assert result == {"value": [expected, document["released"]["integrity"]]}


def test_canonical_json_matches_python(js):
    data = {"b": [1, "two", None, True, False], "a": {"z": "\u00e9\n\t\"\\", "y": "\x01\x1f"}, "\u00e9": 3,
            "ctrl": "\x7f</script>"}
    assert js("H.canonicalJson(args[0])", data) == {"value": hashing.canonical_json(data)}
    assert json.loads(hashing.canonical_json(data)) == data


def test_the_documented_vector(js):
    """The worked example in quizzes/README.md (the contract for browser implementations)."""
    salt, qid = "00112233445566778899aabbccddeeff", "tiles-per-axis"
    result = js("(async () => { const c = H.canonicalNumber(14, null);"
                " const k = await H.deriveKey(args[0], args[1], 'answer', c);"
                " return [c, H.hex(k), await H.checkOf(k), await H.unseal(k, 'ifYC9+goESaa/kmayA==')]; })()", salt, qid)
    assert result == {"value": ["exact:402c000000000000",
                                "fef45b62671f3d2afd104be888ca745a5fb58c717888965edb21ab993a325c05",
                                "fd745a0b84e7d4ac2269fa21a00141bf28e1b251c6d5f06a5ea392ac5d3486b1",
                                "224 / 16 = 14"]}
    key = hashing.derive_key(salt, qid, "answer", "exact:402c000000000000")
    assert hashing.seal(key, "224 / 16 = 14") == "ifYC9+goESaa/kmayA=="


@pytest.mark.parametrize("password,salt,iterations,length", [
    (b"", b"", 1, 32), (b"pw", b"salt", 2, 32), (b"k" * 64, b"s", 3, 20), (b"long key " * 9, b"x" * 100, 5, 70),
    (b"canonical", b"tvm-course-quiz/v2\nsalt\nq\nanswer", 1000, 32)])
def test_plain_pbkdf2_matches_python(js, password, salt, iterations, length):
    """The plain-JavaScript PBKDF2 (pads' states computed once) against hashlib, over the HMAC key's
    edge cases (empty, one block, longer than a block) and outputs of more than one block."""
    import hashlib

    result = js("H.hex(H.pbkdf2Plain(new Uint8Array(args[0]), new Uint8Array(args[1]), args[2], args[3]))",
                list(password), list(salt), iterations, length)
    assert result == {"value": hashlib.pbkdf2_hmac("sha256", password, salt, iterations, length).hex()}


def test_a_guess_costs_a_slow_key(js):
    """What makes guessing numbers expensive: each derived key takes the scheme's iterations."""
    elapsed = js("(async () => { const t = performance.now();"
                 " for (let i = 0; i < 3; i++) await H.deriveKey('salt', 'q', 'answer', 'exact:' + i);"
                 " return (performance.now() - t) / 3; })()")["value"]
    assert js("H.ITERATIONS") == {"value": hashing.ITERATIONS} and hashing.ITERATIONS >= 100_000
    assert elapsed > 5, f"a key took {elapsed:.1f} ms: no slower than a plain hash"
