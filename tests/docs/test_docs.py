"""The documentation holds together: every relative link in README.md and docs/ names a
file that exists, and every lesson folder has its page."""

import re

from tests.conftest import ROOT

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ANCHOR = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation gone, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_names_a_file():
    broken = []
    for page in pages():
        for target in LINK.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_every_lesson_has_a_page_and_the_readme_links_it():
    readme = (ROOT / "README.md").read_text()
    for lesson in sorted((ROOT / "tutorial").iterdir()):
        if lesson.is_dir() and (lesson / "program.py").exists():
            page = ROOT / "docs" / f"{lesson.name}.md"
            assert page.exists(), f"{lesson.name} has no page in docs/"
            assert f"docs/{lesson.name}.md" in readme, f"README does not link {lesson.name}"


def test_every_anchor_names_a_heading():
    broken = []
    for page in pages():
        for target, anchor in ANCHOR.findall(page.read_text()):
            linked = (page.parent / target) if target else page
            if "://" in target or not linked.exists():
                continue
            headings = {slug(line.lstrip("#")) for line in linked.read_text().splitlines() if line.startswith("#")}
            if anchor not in headings:
                broken.append(f"{page.relative_to(ROOT)} -> {target}#{anchor}")
    assert broken == []
