"""reports/matrix.html: one self-contained page (no network) to explore the matrix.

A colour grid of case · check × release per family and axis, with a legend,
sticky headers, filters (family, check, outcome, text) and a detail panel for
the clicked result (message, phase, installed versions, repro command). The
data travels as JSON inside the page and the grid is built in the browser, so a
5,000-row suite stays a few megabytes and filters stay fast.
"""

from __future__ import annotations

import json
from typing import Any

from compat.grid import build_tables, variant
from compat.outcomes import CellState
from compat.report import Report
from compat.repro import repro_command

COLOURS = {
    "pass": "#2e9d57",
    "fail": "#d33a2c",
    "xfail": "#e8a33d",
    "xpass": "#7b4fd6",
    "error": "#b3126f",
    "crash": "#3b0d0d",
    "timeout": "#8a5a00",
    "skip": "#b9c2cc",
    "n/a": "#eef1f4",
    "install-error": "#6b7785",
    "import-error": "#6b7785",
}


def page_data(report: Report) -> dict[str, Any]:
    """Everything the page shows, as plain JSON (sorted, so the page is deterministic)."""
    tables = []
    for table in build_tables(report):
        rows = []
        for row in table.rows:
            details = [
                [r.phase, r.detail if r.outcome.value != "pass" else "", r.known]
                if r
                else ["", "", ""]
                for r in row.results
            ]
            rows.append({
                "case": row.case, "variant": variant(row.case, table.family),
                "check": row.check, "entries": list(row.entries), "details": details,
            })  # fmt: skip
        tables.append({
            "family": table.family, "axis": table.axis, "labels": list(table.labels),
            "cells": [c.id for c in table.cells], "rows": rows,
        })  # fmt: skip
    cells = {
        c.id: {
            "onnx": c.onnx,
            "onnxruntime": c.onnxruntime,
            "packages": c.packages,
            "python": c.python,
            "state": c.state.value,
            "summary": c.summary if c.state is not CellState.READY else "",
        }
        for c in report.cells
    }
    return {
        "tables": tables,
        "cells": cells,
        "families": report.families,
        "descriptions": {c.id: c.description for c in report.cases},
        "repro": {c.id: repro_command(c, []) for c in report.cells},
        "colours": COLOURS,
        "order": list(COLOURS),  # the legend's order (the JSON's keys are sorted)
    }


def render_html(report: Report) -> str:
    data = json.dumps(page_data(report), sort_keys=True, ensure_ascii=False)
    data = data.replace("</", "<\\/")  # nothing in the data may close the script element
    return PAGE.replace("/*DATA*/", data)


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>onnx-compat matrix</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2733; }
  header { padding: 12px 16px; border-bottom: 1px solid #d8dee4; background: #f7f9fb; }
  h1 { font-size: 18px; margin: 0 0 8px; }
  .controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
  .controls label { display: flex; gap: 4px; align-items: center; }
  .legend { display: flex; flex-wrap: wrap; gap: 10px; margin-top: 8px; font-size: 12px; }
  .legend span::before { content: ""; display: inline-block; width: 12px; height: 12px;
    margin-right: 4px; vertical-align: -2px; background: var(--c); border-radius: 2px; }
  main { padding: 8px 16px 80px; }
  section h2 { font-size: 15px; margin: 18px 0 4px; }
  section p { margin: 0 0 6px; color: #4a5663; }
  .scroll { overflow: auto; max-height: 80vh; border: 1px solid #d8dee4; }
  table { border-collapse: separate; border-spacing: 0; }
  th, td { padding: 3px 6px; border-bottom: 1px solid #eef1f4; white-space: nowrap; }
  thead th { position: sticky; top: 0; background: #fff; z-index: 2; font-weight: 600;
    border-bottom: 1px solid #c8d0d8; }
  tbody th { position: sticky; left: 0; background: #fff; z-index: 1; text-align: left;
    font-weight: normal; }
  thead th:first-child { left: 0; z-index: 3; }
  td.o { width: 22px; min-width: 22px; cursor: pointer; background: var(--c);
    border-right: 1px solid #fff; color: #fff; font-size: 11px; text-align: center; }
  td.o:hover, td.sel { outline: 2px solid #1d2733; outline-offset: -2px; }
  #detail { position: fixed; right: 12px; bottom: 12px; width: min(560px, 90vw);
    max-height: 50vh; overflow: auto; background: #fff; border: 1px solid #98a4b0;
    border-radius: 6px; padding: 10px 12px; box-shadow: 0 4px 16px rgba(0,0,0,.15); }
  #detail[hidden] { display: none; }
  #detail dt { font-weight: 600; margin-top: 4px; }
  #detail dd { margin: 0; white-space: pre-wrap; word-break: break-word; }
  #detail code { background: #f0f3f6; padding: 1px 4px; }
  #count { color: #4a5663; }
</style>
</head>
<body>
<header>
  <h1>onnx-compat matrix</h1>
  <div class="controls">
    <label>family <select id="family"><option value="">all</option></select></label>
    <label>check <select id="check"><option value="">all</option></select></label>
    <label>outcome <select id="outcome"><option value="">any</option></select></label>
    <label>case <input id="text" type="search" placeholder="filter by case id"></label>
    <span id="count"></span>
  </div>
  <div class="legend" id="legend"></div>
</header>
<main id="tables"></main>
<aside id="detail" hidden></aside>
<script type="application/json" id="data">/*DATA*/</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, props, text) => {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  if (text !== undefined) node.textContent = text;
  return node;
};
const MARK = {pass: "", fail: "F", xfail: "x", xpass: "X", error: "E", crash: "C",
  timeout: "T", skip: "s", "n/a": "", "install-error": "I", "import-error": "M"};

function fillSelect(select, values) {
  for (const v of values) select.appendChild(el("option", {value: v}, v));
}

function build() {
  const families = [...new Set(DATA.tables.map((t) => t.family))];
  const checks = [...new Set(DATA.tables.flatMap((t) => t.rows.map((r) => r.check)))];
  const outcomes = DATA.order;
  fillSelect($("family"), families);
  fillSelect($("check"), checks);
  fillSelect($("outcome"), outcomes);
  for (const o of outcomes) {
    const item = el("span", {}, o);
    item.style.setProperty("--c", DATA.colours[o]);
    $("legend").appendChild(item);
  }
  const main = $("tables");
  DATA.tables.forEach((table, ti) => {
    const section = el("section");
    section.dataset.family = table.family;
    section.appendChild(el("h2", {}, table.family + " \\u00b7 " + table.axis));
    section.appendChild(el("p", {}, DATA.families[table.family] || ""));
    const scroll = el("div", {className: "scroll"});
    const grid = el("table");
    const head = el("tr");
    head.appendChild(el("th", {}, "case \\u00b7 check"));
    for (const label of table.labels) head.appendChild(el("th", {}, label));
    grid.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    const rows = document.createDocumentFragment();
    table.rows.forEach((row, ri) => {
      const tr = el("tr");
      tr.dataset.case = row.case;
      tr.dataset.check = row.check;
      tr.dataset.outcomes = " " + row.entries.join(" ") + " ";
      tr.appendChild(el("th", {title: DATA.descriptions[row.case] || ""},
        row.variant + " \\u00b7 " + row.check));
      row.entries.forEach((entry, ci) => {
        const td = el("td", {className: "o", title: table.labels[ci] + ": " + entry},
          MARK[entry] || "");
        td.style.setProperty("--c", DATA.colours[entry]);
        td.dataset.at = ti + "," + ri + "," + ci;
        tr.appendChild(td);
      });
      rows.appendChild(tr);
    });
    body.appendChild(rows);
    grid.appendChild(body);
    scroll.appendChild(grid);
    section.appendChild(scroll);
    main.appendChild(section);
  });
}

function applyFilters() {
  const family = $("family").value, check = $("check").value;
  const outcome = $("outcome").value, text = $("text").value.trim().toLowerCase();
  let shown = 0, total = 0;
  for (const section of document.querySelectorAll("section")) {
    let visible = 0;
    const familyOk = !family || section.dataset.family === family;
    for (const tr of section.querySelectorAll("tbody tr")) {
      total += 1;
      const ok = familyOk && (!check || tr.dataset.check === check)
        && (!outcome || tr.dataset.outcomes.includes(" " + outcome + " "))
        && (!text || tr.dataset.case.toLowerCase().includes(text));
      tr.hidden = !ok;
      if (ok) visible += 1;
    }
    section.hidden = visible === 0;
    shown += visible;
  }
  $("count").textContent = shown + " of " + total + " rows";
}

function showDetail(td) {
  const [ti, ri, ci] = td.dataset.at.split(",").map(Number);
  const table = DATA.tables[ti], row = table.rows[ri];
  const cellId = table.cells[ci], cell = DATA.cells[cellId];
  const [phase, detail, known] = row.details[ci];
  const entry = row.entries[ci];
  const panel = $("detail");
  panel.replaceChildren();
  panel.appendChild(el("strong", {}, row.case + " \\u00b7 " + row.check + " @ " + cellId));
  const list = el("dl");
  const add = (term, value) => {
    if (!value) return;
    list.appendChild(el("dt", {}, term));
    list.appendChild(el("dd", {}, value));
  };
  add("outcome", entry + (phase ? " @ " + phase : ""));
  add("message", detail || cell.summary);
  if (known) {
    list.appendChild(el("dt", {}, "known bug"));
    const link = el("a", {href: known, target: "_blank", rel: "noopener"}, known);
    list.appendChild(el("dd")).appendChild(link);
  }
  add("installed", Object.entries(cell.packages).map(([k, v]) => k + " " + v).join(", ")
    + (cell.python ? ", Python " + cell.python : ""));
  add("reproduce", DATA.repro[cellId] + " --cases " + row.case);
  panel.appendChild(list);
  panel.hidden = false;
  document.querySelectorAll("td.sel").forEach((node) => node.classList.remove("sel"));
  td.classList.add("sel");
}

build();
applyFilters();
for (const id of ["family", "check", "outcome", "text"]) {
  $(id).addEventListener("input", applyFilters);
  $(id).addEventListener("change", applyFilters);
}
$("tables").addEventListener("click", (event) => {
  const td = event.target.closest("td.o");
  if (td) showDetail(td);
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") $("detail").hidden = true;
});
</script>
</body>
</html>
"""
