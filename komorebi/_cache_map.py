"""The picture of a run's cache: what happened to each 64-byte line of each region.

`run.cache_report()` is the text form, for a terminal; `run.cache_map(path)` draws the same
as an SVG image with a legend and the run's findings. A line shows the most important thing
that happened to it (sim.cache: UNTOUCHED < FRESH < FLUSHED < READ_STALE < DROPPED <
UNFLUSHED), so a mistake is never hidden by what came after. Reads are seen a page (64
lines) at a time.
"""

from __future__ import annotations

from html import escape
from typing import Iterable

import numpy as np

from sim.cache import DROPPED, FLUSHED, FRESH, READ_STALE, UNFLUSHED, UNTOUCHED
from sim.cluster import Cluster, Region
from sim.layout import LINE

# state: (mark in the text form, colour in the image, words)
STATES = {
    UNTOUCHED: (".", "#e6e6e6", "not touched"),
    FRESH: ("f", "#9ecae1", "fresh from DRAM"),
    FLUSHED: ("w", "#31a354", "written and flushed"),
    READ_STALE: ("s", "#fd8d3c", "read before an invalidate: stale on a card"),
    DROPPED: ("x", "#8856a7", "written, then dropped by an invalidate"),
    UNFLUSHED: ("U", "#de2d26", "written, never flushed"),
}
TEXT_WIDTH = 64  # marks a row in the text form
TEXT_ROWS = 4  # at most; beyond, a mark stands for several lines
CELL = 9  # pixels a cell in the image
COLUMNS = 64
IMAGE_ROWS = 32  # at most


def region_lines(region: Region) -> np.ndarray:
    """The state of each line that holds bytes of REGION."""
    first = region.offset // LINE
    last = -(-(region.offset + region.size) // LINE)
    return region.cache.line_states()[first:last]


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


def _title(cluster: Cluster, region: Region, lines: int) -> str:
    return (
        f"cluster {cluster.number}, region {region.name!r} (ID {region.id}, {region.size} bytes, "
        f"{lines} line{'s' if lines != 1 else ''}, {cluster.coherence} mode)"
    )


def cache_report(clusters: Iterable[Cluster]) -> str:
    out = []
    for cluster in sorted(clusters, key=lambda c: c.number):
        for region in cluster.regions:
            states = region_lines(region)
            cells, per = _cells(states, TEXT_WIDTH * TEXT_ROWS)
            marks = "".join(STATES[int(s)][0] for s in cells)
            out.append(_title(cluster, region, states.size))
            if per > 1:
                out.append(f"  one mark for every {per} lines, the most important of them")
            out.extend("  " + marks[i : i + TEXT_WIDTH] for i in range(0, len(marks), TEXT_WIDTH))
            out.append("  " + _counts(states))
        for finding in cluster.checker.findings:
            out.append(f"finding: {finding.kind} in region {finding.region!r} at {finding.where}")
    if not out:
        return "no regions"
    out.append("key: " + "   ".join(f"{mark} {words}" for mark, _, words in STATES.values()))
    return "\n".join(out)


def cache_map_svg(clusters: Iterable[Cluster]) -> str:
    """An SVG image of every region's lines, a legend, and the findings."""
    width = max(2 * 16 + COLUMNS * CELL, 760)
    y = 34
    body = [
        f'<text x="16" y="22" font-size="15" font-weight="bold">What happened to each '
        "64-byte line of each region</text>"
    ]
    for cluster in sorted(clusters, key=lambda c: c.number):
        for region in cluster.regions:
            states = region_lines(region)
            cells, per = _cells(states, COLUMNS * IMAGE_ROWS)
            y += 14
            body.append(f'<text x="16" y="{y}" font-size="12">{escape(_title(cluster, region, states.size))}</text>')
            if per > 1:
                y += 13
                body.append(
                    f'<text x="16" y="{y}" font-size="10" fill="#555">a cell for every {per} '
                    "lines, coloured by the most important of them</text>"
                )
            y += 6
            for i, state in enumerate(cells.tolist()):
                row, column = divmod(i, COLUMNS)
                body.append(
                    f'<rect x="{16 + column * CELL}" y="{y + row * CELL}" width="{CELL - 1}" '
                    f'height="{CELL - 1}" fill="{STATES[state][1]}"><title>line '
                    f"{i * per}{'' if per == 1 else f' to {min((i + 1) * per, states.size) - 1}'}: "
                    f"{escape(STATES[state][2])}</title></rect>"
                )
            y += -(-cells.size // COLUMNS) * CELL + 14
            body.append(f'<text x="16" y="{y}" font-size="10" fill="#333">{escape(_counts(states))}</text>')
            y += 8
        for finding in cluster.checker.findings:
            y += 14
            body.append(
                f'<text x="16" y="{y}" font-size="11" fill="#b30000">finding: {escape(finding.kind)} '
                f"in region {escape(repr(finding.region))} at {escape(finding.where)}</text>"
            )
    y += 24
    body.append(f'<text x="16" y="{y}" font-size="12" font-weight="bold">Key</text>')
    for state, (_, colour, words) in STATES.items():
        y += 16
        body.append(f'<rect x="16" y="{y - 10}" width="12" height="12" fill="{colour}"/>')
        body.append(f'<text x="34" y="{y}" font-size="12">{escape(words)}</text>')
    height = y + 16
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n'
        f'<rect width="{width}" height="{height}" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )
