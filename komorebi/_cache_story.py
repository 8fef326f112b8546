"""run.cache_story(path): the cache map over time, as one self-contained HTML page (no
network, no script from elsewhere) that steps forwards and backwards through the run's
kmx calls and findings, and shows each region's lines after each step: coloured as in the
cache map (komorebi._cache_map), the lines the step changed outlined, the step's source
line beside.

A region of many lines is drawn in at most COLUMNS x IMAGE_ROWS cells, each the highest
state of the lines it stands for, as in the cache map. Keys: the arrow keys step, Home and
End jump. The page's address may say where to start: `#step=N` shows step N, `#play=N`
steps forwards N times from the start (the tests' way to press the button).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import numpy as np

from komorebi._records import CacheStory
from komorebi._cache_map import COLUMNS, IMAGE_ROWS, MISTAKES, STATES, _cells

CELLS = COLUMNS * IMAGE_ROWS
# The page's data is JSON inside its <script>: a name holding "</script" would end the
# element, and "<!--<script" would make the parser take the page's own "</script>" as text
# (the page was blank). Escaped as JSON's \u escapes, which only strings hold, none of
# < > & is left for the HTML parser; U+2028 and U+2029 end a line in older JavaScript.
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                              "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _source_text(file: str | None, line: int | None, cache: dict) -> str:
    if not file or not line:
        return ""
    if file not in cache:
        try:
            cache[file] = Path(file).read_text(errors="replace").splitlines()
        except OSError:
            cache[file] = []
    lines = cache[file]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def story_data(story: CacheStory) -> dict:
    """What the page shows, as JSON-ready data: the regions, their cells before the
    first step, and each step's changed cells."""
    regions, now, cells = [], [], []
    for picture in story.start:
        states = picture.states.astype(np.uint8).copy()
        shown, per = _cells(states, CELLS)
        regions.append({"cluster": picture.cluster, "name": picture.name, "id": picture.id, "size": picture.size,
                        "lines": int(states.size), "per": per, "cells": int(shown.size)})
        now.append(states)
        cells.append(shown)
    index = {(p.cluster, p.id): n for n, p in enumerate(story.start)}
    sources: dict = {}
    steps = []
    for step in story.steps:
        changed = {}
        for region_id, runs in step.changes:
            n = index[(step.cluster, region_id)]
            for first, end, state in runs.tolist():
                now[n][first:end] = state
            shown, per = _cells(now[n], CELLS)
            differ = np.flatnonzero(shown != cells[n])
            if differ.size:  # [cell, its state after the step, before it]
                changed[str(n)] = [[int(c), int(shown[c]), int(cells[n][c])] for c in differ]
            cells[n] = shown
        steps.append({
            "cluster": step.cluster, "core": step.core, "what": step.what,
            "where": f"{step.file}:{step.line}" if step.file else "",
            "source": _source_text(step.file, step.line, sources), "detail": step.detail, "changed": changed,
            "us": step.microseconds,
        })
    start = [_cells(p.states.astype(np.uint8), CELLS)[0].tolist() for p in story.start]
    legend = [{"state": int(s), "mark": mark, "colour": colour, "words": words, "mistake": s in MISTAKES}
              for s, (mark, colour, words) in STATES.items()]
    return {"regions": regions, "start": start, "steps": steps, "stopped": story.stopped, "legend": legend,
            "columns": COLUMNS, "clusters": len({p.cluster for p in story.start})}


def cache_story_html(story: CacheStory, title: str = "the cache, step by step") -> str:
    content = story_data(story)
    css = "\n".join(
        f".s{entry['state']} {{ background: {entry['colour']}; }}" if not entry["mistake"] else
        f".s{entry['state']} {{ background: repeating-linear-gradient(45deg, {entry['colour']} 0 3px, #fff 3px 4px); }}"
        for entry in content["legend"])
    data = json.dumps(content, separators=(",", ":")).translate(_SCRIPT_SAFE)
    return PAGE.replace("{{TITLE}}", escape(title)).replace("{{CSS}}", css).replace("{{DATA}}", data)


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{TITLE}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 8px; }
#controls button { font-size: 14px; min-width: 44px; }
#controls input[type=range] { width: 320px; vertical-align: middle; }
#step { margin: 10px 0; padding: 8px; background: #f6f6f6; border-left: 4px solid #888; }
#step .what { font-weight: 600; }
#step code { background: #eee; padding: 1px 4px; }
#step .detail { white-space: pre-wrap; color: #a33; margin-top: 4px; }
.region { margin: 12px 0; }
.region h2 { font-size: 14px; margin: 0 0 4px; font-weight: 600; }
.grid { display: grid; gap: 1px; width: max-content; }
.cell { width: 9px; height: 9px; box-sizing: border-box; }
.cell.changed { outline: 2px solid #000; outline-offset: -1px; }
#legend span.cell { display: inline-block; vertical-align: middle; margin: 0 4px 0 12px; }
#errors { color: #c00; }
#main { display: flex; gap: 24px; align-items: flex-start; }
#steps { margin: 12px 0; padding-left: 28px; max-height: 70vh; overflow-y: auto; min-width: 280px; font-size: 13px; }
#steps li { cursor: pointer; padding: 1px 4px; }
#steps li.now { background: #ffe9a8; }
#steps li.finding { color: #a33; }
{{CSS}}
</style>
</head>
<body data-step="0">
<h1>{{TITLE}}</h1>
<div id="controls">
<button id="first" title="the start (Home)">&#xAB;</button>
<button id="prev" title="the step before (&#x2190;)">&#x25C0;</button>
<button id="next" title="the next step (&#x2192;)">&#x25B6;</button>
<button id="last" title="the last step (End)">&#xBB;</button>
<input id="slider" type="range" min="0" value="0">
<span id="counter"></span>
</div>
<div id="step"></div>
<div id="main">
<div><div id="regions"></div><div id="legend"></div></div>
<ol id="steps"></ol>
</div>
<p id="stopped"></p>
<pre id="errors"></pre>
<script>
"use strict";
window.onerror = function (message, source, line) {
  document.getElementById("errors").textContent += "error: " + message + " (line " + line + ")\\n";
};
const DATA = {{DATA}};
let at = 0;  // 0: before the first step; n: after step n
const grids = [];

let cells = DATA.start.map(function (c) { return c.slice(); });  // after step `at`

function move(n) {  // step by step from `at` to N: forwards sets each change, backwards undoes it
  for (; at < n; at++)
    for (const r in DATA.steps[at].changed) for (const c of DATA.steps[at].changed[r]) cells[r][c[0]] = c[1];
  for (; at > n; at--)
    for (const r in DATA.steps[at - 1].changed) for (const c of DATA.steps[at - 1].changed[r]) cells[r][c[0]] = c[2];
}

function build() {
  const holder = document.getElementById("regions");
  DATA.regions.forEach(function (region, r) {
    const box = document.createElement("div");
    box.className = "region";
    const title = document.createElement("h2");
    const per = region.per > 1 ? ", a cell " + region.per + " lines" : "";
    title.textContent = "cluster " + region.cluster + ", region '" + region.name + "' (ID " + region.id + ", " +
      region.size + " bytes, " + region.lines + " lines" + per + ")";
    box.appendChild(title);
    const grid = document.createElement("div");
    grid.className = "grid";
    grid.style.gridTemplateColumns = "repeat(" + Math.min(DATA.columns, region.cells) + ", 9px)";
    const cells = [];
    for (let c = 0; c < region.cells; c++) {
      const cell = document.createElement("div");
      cell.className = "cell s0";
      cell.dataset.cell = c;
      grid.appendChild(cell);
      cells.push(cell);
    }
    box.appendChild(grid);
    holder.appendChild(box);
    grids.push(cells);
  });
  const legend = document.getElementById("legend");
  for (const entry of DATA.legend) {
    const mark = document.createElement("span");
    mark.className = "cell s" + entry.state;
    legend.appendChild(mark);
    legend.appendChild(document.createTextNode(entry.words));
  }
  const slider = document.getElementById("slider");
  slider.max = DATA.steps.length;
  slider.oninput = function () { show(parseInt(slider.value, 10)); };
  document.getElementById("first").onclick = function () { show(0); };
  document.getElementById("prev").onclick = function () { show(at - 1); };
  document.getElementById("next").onclick = function () { show(at + 1); };
  document.getElementById("last").onclick = function () { show(DATA.steps.length); };
  document.onkeydown = function (event) {
    if (event.key === "ArrowRight") show(at + 1);
    else if (event.key === "ArrowLeft") show(at - 1);
    else if (event.key === "Home") show(0);
    else if (event.key === "End") show(DATA.steps.length);
  };
  document.getElementById("stopped").textContent = DATA.stopped;
  const list = document.getElementById("steps");
  DATA.steps.forEach(function (step, i) {
    const item = document.createElement("li");
    item.textContent = (when(step) ? when(step) + ": " : "") + (DATA.clusters > 1 ? "cluster " + step.cluster + ", " : "") +
      (step.core >= 0 ? "core " + step.core + ": " : "") + step.what +
      (step.where ? " (" + step.where.split("/").pop() + ")" : "");
    if (step.what.startsWith("finding") || step.what === "fault") item.className = "finding";
    item.onclick = function () { show(i + 1); };
    list.appendChild(item);
  });
}

function when(step) {  // a timed run's step: its modelled time ("": not timed)
  return step.us === null || step.us === undefined ? "" : step.us.toFixed(3) + " \u00b5s";
}

function show(n) {
  move(Math.max(0, Math.min(n, DATA.steps.length)));
  const changed = DATA.regions.map(function () { return new Set(); });
  if (at > 0) for (const r in DATA.steps[at - 1].changed) for (const c of DATA.steps[at - 1].changed[r]) changed[r].add(c[0]);
  grids.forEach(function (grid, r) {
    grid.forEach(function (cell, c) {
      cell.className = "cell s" + cells[r][c] + (changed[r].has(c) ? " changed" : "");
    });
  });
  const box = document.getElementById("step");
  box.innerHTML = "";
  const what = document.createElement("div");
  what.className = "what";
  if (at === 0) {
    what.textContent = "before the first step: " + DATA.steps.length + " steps in all" + (DATA.clusters > 1 ?
      " (each cluster's in its own order, one cluster after another: the clusters run at once)" : "");
    box.appendChild(what);
  } else {
    const step = DATA.steps[at - 1];
    what.textContent = "step " + at + (when(step) ? " at " + when(step) : "") + ": " + (step.core >= 0 ? "core " + step.core + " of " : "") +
      "cluster " + step.cluster + ": " + step.what;
    box.appendChild(what);
    if (step.where) {
      const where = document.createElement("div");
      where.textContent = step.where + "  ";
      const code = document.createElement("code");
      code.textContent = step.source;
      where.appendChild(code);
      box.appendChild(where);
    }
    if (step.detail) {
      const detail = document.createElement("div");
      detail.className = "detail";
      detail.textContent = step.detail;
      box.appendChild(detail);
    }
  }
  document.getElementById("slider").value = at;
  document.getElementById("counter").textContent = at + " / " + DATA.steps.length;
  document.body.dataset.step = at;
  document.querySelectorAll("#steps li").forEach(function (item, i) {
    item.classList.toggle("now", i === at - 1);
  });
}

build();
const asked = /[#&](step|play)=(\\d+)/.exec(location.hash);
show(asked && asked[1] === "step" ? parseInt(asked[2], 10) : 0);
if (asked && asked[1] === "play") {
  for (let i = 0; i < parseInt(asked[2], 10); i++) document.getElementById("next").click();
}
</script>
</body>
</html>
"""
