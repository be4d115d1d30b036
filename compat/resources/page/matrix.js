// after common.js: DATA, $ and el
/** Every entry's mark and colours, every square state's, every axis's short name:
 * compat/core/vocabulary.py, the one table every report reads. */
const VOCABULARY = DATA.vocabulary;
const UNEXPECTED = new Set(VOCABULARY.order.filter((e) => VOCABULARY.entries[e].unexpected));
/** The filters: [key in the URL's hash, id of the control]. */
const FILTERS = [["python", "python"], ["family", "family"], ["release", "release"],
  ["check", "check"], ["outcome", "outcome"], ["change", "change"], ["case", "text"]];
/** What changed since the baseline (compat/render/changes.py), null without one; the
 * `change` filter picks the rows (case · check) a change of the kind chosen is on. */
const CHANGES = DATA.changes || null;
const CHANGED = new Map();  // kind -> Set of "case\u0000check"
/** Where the new results are (a new failure, or unexpected on what the baseline did not
 * run: a new release, case or check): "cell\u0000case\u0000check" of each ("cell\u0000\u0000"
 * for a broken cell) -> its words, and "family\u0000cell" of each square that holds one
 * ("\u0000cell": every family's) -> the Set of their words. Marked in the strip and the
 * grid, "new since" the baseline; one legend entry for both kinds. */
const NEW_RESULTS = new Map(), NEW_SQUARES = new Map();
const NEW_SINCE = CHANGES ? "new since " + CHANGES.label : "";
/** A run of several Pythons: [Python, its title naming the releases its axes hold the
 * other package at]; empty for a run of one (no Python filter then). */
const PYTHONS = DATA.pythons || [];
const SHOWN_UNEXPECTED = 12;  // more are one click away, never in a box of their own
const SECTIONS = [];  // {section, table, body, trs, order}
const CLASS = {};  // outcome or square state -> its colour class

function paletteStyle() {
  const rules = [];
  VOCABULARY.order.forEach((state, i) => {
    const [bg, fg] = VOCABULARY.entries[state].colours;
    CLASS["o:" + state] = "k" + i;
    rules.push(`.k${i} { --c: ${bg}; --f: ${fg}; }`);
  });
  VOCABULARY.states.forEach((state, i) => {
    const [bg, fg] = VOCABULARY.squares[state].colours;
    CLASS["s:" + state] = "q" + i;
    rules.push(`.q${i} { --c: ${bg}; --f: ${fg}; }`);
  });
  document.head.appendChild(el("style", {}, rules.join("\n")));
  document.head.appendChild(el("style", {id: "dynamic"}));
}

function hashOf(values) {
  const params = new URLSearchParams();
  for (const [key] of FILTERS) if (values[key]) params.set(key, values[key]);
  const text = params.toString();
  return text ? "#" + text : "";
}

function current() {
  return Object.fromEntries(FILTERS.map(([key, id]) => [key, $(id).value.trim()]));
}

function fillSelect(select, values) {
  for (const [value, text] of values) select.appendChild(el("option", {value}, text));
}

function buildSummary() {
  const summary = DATA.summary, head = summary.headline;
  const outcomes = head.outcomes.map(([o, n]) => n.toLocaleString("en-US") + " " + o);
  $("headline").textContent = counted(head.cells, "environment")
    + (head.broken ? " (" + head.broken + " broken)" : "")
    + (head.nowheel ? " (" + head.nowheel + " n/a: no wheel for their Python)" : "")
    + (PYTHONS.length ? " on Python " + PYTHONS.map(([p]) => p).join(", ") : "")
    + " · " + counted(head.cases, "case") + " · "
    + counted(head.results, "result") + (outcomes.length ? ": " : "")
    + outcomes.join(" · ");
  const grid = $("squares");
  const axes = el("tr"), labels = el("tr");
  axes.appendChild(el("th"));
  labels.appendChild(el("th", {}, "family"));
  summary.columns.forEach((column, i) => {
    const start = i > 0 && summary.columns[i - 1].axis !== column.axis ? " start" : "";
    if (i === 0 || start) {
      const span = summary.columns.filter((c) => c.axis === column.axis).length;
      const base = column.axis.split("@")[0];  // `onnx@3.12`: onnx on Python 3.12
      const axis = VOCABULARY.axes[base];
      const name = axis && span < 6 ? axis.short : base;
      const th = el("th", {className: "axis" + start, colSpan: span, title: column.axis});
      th.appendChild(el("span", {}, name));  // its releases at least as wide as it
      if (column.python) th.dataset.python = column.python;
      axes.appendChild(th);
    }
    const th = el("th", {className: "v" + start, title: column.title});
    th.appendChild(el("span", {}, column.label));
    if (column.python) th.dataset.python = column.python;
    labels.appendChild(th);
  });
  const thead = el("thead");
  if (PYTHONS.length) thead.appendChild(pythonRow(summary.columns));
  thead.append(axes, labels);
  const body = el("tbody");
  let marked = false;
  summary.families.forEach((family, fi) => {
    const tr = el("tr");
    tr.dataset.family = family;
    const th = el("th", {title: family + (DATA.families[family] ? ": " + DATA.families[family] : "")});
    th.appendChild(el("a", {href: hashOf({family})}, family));
    tr.appendChild(th);
    summary.squares[fi].forEach(([state, number, counts], ci) => {
      const column = summary.columns[ci];
      const outcome = VOCABULARY.squares[state].filter;
      const release = column.axis + ":" + column.label;
      const start = ci > 0 && summary.columns[ci - 1].axis !== column.axis;
      const td = el("td", {className: start ? "start" : ""});
      td.dataset.release = release;
      if (column.python) td.dataset.python = column.python;
      const fresh = squareWords(family, column.cell);
      marked ||= Boolean(fresh);
      const link = el("a", {
        href: hashOf({python: column.python, family, release, outcome}),
        className: CLASS["s:" + state] + (fresh ? " new" : ""),
        title: family + " · " + column.title + ": " + state + (counts ? " (" + counts + ")" : "")
          + (fresh ? " · " + fresh : ""),
      }, number ? (number > 999 ? "1k+" : String(number)) : "");
      td.appendChild(link);
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
  grid.append(thead, body);
  for (const state of VOCABULARY.states) {
    $("states").appendChild(el("span", {className: CLASS["s:" + state],
      title: VOCABULARY.squares[state].meaning}, state));
  }
  newLegend("states", marked);
}

/** Over the axes of a run of several Pythons: each Python over its columns. */
function pythonRow(columns) {
  const tr = el("tr");
  tr.appendChild(el("th"));
  columns.forEach((column, i) => {
    if (i > 0 && columns[i - 1].python === column.python) return;
    const span = columns.filter((c) => c.python === column.python).length;
    const title = (PYTHONS.find(([p]) => p === column.python) || [, ""])[1];
    const th = el("th", {className: "axis python" + (i ? " start" : ""), colSpan: span, title});
    th.appendChild(el("span", {}, "Python " + column.python));
    th.dataset.python = column.python;
    tr.appendChild(th);
  });
  return tr;
}

function unexpectedLine(item) {
  const li = el("li");
  const where = [item.cell, item.case, item.check].filter(Boolean).join(" \u00b7 ");
  const python = item.release.split(":")[0].split("@")[1];  // a run of several Pythons
  const link = el("a", {className: "what", href: hashOf({python, family: item.family,
    release: item.release, outcome: "unexpected", case: item.case})}, where);
  link.dataset.index = DATA.unexpected.indexOf(item);
  li.append(link, el("span", {className: "badge " + CLASS["o:" + item.outcome]}, item.outcome));
  li.appendChild(el("span", {className: "why", title: item.summary}, item.summary));
  li.appendChild(el("code", {}, item.repro));
  return li;
}

function buildUnexpected() {
  const box = $("unexpected"), list = DATA.unexpected;
  if (!list.length) {
    const known = DATA.summary.headline.outcomes.find(([o]) => o === "xfail");
    box.appendChild(el("p", {id: "none"}, "No unexpected results" + (known
      ? ": every failure is a known upstream bug (" + known[1] + " xfail)." : ".")));
    return;
  }
  box.appendChild(el("h2", {}, list.length + " unexpected"));
  const first = el("ol");
  for (const item of list.slice(0, SHOWN_UNEXPECTED)) first.appendChild(unexpectedLine(item));
  box.appendChild(first);
  if (list.length > SHOWN_UNEXPECTED) {
    const more = el("details");
    more.appendChild(el("summary", {}, (list.length - SHOWN_UNEXPECTED) + " more"));
    const rest = el("ol");
    for (const item of list.slice(SHOWN_UNEXPECTED)) rest.appendChild(unexpectedLine(item));
    more.appendChild(rest);
    box.appendChild(more);
  }
}

function changeLine(item) {
  const li = el("li");
  const where = [item.case || "environment", item.check].filter(Boolean).join(" \u00b7 ");
  li.appendChild(el("a", {href: hashOf({change: item.kind, case: item.case})}, where));
  const more = item.cells.length > 1 ? " and " + (item.cells.length - 1) + " more" : "";
  li.appendChild(el("span", {title: item.cells.join(", ")}, " on " + item.cell + more
    + (item.release ? " (" + item.release + ")" : "") + ": "));
  if (item.before) li.appendChild(el("span", {className: "was"}, "was " + item.before));
  if (item.before && item.after) li.appendChild(el("span", {}, "; now "));
  if (item.after) li.appendChild(el("span", {}, item.after));
  return li;
}

function buildChanges() {
  $("change-filter").hidden = !CHANGES;
  if (!CHANGES) return;
  const box = $("changes");
  box.hidden = false;
  box.append(el("h2", {}, CHANGES.line), el("p", {}, "baseline: " + CHANGES.baseline));
  for (const [kind, heading] of CHANGES.headings) {  // the terminal's order
    const items = CHANGES.items.filter((c) => c.kind === kind);
    if (!items.length) continue;
    CHANGED.set(kind, new Set(items.map((c) => c.case + "\u0000" + c.check)));
    box.appendChild(el("h3", {}, heading + " (" + items.length + ")"));
    const list = el("ol");
    for (const item of items) list.appendChild(changeLine(item));
    box.appendChild(list);
  }
  for (const [word, releases] of [["new", CHANGES.new_releases], ["gone", CHANGES.gone_releases]]) {
    if (releases.length) box.appendChild(el("p", {}, word + " releases: " + releases.join(", ")));
  }
  const headings = new Map(CHANGES.headings);
  fillSelect($("change"), [...CHANGED.keys()].map((k) => [k, headings.get(k)]));
  markNew(new Map(CHANGES.marks));
}

/** Records where each change of a kind in `marks` (kind -> its words) is. */
function markNew(marks) {
  const families = new Map();  // case -> its family
  for (const table of DATA.tables) for (const row of table.rows) families.set(row.case, table.family);
  for (const item of CHANGES.items) {
    const words = marks.get(item.kind);
    if (!words) continue;
    for (const cell of item.cells) {
      NEW_RESULTS.set(cell + "\u0000" + item.case + "\u0000" + item.check, words);
      const square = (item.case ? families.get(item.case) || "" : "") + "\u0000" + cell;
      if (!NEW_SQUARES.has(square)) NEW_SQUARES.set(square, new Set());
      NEW_SQUARES.get(square).add(words);
    }
  }
}

/** The words of a square's new results ("" for none): each kind's once, new failures first. */
function squareWords(family, cell) {
  const words = new Set([...(NEW_SQUARES.get(family + "\u0000" + cell) || []),
    ...(NEW_SQUARES.get("\u0000" + cell) || [])]);
  const order = CHANGES ? CHANGES.marks.map(([, w]) => w) : [];
  return [...words].sort((x, y) => order.indexOf(x) - order.indexOf(y)).join("; ");
}

/** The legend's entry for the mark of a new failure, when `present`. */
function newLegend(id, present) {
  if (present) $(id).appendChild(el("span", {className: "new"}, NEW_SINCE));
}

/** `1 case`, `2 cases`, `1,204 results`. */
function counted(number, word) {
  return number.toLocaleString("en-US") + " " + word + (number === 1 ? "" : "s");
}

function changeOk(change, row) {
  if (!change) return true;
  const key = row.case + "\u0000" + row.check;
  if (change === "any") return [...CHANGED.values()].some((rows) => rows.has(key));
  return CHANGED.has(change) && CHANGED.get(change).has(key);
}

function buildControls() {
  const families = [...new Set(DATA.tables.map((t) => t.family))];
  const checks = [...new Set(DATA.tables.flatMap((t) => t.rows.map((r) => r.check)))];
  fillSelect($("python"), PYTHONS.map(([python]) => [python, python]));  // pairs: in titles
  $("python-filter").hidden = !PYTHONS.length;
  fillSelect($("family"), families.map((f) => [f, f]));
  fillSelect($("release"), DATA.summary.columns.map((c) => [c.axis + ":" + c.label, c.title]));
  fillSelect($("check"), checks.map((c) => [c, c]));
  fillSelect($("outcome"), VOCABULARY.order.map((o) => [o, o]));
  for (const o of VOCABULARY.order) $("legend").appendChild(el("span", {className: CLASS["o:" + o]}, o));
}

function buildTables() {
  const main = $("tables");
  let marked = false;
  DATA.tables.forEach((table, ti) => {
    const section = el("section");
    section.dataset.family = table.family;
    section.dataset.axis = table.axis;
    section.appendChild(el("h2", {}, table.family + " \u00b7 " + (table.title || table.axis)));
    section.appendChild(el("p", {}, DATA.families[table.family] || ""));
    if (table.since.length) {
      const since = el("ul", {className: "since"});
      for (const line of table.since) since.appendChild(el("li", {}, line));
      section.appendChild(since);
    }
    const grid = el("table", {className: "grid"});
    const head = el("tr");
    head.appendChild(el("th", {}, "case \u00b7 check"));
    for (const label of table.labels) {
      const th = el("th", {className: "v", title: table.axis + " " + label});
      th.appendChild(el("span", {}, label));
      head.appendChild(th);
    }
    grid.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    const trs = table.rows.map((row, ri) => {
      const tr = el("tr");
      tr.appendChild(el("th", {title: DATA.descriptions[row.case] || ""},
        row.variant + " \u00b7 " + row.check));
      row.entries.forEach((entry, ci) => {
        const cell = table.cells[ci];
        const fresh = NEW_RESULTS.get(cell + "\u0000" + row.case + "\u0000" + row.check)
          || NEW_RESULTS.get(cell + "\u0000\u0000") || "";
        marked ||= Boolean(fresh);
        const td = el("td", {className: "o " + CLASS["o:" + entry] + (fresh ? " new" : ""),
          title: table.labels[ci] + ": " + entry + (fresh ? " · " + fresh : "")},
        VOCABULARY.entries[entry].page);
        td.dataset.at = ti + "," + ri + "," + ci;
        tr.appendChild(td);
      });
      return tr;
    });
    body.append(...trs);
    grid.appendChild(body);
    section.appendChild(grid);
    main.appendChild(section);
    SECTIONS.push({section, table, body, trs, order: ""});
  });
  newLegend("legend", marked);
}

function outcomeOk(outcome, entries) {
  if (!outcome) return true;
  if (outcome === "not-pass") return entries.some((e) => e !== "pass");
  if (outcome === "unexpected") return entries.some((e) => UNEXPECTED.has(e));
  return entries.includes(outcome);
}

/** Rows of the same twin group and check where a filter picks some and not others: the
 * others stay visible as twins, and the group moves to where its first picked row is. */
function twinsOf(rows, picked) {
  const groups = new Map();
  rows.forEach((row, i) => {
    if (!row.group) return;
    const key = row.group + "\u0000" + row.check;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(i);
  });
  const mixed = new Map();
  for (const members of groups.values()) {
    if (members.some((i) => picked[i]) && !members.every((i) => picked[i])) {
      for (const i of members) mixed.set(i, members);
    }
  }
  return mixed;
}

function applyFilters() {
  const f = current(), text = f.case.toLowerCase();
  const cut = f.release.indexOf(":");
  const axis = f.release ? f.release.slice(0, cut) : "", label = f.release.slice(cut + 1);
  let shown = 0, twins = 0, total = 0, column = -1;
  for (const s of SECTIONS) {
    const t = s.table;
    total += t.rows.length;
    const col = axis ? (t.axis === axis ? t.labels.indexOf(label) : -1) : null;
    if ((f.family && t.family !== f.family) || col === -1
        || (f.python && t.python !== f.python)) {
      s.section.hidden = true;
      continue;
    }
    if (col !== null) column = col;
    const picked = t.rows.map((row) => (!f.check || row.check === f.check)
      && (!text || row.case.toLowerCase().includes(text))
      && changeOk(f.change, row)
      && outcomeOk(f.outcome, col === null ? row.entries : [row.entries[col]]));
    const mixed = twinsOf(t.rows, picked);
    const order = [];
    if (mixed.size) {
      const placed = new Set();
      t.rows.forEach((_, i) => {
        if (placed.has(i)) return;
        const members = mixed.get(i);
        if (!members) {
          order.push(i);
        } else if (picked[i]) {
          for (const j of members) if (!placed.has(j)) { order.push(j); placed.add(j); }
        }
      });
    }
    const signature = order.join(",");
    if (signature !== s.order) {
      s.body.append(...(order.length ? order.map((i) => s.trs[i]) : s.trs));
      s.order = signature;
    }
    let visible = 0;
    s.trs.forEach((tr, i) => {
      const twin = !picked[i] && mixed.has(i);
      tr.hidden = !picked[i] && !twin;
      tr.classList.toggle("twin", twin);
      if (picked[i]) visible += 1;
      if (twin) twins += 1;
    });
    s.section.hidden = visible === 0;
    shown += visible;
  }
  $("count").textContent = shown + " of " + total + " rows"
    + (twins ? " (+" + twins + (twins === 1 ? " twin)" : " twins)") : "");
  $("dynamic").textContent = column < 0 ? "" : "section[data-axis=\"" + CSS.escape(axis)
    + "\"] table.grid tr > :nth-child(" + (column + 2) + ") { box-shadow: inset 2px 0 0 "
    + "var(--ink), inset -2px 0 0 var(--ink); }";
  showPython(f.python);
  for (const tr of $("squares").tBodies[0].rows) {
    tr.classList.toggle("on", tr.dataset.family === f.family);
    for (const td of tr.cells) {
      td.classList.toggle("on", !!f.release && td.dataset.release === f.release
        && (!f.family || tr.dataset.family === f.family));
    }
  }
}

/** With a Python chosen, the summary's columns and the release choices of the other
 * Pythons are hidden (the grid's tables of theirs are, in applyFilters). */
function showPython(python) {
  if (!PYTHONS.length) return;
  for (const node of $("squares").querySelectorAll("[data-python]")) {
    node.hidden = !!python && node.dataset.python !== python;
  }
  for (const option of $("release").options) {
    const axis = option.value.slice(0, option.value.indexOf(":"));
    option.hidden = !!python && !!option.value && !axis.endsWith("@" + python);
  }
}

function readHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  for (const [key, id] of FILTERS) {
    const node = $(id), value = params.get(key) || "";
    const known = node.tagName !== "SELECT" || [...node.options].some((o) => o.value === value);
    node.value = known ? value : "";
  }
}

function writeHash() {
  const hash = hashOf(current());
  if (hash !== location.hash) history.replaceState(null, "", hash || location.pathname + location.search);
}

/** Follows a link of the summary: the filters of its hash (a new history entry), then
 * `then` (scroll to the grid, open a result). */
function go(hash, then) {
  if (hash !== location.hash) history.pushState(null, "", hash || location.pathname + location.search);
  readHash();
  applyFilters();
  then();
}

function toTables() {
  const top = $("filters-at").getBoundingClientRect().top + window.scrollY;
  window.scrollTo({top, behavior: "instant"});
}

function showDetail(td) {
  const [ti, ri, ci] = td.dataset.at.split(",").map(Number);
  const table = DATA.tables[ti], row = table.rows[ri];
  const cellId = table.cells[ci], cell = DATA.cells[cellId];
  const [phase, detail, known, log] = row.details[ci];
  const entry = row.entries[ci];
  const panel = $("detail-body");
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
  const addLink = (term, url, local) => {  // an address that is not safe is text
    const href = linkable(url, local);
    list.appendChild(el("dt", {}, term));
    list.appendChild(el("dd")).appendChild(href
      ? el("a", {href, target: "_blank", rel: "noopener"}, url) : el("span", {}, url));
  };
  if (known) addLink("known bug", known, false);
  if (log) addLink("whole output", log, true);
  add("installed", Object.entries(cell.packages).map(([k, v]) => k + " " + v).join(", ")
    + (cell.python ? ", Python " + cell.python : ""));
  add("reproduce", DATA.repro[cellId] + " --cases " + row.case);
  panel.appendChild(list);
  $("detail").hidden = false;
  document.querySelectorAll("td.sel").forEach((node) => node.classList.remove("sel"));
  td.classList.add("sel");
}

function closeDetail() {
  $("detail").hidden = true;
  document.querySelectorAll("td.sel").forEach((node) => node.classList.remove("sel"));
}

/** The grid cell of an unexpected result, shown and opened. */
function reveal(item) {
  for (const s of SECTIONS) {
    if (s.section.hidden || s.table.family !== item.family) continue;
    const ri = s.table.rows.findIndex((r) => r.case === item.case && r.check === item.check);
    const ci = s.table.cells.indexOf(item.cell);
    if (ri < 0 || ci < 0) continue;
    const td = s.trs[ri].cells[ci + 1];
    showDetail(td);
    td.scrollIntoView({block: "center", inline: "nearest"});
    return;
  }
  toTables();
}

function track() {
  const root = document.documentElement;
  const sizes = () => {
    root.style.setProperty("--vw", root.clientWidth + "px");
    root.style.setProperty("--bar-h", $("bar").offsetHeight + "px");
  };
  new ResizeObserver(sizes).observe($("bar"));
  new ResizeObserver(sizes).observe(root);
  sizes();
}

paletteStyle();
$("scoreboard").hidden = !DATA.scoreboard;
buildChanges();
buildSummary();
buildUnexpected();
buildControls();
buildTables();
readHash();
applyFilters();
track();
for (const [, id] of FILTERS) {
  $(id).addEventListener("input", () => { applyFilters(); writeHash(); });
  $(id).addEventListener("change", () => { applyFilters(); writeHash(); });
}
$("clear").addEventListener("click", () => {
  for (const [, id] of FILTERS) $(id).value = "";
  applyFilters();
  writeHash();
});
window.addEventListener("hashchange", () => { readHash(); applyFilters(); });
window.addEventListener("popstate", () => { readHash(); applyFilters(); });
$("squares").addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (!link) return;
  event.preventDefault();
  go(link.getAttribute("href"), toTables);
});
$("changes").addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (!link) return;
  event.preventDefault();
  go(link.getAttribute("href"), toTables);
});
$("unexpected").addEventListener("click", (event) => {
  const link = event.target.closest("a.what");
  if (!link) return;
  event.preventDefault();
  const item = DATA.unexpected[Number(link.dataset.index)];
  go(link.getAttribute("href"), () => (item.case ? reveal(item) : toTables()));
});
$("tables").addEventListener("click", (event) => {
  const td = event.target.closest("td.o");
  if (td) showDetail(td);
});
$("close").addEventListener("click", closeDetail);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") closeDetail();
});
