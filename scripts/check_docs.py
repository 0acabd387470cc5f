"""Check the documentation (``make docs``, part of ``make test``): README.md and docs/*.md.

Every relative link must name a file or folder that exists, and its ``#anchor`` must match a heading
of the Markdown page it points to, slugged as GitHub renders it (lower case, punctuation dropped,
spaces to hyphens, ``-1``, ``-2`` for a repeated heading); every page of docs/ must be linked from
another page; README.md must stay under ``MAX_README_BYTES``, so it stays the pitch, the two
commands, the run-flow diagram and the way into docs/. Links and headings inside code (fenced
blocks, inline spans) are not links or headings. Web links (``https:``, ``mailto:``) are not
fetched: the checks need no network. Standard library only.

    python scripts/check_docs.py [ROOT]     # exit 1 with one line per problem, path:line: what
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parents[1]
MAX_README_BYTES = 15_000

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^\s<>()]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")


@dataclass(frozen=True)
class Problem:
    """One broken thing, where it is."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Link:
    line: int
    target: str


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text (links and code marks dropped) in lower case,
    every character but letters, digits, ``_``, ``-`` and spaces dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def _outside_code(text: str) -> list[tuple[int, str]]:
    """(line number, line) for every line outside a fenced code block."""
    lines: list[tuple[int, str]] = []
    fence = ""
    for number, line in enumerate(text.splitlines(), start=1):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        lines.append((number, line))
    return lines


def anchors(text: str) -> set[str]:
    """Every anchor a page offers: its headings' slugs (repeats numbered) and HTML anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _outside_code(text):
        found.update(_HTML_ANCHOR.findall(line))
        heading = _HEADING.match(line)
        if heading is None:
            continue
        slug = github_slug(heading.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(text: str) -> list[Link]:
    """Every link of a page outside code: inline ``[text](target)`` and reference definitions."""
    found: list[Link] = []
    for number, line in _outside_code(text):
        prose = _INLINE_CODE.sub("", line)
        found.extend(Link(number, match.group(1)) for match in _LINK.finditer(prose))
        reference = _REFERENCE.match(prose)
        if reference is not None:
            found.append(Link(number, reference.group(1)))
    return found


def pages(root: Path) -> list[Path]:
    """The checked pages: README.md and every Markdown file of docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _check_link(root: Path, page: Path, link: Link, linked: set[Path]) -> Problem | None:
    where = page.relative_to(root).as_posix()
    if not link.target:
        return Problem(where, link.line, "a link with no target")
    if _SCHEME.match(link.target):
        return None
    path_part, _, anchor = link.target.partition("#")
    target = (page.parent / unquote(path_part)).resolve() if path_part else page
    if not target.exists():
        return Problem(where, link.line, f"{link.target}: no such file ({path_part} from {where})")
    if target != page:
        linked.add(target)
    if not anchor or target.suffix != ".md":
        return None  # an anchor into code (GitHub's #L10) is not checked
    if unquote(anchor) not in anchors(target.read_text(encoding="utf-8")):
        name = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
        return Problem(where, link.line, f"{link.target}: {name} has no heading whose anchor is #{anchor}")
    return None


def check(root: Path, max_readme_bytes: int = MAX_README_BYTES) -> list[Problem]:
    """Every problem of the documentation under ``root``; empty when it is sound."""
    root = root.resolve()
    readme = root / "README.md"
    if not readme.is_file():
        return [Problem("README.md", 0, "missing")]
    problems: list[Problem] = []
    size = readme.stat().st_size
    if size >= max_readme_bytes:
        limit = f"it must stay under {max_readme_bytes:,}: move sections to docs/"
        problems.append(Problem("README.md", 0, f"{size:,} bytes, {limit}"))
    linked: set[Path] = set()
    checked = pages(root)
    for page in checked:
        for link in links(page.read_text(encoding="utf-8")):
            problem = _check_link(root, page, link, linked)
            if problem is not None:
                problems.append(problem)
    for page in checked[1:]:
        if page.resolve() not in linked:
            where = page.relative_to(root).as_posix()
            problems.append(Problem(where, 0, "no page links to it (link it from docs/README.md)"))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO)
    args = parser.parse_args(argv)
    problems = check(args.root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    size = (args.root / "README.md").stat().st_size
    count = len(pages(args.root))
    print(f"docs: {count} pages, every relative link and anchor resolves; README.md {size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
