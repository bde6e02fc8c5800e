"""Reading a student's numeric answers without running their code.

An answer cell such as `TILE_BYTES = 16 * 16 * 4` is parsed, never executed: assignments of
arithmetic on numbers (on names assigned earlier in the same cell, and on the constants the
grader supplies, such as a student's variant's HEIGHT) are evaluated by the
small interpreter below, which knows numbers, + - * / // % **, parentheses and a few pure
functions (ceil, floor, int, round, abs, min, max). Anything else is reported back with the
reason, not run. That is what lets the instructor's grader score a question outside the
student's kernel, where nothing the student's code did can reach the verdict.

The grader must survive whatever is written, so reading is bounded: every number, written or
computed, is at most MAX_MAGNITUDE in size (so no operand ever grows past about 100 bits), an
exponent is at most MAX_EXPONENT and round()'s digits at most MAX_ROUND_DIGITS (the only
operations whose cost grows with an operand's value), a cell is at most MAX_SOURCE_CHARS long,
and nesting too deep to parse or evaluate is an unreadable answer. An answer that breaks one of
these limits is unreadable (it scores nothing, with the reason), never an exception or a hang.
"""
from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {"ceil": math.ceil, "floor": math.floor, "int": int, "round": round, "abs": abs, "min": min, "max": max}
# Keep evaluation cheap whatever is written: 2 ** 10 ** 10 must not run for minutes.
MAX_EXPONENT = 64
MAX_ROUND_DIGITS = 64  # round(5, -10**29) would build 10**(10**29)
MAX_MAGNITUDE = 1e30
MAX_SOURCE_CHARS = 100_000  # an answer cell is a few lines


class Unreadable(ValueError):
    """An answer the grader cannot read as arithmetic; the message says why."""


@dataclass
class ReadAnswers:
    values: dict[str, float] = field(default_factory=dict)  # name -> number, in assignment order
    problems: dict[str, str] = field(default_factory=dict)  # name -> why its value could not be read
    notes: list[str] = field(default_factory=list)  # things about the cell as a whole


def read_assignments(source: str, constants: dict[str, int] | None = None) -> ReadAnswers:
    """The numbers a cell assigns to plain names, read the way Python would run the cell after
    `constants` were assigned (they are not part of the answers)."""
    found = ReadAnswers()
    known = dict(constants or {})
    if len(source) > MAX_SOURCE_CHARS:
        found.notes.append(f"the cell is too long to read ({len(source)} characters; at most {MAX_SOURCE_CHARS})")
        return found
    try:
        tree = ast.parse(source)
    except SyntaxError as error:  # also an integer literal of more than 4300 digits
        found.notes.append(f"the cell has a syntax error on line {error.lineno}: {error.msg}")
        return found
    except (RecursionError, MemoryError, ValueError):  # nesting too deep for Python's parser
        found.notes.append("the cell cannot be read: its expressions are nested too deeply")
        return found
    for statement in tree.body:
        if isinstance(statement, ast.Raise):
            found.notes.append(f"the cell raises an exception on line {statement.lineno}; the lines after it never run")
            break
        target, value = _assignment(statement, found.values)
        if target is None:
            continue  # prints, imports, comments: not part of an answer
        try:
            found.values[target] = known[target] = _evaluate(value, known)
            found.problems.pop(target, None)
        except Unreadable as error:
            _forget(found, known, target)
            found.problems[target] = f"line {statement.lineno}: {error}"
        except RecursionError:
            _forget(found, known, target)
            found.problems[target] = f"line {statement.lineno}: the expression is nested too deeply to read"
        except (ArithmeticError, ValueError, TypeError) as error:  # a case the checks above missed: still an answer
            _forget(found, known, target)
            found.problems[target] = f"line {statement.lineno}: cannot be computed ({error.__class__.__name__})"
    return found


def _forget(found: ReadAnswers, known: dict, name: str) -> None:
    """An assignment that cannot be read leaves the name unassigned (as Python would not have
    got past it), constants included."""
    found.values.pop(name, None)
    known.pop(name, None)


def _assignment(statement: ast.stmt, known: dict[str, float]):
    """(name, expression) for `NAME = expr`, `NAME: T = expr` and `NAME op= expr`; else (None, None)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id, statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        return statement.target.id, statement.value
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        name = statement.target.id
        return name, ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
    return None, None


def _evaluate(node: ast.AST, names: dict[str, float]) -> float:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise Unreadable(f"{_shown(node.value)} is not a number")
        return _bounded(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise Unreadable(f"'{node.id}' is not a number assigned earlier in this cell")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, names), _evaluate(node.right, names)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise Unreadable(f"the exponent {_shown(right)} is too large (at most {MAX_EXPONENT})")
        try:
            return _bounded(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise Unreadable("division by zero") from None
        except (OverflowError, ValueError, TypeError) as error:
            raise Unreadable(f"`{_code(node)}` cannot be computed: {error}") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, names))
    if isinstance(node, ast.Call) and not node.keywords:
        name = _function_name(node.func)
        if name in _FUNCTIONS and node.args:
            arguments = [_evaluate(arg, names) for arg in node.args]
            if name == "round" and len(arguments) == 2:
                digits = arguments[1]
                if not isinstance(digits, int):
                    raise Unreadable(f"round()'s digits must be a whole number, not {_shown(digits)}")
                if abs(digits) > MAX_ROUND_DIGITS:
                    raise Unreadable(f"round() to {_shown(digits)} digits is out of range (at most {MAX_ROUND_DIGITS} either way)")
            try:
                return _bounded(_FUNCTIONS[name](*arguments))
            except (OverflowError, ValueError, TypeError) as error:
                raise Unreadable(f"`{_code(node)}` cannot be computed: {error}") from None
        shown = name or _code(node.func)
        raise Unreadable(f"it calls {shown}(), which the grader does not run: write a number or arithmetic on numbers")
    raise Unreadable(f"`{_code(node)}` is not arithmetic on numbers")


def _function_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "math":
        return func.attr  # math.ceil, math.floor
    return None


def _bounded(value):
    """`value` if it is a real number of at most MAX_MAGNITUDE; else Unreadable, saying why."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unreadable(f"{_shown(value)} is not a usable number")
    # Checked without converting to float: a large int does not fit in one (OverflowError).
    if isinstance(value, float) and not math.isfinite(value):
        raise Unreadable(f"{value!r} is not a usable number")
    if abs(value) > MAX_MAGNITUDE:
        raise Unreadable(f"{_shown(value)} is too large to be an answer here (at most {MAX_MAGNITUDE:g})")
    return value


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _shown(value) -> str:
    """A short repr: a huge int's digits are not printed (nor can Python print past 4300 of them)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        return f"a number of about {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
