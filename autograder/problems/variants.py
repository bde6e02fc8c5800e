"""A workload per student: the shapes a student schedules and does the tile arithmetic on.

PrairieLearn-style: a student's variant is one of VARIANTS, picked by an HMAC of their student
id under the course's secret, so that it cannot be predicted without the secret, is the same
every time it is derived, and one student's numbers are not another's. The secret lives with
the instructor (the TVM_COURSE_SECRET environment variable, or the file `variant-secret` in
the course root, kept out of git and out of every release).

Students never hold the secret. At release, the course writes `variants.json` beside the
assignment's notebook: each student's variant under a digest of their student id (so the file
is no class list). The notebook finds its student's entry there; the instructor's grader
derives the variant from the secret again, so editing the file changes what a self-check
shows, never a grade.

Every variant keeps the lessons' story true by construction (the tests walk all of them):
- the image is a multiple of 32 in each dimension, so the journal's 16x16 tiles, the 1x16
  vectors of the yardstick and every tile the arithmetic asks about divide it exactly;
- the output channels are a multiple of 4, so 4-channel register blocking divides them;
- the 3x3 kernel, stride 1, padding 1 and 3 input channels are the journal's;
- no answer of the tile arithmetic equals the journal's (224x224, 16 channels, 16x16 tiles),
  which the quizzes and lessons compute in the open: no height or width is a multiple of 7
  (224 = 7 x 32), and no tile has the journal's 256 pixels;
- the work is within 1/4x to 2x the journal's, so a grading takes about as long.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path
from typing import Mapping

from .workload import ConvShape
from ..errors import ExitCode, TvmCourseError

SECRET_ENV = "TVM_COURSE_SECRET"
SECRET_FILE = "variant-secret"  # in the course root, owner-only, ignored by git
STUDENT_ENV = "TVM_COURSE_STUDENT"
TABLE_FILE = "variants.json"
TABLE_FORMAT = "tvm-course-variants/1"
MIN_SECRET_CHARS = 16
# nbgrader's student ids name folders (submitted/STUDENT/...): letters, digits and . _ @ + -
STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")

# Which id a student gives: the one the course's LMS names their uploads by (lms/roster.py).
WHICH_ID = ("Your id is the one your course's LMS uses: on Canvas your Canvas user id, a number (open Account > "
            "Profile, or People and your own name: it ends the page's address, .../users/NUMBER; or the \"id\" that "
            "https://YOUR-CANVAS/api/v1/users/self shows), on Moodle your email address (any case)")

HEIGHTS = WIDTHS = (160, 192, 256)
OUT_CHANNELS = (8, 12, 20, 24)
TILES = ((8, 8), (8, 16), (16, 8), (16, 32), (32, 16), (32, 32))


class VariantError(ValueError, TvmCourseError):
    """No variant can be given: a missing or malformed student id, no secret, no table entry.
    The message says what to do."""

    exit_code = ExitCode.USAGE_ERROR


@dataclass(frozen=True)
class Variant:
    """One student's workload, and the tile their tile arithmetic is about."""

    height: int
    width: int
    out_channels: int
    tile_rows: int
    tile_cols: int
    in_channels: int = 3
    kernel: int = 3

    @property
    def shape(self) -> ConvShape:
        return ConvShape(in_channels=self.in_channels, height=self.height, width=self.width,
                         out_channels=self.out_channels, kernel=self.kernel, padding=self.kernel // 2)

    def constants(self) -> dict[str, int]:
        """The names an answer cell may use for this variant's sizes."""
        return {"HEIGHT": self.height, "WIDTH": self.width, "IN_CHANNELS": self.in_channels,
                "OUT_CHANNELS": self.out_channels, "KERNEL": self.kernel,
                "TILE_ROWS": self.tile_rows, "TILE_COLS": self.tile_cols}

    def describe(self) -> str:
        return (f"input 1x{self.in_channels}x{self.height}x{self.width}, {self.out_channels} output channels, "
                f"{self.kernel}x{self.kernel} kernel (stride 1, padding {self.kernel // 2}); "
                f"the tile arithmetic is about {self.tile_rows}x{self.tile_cols} tiles")

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> "Variant":
        """A variant read from outside the grader (a table, a Result): only one of VARIANTS, or
        the journal's, is accepted."""
        if not isinstance(data, Mapping) or set(data) != set(JOURNAL.to_dict()):
            raise VariantError(f"not a variant: {str(data)[:200]}")
        if not all(type(v) is int for v in data.values()):
            raise VariantError(f"not a variant (sizes must be integers): {str(dict(data))[:200]}")
        variant = cls(**data)
        if variant not in _KNOWN:
            raise VariantError(f"not one of the course's variants: {variant.describe()}")
        return variant

    def __str__(self) -> str:
        return self.describe()


# The journal's workload: the lessons, the quizzes, and grading without a student id.
JOURNAL = Variant(height=224, width=224, out_channels=16, tile_rows=16, tile_cols=16)
VARIANTS: tuple[Variant, ...] = tuple(
    Variant(height=h, width=w, out_channels=k, tile_rows=tr, tile_cols=tc)
    for h, w, k, (tr, tc) in product(HEIGHTS, WIDTHS, OUT_CHANNELS, TILES)
)
_KNOWN = frozenset(VARIANTS) | {JOURNAL}


def check_student_id(student: object) -> str:
    """`student` if it is a student id nbgrader could use; else VariantError, saying why."""
    if not isinstance(student, str) or not student.strip():
        raise VariantError("no student id given")
    if not STUDENT_ID.fullmatch(student):
        shown = student if len(student) <= 40 else student[:37] + "..."
        raise VariantError(f"{shown!r} is not a student id (letters, digits and . _ @ + -, at most 100, starting with a letter or digit)")
    return student


def variant_for(student: str, secret: bytes) -> Variant:
    """The student's variant under the course secret."""
    digest = hmac.new(secret, b"tvm-course variant\0" + check_student_id(student).encode(), hashlib.sha256).digest()
    return VARIANTS[int.from_bytes(digest[:8], "big") % len(VARIANTS)]


# --- the course secret (instructor side) ---------------------------------------------------


def secret_path(course_root: str | Path) -> Path:
    return Path(course_root) / SECRET_FILE


def course_secret(course_root: str | Path | None = None, environ: Mapping[str, str] = os.environ) -> bytes:
    """The secret variants are derived with: $TVM_COURSE_SECRET, else COURSE_ROOT/variant-secret."""
    text = environ.get(SECRET_ENV)
    where = f"${SECRET_ENV}"
    if not text and course_root is not None:
        path = secret_path(course_root)
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            text = None
        except OSError as error:
            raise VariantError(f"cannot read the course secret {path}: {error}") from None
    if not text:
        hint = f"run `tvm-course variants init` to create {secret_path(course_root)}, or " if course_root is not None else ""
        raise VariantError(f"no course secret for the students' variants: {hint}set {SECRET_ENV} (at least {MIN_SECRET_CHARS} characters)")
    if len(text) < MIN_SECRET_CHARS:
        raise VariantError(f"the course secret in {where} is too short ({len(text)} characters, at least {MIN_SECRET_CHARS})")
    return text.encode()


def create_secret(course_root: str | Path) -> Path:
    """Write a new random secret, readable by its owner only; an existing one is kept (changing
    it would change every student's variant)."""
    path = secret_path(course_root)
    if path.exists():
        raise VariantError(f"{path} exists: keep it (a new secret gives every student a new variant), or remove it first")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_hex(32) + "\n")
    return path


# --- the released table (student side) -----------------------------------------------------


def table_key(student: str) -> str:
    """Where a student's variant sits in the released table: a digest of their id, so the table
    lists no names (whoever knows an id can still find its variant: it is no secret)."""
    return hashlib.sha256(b"tvm-course student\0" + check_student_id(student).encode()).hexdigest()[:20]


def variant_table(students: list[str], secret: bytes) -> dict:
    return {"format": TABLE_FORMAT, "variants": {table_key(s): variant_for(s, secret).to_dict() for s in sorted(set(students))}}


def write_table(path: str | Path, students: list[str], secret: bytes) -> Path:
    path = Path(path)
    path.write_text(json.dumps(variant_table(students, secret), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def current_student(environ: Mapping[str, str] = os.environ) -> str | None:
    """The student this notebook belongs to: $TVM_COURSE_STUDENT, else JupyterHub's user name."""
    return environ.get(STUDENT_ENV) or environ.get("JUPYTERHUB_USER") or None


def student_variant(student: str | None = None, table: str | Path = TABLE_FILE, environ: Mapping[str, str] = os.environ) -> tuple[str, Variant]:
    """(student id, variant) for a student's notebook, from the released table; VariantError
    with what to do when the id or the table entry is missing."""
    student = student if student is not None else current_student(environ)
    if not student:
        raise VariantError(
            "this assignment gives every student their own shapes, and needs your student id: set it with "
            f"`%env {STUDENT_ENV}=your-id` in a cell (or `export {STUDENT_ENV}=your-id` before starting Jupyter); "
            f"on JupyterHub your user name is used. {WHICH_ID}"
        )
    check_student_id(student)
    try:
        data = json.loads(Path(table).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VariantError(f"{table} is missing: it comes with the assignment (fetch it again, or ask your instructor)") from None
    except (OSError, ValueError) as error:
        raise VariantError(f"cannot read {table}: {error}") from None
    entries = data.get("variants") if isinstance(data, dict) and data.get("format") == TABLE_FORMAT else None
    if not isinstance(entries, dict):
        raise VariantError(f"{table} is not a variants table ({TABLE_FORMAT})")
    entry = entries.get(table_key(student))
    if entry is None and "@" in student:  # Moodle classes are enrolled under the email, lower-cased
        entry = entries.get(table_key(student.lower()))
        student = student.lower() if entry is not None else student
    if entry is None:
        raise VariantError(f"{table} has no variant for student {student!r}: check the id ({WHICH_ID}), or ask your "
                           "instructor to add you and release the assignment again")
    return student, Variant.from_dict(entry)
