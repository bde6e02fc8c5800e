"""A notebook file that came from outside, decoded without trusting its bytes.

Editors write notebooks in more ways than nbformat's reader accepts: a UTF-8 byte order mark,
UTF-16 or UTF-32 text, a lone surrogate escaped in a string (valid JSON that no encoder can
write back), metadata nested hundreds of levels deep (valid JSON that makes every recursive
reader fail). `read_json_file` turns any of these into a plain JSON object, or raises
NotANotebook with a cause short enough to show a student and an instructor:

- at most MAX_NOTEBOOK_BYTES are read; a symbolic link or anything but a regular file is refused;
- the outputs of its code cells are dropped: they are not the student's answer (grading runs the
  code again), and a notebook is graded the same with or without them. A file larger than
  IN_PROCESS_BYTES is parsed in a child process whose address space is limited to
  PARSE_MEMORY_BYTES (parsing JSON takes up to ~400 times the text's size: a 32 MiB file was
  seen to need 12 GB), and only what is left without outputs, at most MAX_KEPT_BYTES, comes
  back to the grader;
- the encoding is detected as JSON's own rule has it (a BOM, else the pattern of zero bytes:
  json.detect_encoding); bytes that are not valid in it become U+FFFD, never an error;
- containers nested deeper than MAX_DEPTH are replaced by null before the text is parsed, so no
  later step recurses that deep (what is cut is metadata or outputs: no notebook field that
  grading reads is that deep);
- NaN and Infinity (which Python's json accepts) become null, lone surrogates U+FFFD;
- anything but a JSON object is refused ("not a notebook: the file is a JSON list").

Nothing here knows about nbformat or nbgrader: what the object means is decided by the reader of it.
"""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from ..errors import TvmCourseError

# What is read of a file at all: a notebook whose outputs hold images is still graded on its code.
MAX_NOTEBOOK_BYTES = 256 * 1024 * 1024
# Up to this size a file is parsed in the grader's own process (worst case ~100 MB of memory).
IN_PROCESS_BYTES = 256 * 1024
# Address space of the child that parses a larger file (the interpreter itself takes ~30 MB).
PARSE_MEMORY_BYTES = 3 * 1024**3
PARSE_TIMEOUT_S = 120
# The notebook without its outputs, as the child hands it back: cells of code and text.
MAX_KEPT_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64  # nbformat's own structure is under 10 deep; widget state and JSON outputs add a few

# A JSON string (escapes included) or a bracket: scanned to find the depth of every container.
# The string's body is written unrolled (a run of plain characters, then escape and run again):
# the same strings as (?:[^"\\]|\\.)*, but matched a run at a time, not a character at a time:
# 20x faster on a notebook whose outputs hold megabytes of base64 (the other form took 7 s of
# CPU to scan an 80 MiB one, on every read of it).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class NotANotebook(ValueError, TvmCourseError):
    """The file cannot be read as a notebook; the message says why, in words for the student."""


def read_json_file(path: str | os.PathLike) -> dict:
    """The JSON object in the file at `path`, decoded as described above, without outputs."""
    data = read_bounded(path)
    if len(data) <= IN_PROCESS_BYTES:
        return without_outputs(decode_json(data))
    return _decode_in_child(data)


def without_outputs(value: dict) -> dict:
    """A notebook's JSON object with every code cell's outputs emptied (nothing else changes)."""
    cells = value.get("cells")
    if isinstance(cells, list):
        for cell in cells:
            if isinstance(cell, dict) and isinstance(cell.get("outputs"), list):
                cell["outputs"] = []
    return value


def _decode_in_child(data: bytes) -> dict:
    try:
        done = subprocess.run([sys.executable, "-m", __name__, str(PARSE_MEMORY_BYTES)], input=data, capture_output=True, timeout=PARSE_TIMEOUT_S,
                              env={k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH")})
    except subprocess.TimeoutExpired:
        raise NotANotebook(f"the file could not be read within {PARSE_TIMEOUT_S} s") from None
    if done.returncode == _OUT_OF_MEMORY:
        raise NotANotebook(f"the file's JSON needs more than the {PARSE_MEMORY_BYTES >> 20} MiB of memory the "
                           "grader gives to reading a notebook (millions of tiny values?)")
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise RuntimeError(f"the notebook reader failed (exit code {done.returncode}): {tail[0][:300]}")
    if len(done.stdout) > MAX_KEPT_BYTES:
        raise RuntimeError("the notebook reader sent back more than it may")
    reply = json.loads(done.stdout)  # our own JSON, bounded in size and depth
    if "refused" in reply:
        raise NotANotebook(str(reply["refused"]))
    return reply["notebook"]


_OUT_OF_MEMORY = 3


def _child_main() -> None:
    """In the child: the notebook on stdin, parsed within the memory given, back on stdout
    without outputs ({"notebook": ...}), or {"refused": why}."""
    import resource

    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        data = sys.stdin.buffer.read(MAX_NOTEBOOK_BYTES + 1)
        try:
            text = json.dumps({"notebook": without_outputs(decode_json(data))})
        except NotANotebook as why:
            text = json.dumps({"refused": str(why)})
        if len(text) > MAX_KEPT_BYTES:  # the grader reads no more than this of the reply
            text = json.dumps({"refused": f"its cells, without outputs, are over the {MAX_KEPT_BYTES / 2**20:g} MiB "
                                          "a notebook's code and text may be"})
        sys.stdout.buffer.write(text.encode("ascii"))
    except MemoryError:
        os._exit(_OUT_OF_MEMORY)


def read_bounded(path: str | os.PathLike) -> bytes:
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError as error:
        raise NotANotebook(f"the file cannot be read ({error.strerror or error.__class__.__name__})") from None
    if stat.S_ISLNK(info.st_mode):
        raise NotANotebook("not a regular file (a symbolic link)")
    if not stat.S_ISREG(info.st_mode):
        raise NotANotebook("not a regular file")
    if info.st_size > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(_too_large(info.st_size))
    try:
        with open(path, "rb") as handle:  # the size may have changed since lstat
            data = handle.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as error:
        raise NotANotebook(f"the file cannot be read ({error.strerror or error.__class__.__name__})") from None
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(_too_large(len(data)))
    return data


def decode_json(data: bytes) -> dict:
    """The JSON object encoded in `data`; NotANotebook when there is none."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotANotebook(_too_large(len(data)))
    if not data.strip():
        raise NotANotebook("the file is empty")
    text = decode_text(data)
    try:
        value = json.loads(_prune(text), parse_constant=lambda name: None)
    except RecursionError:  # _prune bounds the depth; this is a second line, not the expected path
        raise NotANotebook(f"the file's JSON is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as error:
        raise NotANotebook(f"not a notebook: not JSON (line {getattr(error, 'lineno', '?')})") from None
    if not isinstance(value, dict):
        raise NotANotebook(f"not a notebook: the file is a JSON {_kind(value)}")
    return _replace_surrogates(value)


def decode_text(data: bytes) -> str:
    """`data` as text, in the encoding JSON's rules detect; undecodable bytes become U+FFFD."""
    encoding = json.detect_encoding(data)  # utf-8, utf-8-sig, utf-16(-le/-be), utf-32(-le/-be)
    text = data.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text  # a BOM that detect_encoding left (utf-16-le with one, ...)


def _prune(text: str) -> str:
    """`text` with every container that starts deeper than MAX_DEPTH replaced by null."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # cannot be too deep: skip the scan
        return text
    depth, cut_from, pieces, kept_to = 0, None, [], 0
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth == MAX_DEPTH + 1 and cut_from is None:
                cut_from = token.start()
        elif bracket in "]}":
            if depth == MAX_DEPTH + 1 and cut_from is not None:
                pieces += [text[kept_to:cut_from], "null"]
                kept_to, cut_from = token.end(), None
            depth -= 1
    if cut_from is not None:  # unbalanced: parsing what is left says where it fails
        return text
    return "".join(pieces) + text[kept_to:] if pieces else text


def _replace_surrogates(value):
    """`value` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        return value if _encodable(value) else value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_replace_surrogates(key): _replace_surrogates(item) for key, item in value.items()}
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {list: "list", str: "string", int: "number", float: "number"}.get(type(value), type(value).__name__)


def _too_large(size: int) -> str:
    return f"the file is {size / 2**20:.1f} MiB, over the {MAX_NOTEBOOK_BYTES / 2**20:g} MiB a notebook may be"


if __name__ == "__main__":
    _child_main()
