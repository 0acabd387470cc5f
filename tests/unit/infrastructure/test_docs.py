"""The documentation's links hold (scripts/check_docs.py, ``make docs``): the repository's own README.md
and docs/*.md, and the checker itself on small pages broken on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.modules import script

REPO = Path(__file__).resolve().parents[3]


check_docs = script("check_docs")


def _site(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _messages(root: Path, **kwargs: int) -> list[str]:
    return [str(problem) for problem in check_docs.check(root, **kwargs)]


SOUND = {
    "README.md": "# tool\n\n[Guide](docs/guide.md#target-ebs), [again](docs/guide.md#setup-1)\n"
    "[code](src/a.py#L3)\n",
    "docs/guide.md": (
        "# Guide\n\n[home](../README.md#tool) and [here](#guide)\n\n"
        "#### Target `ebs`\n\n## Setup\n\n## Setup\n\n"
        "```bash\n# not a heading\n[not a link](missing.md)\n```\n"
    ),
    "src/a.py": "x = 1\n",
}


def test_the_repository_docs_are_sound() -> None:
    assert [str(problem) for problem in check_docs.check(REPO)] == [], "run `make docs`"


def test_the_readme_stays_small_and_keeps_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) < check_docs.MAX_README_BYTES
    first_section = readme.split("\n## ", 1)[0]
    assert "make demo" in first_section and "make test" in first_section
    assert "fresh Debian/Ubuntu machine" in first_section


def test_a_sound_site_passes(tmp_path: Path) -> None:
    assert _messages(_site(tmp_path, SOUND)) == []


def test_a_missing_file_is_named_with_its_line(tmp_path: Path) -> None:
    site = _site(tmp_path, {**SOUND, "docs/guide.md": SOUND["docs/guide.md"] + "\nsee [gone](gone.md)\n"})
    assert _messages(site) == ["docs/guide.md:16: gone.md: no such file (gone.md from docs/guide.md)"]


def test_a_missing_anchor_is_named(tmp_path: Path) -> None:
    site = _site(tmp_path, {**SOUND, "README.md": "# tool\n\n[Guide](docs/guide.md#target-efs)\n"})
    assert _messages(site) == [
        "README.md:3: docs/guide.md#target-efs: docs/guide.md has no heading whose anchor is #target-efs"
    ]


def test_an_anchor_of_the_same_page_and_a_heading_in_code_are_checked(tmp_path: Path) -> None:
    guide = SOUND["docs/guide.md"] + "\n[up](#setup-2) [fenced](#not-a-heading)\n"
    site = _site(tmp_path, {**SOUND, "docs/guide.md": guide})
    assert _messages(site) == [
        "docs/guide.md:16: #setup-2: docs/guide.md has no heading whose anchor is #setup-2",
        "docs/guide.md:16: #not-a-heading: docs/guide.md has no heading whose anchor is #not-a-heading",
    ]


def test_a_page_nobody_links_to_is_named(tmp_path: Path) -> None:
    site = _site(tmp_path, {**SOUND, "docs/orphan.md": "# Orphan\n\n[home](../README.md)\n"})
    assert _messages(site) == ["docs/orphan.md:0: no page links to it (link it from docs/README.md)"]


def test_a_readme_at_the_limit_is_refused(tmp_path: Path) -> None:
    site = _site(tmp_path, SOUND)
    size = (site / "README.md").stat().st_size
    assert _messages(site, max_readme_bytes=size + 1) == []
    assert _messages(site, max_readme_bytes=size) == [
        f"README.md:0: {size:,} bytes, it must stay under {size:,}: move sections to docs/"
    ]


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Past 40 configs: the Distributed Map", "past-40-configs-the-distributed-map"),
        ("Target `instance_store`", "target-instance_store"),
        (
            "Emulated EBS volumes: the EBS twin, and the throttle where it cannot run",
            "emulated-ebs-volumes-the-ebs-twin-and-the-throttle-where-it-cannot-run",
        ),
        ("The volume's own view", "the-volumes-own-view"),
        ("Metrics, dashboard, alarms", "metrics-dashboard-alarms"),
    ],
)
def test_headings_are_slugged_as_github_does(heading: str, slug: str) -> None:
    assert check_docs.github_slug(heading) == slug


def test_main_exits_1_naming_each_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = _site(tmp_path, {**SOUND, "README.md": "# tool\n\n[x](docs/nope.md)\n[Guide](docs/guide.md)\n"})
    assert check_docs.main([str(site)]) == 1
    assert "README.md:3: docs/nope.md: no such file" in capsys.readouterr().err
    assert check_docs.main([str(_site(tmp_path, SOUND))]) == 0
