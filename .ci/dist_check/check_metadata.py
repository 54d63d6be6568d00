"""What PyPI and pip will see in the built distributions.

``python check_metadata.py WHEEL SDIST``: the wheel carries the licence, the
classifiers and the project URLs, and its long description reads well on
PyPI (absolute links only, no contributor set-up commands at its top); the
sdist carries what its tests need (tests/, docs/, docs_src/, examples/,
benchmarks/, the constraints files, the licence) and nothing of a checkout's
local state. Exits non-zero with every problem listed.
"""

from __future__ import annotations

import email.parser
import re
import sys
import tarfile
import zipfile
from pathlib import PurePosixPath

REQUIRED_CLASSIFIERS = {
    "Framework :: AnyIO",
    "Framework :: AsyncIO",
    "Framework :: Trio",
    "Typing :: Typed",
    "License :: OSI Approved :: MIT License",
}
REQUIRED_URLS = {"Documentation", "Source", "Issues", "Changelog"}
SDIST_TOP = {
    "actors",
    "tests",
    "docs",
    "docs_src",
    "examples",
    "benchmarks",
    "constraints.txt",
    "constraints-lowest.txt",
    "LICENSE",
    "README.md",
    "CHANGELOG.md",
    "pyproject.toml",
    "mkdocs.yml",
}
SDIST_NEVER = {".venv", ".venv-lowest", "build", ".git", ".compare"}
# A Markdown link or image whose target is not absolute: dead on PyPI.
RELATIVE_LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")


def check_wheel(path: str) -> list[str]:
    problems: list[str] = []
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(wheel.read(metadata_name).decode())
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append("wheel: no .dist-info/licenses/LICENSE")
    expression = metadata.get("License-Expression")
    if expression != "MIT":
        problems.append(f"wheel: License-Expression {expression!r}")
    classifiers = set(metadata.get_all("Classifier") or [])
    # License-Expression supersedes the licence classifier (PEP 639): either.
    if metadata.get("License-Expression") == "MIT":
        classifiers.add("License :: OSI Approved :: MIT License")
    for missing in sorted(REQUIRED_CLASSIFIERS - classifiers):
        problems.append(f"wheel: classifier missing: {missing}")
    if not any(c.startswith("Development Status ::") for c in classifiers):
        problems.append("wheel: no Development Status classifier")
    python = "Programming Language :: Python :: 3."
    if not any(c.startswith(python) for c in classifiers):
        problems.append("wheel: no Python version classifier")
    if not metadata.get("Keywords"):
        problems.append("wheel: no keywords")
    urls = {u.split(",", 1)[0].strip() for u in metadata.get_all("Project-URL") or []}
    for missing in sorted(REQUIRED_URLS - urls):
        problems.append(f"wheel: Project-URL missing: {missing}")
    if metadata.get("Description-Content-Type") != "text/markdown":
        problems.append("wheel: the description is not Markdown")
    description = metadata.get_payload()
    assert isinstance(description, str)
    for link in RELATIVE_LINK.findall(description):
        problems.append(f"wheel: relative link in the description: {link}")
    head = "\n".join(description.splitlines()[:15])
    if "./scripts/" in head:
        problems.append("wheel: contributor commands at the top of the description")
    if "actor runtime" not in head:
        problems.append("wheel: the description does not start with what it is")
    return problems


def check_sdist(path: str) -> list[str]:
    problems: list[str] = []
    with tarfile.open(path) as sdist:
        members = [PurePosixPath(m.name) for m in sdist.getmembers()]
    top = {m.parts[1] for m in members if len(m.parts) > 1}
    for missing in sorted(SDIST_TOP - top):
        problems.append(f"sdist: {missing} missing")
    for member in members:
        if SDIST_NEVER & set(member.parts) or member.suffix == ".pyc":
            problems.append(f"sdist: carries {member}")
    if not any(m.parts[1:3] == ("tests", "conftest.py") for m in members):
        problems.append("sdist: tests/conftest.py missing")
    return problems


def main() -> int:
    wheel, sdist = sys.argv[1:]
    problems = check_wheel(wheel) + check_sdist(sdist)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
