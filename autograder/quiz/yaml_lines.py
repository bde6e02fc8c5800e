"""Read YAML into plain Python values while remembering the line each value came from.

PyYAML's composer gives nodes with start marks; this module builds the data from those nodes
itself, so every value, and every mapping key, can be traced back to a line for error messages.
It also refuses duplicate keys, which PyYAML would otherwise let overwrite each other silently.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import TvmCourseError

# A path into the data: mapping keys and list indices, from the root.
DataPath = tuple[Any, ...]


class YamlProblem(TvmCourseError):
    """The text is not YAML this project can read; carries the 1-based line."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class LinedData:
    """Parsed data, plus the line of every value and of every mapping key (1-based)."""

    data: Any
    value_lines: dict[DataPath, int] = field(default_factory=dict)
    key_lines: dict[DataPath, int] = field(default_factory=dict)

    def line_for(self, path: DataPath) -> int | None:
        """Where a message about `path` should point: its key's line if it is a mapping entry."""
        return self.key_lines.get(tuple(path)) or self.line_of(path)

    def line_of(self, path: DataPath) -> int | None:
        """The line of the value at `path`, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.value_lines:
                return self.value_lines[path]
            path = path[:-1]
        return self.value_lines.get(())


def load_lined(text: str) -> LinedData:
    """Parse one YAML document; raise YamlProblem for syntax errors and duplicate keys."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return LinedData(None, {(): 1})
        result = LinedData(None)
        result.data = _build(loader, node, (), result)
        return result
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or err.context or "not valid YAML"
        raise YamlProblem(f"not valid YAML: {problem}", line) from None
    except yaml.YAMLError as err:  # e.g. a second document in the stream
        raise YamlProblem(f"not valid YAML: {err}", None) from None
    finally:
        loader.dispose()


def load_lined_file(path: Path) -> LinedData:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise YamlProblem("not UTF-8 text", None) from None
    return load_lined(text)


def _build(loader: yaml.SafeLoader, node: yaml.Node, path: DataPath, out: LinedData) -> Any:
    out.value_lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem("merge keys ('<<') are not supported here", key_node.start_mark.line + 1)
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlProblem("mapping keys must be plain scalars", key_node.start_mark.line + 1)
            key = loader.construct_object(key_node)
            if isinstance(key, (int, float)) and not isinstance(key, bool):
                key = str(key_node.value)
            if key in mapping:
                first = out.key_lines.get(path + (key,))
                raise YamlProblem(
                    f"duplicate key {key!r} (first on line {first})", key_node.start_mark.line + 1
                )
            out.key_lines[path + (key,)] = key_node.start_mark.line + 1
            mapping[key] = _build(loader, value_node, path + (key,), out)
        return mapping
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, path + (i,), out) for i, item in enumerate(node.value)]
    return loader.construct_object(node)
