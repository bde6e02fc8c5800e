"""Reading a student's numeric answers without running their code.

An answer cell such as `TILE_BYTES = 16 * 16 * 4` is parsed, never executed: assignments of
arithmetic on numbers (and on names assigned earlier in the same cell) are evaluated by the
small interpreter below, which knows numbers, + - * / // % **, parentheses and a few pure
functions (ceil, floor, int, round, abs, min, max). Anything else is reported back with the
reason, not run. That is what lets the instructor's grader score a question outside the
student's kernel, where nothing the student's code did can reach the verdict.
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
MAX_MAGNITUDE = 1e30


class Unreadable(ValueError):
    """An answer the grader cannot read as arithmetic; the message says why."""


@dataclass
class ReadAnswers:
    values: dict[str, float] = field(default_factory=dict)  # name -> number, in assignment order
    problems: dict[str, str] = field(default_factory=dict)  # name -> why its value could not be read
    notes: list[str] = field(default_factory=list)  # things about the cell as a whole


def read_assignments(source: str) -> ReadAnswers:
    """The numbers a cell assigns to plain names, read the way Python would run the cell."""
    found = ReadAnswers()
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        found.notes.append(f"the cell has a syntax error on line {error.lineno}: {error.msg}")
        return found
    for statement in tree.body:
        if isinstance(statement, ast.Raise):
            found.notes.append(f"the cell raises an exception on line {statement.lineno}; the lines after it never run")
            break
        target, value = _assignment(statement, found.values)
        if target is None:
            continue  # prints, imports, comments: not part of an answer
        try:
            found.values[target] = _evaluate(value, found.values)
            found.problems.pop(target, None)
        except Unreadable as error:
            found.values.pop(target, None)
            found.problems[target] = f"line {statement.lineno}: {error}"
    return found


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
            raise Unreadable(f"{node.value!r} is not a number")
        return _bounded(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise Unreadable(f"'{node.id}' is not a number assigned earlier in this cell")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, names), _evaluate(node.right, names)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise Unreadable(f"the exponent {right:g} is too large")
        try:
            return _bounded(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise Unreadable("division by zero") from None
        except (OverflowError, ValueError, TypeError) as error:
            raise Unreadable(f"`{ast.unparse(node)}` cannot be computed: {error}") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, names))
    if isinstance(node, ast.Call) and not node.keywords:
        name = _function_name(node.func)
        if name in _FUNCTIONS and node.args:
            arguments = [_evaluate(arg, names) for arg in node.args]
            try:
                return _bounded(_FUNCTIONS[name](*arguments))
            except (OverflowError, ValueError, TypeError) as error:
                raise Unreadable(f"`{ast.unparse(node)}` cannot be computed: {error}") from None
        shown = name or ast.unparse(node.func)
        raise Unreadable(f"it calls {shown}(), which the grader does not run: write a number or arithmetic on numbers")
    raise Unreadable(f"`{ast.unparse(node)}` is not arithmetic on numbers")


def _function_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "math":
        return func.attr  # math.ceil, math.floor
    return None


def _bounded(value):
    if isinstance(value, complex) or not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise Unreadable(f"{value!r} is not a usable number")
    return value
