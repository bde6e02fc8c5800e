"""Reading a student's numeric answers without running their code.

An answer cell such as `TILE_BYTES = 16 * 16 * 4` is parsed, never executed: assignments of
arithmetic on numbers (on names assigned earlier in the same cell, and on the constants the
grader supplies, such as a student's variant's HEIGHT) are evaluated by the
small interpreter below, which knows numbers, + - * / // % **, parentheses and a few pure
functions (ceil, floor, int, round, abs, min, max). Anything else is reported back with the
reason, not run. That is what lets the instructor's grader score a question outside the
student's kernel, where nothing the student's code did can reach the verdict.

Reading follows Python: statement by statement, the last binding of a name decides. A binding
the reader does not read (an `if` or a loop, a `def`, an import, `:=`, ...) is never skipped in
silence: it leaves the name unread, with its line and why, so a right answer under an `if` is
"unread (line 7: ...)", not an earlier value marked wrong (read_assignments).

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

from ..errors import TvmCourseError

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


class Unreadable(ValueError, TvmCourseError):
    """An answer the grader cannot read as arithmetic; the message says why."""


@dataclass
class ReadAnswers:
    values: dict[str, float] = field(default_factory=dict)  # name -> number, in assignment order
    problems: dict[str, str] = field(default_factory=dict)  # name -> "line N: why" its last binding is unread
    notes: list[str] = field(default_factory=list)  # things about the cell as a whole
    # "line N: why" of the last statement that can bind names unseen (exec(), globals()[...] = ...):
    # every name no later statement binds again is unread, bound in the cell or not.
    anything: str | None = None

    def problem(self, name: str) -> str | None:
        """Why `name`'s value cannot be read ("line N: why"); None where it is read or never bound."""
        if name in self.problems:
            return self.problems[name]
        return self.anything if name not in self.values else None

    def problems_for(self, names) -> dict[str, str]:
        return {name: why for name in names if (why := self.problem(name)) is not None}

    def _unread(self, name: str, why: str, known: dict) -> None:
        """A binding the grader does not read leaves the name without a known value (constants
        included: Python would have rebound it)."""
        self.values.pop(name, None)
        known.pop(name, None)
        self.problems[name] = why

    def _read(self, name: str, value, known: dict) -> None:
        self.values[name] = known[name] = value
        self.problems.pop(name, None)

    def _unread_all(self, why: str, known: dict) -> None:
        for name in list(self.values):
            self._unread(name, why, known)
        known.clear()
        self.anything = why


def read_assignments(source: str, constants: dict[str, int] | None = None) -> ReadAnswers:
    """The numbers a cell binds to names, read the way Python would run the cell after
    `constants` were assigned (they are not part of the answers).

    Every statement that binds a name, in any of Python's ways (`names_bound`), is either read
    as Python runs it (`NAME = expr`, `NAME: T = expr`, `NAME op= expr`, chained `A = B = expr`,
    unpacking of a written tuple or list `A, (B, C) = 1, (2, 3)`), or leaves the names it binds
    unread, with its line and why (inside an `if` or a loop, a `def`, an import, `:=`, `del`,
    star-unpacking, ...). A statement that can bind names no reading of the cell can see
    (`exec()`, `globals()`, assigning into an object: `_reaches_namespace`) leaves every name
    unread that no later statement binds again."""
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
        try:
            _read_statement(statement, found, known)
        except RecursionError:  # a case the bounded walks missed: whatever the statement binds is unread
            found._unread_all(f"line {statement.lineno}: the statement is nested too deeply to read", known)
    return found


def names_bound(source: str) -> set[str]:
    """Every name a cell's statements bind, read or not (empty for a cell Python cannot parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return set()
    return {b.name for statement in tree.body for b in _bindings(statement)}


def _read_statement(statement: ast.stmt, found: ReadAnswers, known: dict) -> None:
    targets, value = _assignment(statement)
    read_here = {n for target in targets for n in _pattern_names(target)} if value is not None else set()
    for binding in _bindings(statement):  # what the statement binds besides what is read below
        if binding.name not in read_here:
            found._unread(binding.name, f"line {binding.line}: {binding.why(statement)}", known)
    if value is not None:
        where = f"line {statement.lineno}"
        # Python evaluates the right-hand side once, before assigning any target (A, B = B, A).
        outcomes = [_unpacked(target, value, known, found.anything) for target in targets]
        for outcome in outcomes:
            for name, number, why in outcome:
                if why is None:
                    found._read(name, number, known)
                else:
                    found._unread(name, f"{where}: {why}", known)
    dynamic = _reaches_namespace(statement)
    if dynamic:
        found._unread_all(f"line {dynamic[0]}: {dynamic[1]}", known)


def _assignment(statement: ast.stmt) -> tuple[list[ast.expr], ast.expr | None]:
    """(targets, expression) of an assignment the reader reads: `NAME = expr` (and chained, and
    unpacking into names), `NAME: T = expr`, `NAME op= expr`; else ([], None)."""
    if isinstance(statement, ast.Assign) and all(_is_pattern(t) for t in statement.targets):
        return list(statement.targets), statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
        return [statement.target], statement.value
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        name = statement.target.id
        return [statement.target], ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
    return [], None


def _is_pattern(target: ast.expr) -> bool:
    """A name, or a (nested) tuple or list of names without `*`."""
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(node.elts)
        elif not isinstance(node, ast.Name):
            return False
    return True


def _pattern_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    return [name for element in target.elts for name in _pattern_names(element)]


def _unpacked(target: ast.expr, value: ast.expr, known: dict, hidden: str | None) -> list[tuple[str, object, str | None]]:
    """(name, number, None) for each name `target` gets from `value`, or (name, None, why)."""
    if isinstance(target, ast.Name):
        try:
            return [(target.id, _evaluate(value, known, hidden), None)]
        except Unreadable as error:
            return [(target.id, None, str(error))]
        except RecursionError:
            return [(target.id, None, "the expression is nested too deeply to read")]
        except (ArithmeticError, ValueError, TypeError) as error:  # a case the checks missed: still an answer
            return [(target.id, None, f"cannot be computed ({error.__class__.__name__})")]
    names = _pattern_names(target)
    if not isinstance(value, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in value.elts):
        why = f"unpacking `{_code(value)}`, which the grader does not do: it unpacks only written values (`A, B = 1, 2`)"
        return [(name, None, why) for name in names]
    if len(value.elts) != len(target.elts):
        why = f"{len(value.elts)} values unpacked into {len(target.elts)} names: Python stops there (ValueError)"
        return [(name, None, why) for name in names]
    return [outcome for element, part in zip(target.elts, value.elts) for outcome in _unpacked(element, part, known, hidden)]


@dataclass(frozen=True)
class _Binding:
    name: str
    line: int
    how: str  # how it is bound: "bound by an import", "removed by `del`", ...
    block: ast.stmt | None  # the compound statement of the cell's top level it is inside, if any

    def why(self, statement: ast.stmt) -> str:
        if self.block is not None:
            return (f"assigned inside {_BLOCKS[type(self.block)]} (line {self.block.lineno}), which the grader does not "
                    "run: it reads only the statements at the top level of the cell")
        if isinstance(statement, ast.Assign):
            return ("an assignment the grader does not read: it reads `NAME = ...`, chained `A = B = ...` and the "
                    "unpacking of written values `A, B = 1, 2`, not `*NAME` or assignments into objects")
        return f"{self.how}, which the grader does not run: write `{self.name} = ` a number or arithmetic at the top level of the cell"


_BLOCKS = {
    ast.If: "an `if` block", ast.For: "a `for` loop", ast.AsyncFor: "an `async for` loop", ast.While: "a `while` loop",
    ast.With: "a `with` block", ast.AsyncWith: "an `async with` block", ast.Try: "a `try` statement",
    ast.Match: "a `match` statement",
}
if hasattr(ast, "TryStar"):  # Python 3.11
    _BLOCKS[ast.TryStar] = "a `try` statement"
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NEW_SCOPE, _COMPREHENSION, _HERE = "inner", "comprehension", "here"


def _bindings(statement: ast.stmt) -> list[_Binding]:
    """Every name one statement of the cell's top level binds in the cell's namespace, by any of
    Python's ways: a store or `del` of a name (assignments, `for` and `with ... as` targets,
    `:=`, also inside comprehensions), imports, `def` and `class`, `except ... as`, `match`
    captures, and `global` in a function or class (it binds when called). Names bound in a
    function's, lambda's, class's or comprehension's own scope are not the cell's. Walked with a
    stack, not recursion: a long expression is no RecursionError."""
    found: list[_Binding] = []
    # (node, scope: _HERE, _COMPREHENSION or _NEW_SCOPE, the top-level block it is in, how a name here is bound)
    stack: list[tuple[ast.AST, str, ast.stmt | None, str]] = [(statement, _HERE, None, "bound by an assignment")]

    def bind(name: str | None, node: ast.AST, block, how: str) -> None:
        if name:
            found.append(_Binding(name, getattr(node, "lineno", statement.lineno), how, block))

    while stack:
        node, scope, block, how = stack.pop()
        children: list[tuple[ast.AST, str, ast.stmt | None, str]] = []
        if scope == _NEW_SCOPE:  # only `global` reaches the cell's names from here
            if isinstance(node, ast.Global):
                for name in node.names:
                    bind(name, node, block, "assigned by a function or class that declares it `global`")
            children = [(child, scope, block, how) for child in ast.iter_child_nodes(node)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                bind(node.name, node, block, "bound by a `class`" if isinstance(node, ast.ClassDef) else "bound by a `def`")
            # Decorators, defaults, annotations and base classes run here; the body is a scope of its own.
            outside = [*getattr(node, "decorator_list", []), *getattr(node, "bases", []),
                       *(k.value for k in getattr(node, "keywords", []))]
            if isinstance(node.args if hasattr(node, "args") else None, ast.arguments):
                arguments = node.args
                outside += [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
                if not isinstance(node, ast.Lambda):
                    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
                    outside += [a.annotation for a in every if a is not None and a.annotation is not None]
                    outside += [node.returns] if node.returns is not None else []
            children = [(child, scope, block, how) for child in outside]
            body = node.body if isinstance(node.body, list) else [node.body]
            children += [(child, _NEW_SCOPE, block, how) for child in body]
        elif isinstance(node, _COMPREHENSIONS):
            # The first iterable is evaluated here; the rest is the comprehension's own scope,
            # except `:=`, which binds here (PEP 572).
            first = node.generators[0].iter
            children = [(first, scope, block, how)]
            children += [(child, _COMPREHENSION, block, how) for child in ast.iter_child_nodes(node) if child is not node.generators[0]]
            children += [(child, _COMPREHENSION, block, how) for child in ast.iter_child_nodes(node.generators[0]) if child is not first]
        elif isinstance(node, ast.NamedExpr):
            bind(node.target.id, node, block, "bound by `:=` inside an expression")
            children = [(node.value, scope, block, how)]
        elif isinstance(node, ast.Name):
            if scope == _HERE and isinstance(node.ctx, ast.Store):
                bind(node.id, node, block, how)
            elif scope == _HERE and isinstance(node.ctx, ast.Del):
                bind(node.id, node, block, "removed by `del`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":  # `import *`: _reaches_namespace
                    bind(alias.asname or alias.name.split(".")[0], node, block, "bound by an import")
        elif isinstance(node, ast.ExceptHandler):
            bind(node.name, node, block, "bound by `except ... as`")
            children = [(child, scope, block, how) for child in ast.iter_child_nodes(node)]
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            bind(node.name, node, block, "bound by a `match` pattern")
            children = [(child, scope, block, how) for child in ast.iter_child_nodes(node)]
        elif isinstance(node, ast.MatchMapping):
            bind(node.rest, node, block, "bound by a `match` pattern")
            children = [(child, scope, block, how) for child in ast.iter_child_nodes(node)]
        else:
            inner = block if block is not None or node is not statement or type(node) not in _BLOCKS else node
            if isinstance(node, (ast.For, ast.AsyncFor)):
                children = [(node.target, scope, inner, "bound by a `for` loop")]
                children += [(child, scope, inner, how) for child in ast.iter_child_nodes(node) if child is not node.target]
            elif isinstance(node, ast.withitem):
                children = [(child, scope, inner, "bound by `with ... as`") for child in ast.iter_child_nodes(node)]
            elif isinstance(node, ast.AnnAssign) and node.value is None:  # `X: int` only annotates X
                children = [(node.annotation, scope, inner, how)]
            else:
                children = [(child, scope, inner, how) for child in ast.iter_child_nodes(node)]
        stack.extend(reversed(children))
    found.sort(key=lambda b: b.line)
    return found


# The ways code reaches a namespace as an object, and so can bind names that no reading of the
# cell sees: the built-ins that hand one out or run text as code, a frame's or a module's
# attributes, `import *`, and a store into any object (a module is one: `sys.modules[...].X = 1`).
_NAMESPACE_BUILTINS = frozenset({"exec", "eval", "globals", "vars", "locals", "__import__", "setattr", "delattr",
                                 "get_ipython", "breakpoint", "__builtins__"})
_NAMESPACE_ATTRIBUTES = frozenset({"f_globals", "f_locals", "f_builtins", "user_ns", "user_global_ns", "modules"})


def _reaches_namespace(statement: ast.stmt) -> tuple[int, str] | None:
    """(line, why) where `statement` can bind names that reading it cannot see; else None."""
    for node in ast.walk(statement):
        line = getattr(node, "lineno", statement.lineno)
        if isinstance(node, ast.Name) and node.id in _NAMESPACE_BUILTINS:
            return line, f"`{node.id}` can assign any name, and the grader does not run it"
        if isinstance(node, ast.Attribute) and (node.attr in _NAMESPACE_ATTRIBUTES or (node.attr.startswith("__") and node.attr.endswith("__"))):
            return line, f"`.{node.attr}` can reach any name, and the grader does not run it"
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return line, "`import *` assigns names the grader cannot see"
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return line, f"it assigns into an object (`{_code(node)}`), which the grader does not run and which can reach any name"
    return None


def _evaluate(node: ast.AST, names: dict[str, float], hidden: str | None = None) -> float:
    """The number `node` computes from `names`; `hidden`: why names may be missing (_reaches_namespace)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise Unreadable(f"{_shown(node.value)} is not a number")
        return _bounded(node.value)
    if isinstance(node, ast.Name):
        if node.id not in names and hidden:
            raise Unreadable(f"'{node.id}' has no value the grader can read here ({hidden})")
        if node.id not in names:
            raise Unreadable(f"'{node.id}' is not a number assigned earlier in this cell")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, names, hidden), _evaluate(node.right, names, hidden)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise Unreadable(f"the exponent {_shown(right)} is too large (at most {MAX_EXPONENT})")
        try:
            return _bounded(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise Unreadable("division by zero") from None
        except (OverflowError, ValueError, TypeError) as error:
            raise Unreadable(f"`{_code(node)}` cannot be computed: {error}") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, names, hidden))
    if isinstance(node, ast.Call) and not node.keywords:
        name = _function_name(node.func)
        if name in _FUNCTIONS and node.args:
            arguments = [_evaluate(arg, names, hidden) for arg in node.args]
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
    try:
        text = ast.unparse(node)
    except RecursionError:  # unparse recurses; reading must not
        return "(an expression nested too deeply to show)"
    return text if len(text) <= 80 else text[:77] + "..."


def _shown(value) -> str:
    """A short repr: a huge int's digits are not printed (nor can Python print past 4300 of them)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        return f"a number of about {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
