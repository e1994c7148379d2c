"""kubectl's JSONPath dialect (k8s.io/client-go/util/jsonpath), for `-o jsonpath=` and
`-o custom-columns=`.

Templates mix text and `{actions}`: fields `.a.b` (`\\.` escapes a dot in a key), `['key']`,
recursive descent `..a`, `[*]`, `[i]`, `[start:end:step]` (negative counts from the end),
unions `[0,2]` / `['a','b']`, filters `[?(@.x=="y")]` (`==` `!=` `<` `<=` `>` `>=`, or `[?(@.x)]`
for presence), string literals `{"\\n"}`, `@`/`$`, and `{range X}...{end}`. Missing keys print
nothing (kubectl's `--allow-missing-template-keys=true`). Several results of one action are
printed separated by spaces; maps and lists as compact JSON, as kubectl prints them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from instancetype.api.gotext import go_json, served_number
from instancetype.errors import JSONPathError  # noqa: F401  (re-exported)

# --- nodes -------------------------------------------------------------------------------------------

@dataclass
class Text:
    text: str


@dataclass
class Action:
    """One `{...}`: steps applied in order to the current values."""
    steps: list = field(default_factory=list)


@dataclass
class Range:
    expr: Action
    body: list


@dataclass
class Field:
    name: str            # "" for a bare `.` (the current object)


@dataclass
class Recursive:
    pass


@dataclass
class Index:
    """`[*]` (all), `[i]`, `[a:b:c]`, unions of those."""
    parts: list          # each: ("all",) | ("slice", start, end, step, single) | ("key", name)


@dataclass
class Filter:
    left: Action
    op: str              # == != < <= > >= or "exists"
    right: Action | None


@dataclass
class Literal:
    value: Any


@dataclass
class Root:
    pass


# --- parser ------------------------------------------------------------------------------------------

def parse(template: str) -> list:
    """The template as nodes (a `range` holds its body)."""
    nodes: list = []
    stack: list[tuple[list, Range | None]] = []
    i = 0
    n = len(template)
    text_start = 0
    while i < n:
        if template[i] == "{":
            if i > text_start:
                nodes.append(Text(template[text_start:i]))
            end = _action_end(template, i)
            body = template[i + 1:end].strip()
            if body.startswith("range ") or body == "range":
                rng = Range(_parse_action(body[5:].strip(), template), [])
                nodes.append(rng)
                stack.append((nodes, rng))
                nodes = rng.body
            elif body == "end":
                if not stack:
                    raise JSONPathError(f"error parsing jsonpath {template}, not in range, nothing to end")
                nodes, _ = stack.pop()
            else:
                nodes.append(_parse_action(body, template))
            i = end + 1
            text_start = i
        else:
            i += 1
    if text_start < n:
        nodes.append(Text(template[text_start:]))
    if stack:
        raise JSONPathError(f"error parsing jsonpath {template}, unclosed range")
    return nodes


def _unquoted(s: str, start: int):
    """(index, character) of `s` from `start`, skipping what stands inside '...' or "..."
    (a backslash escapes the next character there)."""
    i, quote = start, None
    while i < len(s):
        ch = s[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        else:
            yield i, ch
        i += 1


def _action_end(t: str, start: int) -> int:
    depth = 0
    for i, ch in _unquoted(t, start + 1):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "}" and depth <= 0:
            return i
    raise JSONPathError(f"error parsing jsonpath {t}, unclosed action")


def _parse_action(body: str, template: str) -> Action:
    steps: list = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch.isspace():
            i += 1
        elif ch == '"':
            end = _string_end(body, i, template)
            steps.append(Literal(_unquote(body[i:end + 1], template)))
            i = end + 1
        elif ch == "@":
            i += 1
        elif ch == "$":
            steps.append(Root())
            i += 1
        elif body.startswith("..", i):
            steps.append(Recursive())
            i += 1           # the second dot starts the field
        elif ch == ".":
            j = i + 1
            name = []
            while j < n and body[j] not in ".[ " and not (body[j] == "\\" and False):
                if body[j] == "\\" and j + 1 < n and body[j + 1] == ".":
                    name.append(".")
                    j += 2
                    continue
                name.append(body[j])
                j += 1
            steps.append(Field("".join(name)))
            i = j
        elif ch == "[":
            end = _bracket_end(body, i, template)
            steps.append(_parse_bracket(body[i + 1:end], template))
            i = end + 1
        elif ch.isdigit() or ch == "-":
            j = i + 1
            while j < n and (body[j].isdigit() or body[j] in ".eE+-"):
                j += 1
            steps.append(Literal(_number(body[i:j], template)))
            i = j
        elif body.startswith("true", i) or body.startswith("false", i):
            word = "true" if body.startswith("true", i) else "false"
            steps.append(Literal(word == "true"))
            i += len(word)
        else:
            j = i
            while j < n and body[j] not in ".[ ":
                j += 1
            steps.append(Field(body[i:j]))     # a bare key, as `{kind}`
            i = j
    return Action(steps)


def _string_end(s: str, start: int, template: str) -> int:
    q = s[start]
    i = start + 1
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == q:
            return i
        i += 1
    raise JSONPathError(f"error parsing jsonpath {template}, unterminated quoted string")


def _unquote(s: str, template: str) -> str:
    if s[0] == "'":
        return s[1:-1]
    try:
        return json.loads(s)
    except ValueError:
        raise JSONPathError(f"error parsing jsonpath {template}, invalid string {s}") from None


def _number(s: str, template: str) -> Any:
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            raise JSONPathError(f"error parsing jsonpath {template}, invalid number {s}") from None


def _bracket_end(s: str, start: int, template: str) -> int:
    depth = 0
    for i, ch in _unquoted(s, start):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
            if depth == 0 and ch == "]":
                return i
    raise JSONPathError(f"error parsing jsonpath {template}, unterminated array")


_OPS = ("==", "!=", "<=", ">=", "<", ">")


def _parse_bracket(inner: str, template: str) -> Any:
    inner = inner.strip()
    if inner.startswith("?"):
        expr = inner[1:].strip()
        if not (expr.startswith("(") and expr.endswith(")")):
            raise JSONPathError(f"error parsing jsonpath {template}, unrecognized filter {inner}")
        expr = expr[1:-1].strip()
        quote = None
        for i, ch in enumerate(expr):
            if quote:
                if ch == quote:
                    quote = None
                continue
            if ch in "\"'":
                quote = ch
                continue
            for op in _OPS:
                if expr.startswith(op, i):
                    return Filter(_parse_action(expr[:i].strip(), template), op,
                                  _parse_action(expr[i + len(op):].strip(), template))
        return Filter(_parse_action(expr, template), "exists", None)
    parts: list = []
    for part in _split_union(inner):
        part = part.strip()
        if part == "*":
            parts.append(("all",))
        elif part[:1] in "\"'":
            parts.append(("key", _unquote(part, template)))
        else:
            bounds = part.split(":")
            if len(bounds) > 3:
                raise JSONPathError(f"error parsing jsonpath {template}, invalid array index {part}")
            try:
                nums = [int(b) if b.strip() else None for b in bounds]
            except ValueError:
                raise JSONPathError(f"error parsing jsonpath {template}, invalid array index {part}") from None
            if len(nums) == 1:
                parts.append(("slice", nums[0], None, None, True))
            else:
                parts.append(("slice", nums[0], nums[1], nums[2] if len(nums) == 3 else None, False))
    return Index(parts)


def _split_union(s: str) -> list[str]:
    out, cur, quote = [], [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch == ",":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


# --- evaluation --------------------------------------------------------------------------------------

_MISSING = object()


def _values_of(v: Any) -> list:
    if isinstance(v, dict):
        return [v[k] for k in sorted(v)]
    if isinstance(v, list):
        return list(v)
    return []


def _step(values: list, step: Any, root: Any) -> list:
    if isinstance(step, Root):
        return [root]
    if isinstance(step, Literal):
        return [step.value]
    if isinstance(step, Field):
        if step.name == "":
            return values
        return [v[step.name] for v in values if isinstance(v, dict) and step.name in v]
    if isinstance(step, Recursive):
        out: list = []
        stack = list(reversed(values))
        while stack:
            v = stack.pop()
            out.append(v)
            stack.extend(reversed(_values_of(v)))
        return out
    if isinstance(step, Index):
        out = []
        for v in values:
            for part in step.parts:
                out.extend(_index(v, part))
        return out
    if isinstance(step, Filter):
        out = []
        for v in values:
            for item in (v if isinstance(v, list) else _values_of(v) if isinstance(v, dict) else []):
                if _matches(item, step, root):
                    out.append(item)
        return out
    raise JSONPathError(f"unexpected node {step}")


def _index(v: Any, part: tuple) -> list:
    if part[0] == "all":
        return _values_of(v)
    if part[0] == "key":
        return [v[part[1]]] if isinstance(v, dict) and part[1] in v else []
    if not isinstance(v, list):
        return []
    _, start, end, step, single = part
    size = len(v)
    if single:
        i = start + size if start < 0 else start
        if i < 0 or i >= size:
            raise JSONPathError(f"array index out of bounds: index {start}, length {size}")
        return [v[i]]
    start = 0 if start is None else start + size if start < 0 else start
    end = size if end is None else end + size if end < 0 else end
    if start == end:
        return []
    if start < 0 or start >= size:
        raise JSONPathError(f"array index out of bounds: index {start}, length {size}")
    end = min(end, size)
    return v[start:end:step or 1]


def _matches(item: Any, f: Filter, root: Any) -> bool:
    left = evaluate_action(f.left, item, root)
    if f.op == "exists":
        return bool(left)
    right = evaluate_action(f.right, item, root) if f.right is not None else []
    if not left or not right:
        return False
    a, b = left[0], right[0]
    if f.op in ("==", "!="):
        equal = a == b and (isinstance(a, bool) == isinstance(b, bool))
        return equal if f.op == "==" else not equal
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    if not numbers:
        raise JSONPathError(f"{f.op} comparison of {_text(a)} and {_text(b)} is not supported")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[f.op]


def evaluate_action(action: Action, current: Any, root: Any) -> list:
    values = [current]
    for step in action.steps:
        values = _step(values, step, root)
    return values


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return served_number(v)
    if isinstance(v, (dict, list)):
        return go_json(v)
    return str(v)


def execute(nodes: list, data: Any, out: list[str], root: Any = _MISSING) -> None:
    root = data if root is _MISSING else root
    for node in nodes:
        if isinstance(node, Text):
            out.append(node.text)
        elif isinstance(node, Range):
            for item in evaluate_action(node.expr, data, root):
                execute(node.body, item, out, root)
        else:
            out.append(" ".join(_text(v) for v in evaluate_action(node, data, root)))


class JSONPath:
    """A parsed template: `JSONPath(template).text(obj)`."""

    def __init__(self, template: str):
        self.template = template
        self.nodes = parse(template)

    def text(self, data: Any) -> str:
        out: list[str] = []
        execute(self.nodes, data, out)
        return "".join(out)

    def values(self, data: Any) -> list:
        """The values of a template that is one action (custom-columns' cells)."""
        found: list = []
        for node in self.nodes:
            if isinstance(node, Action):
                found.extend(evaluate_action(node, data, data))
        return found


def go_value(v: Any) -> str:
    """Go's `%v` of a decoded JSON value (custom-columns' cells): maps as `map[k:v]` with sorted
    keys, lists as `[a b]`."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_value(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_value(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    return _text(v)
