// The execution page (#/ex/<arn>): the graph coloured by each state's
// status, the failure first (a failed, timed-out or stopped execution opens
// on the state it ended in, with its error and cause), an iteration picker
// for Map states, the selected state's input and output, and the event
// table, updated every second while the execution runs.
import { call, callStepd } from "./api.js";
import { build, walk } from "./model.js";
import { GraphView } from "./graph.js";
import { analyze, failure, statusMap } from "./status.js";
import { readSince } from "./since.js";
import { badge, errorBox, esc, fmtDur, fmtTime, lastPart, payload } from "./util.js";

// history reads an execution's whole history, in pages of 1000.
async function history(arn) {
  const events = [];
  let token;
  do {
    const r = await call("GetExecutionHistory", token ? { executionArn: arn, maxResults: 1000, nextToken: token } : { executionArn: arn, maxResults: 1000 });
    for (const e of r.events || []) events.push(e);
    token = r.nextToken;
  } while (token);
  return events;
}

// mapRunChildren lists a Map Run's child executions in the order they
// started (ListExecutions answers newest first).
async function mapRunChildren(mapRunArn) {
  const kids = [];
  let token;
  do {
    const page = await call("ListExecutions", token ? { mapRunArn, maxResults: 1000, nextToken: token } : { mapRunArn, maxResults: 1000 });
    kids.push(...(page.executions || []));
    token = page.nextToken;
  } while (token && kids.length < 10000);
  return kids.reverse();
}

function eventSummary(e) {
  for (const k in e) {
    if (!k.endsWith("EventDetails")) continue;
    const d = e[k];
    if (d.error !== undefined || d.cause !== undefined) return [d.error, d.cause].filter(Boolean).join(": ");
    if (d.resource) return d.resourceType ? `${d.resourceType}:${d.resource}` : d.resource;
    if (d.index !== undefined) return "index " + d.index;
    return "";
  }
  return "";
}

const STATUS_LABEL = { running: "IN PROGRESS", succeeded: "SUCCEEDED", failed: "FAILED", caught: "CAUGHT ERROR", cancelled: "CANCELLED", none: "NOT REACHED" };
const ENDED = { FAILED: "failed", TIMED_OUT: "timed out", ABORTED: "was stopped" };

// The buttons of the page's header, in order. Each is shown while
// visible(ex) says so; a click calls run(ex, page), where page has the
// history read so far (page.events()) and the definition's text
// (page.definition); then the page renders again (reload), reads the
// execution again (the default), or does nothing (refresh: false). Add
// an action here to give the execution page another button.
const ACTIONS = [
  { id: "stop", label: "Stop execution", cls: "danger", visible: (ex) => ex.status === "RUNNING",
    run: (ex) => call("StopExecution", { executionArn: ex.executionArn, error: "Console.Stopped", cause: "stopped from the stepd console" }) },
  { id: "redrive", label: "Redrive", visible: (ex) => ex.redriveStatus === "REDRIVABLE", reload: true,
    run: (ex) => call("RedriveExecution", { executionArn: ex.executionArn }) },
  // The history and definition the page read, turned into a stepd test
  // case by stepd serve (Stepd.CaseFromHistory), which says whether it
  // reproduces the recorded outcome and what it could not replay exactly.
  { id: "case-dl", label: "Download as test case", visible: (ex) => ex.status !== "RUNNING", refresh: false,
    run: async (ex, page) => {
      const r = await callStepd("CaseFromHistory", { history: { events: page.events() }, definition: page.definition, executionArn: ex.executionArn });
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([JSON.stringify(r.case, null, 2) + "\n"], { type: "application/json" }));
      a.download = ex.name + ".case.json";
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 0);
      return r;
    },
    show: (r, ex) => `<h2>Test case</h2><p>${esc(ex.name)}.case.json: ${r.reproduced ? "it reproduces the recorded outcome on stepd." : "it does <strong>not</strong> reproduce the recorded outcome on stepd."} Run it with <code>stepd test ${esc(ex.name)}.case.json</code>.</p>` +
      ((r.notes || []).length ? `<ul class="notes">${r.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : "") },
];

// executionPage renders execution arn into app. nav.live() is false once
// the user has moved to another page (the page then stops updating);
// nav.reload() renders the current route again.
export async function executionPage(app, arn, nav) {
  const [ex, smx] = await Promise.all([
    call("DescribeExecution", { executionArn: arn }),
    // A Map Run's child execution has no state machine of its own here.
    call("DescribeStateMachineForExecution", { executionArn: arn }).catch(() => ({ definition: "null", stateMachineArn: "" })),
  ]);
  if (!smx.stateMachineArn) smx.stateMachineArn = ex.stateMachineArn;
  if (!nav.live()) return;
  document.title = ex.name + " · stepd";
  let def = null;
  try {
    def = JSON.parse(smx.definition);
  } catch {
    /* no graph */
  }
  let parent = "";
  try {
    parent = JSON.parse(ex.input || "{}").AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID || "";
  } catch {
    /* not JSON */
  }
  app.innerHTML = `<nav class="crumbs" aria-label="Breadcrumb"><a href="#/">State machines</a> › <a href="#/sm/${encodeURIComponent(ex.stateMachineArn)}">${esc(lastPart(ex.stateMachineArn))}</a> › ${esc(ex.name)}</nav>
<div class="page-head"><h1>${esc(ex.name)} <span id="ex-status">${badge(ex.status)}</span></h1>
<div class="actions" id="ex-actions" role="toolbar" aria-label="Execution actions">${ACTIONS.map((a) =>
    `<button type="button" id="${a.id}" class="${a.cls || ""}" hidden>${esc(a.label)}</button>`).join("")}</div></div>
<div id="ex-failure" class="failure" role="alert" hidden></div>
<dl class="meta" id="ex-meta"></dl>
<div id="iter-bar" class="iter-bar" role="group" aria-label="Map iterations" hidden></div>
<div class="split"><section class="graph-col" aria-label="Graph"><div id="graph"></div></section>
<aside class="panel" id="panel" aria-label="Selected state" aria-live="polite"><p class="muted">Select a state in the graph or an event in the table to see its input, output, error and cause.</p></aside></div>
<section class="io" aria-labelledby="io-h"><h2 id="io-h">Execution input and output</h2><div class="io-cols" id="ex-io"></div></section>
<section aria-labelledby="ev-h"><h2 id="ev-h">Events <span class="muted small" id="ev-count"></span></h2>
<p class="muted small" id="ev-scope" hidden></p>
<div class="events-wrap" id="ev-wrap"><div id="ev-above"></div><table class="events" id="events"><thead><tr><th>ID</th><th>Type</th><th>State</th><th>Timestamp</th><th>Since start</th><th>Since previous</th><th>Details</th></tr></thead><tbody></tbody></table><div id="ev-below"></div></div></section>`;
  const panel = app.querySelector("#panel");
  const tbody = app.querySelector("#events tbody");
  const wrap = app.querySelector("#ev-wrap");
  const bar = app.querySelector("#iter-bar");
  let events = [];
  let mapRuns = [];
  // full: the whole history analysed; view: narrowed to the picked
  // iterations; tbl: the events the table shows and their states.
  let full = analyze([], ex.status);
  let view = full;
  let tbl = { events: [], stateOf: [] };
  // pick: Map state name → iteration index, for inline Maps. dpick: the
  // child execution picked for a Distributed Map: { name, arn, status,
  // events, result }.
  const pick = new Map();
  let dpick = null;
  const runOf = new Map(); // Distributed Map state name → its Map Run ARN (the last run)
  const kidsOf = new Map(); // Map Run ARN → its child executions, in start order
  let selected = null;
  let userSelected = false;
  const model = def ? build(def) : null;
  const defs = new Map();
  const inside = new Map(); // Map state name → the names of the states of its item processor
  if (model) {
    walk(model, (n) => {
      if (n.kind !== "state") return;
      defs.set(n.name, n.def);
      if (n.def.Type === "Map" && n.children) {
        const names = new Set();
        for (const c of n.children) walk(c, (m) => m.kind === "state" && names.add(m.name));
        inside.set(n.name, names);
      }
    });
  }
  const distributed = (name) => {
    const d = defs.get(name);
    return !!(d && d.ItemProcessor && d.ItemProcessor.ProcessorConfig && d.ItemProcessor.ProcessorConfig.Mode === "DISTRIBUTED");
  };
  const graph = model ? new GraphView(app.querySelector("#graph"), model, { onSelect: (name) => {
    userSelected = true;
    showState(name);
  }, legend: true }) : null;

  // stateInfo is what the current view knows of state name: the picked
  // child execution's for the states of a Distributed Map's processor.
  function stateInfo(name) {
    if (dpick && inside.get(dpick.name)?.has(name)) return dpick.result ? dpick.result.states.get(name) : undefined;
    return view.states.get(name);
  }

  // errorOf finds a state's error and cause when its events do not carry
  // them: a Fail state's own Error and Cause, or the error a Catch put into
  // the state's output at its ResultPath.
  function errorOf(name, s) {
    if (s.error !== undefined || s.cause !== undefined) return [s.error, s.cause];
    const d = defs.get(name) || {};
    if (d.Type === "Fail") return [d.Error, d.Cause];
    if (s.status === "caught" && s.output) {
      let out;
      try {
        out = JSON.parse(s.output);
      } catch {
        return [];
      }
      for (const c of d.Catch || []) {
        const rp = c.ResultPath === undefined ? "$" : c.ResultPath;
        if (typeof rp !== "string" || !/^\$(\.[A-Za-z_][\w-]*)*$/.test(rp)) continue;
        let v = out;
        for (const k of rp.split(".").slice(1)) v = v && typeof v === "object" ? v[k] : undefined;
        if (v && typeof v === "object" && "Error" in v) return [v.Error, v.Cause];
      }
    }
    return [];
  }

  // scopeText says which iteration the view shows a state of, if any.
  function scopeText(name) {
    const parts = [];
    for (const [m, names] of inside) {
      if (!names.has(name)) continue;
      if (pick.has(m)) parts.push(`iteration ${pick.get(m)} of ${m}`);
      else if (dpick && dpick.name === m) parts.push(`child execution ${dpick.label} of ${m}`);
      else if (distributed(m)) parts.push(`pick a child execution of ${m} to see this state's runs`);
      else if (full.iterations.some((it) => it.name === m)) parts.push(`the last of all the iterations of ${m}`);
    }
    return parts.join("; ");
  }

  function showState(name, row) {
    selected = name;
    const s = name ? stateInfo(name) : null;
    let html = `<h2>${esc(name || "Execution event")}</h2>`;
    const scope = name ? scopeText(name) : "";
    if (!name) html += "";
    else if (!s) html += `<p>${badge("NOT REACHED")}</p><p class="muted">This state did not run${scope ? " (" + esc(scope) + ")" : ""}.</p>`;
    else {
      const err = errorOf(name, s);
      const retried = s.status === "succeeded" || s.status === "running";
      html += `<p><span class="badge st-${s.status}">${STATUS_LABEL[s.status]}</span> ${esc(s.type)}</p>` +
        (scope ? `<p class="scope small">Showing ${esc(scope)}.</p>` : "") + `<dl class="meta">` +
        `<dt>Entered</dt><dd>${s.entered} time${s.entered === 1 ? "" : "s"}</dd><dt>Retries</dt><dd>${s.retries}</dd>` +
        iterationSummary(name) + `</dl>` +
        payload(retried ? "Last retried error" : "Error", err[0]) + payload(retried ? "Its cause" : "Cause", err[1]) +
        payload("Input", s.input, "none") +
        payload("Output", s.output, s.status === "running" ? "not yet: the state is running" : s.entered > s.exited ? "none: the state did not exit" : "none");
    }
    if (row !== undefined && tbl.events[row]) {
      const e = tbl.events[row];
      html += payload(`Event ${e.id} (${e.type})`, JSON.stringify(e));
    }
    panel.innerHTML = html;
    selectedRow = row;
    for (const tr of tbody.querySelectorAll("tr.sel")) tr.classList.remove("sel");
    if (row !== undefined) tbody.querySelector(`tr[data-i="${row}"]`)?.classList.add("sel");
  }

  // iterationSummary counts a Map state's iterations by status.
  function iterationSummary(name) {
    let its = full.iterations.filter((it) => it.name === name);
    if (distributed(name) && runOf.has(name)) its = kidsOf.get(runOf.get(name)) || [];
    if (!its.length) return "";
    const n = {};
    for (const it of its) {
      const st = String(it.status).toLowerCase();
      n[st] = (n[st] || 0) + 1;
    }
    return `<dt>Iterations</dt><dd>${its.length}: ${Object.entries(n).map(([k, v]) => `${v} ${esc(k.replace("_", " "))}`).join(", ")}</dd>`;
  }

  // renderFailure puts the error and cause of a failed, timed-out or
  // stopped execution first, with the state it ended in.
  function renderFailure(found) {
    const box = app.querySelector("#ex-failure");
    if (!ENDED[ex.status]) {
      box.hidden = true;
      return;
    }
    let where = "";
    if (found) {
      const its = [];
      for (let it = found.iteration; it; it = it.parent) its.unshift(`iteration ${it.index} of ${it.name}`);
      if (found.child) its.push(`child execution ${found.child.label} of ${found.child.name}`);
      where = ` in state <button type="button" class="link" id="failed-state" data-state="${esc(found.name)}">${esc(found.name)}</button>` +
        (its.length ? ` (${esc(its.join(", "))})` : "");
    }
    box.hidden = false;
    box.innerHTML = `<p class="headline"><strong>Execution ${ENDED[ex.status]}</strong>${where}</p>` +
      (ex.error ? `<div class="payload"><h3>Error</h3><pre class="code error-code">${esc(ex.error)}</pre></div>` : "") +
      payload("Cause", ex.cause);
  }
  // The state named in the banner shows again where it failed, whatever
  // iteration was picked since.
  app.querySelector("#ex-failure").addEventListener("click", async (ev) => {
    const b = ev.target.closest("#failed-state");
    if (!b || !shownFailure) return;
    try {
      pick.clear();
      for (let it = shownFailure.iteration; it; it = it.parent) pick.set(it.name, it.index);
      if (shownFailure.child) await choose(shownFailure.child.name, "distributed", shownFailure.child.arn);
      else {
        dpick = null;
        recompute();
      }
    } catch (e) {
      panel.innerHTML = errorBox(e);
      return;
    }
    if (graph) {
      graph.select(b.dataset.state);
      graph.reveal(graph.nodes.get(b.dataset.state));
    } else showState(b.dataset.state);
  });

  function renderMeta() {
    const links = [];
    if (parent) links.push(`<dt>Started by</dt><dd><a href="#/ex/${encodeURIComponent(parent)}" class="parent-link">${esc(lastPart(parent))}</a> (parent execution)</dd>`);
    if (ex.mapRunArn) links.push(`<dt>Map Run</dt><dd><a href="#/maprun/${encodeURIComponent(ex.mapRunArn)}" class="maprun-link">${esc(lastPart(ex.mapRunArn))}</a></dd>`);
    if (mapRuns.length) links.push(`<dt>Map Runs</dt><dd>${mapRuns.map((r) => `<a href="#/maprun/${encodeURIComponent(r.mapRunArn)}" class="maprun-link">${esc(lastPart(r.mapRunArn))}</a>`).join(", ")}</dd>`);
    if (ex.redriveCount) links.push(`<dt>Redriven</dt><dd>${ex.redriveCount} time${ex.redriveCount === 1 ? "" : "s"}, last ${fmtTime(ex.redriveDate)}</dd>`);
    if (full.children.length) links.push(`<dt>Child executions</dt><dd>${full.children.map((c) => `<a href="#/ex/${encodeURIComponent(c)}" class="child-link">${esc(lastPart(c))}</a>`).join(", ")}</dd>`);
    app.querySelector("#ex-meta").innerHTML = `<dt>ARN</dt><dd><code>${esc(ex.executionArn)}</code></dd><dt>Started</dt><dd>${fmtTime(ex.startDate)}</dd>` +
      (ex.stopDate ? `<dt>Stopped</dt><dd>${fmtTime(ex.stopDate)} (${fmtDur(ex.stopDate - ex.startDate)})</dd>` : "") + links.join("");
    app.querySelector("#ex-io").innerHTML = `<div>${payload("Input", ex.input, "none")}</div><div>${payload("Output", ex.output, ex.status === "RUNNING" ? "not yet" : "none")}</div>`;
    app.querySelector("#ex-status").innerHTML = badge(ex.status);
    for (const a of ACTIONS) app.querySelector("#" + a.id).hidden = !a.visible(ex);
  }
  for (const a of ACTIONS) {
    app.querySelector("#" + a.id).addEventListener("click", async (ev) => {
      const b = ev.currentTarget;
      b.disabled = true;
      try {
        const out = await a.run(ex, { events: () => events, definition: smx.definition });
        if (a.show) panel.innerHTML = a.show(out, ex);
        if (a.reload) nav.reload(); // runs again: live updates while it runs
        else if (a.refresh !== false) await refresh();
      } catch (e) {
        panel.innerHTML = errorBox(e);
      } finally {
        b.disabled = false;
      }
    });
  }

  // ---- the iteration picker ----

  // renderPicker draws a select per Map state that has iterations to pick:
  // the inline Map's iterations (those inside the picked iterations of the
  // Maps around it), and a Distributed Map's child executions.
  function renderPicker() {
    const focused = document.activeElement?.dataset?.map;
    const parts = [];
    const names = [];
    for (const it of full.iterations) if (!names.includes(it.name)) names.push(it.name);
    for (const name of names) {
      const opts = new Map();
      for (const it of full.iterations) {
        if (it.name !== name) continue;
        let ok = true;
        for (let c = it.parent; c; c = c.parent) if (pick.has(c.name) && pick.get(c.name) !== c.index) ok = false;
        if (ok) opts.set(it.index, it.status); // the last run of that index
      }
      if (!opts.size) continue;
      const cur = pick.has(name) ? pick.get(name) : "";
      parts.push(`<label>${esc(name)} <select class="iter-pick" data-map="${esc(name)}" data-kind="inline">` +
        `<option value="">all ${opts.size} iterations</option>` +
        [...opts].sort((a, b) => a[0] - b[0]).map(([i, st]) => `<option value="${i}"${cur === i ? " selected" : ""}>iteration ${i}: ${esc(st)}</option>`).join("") +
        `</select></label>`);
    }
    for (const [name, run] of runOf) {
      const kids = kidsOf.get(run) || [];
      if (!kids.length) continue;
      const cur = dpick && dpick.name === name ? dpick.arn : "";
      parts.push(`<label>${esc(name)} <select class="iter-pick" data-map="${esc(name)}" data-kind="distributed">` +
        `<option value="">all ${kids.length} child executions</option>` +
        kids.map((k, i) => `<option value="${esc(k.executionArn)}"${cur === k.executionArn ? " selected" : ""}>${i}: ${esc(k.status.toLowerCase())} (${esc(k.name.slice(0, 8))})</option>`).join("") +
        `</select></label>`);
    }
    bar.hidden = parts.length === 0;
    bar.innerHTML = parts.length ? `<span class="iter-title">Show one iteration:</span> ${parts.join(" ")}` +
      (pick.size || dpick ? ` <button type="button" id="iter-clear">Show all</button>` : "") : "";
    if (focused) bar.querySelector(`select[data-map="${CSS.escape(focused)}"]`)?.focus();
  }
  bar.addEventListener("change", async (ev) => {
    const s = ev.target.closest("select.iter-pick");
    if (!s) return;
    try {
      await choose(s.dataset.map, s.dataset.kind, s.value);
    } catch (e) {
      panel.innerHTML = errorBox(e);
    }
  });
  bar.addEventListener("click", (ev) => {
    if (!ev.target.closest("#iter-clear")) return;
    pick.clear();
    dpick = null;
    recompute();
  });

  // choose picks iteration value of Map name ("" for all of them).
  async function choose(name, kind, value) {
    if (kind === "distributed") {
      dpick = null;
      if (value) {
        const kids = kidsOf.get(runOf.get(name)) || [];
        const i = kids.findIndex((k) => k.executionArn === value);
        dpick = { name, arn: value, status: kids[i] ? kids[i].status : "RUNNING", label: String(i), events: [], result: null };
        await loadChild();
      }
    } else {
      if (value === "") pick.delete(name);
      else pick.set(name, +value);
      // The Maps inside this one may not have the picked index in the
      // newly picked iteration: let them show all theirs again.
      for (const it of full.iterations) {
        for (let c = it.parent; c; c = c.parent) if (c.name === name) pick.delete(it.name);
      }
    }
    recompute();
  }

  // loadChild reads the picked child execution's history.
  async function loadChild() {
    const d = dpick;
    const x = await call("DescribeExecution", { executionArn: d.arn });
    const evs = await history(d.arn);
    if (dpick !== d) return;
    d.status = x.status;
    d.events = evs;
    d.result = analyze(evs, x.status);
  }

  // recompute narrows the view to the picked iterations and redraws the
  // graph, the picker, the table and the panel.
  function recompute(keepRow) {
    view = pick.size ? analyze(events, ex.status, pick) : full;
    if (dpick && dpick.result) tbl = { events: dpick.events, stateOf: dpick.result.stateOf };
    else if (view.shown.length === events.length) tbl = { events, stateOf: full.stateOf };
    else tbl = { events: view.shown.map((i) => events[i]), stateOf: view.shown.map((i) => full.stateOf[i]) };
    if (graph) {
      const st = statusMap(view);
      if (dpick) {
        for (const n of inside.get(dpick.name) || []) st.delete(n);
        if (dpick.result) for (const [k, v] of statusMap(dpick.result)) st.set(k, v);
      }
      graph.setStatus(st);
    }
    renderPicker();
    const scope = app.querySelector("#ev-scope");
    const what = [...pick].map(([m, i]) => `iteration ${i} of ${m}`);
    if (dpick) what.push(`child execution ${dpick.label} of ${dpick.name} (${lastPart(dpick.arn)})`);
    scope.hidden = what.length === 0;
    scope.textContent = what.length ? `Showing the events of ${what.join(", ")}` + (dpick ? "." : ` and the events outside it: ${tbl.events.length} of ${events.length}.`) : "";
    app.querySelector("#ev-count").textContent = tbl.events === events ? `(${events.length})` : `(${tbl.events.length} of ${dpick ? dpick.events.length : events.length})`;
    if (!keepRow) selectedRow = undefined;
    drawRows(true);
    if (selected !== null) showState(selected, selectedRow);
  }

  // ---- the event table ----

  // The event table is virtual: only the rows near the scrolled-to part of
  // the history are in the document, between two spacers that stand for the
  // others, so a 25,000-event history costs what a hundred rows cost. Rows
  // have one height (their cells do not wrap).
  const overscan = 30;
  let rowHeight = 0;
  let selectedRow;
  let drawn = [-1, -1];
  let drawing = 0;
  function rowHTML(i, start) {
    const e = tbl.events[i];
    const prevTs = i > 0 ? tbl.events[i - 1].timestamp : e.timestamp;
    const st = tbl.stateOf[i] || "";
    const cls = (/Failed|TimedOut|Aborted/.test(e.type) ? "bad" : /Succeeded|Exited/.test(e.type) ? "good" : "") + (i === selectedRow ? " sel" : "");
    return `<tr data-i="${i}" tabindex="0" class="${cls}"><td>${e.id}</td><td>${esc(e.type)}</td><td>${esc(st)}</td><td>${fmtTime(e.timestamp)}</td>` +
      `<td>${fmtDur(e.timestamp - start)}</td><td>${fmtDur(e.timestamp - prevTs)}</td><td class="sum">${esc(eventSummary(e).slice(0, 160))}</td></tr>`;
  }
  function drawRows(force) {
    drawing = 0;
    const n = tbl.events.length;
    if (!rowHeight && n) {
      tbody.innerHTML = rowHTML(0, tbl.events[0].timestamp);
      rowHeight = tbody.rows[0].getBoundingClientRect().height || 27;
    }
    const h = rowHeight || 27;
    const first = Math.max(0, Math.min(Math.floor(wrap.scrollTop / h) - overscan, n - 1));
    const last = Math.min(n, first + Math.ceil((wrap.clientHeight || 560) / h) + 2 * overscan);
    if (!force && first === drawn[0] && last === drawn[1]) return;
    drawn = [first, last];
    const start = events.length ? events[0].timestamp : 0;
    const parts = [];
    for (let i = Math.max(0, first); i < last; i++) parts.push(rowHTML(i, start));
    const focused = document.activeElement?.closest?.("#events tr")?.dataset.i;
    app.querySelector("#ev-above").style.height = Math.max(0, first) * h + "px";
    app.querySelector("#ev-below").style.height = (n - last) * h + "px";
    tbody.innerHTML = parts.join("");
    if (focused !== undefined) tbody.querySelector(`tr[data-i="${focused}"]`)?.focus({ preventScroll: true });
  }
  wrap.addEventListener("scroll", () => {
    if (!drawing) drawing = requestAnimationFrame(() => drawRows(false));
  });
  // focusRow moves the keyboard focus to row i, scrolling it into view.
  function focusRow(i) {
    if (i < 0 || i >= tbl.events.length) return;
    const h = rowHeight || 27;
    if (i * h < wrap.scrollTop) wrap.scrollTop = i * h;
    else if ((i + 1) * h > wrap.scrollTop + wrap.clientHeight) wrap.scrollTop = (i + 1) * h - wrap.clientHeight + h;
    drawRows(false);
    tbody.querySelector(`tr[data-i="${i}"]`)?.focus({ preventScroll: true });
  }
  const pickRow = (tr) => {
    if (!tr) return;
    const i = +tr.dataset.i;
    const name = tbl.stateOf[i];
    if (graph && name) {
      for (const g of graph.el.querySelectorAll("g.node.selected")) g.classList.remove("selected");
      graph.nodes.get(name)?.classList.add("selected");
    }
    userSelected = true;
    showState(name || "", i);
  };
  tbody.addEventListener("click", (ev) => pickRow(ev.target.closest("tr")));
  tbody.addEventListener("keydown", (ev) => {
    const tr = ev.target.closest("tr");
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      pickRow(tr);
    } else if ((ev.key === "ArrowDown" || ev.key === "ArrowUp") && tr) {
      ev.preventDefault();
      focusRow(+tr.dataset.i + (ev.key === "ArrowDown" ? 1 : -1));
    }
  });

  // ---- loading ----

  // findFailure is the state the execution ended in; for a Distributed
  // Map, it picks the first child execution that failed and looks there.
  async function findFailure() {
    const f = failure(events, full);
    if (!f || !distributed(f.name) || !runOf.has(f.name)) return f;
    const kid = (kidsOf.get(runOf.get(f.name)) || []).findIndex((k) => ENDED[k.status]);
    if (kid < 0) return f;
    await choose(f.name, "distributed", kidsOf.get(runOf.get(f.name))[kid].executionArn);
    const inner = dpick && dpick.result ? failure(dpick.events, dpick.result) : null;
    return inner ? { ...inner, iteration: f.iteration, child: dpick } : f;
  }

  let shownFailure = null;
  let polls = 0;
  async function refresh() {
    // The status first: when it is final, the history read after it is
    // complete.
    const x = await call("DescribeExecution", { executionArn: arn });
    if (!x.mapRunArn) mapRuns = (await call("ListMapRuns", { executionArn: arn }).catch(() => ({}))).mapRuns || [];
    // After the first read, only the events after the last one shown.
    let evs = null;
    if (events.length > 0) {
      const newer = await readSince((token) => call("GetExecutionHistory", token
        ? { executionArn: arn, reverseOrder: true, maxResults: 1000, nextToken: token }
        : { executionArn: arn, reverseOrder: true, maxResults: 1000 }), events[events.length - 1].id);
      if (newer) evs = newer.length ? events.concat(newer) : events;
    }
    if (!evs) evs = await history(arn);
    if (!nav.live()) return false;
    Object.assign(ex, x);
    const before = events.length;
    events = evs;
    full = analyze(events, ex.status);
    // A Distributed Map's child executions, for the picker.
    for (let i = 0; i < events.length; i++) {
      const d = events[i].mapRunStartedEventDetails;
      if (d && d.mapRunArn && full.stateOf[i]) runOf.set(full.stateOf[i], d.mapRunArn);
    }
    // While the Map Run goes on, its list of children is read again every
    // fifth poll (it may have thousands), and whenever the history moves.
    polls++;
    for (const run of new Set(runOf.values())) {
      if (!kidsOf.has(run) || before !== events.length || (ex.status === "RUNNING" && polls % 5 === 0)) kidsOf.set(run, await mapRunChildren(run).catch(() => []));
    }
    if (dpick && (dpick.status === "RUNNING" || !dpick.result)) await loadChild();
    if (!nav.live()) return false;
    // A failed, timed-out or stopped execution opens on the state it
    // ended in, in the iteration it ran in, unless a state was picked.
    if (ENDED[ex.status] && !shownFailure) {
      shownFailure = (await findFailure()) || { name: "" };
      if (shownFailure.name && !userSelected) {
        for (let it = shownFailure.iteration; it; it = it.parent) pick.set(it.name, it.index);
      }
    }
    recompute(true);
    renderMeta();
    renderFailure(shownFailure && shownFailure.name ? shownFailure : null);
    if (shownFailure && shownFailure.name && !userSelected && !shownFailure.done) {
      shownFailure.done = true;
      if (graph) {
        graph.select(shownFailure.name);
        userSelected = false;
      } else showState(shownFailure.name);
    }
    return true;
  }
  await refresh();
  document.body.dataset.rendered = String(Math.round(performance.now()));
  app.dataset.loaded = arn;
  // Live updates while it runs.
  while (ex.status === "RUNNING") {
    await new Promise((r) => setTimeout(r, 1000));
    if (!nav.live()) return;
    try {
      if (!(await refresh())) return;
    } catch {
      /* try again on the next tick */
    }
  }
}
