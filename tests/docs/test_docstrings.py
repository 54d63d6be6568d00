"""The docstrings the reference pages render are Markdown, not reStructuredText.

mkdocstrings renders the docstrings of actors/ as Markdown, where a Sphinx role
(``:class:`~actors.ActorRef```) shows up as literal text. A reference is an
autorefs link, ``[``ActorRef``][actors.ActorRef]``, which ``mkdocs build
--strict`` checks, or plain code. scripts/sphinx_roles_to_autorefs.py converts
roles.
"""

from __future__ import annotations

import re

from .test_docs_src import ROOT

PACKAGE = ROOT / "actors"
_ROLE = re.compile(
    r":(?:py:)?(?:class|exc|meth|func|attr|mod|data|obj|const|type|ref|any):`"
)

def test_no_sphinx_roles_in_docstrings() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if _ROLE.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert not found, (
        "Sphinx roles render as literal text on the site; run "
        "scripts/sphinx_roles_to_autorefs.py on:\n" + "\n".join(found)
    )
