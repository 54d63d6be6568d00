#!/usr/bin/env python3
"""Turn Sphinx roles in docstrings and comments into mkdocstrings cross-references.

The reference pages render the docstrings with mkdocstrings (Markdown, Google
style), where ``:class:`~actors.ActorRef``` shows up as literal text. This
script rewrites each role:

- in a docstring, to an autorefs link ``[``ActorRef``][actors.ActorRef]`` when
  its target is an object the site renders (an entry of the site's
  ``objects.inv``), written with the public path the page anchors use;
- otherwise (the target is private, a standard-library or third-party name,
  an attribute the pages do not render, or a role inside a comment, which no
  page shows) to plain code, ````ActorRef````.

A target is resolved the way Sphinx would: the name as written, then in the
enclosing classes, then through the module's own names and imports, then in
the public package the module belongs to (``actors.remote`` for
``actors/remote/_spawn.py``), then in ``actors``. The canonical path of a
re-exported object (``actors._ref.ActorRef``) is mapped to the public one
(``actors.ActorRef``) through the inventory's secondary entries.

Build the site first (``./scripts/docs build``: it writes
``build/site/objects.inv``), then:

    .venv/bin/python scripts/sphinx_roles_to_autorefs.py actors/_ref.py actors/mailbox
    .venv/bin/python scripts/sphinx_roles_to_autorefs.py --dry-run actors

Each rewrite is printed (``path:line: old -> new``, with why a role became
plain code). Only string and comment tokens are touched, never code. Lines the
rewrite makes longer than ``--line-length`` are listed at the end: rewrap them
by hand, then build again (``mkdocs build --strict`` fails on a link that does
not resolve).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
import zlib
from dataclasses import dataclass
from pathlib import Path

# :class:`X`, :py:meth:`~a.b.c`, :func:`!x`, :attr:`title <a.b>` ...
ROLE = re.compile(
    r":(?:py:)?(?P<role>class|exc|meth|func|attr|mod|data|obj|const|type):"
    r"`(?P<body>[^`]+)`"
)
TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)


@dataclass
class Inventory:
    """The objects the site renders: public path -> itself, canonical -> public."""

    paths: dict[str, str]

    @classmethod
    def load(cls, path: Path) -> Inventory:
        data = path.read_bytes()
        _, _, compressed = data.partition(b"zlib.\n")
        paths: dict[str, str] = {}
        secondary: list[tuple[str, str]] = []
        for line in zlib.decompress(compressed).decode().splitlines():
            name, _domain, priority, url, *_ = line.split(" ")
            if priority == "1":
                paths[name] = name
            else:
                # A secondary entry (the canonical path of a re-exported
                # object) points at the public object's anchor.
                secondary.append((name, url.partition("#")[2]))
        for name, anchor in secondary:
            if anchor in paths:
                paths.setdefault(name, anchor)
        return cls(paths)

    def resolve(self, candidate: str) -> str | None:
        return self.paths.get(candidate)


def module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    start = parts.index("actors")
    parts = parts[start:]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def public_packages(module: str) -> list[str]:
    """``actors.nats._client`` -> [``actors.nats``, ``actors``]."""
    parts = module.split(".")
    packages = []
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if not any(part.startswith("_") for part in parts[:end]):
            packages.append(name)
    return packages


class Scopes(ast.NodeVisitor):
    """Class ranges (innermost last) and the names a module binds."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.classes: list[tuple[int, int, str]] = []
        self.names: dict[str, str] = {}
        self._stack: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._stack.append(node.name)
        qualname = ".".join(self._stack)
        self.classes.append((node.lineno, node.end_lineno or node.lineno, qualname))
        if len(self._stack) == 1:
            self.names[node.name] = f"{self.module}.{node.name}"
        self.generic_visit(node)
        self._stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if not self._stack:
            self.names[node.name] = f"{self.module}.{node.name}"
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            if node.level > 1:
                base = base[: -(node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        for alias in node.names:
            self.names[alias.asname or alias.name] = f"{source}.{alias.name}"

    def classes_at(self, line: int) -> list[str]:
        """Enclosing classes' qualnames at ``line``, innermost first."""
        found = [(start, q) for start, end, q in self.classes if start <= line <= end]
        return [q for _, q in sorted(found, reverse=True)]


@dataclass
class Rewrite:
    line: int
    old: str
    new: str
    why: str  # empty for a link


# Roles whose target can be a member of the enclosing class. A :func: or
# :class: is looked up from the module outward (":func:`await_assert`" in the
# method TestProbe.await_assert means the module's function).
MEMBER_ROLES = {"meth", "attr", "obj"}


def candidates(role: str, target: str, scopes: Scopes, line: int) -> list[str]:
    found: list[str] = []
    if target.startswith("."):
        # Sphinx's ".name": relative to the current module or package.
        target = target.lstrip(".")
        found.append(f"{scopes.package}.{target}")
    found.append(target)
    for qualname in scopes.classes_at(line) if role in MEMBER_ROLES else []:
        found.append(f"{scopes.module}.{qualname}.{target}")
    head, _, rest = target.partition(".")
    if head in scopes.names:
        found.append(scopes.names[head] + (f".{rest}" if rest else ""))
    found.append(f"{scopes.module}.{target}")
    for package in public_packages(scopes.module):
        found.append(f"{package}.{target}")
    found.append(f"actors.{target}")
    return found


def convert(
    role: str,
    body: str,
    scopes: Scopes,
    line: int,
    inventory: Inventory,
    in_comment: bool,
) -> tuple[str, str]:
    """Return the replacement for one role and why it is plain code ("" if not)."""
    titled = TITLED.match(body)
    if titled:
        title, target = titled["title"], titled["target"]
    else:
        title, target = "", body
    no_link = target.startswith("!")
    target = target.lstrip("!")
    short = target.startswith("~")
    target = target.lstrip("~")
    text = title or (target.rpartition(".")[2] if short else target.lstrip("."))
    if in_comment:
        return f"``{text}``", "comment (not rendered)"
    if no_link:
        return f"``{text}``", "marked ! (no link)"
    for candidate in candidates(role, target, scopes, line):
        public = inventory.resolve(candidate)
        if public is not None:
            return f"[``{text}``][{public}]", ""
    return f"``{text}``", f"{target} is not on a reference page"


def rewrite_source(
    path: Path, inventory: Inventory, limit: int, fill: int
) -> tuple[str, list[Rewrite]]:
    source = path.read_text()
    module = module_name(path)
    scopes = Scopes(module, path.name == "__init__.py")
    scopes.visit(ast.parse(source))
    line_starts = [0]
    for text_line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(text_line))

    def offset(row: int, col: int) -> int:
        return line_starts[row - 1] + col

    edits: list[tuple[int, int, str]] = []
    rewrites: list[Rewrite] = []
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type not in (tokenize.STRING, tokenize.COMMENT):
            continue
        start = offset(*token.start)
        in_comment = token.type == tokenize.COMMENT
        for match in ROLE.finditer(token.string):
            line = token.start[0] + token.string.count("\n", 0, match.start())
            new, why = convert(
                match["role"], match["body"], scopes, line, inventory, in_comment
            )
            edits.append((start + match.start(), start + match.end(), new))
            rewrites.append(Rewrite(line, match[0], new, why))
    for begin, end, new in sorted(edits, reverse=True):
        source = source[:begin] + new + source[end:]
    changed = {rewrite.line for rewrite in rewrites}
    return rewrap(source, docstring_ranges(source), changed, limit, fill), rewrites


def docstring_ranges(source: str) -> list[tuple[int, int]]:
    """First and last line (1-based) of every docstring in ``source``."""
    ranges = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for first, second in zip([None, *body], body, strict=False):
            # A docstring: a string statement first in a body, or right after
            # an assignment (an attribute's docstring).
            if not (
                isinstance(second, ast.Expr)
                and isinstance(second.value, ast.Constant)
                and isinstance(second.value.value, str)
            ):
                continue
            if first is None or isinstance(first, ast.Assign | ast.AnnAssign):
                ranges.append((second.lineno, second.end_lineno or second.lineno))
    return sorted(ranges)


# A code span or an autorefs link counts as one word: never broken.
ATOM = re.compile(r"(?:\[[^\]]*\]\[[^\]]*\]|``[^`]*``|`[^`]*`|\S)+")
SECTION = re.compile(
    r"^\s*(Args|Arguments|Attributes|Example|Examples|Keyword Args|Methods|Note|"
    r"Notes|Other Parameters|Parameters|Raises|Returns|See Also|Todo|Warning|"
    r"Warnings|Warns|Yields)\s*:\s*$"
)
# Sections whose lines are "name: description" entries, continued 4 deeper.
ENTRY_SECTIONS = {
    "Args",
    "Arguments",
    "Attributes",
    "Keyword Args",
    "Methods",
    "Other Parameters",
    "Parameters",
    "Raises",
    "Warns",
}
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def rewrap(
    source: str,
    ranges: list[tuple[int, int]],
    changed: set[int],
    limit: int,
    fill: int,
) -> str:
    """Rewrap the docstring lines a rewrite made longer than ``limit`` to ``fill``.

    The words that no longer fit move to the start of the next line when that
    line continues the same paragraph, list item or Args entry, else to a new
    line with the paragraph's continuation indent; this repeats down the
    paragraph. Code fences and doctest lines are left as they are.
    """
    lines = source.split("\n")
    for first, last in reversed(ranges):
        if not any(first <= line <= last for line in changed):
            continue
        block = lines[first - 1 : last]
        lines[first - 1 : last] = rewrap_block(block, limit, fill)
    return "\n".join(lines)


def rewrap_block(block: list[str], limit: int, fill: int) -> list[str]:
    # What each line is: an Args-style entry start, a list item, a section
    # header, verbatim (code fence, doctest) or prose.
    kinds: list[str] = []
    entry_indent: int | None = None
    section_indent: int | None = None
    fenced = False
    for line in block:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            kinds.append("verbatim")
            continue
        closing = bool(kinds) and stripped.startswith(('"""', "'''"))
        if fenced or closing or stripped.startswith(">>>") or not stripped:
            kinds.append("verbatim" if stripped else "blank")
            continue
        indent = indent_of(line)
        if section_indent is not None and indent <= section_indent:
            section_indent = entry_indent = None
        section = SECTION.match(line)
        if section:
            # Returns, Note, Example...: prose, continued at the same indent.
            if section[1] in ENTRY_SECTIONS:
                section_indent, entry_indent = indent, None
            kinds.append("section")
            continue
        if section_indent is not None and entry_indent is None:
            entry_indent = indent
        if entry_indent is not None and indent == entry_indent:
            kinds.append("entry")
        elif LIST_ITEM.match(line):
            kinds.append("item")
        else:
            kinds.append("prose")

    def continuation_indent(index: int) -> int:
        line = block[index]
        following = index + 1
        if (
            kinds[index] in ("entry", "item")
            and following < len(block)
            and kinds[following] == "prose"
            and indent_of(block[following]) > indent_of(line)
        ):
            return indent_of(block[following])
        if kinds[index] == "entry":
            return indent_of(line) + 4
        item = LIST_ITEM.match(line)
        if kinds[index] == "item" and item:
            return len(item.group(0))
        return indent_of(line)

    index = 0
    # A line over ``limit`` is refilled to ``fill``, and so are the lines the
    # words it lost were pushed into, which keeps the paragraph's own width.
    width = limit
    while index < len(block):
        line = block[index]
        if len(line) <= width or kinds[index] in ("verbatim", "section", "blank"):
            width = limit
            index += 1
            continue
        width = fill
        indent = indent_of(line)
        head = line[:indent]
        atoms = ATOM.findall(line[indent:])
        # A list item's marker stays with its first word.
        keep = 2 if kinds[index] == "item" else 1
        fit = len(atoms)
        while fit > keep and len(head + " ".join(atoms[:fit])) > fill:
            fit -= 1
        if fit == len(atoms):
            width = limit
            index += 1
            continue
        block[index] = head + " ".join(atoms[:fit])
        overflow = " ".join(atoms[fit:])
        cont = continuation_indent(index)
        following = index + 1
        if (
            following < len(block)
            and kinds[following] == "prose"
            and indent_of(block[following]) == cont
        ):
            block[following] = " " * cont + overflow + " " + block[following].lstrip()
        else:
            block.insert(following, " " * cont + overflow)
            kinds.insert(following, "prose")
        index += 1
    return block


def python_files(paths: list[Path], excludes: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in found:
            resolved = file.resolve()
            if any(resolved.is_relative_to(e.resolve()) for e in excludes):
                continue
            files.append(file)
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="files or directories")
    parser.add_argument(
        "--inventory",
        type=Path,
        default=Path("build/site/objects.inv"),
        help="the built site's objects.inv (default: %(default)s)",
    )
    parser.add_argument(
        "--exclude", type=Path, action="append", default=[], help="skip this path"
    )
    parser.add_argument("--dry-run", action="store_true", help="only print")
    parser.add_argument("--line-length", type=int, default=88, help="ruff's limit")
    parser.add_argument(
        "--fill", type=int, default=80, help="width of a rewrapped docstring line"
    )
    args = parser.parse_args()

    inventory = Inventory.load(args.inventory)
    links = plain = 0
    too_long: list[str] = []
    for path in python_files(args.paths, args.exclude):
        new_source, rewrites = rewrite_source(
            path, inventory, args.line_length, args.fill
        )
        if not rewrites:
            continue
        for rewrite in rewrites:
            note = f"  (plain: {rewrite.why})" if rewrite.why else ""
            print(f"{path}:{rewrite.line}: {rewrite.old} -> {rewrite.new}{note}")
            if rewrite.why:
                plain += 1
            else:
                links += 1
        was_long = {
            text
            for text in path.read_text().splitlines()
            if len(text) > args.line_length
        }
        for number, text in enumerate(new_source.splitlines(), start=1):
            if len(text) > args.line_length and text not in was_long:
                too_long.append(f"{path}:{number}: {len(text)} characters")
        if not args.dry_run:
            path.write_text(new_source)
    print(f"\n{links} links, {plain} plain code", file=sys.stderr)
    if too_long:
        print("\nLines now over the limit (rewrap by hand):", file=sys.stderr)
        print("\n".join(too_long), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
