"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, props, text) => {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  if (text !== undefined) node.textContent = text;
  return node;
};
const MARK = {pass: "", fail: "F", xfail: "x", xpass: "X", flaky: "~", error: "E", crash: "C",
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
    section.appendChild(el("h2", {}, table.family + " \u00b7 " + table.axis));
    section.appendChild(el("p", {}, DATA.families[table.family] || ""));
    const scroll = el("div", {className: "scroll"});
    const grid = el("table");
    const head = el("tr");
    head.appendChild(el("th", {}, "case \u00b7 check"));
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
        row.variant + " \u00b7 " + row.check));
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
  panel.appendChild(el("strong", {}, row.case + " \u00b7 " + row.check + " @ " + cellId));
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
