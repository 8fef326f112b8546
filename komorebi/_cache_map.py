"""The picture of a run's cache: what happened to each 64-byte line of each region.

`run.cache_report()` is the text form, for a terminal; `run.cache_map(path)` draws the same
as an SVG image with a legend and the run's findings. A line shows the most important thing
that happened to it (komorebi._records.LineState: UNTOUCHED < FRESH < FLUSHED < READ_STALE <
FLUSHED_STALE < DROPPED < UNFLUSHED), so a mistake is never hidden by what came after. Reads
are seen a page (64 lines) at a time. What is drawn comes through the backend seam: a
RegionPicture a region, and the findings.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Iterable

import numpy as np

from komorebi._records import LineState, RegionPicture

UNTOUCHED, FRESH, FLUSHED, READ_STALE, FLUSHED_STALE, DROPPED, UNFLUSHED = LineState

# state: (mark in the text form, colour in the image, words)
# The colours are Okabe and Ito's, told apart with most colour blindness; the three
# mistakes are also hatched, so that they stand out in grey too.
STATES = {
    UNTOUCHED: (".", "#e6e6e6", "not touched"),
    FRESH: ("f", "#56b4e9", "fresh from DRAM"),
    FLUSHED: ("w", "#009e73", "written and flushed"),
    READ_STALE: ("s", "#f0e442", "read before an invalidate: stale on a card"),
    FLUSHED_STALE: ("b", "#0072b2", "flushed with stale bytes the thread never wrote"),
    DROPPED: ("x", "#cc79a7", "written, then dropped by an invalidate"),
    UNFLUSHED: ("U", "#d55e00", "written, never flushed"),
}
MISTAKES = (READ_STALE, FLUSHED_STALE, DROPPED, UNFLUSHED)
TEXT_WIDTH = 64  # marks a row in the text form
TEXT_ROWS = 4  # at most; beyond, a mark stands for several lines
CELL = 9  # pixels a cell in the image
LEFT = 64  # pixels left of the cells, for the byte offsets of the rows
COLUMNS = 64
IMAGE_ROWS = 32  # at most


def _cells(states: np.ndarray, most: int) -> tuple[np.ndarray, int]:
    """STATES in at most MOST cells, each the highest of the lines it stands for; and how
    many lines a cell stands for."""
    per = max(1, -(-states.size // most))
    padded = np.zeros(-(-states.size // per) * per, dtype=np.uint8)
    padded[: states.size] = states
    return padded.reshape(-1, per).max(axis=1), per


def _counts(states: np.ndarray) -> str:
    counts = np.bincount(states, minlength=len(STATES))
    parts = [f"{counts[s]} {STATES[s][2]}" for s in sorted(STATES, reverse=True) if counts[s]]
    return "; ".join(parts)


def _title(picture: RegionPicture) -> str:
    lines = picture.states.size
    return (
        f"cluster {picture.cluster}, region {picture.name!r} (ID {picture.id}, {picture.size} bytes, "
        f"{lines} line{'s' if lines != 1 else ''}, {picture.coherence} mode)"
    )


def _by_cluster(pictures: Iterable[RegionPicture], findings: Iterable) -> list[tuple[list, list]]:
    """The pictures and the findings of each cluster, cluster by cluster."""
    pictures, findings = list(pictures), list(findings)
    clusters = sorted({p.cluster for p in pictures} | {f.cluster for f in findings})
    return [([p for p in pictures if p.cluster == c], [f for f in findings if f.cluster == c]) for c in clusters]


def _finding(finding) -> str:
    """A finding in one short line: the file by its name, not its whole path."""
    where = f"{Path(finding.file).name}:{finding.line}" if finding.file else "(no source line)"
    return (
        f"{finding.kind} in region {finding.region!r} (bytes {finding.start} to "
        f"{finding.end - 1}) at {where}, {finding.named_cores}"
    )


def cache_report(pictures: Iterable[RegionPicture], findings: Iterable) -> str:
    out = []
    for regions, found in _by_cluster(pictures, findings):
        for picture in regions:
            states = picture.states
            cells, per = _cells(states, TEXT_WIDTH * TEXT_ROWS)
            marks = "".join(STATES[int(s)][0] for s in cells)
            out.append(_title(picture))
            if per > 1:
                out.append(f"  one mark for every {per} lines, the most important of them")
            out.extend("  " + marks[i : i + TEXT_WIDTH] for i in range(0, len(marks), TEXT_WIDTH))
            out.append("  " + _counts(states))
            out.extend("  " + said for said in picture.noc)  # (a Tensix stand-in's reads and writes)
        for finding in found:
            out.append(f"finding: {_finding(finding)}")
    if not out:
        return "no regions"
    key = _wrap([f"{mark} {words}" for mark, _, words in STATES.values()], 84, "   ")
    out.append("key: " + "\n     ".join(key))
    out.append("(fills are seen a page, 64 lines, at a time)")
    return "\n".join(out)


def _wrap(parts: list[str], width: int, between: str = "; ") -> list[str]:
    lines = [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(between) + len(part) > width:
            lines.append("")
        lines[-1] += (between if lines[-1] else "") + part
    return lines


def _fill(state: int) -> str:
    return f"url(#hatch{state})" if state in MISTAKES else STATES[state][1]


def _defs() -> str:
    out = ["<defs>"]
    for state in MISTAKES:
        out.append(
            f'<pattern id="hatch{state}" width="4" height="4" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="4" height="4" fill="{STATES[state][1]}"/>'
            '<line x1="0" y1="0" x2="0" y2="4" stroke="white" stroke-width="1.2"/></pattern>'
        )
    out.append("</defs>")
    return "".join(out)


def cache_map_svg(pictures: Iterable[RegionPicture], findings: Iterable) -> str:
    """An SVG image of every region's lines, a legend, and the findings."""
    clusters = _by_cluster(pictures, findings)
    width = LEFT + COLUMNS * CELL + 16
    for regions, found in clusters:  # wide enough for the longest title or finding line
        for picture in regions:
            width = max(width, 32 + int(7.2 * len(_title(picture))))
        for finding in found:
            width = max(width, 32 + int(6.6 * len("finding: " + _finding(finding))))
    y = 34
    body = [
        '<text x="16" y="22" font-size="15" font-weight="bold">What happened to each '
        "64-byte line of each region</text>"
    ]
    for regions, found in clusters:
        for picture in regions:
            states = picture.states
            cells, per = _cells(states, COLUMNS * IMAGE_ROWS)
            y += 16
            body.append(f'<text x="16" y="{y}" font-size="12" font-weight="bold">{escape(_title(picture))}</text>')
            if per > 1:
                y += 13
                body.append(
                    f'<text x="16" y="{y}" font-size="10" fill="#555">a cell for every {per} '
                    "lines, coloured by the most important of them</text>"
                )
            y += 6
            for i, state in enumerate(cells.tolist()):
                row, column = divmod(i, COLUMNS)
                if column == 0:
                    body.append(
                        f'<text x="{LEFT - 6}" y="{y + row * CELL + CELL - 2}" font-size="8" '
                        f'fill="#555" text-anchor="end">{max(0, row * COLUMNS * per * picture.line_bytes - picture.first_offset)}</text>'
                    )
                last = min((i + 1) * per, states.size) - 1
                body.append(
                    f'<rect x="{LEFT + column * CELL}" y="{y + row * CELL}" width="{CELL - 1}" '
                    f'height="{CELL - 1}" fill="{_fill(state)}"><title>line '
                    f"{i * per}{'' if per == 1 else f' to {last}'}: "
                    f"{escape(STATES[state][2])}</title></rect>"
                )
            y += -(-cells.size // COLUMNS) * CELL + 2
            for text in _wrap(_counts(states).split("; "), 95):
                y += 12
                body.append(f'<text x="{LEFT}" y="{y}" font-size="10" fill="#333">{escape(text)}</text>')
            for text in picture.noc:  # (a Tensix stand-in's reads and writes)
                y += 12
                body.append(f'<text x="{LEFT}" y="{y}" font-size="10" fill="#0072b2">{escape(text)}</text>')
            y += 8
        for finding in found:
            y += 15
            body.append(f'<text x="16" y="{y}" font-size="11" fill="#a33c00">finding: {escape(_finding(finding))}</text>')
    y += 26
    body.append(f'<text x="16" y="{y}" font-size="12" font-weight="bold">Key</text>')
    for state, (mark, _, words) in STATES.items():
        y += 16
        body.append(f'<rect x="16" y="{y - 10}" width="12" height="12" fill="{_fill(state)}"/>')
        body.append(f'<text x="34" y="{y}" font-size="12">{escape(words)}: &#8220;{escape(mark)}&#8221; in the text form</text>')
    y += 18
    body.append(
        f'<text x="16" y="{y}" font-size="10" fill="#555">Numbers at the left are byte offsets '
        "in the region. Reads are seen a page (64 lines) at a time.</text>"
    )
    height = y + 12
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n{_defs()}\n'
        f'<rect width="{width}" height="{height}" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )
