"""The released-copy scheme, pinned by test vectors that quizzes/README.md repeats for the browser."""
import base64
import hashlib
import struct

import pytest

from autograder.quiz import hashing

SALT = "00112233445566778899aabbccddeeff"


def test_key_is_pbkdf2_of_the_documented_strings():
    expected = hashlib.pbkdf2_hmac("sha256", b"exact:402c000000000000",
                                   f"tvm-course-quiz/v2\n{SALT}\ntiles-per-axis\nanswer".encode(), 100_000, 32)
    assert hashing.ITERATIONS == 100_000
    assert hashing.derive_key(SALT, "tiles-per-axis", "answer", "exact:402c000000000000") == expected


def test_vectors_from_the_readme():
    canonical = hashing.canonical_number(14, None)
    assert canonical == "exact:402c000000000000"
    key = hashing.derive_key(SALT, "tiles-per-axis", "answer", canonical)
    assert key.hex() == "fef45b62671f3d2afd104be888ca745a5fb58c717888965edb21ab993a325c05"
    assert hashing.check_of(key) == "fd745a0b84e7d4ac2269fa21a00141bf28e1b251c6d5f06a5ea392ac5d3486b1"
    assert hashing.seal(key, "224 / 16 = 14") == "ifYC9+goESaa/kmayA=="


def test_keystream_is_sha256_of_key_and_big_endian_counter():
    key = bytes(range(32))
    text = "x" * 70  # three blocks
    stream = b"".join(hashlib.sha256(key + struct.pack(">I", i)).digest() for i in range(3))
    expected = bytes(a ^ b for a, b in zip(text.encode(), stream))
    assert base64.b64decode(hashing.seal(key, text)) == expected


@pytest.mark.parametrize("text", ["", "short", "non-ASCII: 16×16 tile, ≈1 KiB — ok", "long " * 40])
def test_seal_and_unseal_round_trip(text):
    key = hashing.derive_key(SALT, "q", "answer", "b")
    assert hashing.unseal(key, hashing.seal(key, text)) == text


def test_open_entry_opens_only_for_the_matching_answer():
    entries = [hashing.entry(SALT, "q", "answer", "b", "explained")]
    assert hashing.open_entry(entries, SALT, "q", "answer", "b") == "explained"
    assert hashing.open_entry(entries, SALT, "q", "answer", "c") is None
    assert hashing.open_entry(entries, SALT, "other-question", "answer", "b") is None
    assert hashing.open_entry(entries, "f" * 32, "q", "answer", "b") is None


def test_text_normalisation():
    assert hashing.normalize_text("  Sch.Compute_AT\t\n ()  ") == "sch.compute_at ()"
    assert hashing.normalize_text("Relax", case_sensitive=True) == "Relax"
    assert hashing.normalize_text("e\u0301") == "\u00e9"  # NFC


def test_exact_numbers_compare_as_doubles():
    assert hashing.canonical_exact(14) == hashing.canonical_exact(14.0)
    assert hashing.canonical_exact(-0.0) == hashing.canonical_exact(0)
    assert hashing.canonical_exact(14) != hashing.canonical_exact(14.000001)


def test_letters_are_sorted_for_sets_and_kept_for_orders():
    assert hashing.canonical_letters(["c", "a"], keep_order=False) == "a,c"
    assert hashing.canonical_letters(["c", "a"], keep_order=True) == "c,a"


@pytest.mark.parametrize("answer, tolerance", [(2.5, 0.1), (0.35, 0.05), (3211264, 1000), (-1.5, 0.2)])
def test_tolerance_cells_accept_the_interval_and_at_most_one_step_beyond(answer, tolerance):
    step = hashing.grid_step(tolerance)
    cells = set(hashing.accepted_cells(answer, tolerance))
    inside = [answer - tolerance + tolerance * i / 50 for i in range(101)]
    assert all(hashing.cell_index(x, step) in cells for x in inside)
    for beyond in (answer + tolerance + 1.01 * step, answer - tolerance - 1.01 * step):
        assert hashing.cell_index(beyond, step) not in cells


def test_released_step_reads_back_as_the_same_double():
    step = hashing.grid_step(0.1)
    assert float(hashing.format_step(step)) == step


def test_cells_too_far_from_zero_are_refused():
    with pytest.raises(ValueError, match="too far from zero"):
        hashing.cell_index(1e300, 1e-3)


def test_canonical_json_and_integrity():
    assert hashing.canonical_json({"b": 1, "a": ["é", {"d": 2, "c": 3}]}) == '{"a":["é",{"c":3,"d":2}],"b":1}'
    question = {"id": "q", "type": "single", "integrity": "ignored"}
    expected = hashlib.sha256(f'["{SALT}",{{"id":"q","type":"single"}}]'.encode()).hexdigest()
    assert hashing.question_integrity(SALT, question) == expected
    assert hashing.question_integrity("0" * 32, question) != expected


def test_the_readme_states_the_same_scheme_and_vectors():
    from .conftest import REPO

    readme = (REPO / "quizzes" / "README.md").read_text()
    key = hashing.derive_key(SALT, "tiles-per-axis", "answer", "exact:402c000000000000")
    for fact in (hashing.SCHEME, SALT, key.hex(), hashing.check_of(key), hashing.seal(key, "224 / 16 = 14"),
                 f"tol / {hashing.GRID_CELLS_PER_TOLERANCE}"):
        assert fact in readme
