"""Every relative link of the user docs resolves: the file is in the repository, and the
anchor is a heading of it, as GitHub names headings (what a reader clicks, in a clone or on
GitHub). A section renamed or moved fails here, naming each link that pointed at it.

The README's links are made absolute for the package index at build time (hatch_build.py);
test_distribution.py checks that rewrite, this test what the links point at."""

from __future__ import annotations

import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USER_DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "SECURITY.md",
             *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^()\s]+)\)")
"""An inline link's or image's target: ``](target)``."""
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    """Every heading's anchor in ``path``; a repeated one gets ``-1``, ``-2``, ... ."""
    found: list[str] = []
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", path.read_text("utf-8")),
                              re.MULTILINE):
        name = slug(heading)
        count = sum(1 for a in found if a == name or re.fullmatch(rf"{re.escape(name)}-\d+", a))
        found.append(name if count == 0 else f"{name}-{count}")
    return frozenset(found)


def broken(doc: Path) -> list[str]:
    found = []
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), doc.read_text("utf-8"))
    for number, line in enumerate(prose.splitlines(), start=1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            where = f"{doc.relative_to(ROOT)}:{number}: {target}"
            if not file.exists():
                found.append(f"{where}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                found.append(f"{where}: no heading {anchor!r} in {file.relative_to(ROOT)}")
    return found


def test_every_relative_link_resolves():
    assert len(USER_DOCS) > 10
    found = [line for doc in USER_DOCS for line in broken(doc)]
    assert found == [], "links that point at nothing:\n" + "\n".join(found)


def test_the_rule_finds_broken_links(tmp_path: Path, monkeypatch):
    """GitHub's anchors; a missing file or heading is found, code blocks are not read."""
    assert slug("Set-up, the main job and CI") == "set-up-the-main-job-and-ci"
    assert slug("Standalone: `tronenergy-receiver`") == "standalone-tronenergy-receiver"
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# Top\n\n## Two\n\n## Two\n\n```\n## Not one\n```\n")
    doc = tmp_path / "b.md"
    doc.write_text("[ok](a.md#two-1) [ok](#b) [no](a.md#not-one) [no](c.md) [ok](a.md)\n"
                   "# B\n```\n[not read](d.md)\n```\n")
    assert [line.split(": ", 1)[1] for line in broken(doc)] == [
        "a.md#not-one: no heading 'not-one' in a.md", "c.md: no such file"]
