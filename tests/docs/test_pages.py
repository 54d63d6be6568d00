"""The pages show only code that runs, and point only at what exists.

Every Python block in docs/ is a snippet include of a file under docs_src/
(run by test_docs_src.py), or says right above it, in an HTML comment
``<!-- not run: why -->``, why it is not run. Every Python block in README.md
is a docs_src/ file verbatim, and the output shown after it is that file's
output. ``mkdocs build --strict`` (./scripts/docs build, CI) checks the links
and references of the site; these tests check what it cannot, and run
without the docs extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from .test_docs_src import ROOT, example_files

DOCS = ROOT / "docs"
README = ROOT / "README.md"
PYTHON = {"python", "py", "python3", "pycon"}
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$')
_NOT_RUN = re.compile(r"^\s*<!-- not run: \S.* -->\s*$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@dataclass
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    body: str
    preceding: str  # the last non-blank line before the fence

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order."""
    found: list[Block] = []
    lines = path.read_text().splitlines()
    index = 0
    previous = ""
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            if lines[index].strip():
                previous = lines[index]
            index += 1
            continue
        indent, fence, language = match.groups()
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines) and not lines[index].strip().startswith(fence):
            body.append(lines[index].removeprefix(indent))
            index += 1
        found.append(Block(path, start + 1, language, "\n".join(body) + "\n", previous))
        previous = lines[index] if index < len(lines) else ""
        index += 1
    return found


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def included(block: Block) -> list[str]:
    """The files a block includes, or [] when it is not only includes."""
    lines = [line for line in block.body.splitlines() if line.strip()]
    paths = [_SNIPPET.match(line) for line in lines]
    if not lines or None in paths:
        return []
    return [match[1] for match in paths if match is not None]


def _target(snippet: str) -> Path:
    # pymdownx.snippets: "path", "path:3:9" (lines) or "path:section".
    return ROOT / re.sub(r":[^/]*$", "", snippet)


def test_every_python_block_in_the_docs_is_run_or_says_why_not() -> None:
    liars = [
        str(block)
        for page in pages()
        for block in blocks(page)
        if block.language in PYTHON
        and not included(block)
        and not _NOT_RUN.match(block.preceding)
    ]
    assert not liars, (
        "Python blocks neither included from docs_src/ nor marked"
        f" `<!-- not run: why -->`: {liars}"
    )


def test_every_included_file_exists() -> None:
    missing = [
        f"{page.relative_to(ROOT)}: {match[1]}"
        for page in pages()
        for line in page.read_text().splitlines()
        if (match := _SNIPPET.match(line)) is not None
        and not _target(match[1]).is_file()
    ]
    assert not missing, missing


def test_every_example_is_shown_on_a_page() -> None:
    shown = {
        _target(match[1]).resolve()
        for page in pages()
        for line in page.read_text().splitlines()
        if (match := _SNIPPET.match(line)) is not None
    }
    orphans = [
        str(path.relative_to(ROOT)) for path in example_files() if path not in shown
    ]
    assert not orphans, f"examples no page includes: {orphans}"


def test_every_python_block_in_the_readme_is_an_example_and_shows_its_output() -> None:
    examples = {path.read_text(): path for path in example_files()}
    readme = blocks(README)
    checked = 0
    for block, following in zip(readme, [*readme[1:], None], strict=True):
        if block.language not in PYTHON:
            continue
        assert block.body in examples, f"{block}: not a docs_src/ file verbatim"
        expected = examples[block.body].with_suffix(".txt")
        if expected.exists():
            assert following is not None and following.language == "text", (
                f"{block}: a ```text block with its output must follow"
            )
            assert following.body == expected.read_text(), (
                f"{following}: not the output"
            )
        checked += 1
    assert checked >= 1, "the README's quickstart is gone"


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", [README, *pages()], ids=_relative)
def test_relative_links_point_at_files_that_exist(path: Path) -> None:
    # Links in prose only: code (fenced or inline) may contain "](".
    fenced = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1", re.S | re.M)
    prose = fenced.sub("", path.read_text())
    prose = re.sub(r"`[^`\n]*`", "", prose)
    broken = []
    for link in _LINK.findall(prose):
        if re.match(r"^[a-z]+:", link) or link.startswith("#"):
            continue
        target = (path.parent / link.split("#")[0]).resolve()
        if not target.exists():
            broken.append(link)
    assert not broken, broken
