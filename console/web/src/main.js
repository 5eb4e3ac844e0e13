// The stepd console: a single page with hash routes
//   #/                 state machines: list and create
//   #/sm/<arn>         a state machine: graph, definition, executions, start
//   #/ex/<arn>         an execution: coloured graph, events, state details
//   #/maprun/<arn>     a Distributed Map's Map Run: counts, limits, child executions
// It talks to the Step Functions API at POST / like any other client.
import "./style.css";
import { call, callStepd, credentials, setAuthHandler, setCredentials } from "./api.js";
import { build, walk } from "./model.js";
import { GraphView } from "./graph.js";
import { analyze, statusMap } from "./status.js";
import { coverageFor } from "./coverage.js";
import { locate, positions } from "./jsonpos.js";
import { readSince } from "./since.js";
import { esc, fmtDur, fmtTime, h, lastPart, pretty } from "./util.js";

const app = document.getElementById("app");
let generation = 0; // bumped on every navigation; pollers of old pages stop

const STATUSES = ["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"];

function badge(status) {
  return `<span class="badge st-${esc(String(status).toLowerCase())}">${esc(status)}</span>`;
}

function errorBox(err) {
  return `<div class="error-box" role="alert"><strong>${esc(err.code || "Error")}</strong> ${esc(err.message || "")}</div>`;
}

// ---------- credentials (SigV4) ----------

let authPending = null;
function askCredentials(reason) {
  if (authPending) return authPending;
  authPending = new Promise((resolve) => {
    const cur = credentials() || {};
    const dlg = h(`<div class="modal-back"><form class="modal" role="dialog" aria-modal="true" aria-labelledby="cred-title">
<h2 id="cred-title">Sign in to stepd</h2>
<p>${esc(reason || "This server requires signed requests (SigV4, service states).")} The keys are kept in this tab's session storage only.</p>
<label>Access key id <input name="id" autocomplete="username" required value="${esc(cur.accessKeyId || "")}"></label>
<label>Secret access key <input name="secret" type="password" autocomplete="current-password" required></label>
<label>Region <input name="region" value="${esc(cur.region || "us-east-1")}"></label>
<div class="row"><button type="submit" class="primary">Sign in</button></div></form></div>`);
    document.body.appendChild(dlg);
    const form = dlg.querySelector("form");
    form.id.focus();
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      setCredentials({ accessKeyId: form.id.value.trim(), secretAccessKey: form.secret.value, region: form.region.value.trim() || "us-east-1" });
      dlg.remove();
      authPending = null;
      document.getElementById("auth-button").hidden = false;
      resolve();
    });
  });
  return authPending;
}
setAuthHandler((err) => askCredentials(err.code === "MissingAuthenticationTokenException" ? "" : err.message));
{
  const b = document.getElementById("auth-button");
  if (credentials()) b.hidden = false;
  b.addEventListener("click", () => {
    setCredentials(null);
    askCredentials("").then(route);
  });
}

// ---------- router ----------

function route() {
  const gen = ++generation;
  delete app.dataset.loaded;
  const hash = location.hash.replace(/^#/, "") || "/";
  let m;
  let page;
  if ((m = /^\/sm\/(.+)$/.exec(hash))) page = stateMachinePage(decodeURIComponent(m[1]), gen);
  else if ((m = /^\/ex\/(.+)$/.exec(hash))) page = executionPage(decodeURIComponent(m[1]), gen);
  else if ((m = /^\/maprun\/(.+)$/.exec(hash))) page = mapRunPage(decodeURIComponent(m[1]), gen);
  else page = listPage(gen);
  page.catch((err) => {
    if (gen === generation) app.innerHTML = errorBox(err);
  });
}
window.addEventListener("hashchange", route);
route();

// ---------- state machines ----------

async function listPage(gen) {
  document.title = "State machines · stepd";
  app.innerHTML = `<h1>State machines</h1>
<section aria-labelledby="list-h"><h2 id="list-h" class="sr-only">List</h2>
<table class="list"><thead><tr><th>Name</th><th>Type</th><th>Created</th></tr></thead><tbody id="sm-rows"><tr><td colspan="3">Loading…</td></tr></tbody></table>
<button type="button" id="sm-more" hidden>Load more</button></section>
<section class="create" aria-labelledby="create-h"><h2 id="create-h">Create a state machine</h2>
<form id="create">
<div class="row"><label>Name <input name="name" required pattern="[A-Za-z0-9_\\-]{1,80}" placeholder="my-workflow"></label>
<label>Type <select name="type"><option>STANDARD</option><option>EXPRESS</option></select></label>
<label>Definition file <input type="file" name="file" accept=".json,.asl.json,application/json"></label></div>
<div class="editor-split"><div class="editor-col">
<label for="definition">Definition (Amazon States Language)</label>
<textarea id="definition" name="definition" spellcheck="false" rows="20" placeholder='{"StartAt": "Hello", "States": {"Hello": {"Type": "Pass", "End": true}}}'></textarea>
<div id="diag-summary" aria-live="polite"></div>
<ul id="diagnostics" class="diagnostics"></ul>
<div class="row"><button type="button" id="validate">Validate</button><button type="submit" class="primary">Create</button></div>
</div><div class="editor-col"><div id="preview" class="preview"><p class="muted">The graph of a valid definition shows here.</p></div></div></div>
</form></section>`;
  const rows = app.querySelector("#sm-rows");
  const more = app.querySelector("#sm-more");
  let token;
  const load = async (append) => {
    const r = await call("ListStateMachines", token ? { nextToken: token, maxResults: 100 } : { maxResults: 100 });
    if (gen !== generation) return;
    const html = (r.stateMachines || []).map((s) => `<tr><td><a href="#/sm/${encodeURIComponent(s.stateMachineArn)}">${esc(s.name)}</a></td><td>${esc(s.type)}</td><td>${fmtTime(s.creationDate)}</td></tr>`).join("");
    if (append) rows.insertAdjacentHTML("beforeend", html);
    else rows.innerHTML = html || `<tr><td colspan="3" class="muted">No state machines yet: create one below.</td></tr>`;
    token = r.nextToken;
    more.hidden = !token;
  };
  more.addEventListener("click", () => load(true));
  const form = app.querySelector("#create");
  const ta = form.definition;
  const diags = app.querySelector("#diagnostics");
  const summary = app.querySelector("#diag-summary");
  const preview = app.querySelector("#preview");
  let lastValid = null;

  const showDiagnostics = (r, text) => {
    const pos = positions(text);
    const list = r.diagnostics || [];
    summary.innerHTML = r.result === "OK" && list.length === 0 ? `<span class="ok">✓ Valid definition</span>`
      : `<span class="${r.result === "OK" ? "warn" : "bad"}">${r.result === "OK" ? "Valid, with" : "Invalid:"} ${list.length} diagnostic${list.length === 1 ? "" : "s"}${r.truncated ? " (truncated)" : ""}</span>`;
    diags.innerHTML = list.map((d, i) => {
      const at = locate(text, d.location, pos);
      return `<li class="sev-${esc(String(d.severity).toLowerCase())}"><button type="button" class="link" data-i="${i}" data-start="${at ? at.start : ""}" data-end="${at ? at.end : ""}">` +
        `${at ? `line ${at.line}, column ${at.col}` : "definition"}</button> <code class="loc">${esc(d.location || "")}</code> ` +
        `<span class="sev">${esc(d.severity)}</span> <code>${esc(d.code)}</code>: ${esc(d.message)}</li>`;
    }).join("");
  };
  diags.addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-start]");
    if (!b || b.dataset.start === "") return;
    ta.focus();
    ta.setSelectionRange(+b.dataset.start, +b.dataset.end);
    // Scroll the selection into view: approximate by line height.
    const line = ta.value.slice(0, +b.dataset.start).split("\n").length;
    ta.scrollTop = Math.max(0, (line - 3) * 18);
  });
  const validate = async () => {
    const text = ta.value;
    if (!text.trim()) {
      summary.innerHTML = "";
      diags.innerHTML = "";
      return null;
    }
    const r = await call("ValidateStateMachineDefinition", { definition: text, type: form.type.value });
    if (gen !== generation || text !== ta.value) return null;
    showDiagnostics(r, text);
    let def = null;
    try {
      def = JSON.parse(text);
    } catch {
      /* the diagnostics say why */
    }
    if (def && text !== lastValid) {
      lastValid = text;
      preview.innerHTML = "";
      const box = document.createElement("div");
      preview.appendChild(box);
      new GraphView(box, build(def));
    }
    return r;
  };
  let timer = 0;
  ta.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => validate().catch(() => {}), 600);
  });
  form.file.addEventListener("change", async () => {
    const f = form.file.files[0];
    if (!f) return;
    ta.value = await f.text();
    if (!form.name.value) form.name.value = f.name.replace(/(\.asl)?\.json$/i, "").replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 80);
    validate().catch(() => {});
  });
  app.querySelector("#validate").addEventListener("click", () => validate().catch((e) => (summary.innerHTML = errorBox(e))));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const r = await validate();
      if (!r || r.result !== "OK") {
        diags.querySelector("button")?.focus();
        return;
      }
      const out = await call("CreateStateMachine", { name: form.name.value, definition: ta.value, type: form.type.value,
        roleArn: "arn:aws:iam::123456789012:role/stepd-console" });
      location.hash = "#/sm/" + encodeURIComponent(out.stateMachineArn);
    } catch (e) {
      summary.innerHTML = errorBox(e);
    }
  });
  await load(false);
}

// ---------- a state machine ----------

async function stateMachinePage(arn, gen) {
  const sm = await call("DescribeStateMachine", { stateMachineArn: arn });
  if (gen !== generation) return;
  document.title = sm.name + " · stepd";
  let def = null;
  try {
    def = JSON.parse(sm.definition);
  } catch {
    /* shown as text */
  }
  app.innerHTML = `<nav class="crumbs" aria-label="Breadcrumb"><a href="#/">State machines</a> › ${esc(sm.name)}</nav>
<h1>${esc(sm.name)} <span class="muted small">${esc(sm.type)}</span></h1>
<dl class="meta"><dt>ARN</dt><dd><code>${esc(sm.stateMachineArn)}</code></dd><dt>Created</dt><dd>${fmtTime(sm.creationDate)}</dd><dt>Status</dt><dd>${esc(sm.status || "ACTIVE")}</dd></dl>
<div class="split"><section class="graph-col" aria-label="Graph"><div id="graph"></div>
<div class="row"><label>Coverage report (stepd test --cover-report FILE.json) <input type="file" id="cover-file" accept=".json,application/json"></label></div>
<div id="cover-msg" aria-live="polite"></div></section>
<aside class="panel" id="panel" aria-label="Selected state"><p class="muted">Select a state (click, or Tab and Enter) to see its definition.</p></aside></div>
<section aria-labelledby="start-h"><h2 id="start-h">Start an execution</h2>
<form id="start"><div class="row"><label>Name <input name="name" placeholder="generated when empty" pattern="[A-Za-z0-9_\\-]{1,80}"></label></div>
<label for="input">Input (JSON)</label><textarea id="input" name="input" rows="6" spellcheck="false">{}</textarea>
<div id="input-msg" aria-live="polite"></div>
<div class="row"><button type="submit" class="primary">Start execution</button></div></form></section>
<section aria-labelledby="ex-h"><h2 id="ex-h">Executions</h2>
<div class="row"><label>Status <select id="ex-filter"><option value="">All</option>${STATUSES.map((s) => `<option>${s}</option>`).join("")}</select></label>
<button type="button" id="ex-refresh">Refresh</button></div>
<table class="list"><thead><tr><th>Name</th><th>Status</th><th>Started</th><th>Stopped</th><th>Duration</th></tr></thead><tbody id="ex-rows"></tbody></table>
<div class="row pager"><button type="button" id="ex-prev" disabled>‹ Previous</button><span id="ex-page"></span><button type="button" id="ex-next" disabled>Next ›</button></div></section>
<section aria-labelledby="def-h"><h2 id="def-h">Definition</h2><pre class="code">${esc(pretty(sm.definition))}</pre></section>`;
  const panel = app.querySelector("#panel");
  if (def) {
    const view = new GraphView(app.querySelector("#graph"), build(def), {
      onSelect: (name) => {
        let st = null;
        walk(build(def), (n) => {
          if (n.kind === "state" && n.name === name) st = n.def;
        });
        panel.innerHTML = `<h2>${esc(name)}</h2><pre class="code">${esc(JSON.stringify(st, null, 2))}</pre>`;
      },
    });
    // A coverage report colours the states the cases entered.
    const coverMsg = app.querySelector("#cover-msg");
    app.querySelector("#cover-file").addEventListener("change", async (ev) => {
      const file = ev.target.files && ev.target.files[0];
      if (!file) return;
      try {
        const { statuses, summary } = coverageFor(JSON.parse(await file.text()), build(def), walk);
        view.setStatus(statuses);
        coverMsg.innerHTML = `<span class="ok">${esc(summary)}</span>`;
      } catch (e) {
        coverMsg.innerHTML = `<span class="bad">${esc(file.name)}: ${esc(e.message)}</span>`;
      }
    });
  } else {
    app.querySelector("#cover-file").disabled = true;
  }
  // Start form.
  const form = app.querySelector("#start");
  const msg = app.querySelector("#input-msg");
  form.input.addEventListener("input", () => {
    try {
      JSON.parse(form.input.value);
      msg.innerHTML = "";
    } catch (e) {
      msg.innerHTML = `<span class="bad">Not valid JSON: ${esc(e.message)}</span>`;
    }
  });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      JSON.parse(form.input.value);
    } catch (e) {
      msg.innerHTML = `<span class="bad">Not valid JSON: ${esc(e.message)}</span>`;
      form.input.focus();
      return;
    }
    try {
      const req = { stateMachineArn: arn, input: form.input.value };
      if (form.name.value) req.name = form.name.value;
      const r = await call("StartExecution", req);
      location.hash = "#/ex/" + encodeURIComponent(r.executionArn);
    } catch (e) {
      msg.innerHTML = errorBox(e);
    }
  });
  // Executions with filter and pages.
  const rows = app.querySelector("#ex-rows");
  const filter = app.querySelector("#ex-filter");
  const prev = app.querySelector("#ex-prev");
  const next = app.querySelector("#ex-next");
  const pageLabel = app.querySelector("#ex-page");
  let tokens = [undefined];
  let page = 0;
  let nextToken;
  const load = async () => {
    const req = { stateMachineArn: arn, maxResults: 20 };
    if (filter.value) req.statusFilter = filter.value;
    if (tokens[page]) req.nextToken = tokens[page];
    const r = await call("ListExecutions", req);
    if (gen !== generation) return;
    rows.innerHTML = (r.executions || []).map((e) => `<tr><td><a href="#/ex/${encodeURIComponent(e.executionArn)}">${esc(e.name)}</a></td><td>${badge(e.status)}</td>` +
      `<td>${fmtTime(e.startDate)}</td><td>${fmtTime(e.stopDate)}</td><td>${e.stopDate ? fmtDur(e.stopDate - e.startDate) : ""}</td></tr>`).join("") ||
      `<tr><td colspan="5" class="muted">No executions${filter.value ? " with status " + esc(filter.value) : ""}.</td></tr>`;
    nextToken = r.nextToken;
    prev.disabled = page === 0;
    next.disabled = !nextToken;
    pageLabel.textContent = `page ${page + 1}`;
  };
  filter.addEventListener("change", () => {
    tokens = [undefined];
    page = 0;
    load();
  });
  app.querySelector("#ex-refresh").addEventListener("click", load);
  next.addEventListener("click", () => {
    tokens[++page] = nextToken;
    load();
  });
  prev.addEventListener("click", () => {
    page = Math.max(0, page - 1);
    load();
  });
  await load();
}

// ---------- an execution ----------

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

async function executionPage(arn, gen) {
  const [ex, smx] = await Promise.all([
    call("DescribeExecution", { executionArn: arn }),
    // A Map Run's child execution has no state machine of its own here.
    call("DescribeStateMachineForExecution", { executionArn: arn }).catch(() => ({ definition: "null", stateMachineArn: "" })),
  ]);
  if (!smx.stateMachineArn) smx.stateMachineArn = ex.stateMachineArn;
  if (gen !== generation) return;
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
<h1>${esc(ex.name)} <span id="ex-status">${badge(ex.status)}</span> <button type="button" id="stop" class="danger" hidden>Stop execution</button> <button type="button" id="redrive" hidden>Redrive</button></h1>
<dl class="meta" id="ex-meta"></dl>
<div class="split"><section class="graph-col" aria-label="Graph"><div id="graph"></div></section>
<aside class="panel" id="panel" aria-label="Selected state" aria-live="polite"><p class="muted">Select a state in the graph or an event in the table to see its input, output, error and cause.</p></aside></div>
<section class="io" aria-label="Execution input and output"><details><summary>Execution input and output</summary><div id="ex-io"></div></details></section>
<section aria-labelledby="ev-h"><h2 id="ev-h">Events <span class="muted small" id="ev-count"></span></h2>
<div class="events-wrap" id="ev-wrap"><div id="ev-above"></div><table class="events" id="events"><thead><tr><th>ID</th><th>Type</th><th>State</th><th>Timestamp</th><th>Since start</th><th>Since previous</th><th>Details</th></tr></thead><tbody></tbody></table><div id="ev-below"></div></div></section>`;
  const panel = app.querySelector("#panel");
  const tbody = app.querySelector("#events tbody");
  const wrap = app.querySelector("#ev-wrap");
  let events = [];
  let mapRuns = [];
  let result = { states: new Map(), stateOf: [], children: [] };
  let selected = null;
  const model = def ? build(def) : null;
  const defs = new Map();
  if (model) walk(model, (n) => n.kind === "state" && defs.set(n.name, n.def));
  const graph = model ? new GraphView(app.querySelector("#graph"), model, { onSelect: (name) => showState(name), legend: true }) : null;

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

  const pre = (label, text) => text === undefined || text === null || text === "" ? "" :
    `<h3>${label}</h3><pre class="code">${esc(pretty(text))}</pre>`;
  function showState(name, eventIndex) {
    selected = name;
    const s = result.states.get(name);
    let html = `<h2>${esc(name)}</h2>`;
    if (!s) html += `<p>${badge("NOT REACHED")}</p><p class="muted">This state did not run.</p>`;
    else {
      const err = errorOf(name, s);
      const retried = s.status === "succeeded" || s.status === "running";
      const label = { running: "IN PROGRESS", succeeded: "SUCCEEDED", failed: "FAILED", caught: "CAUGHT ERROR", cancelled: "CANCELLED", none: "NOT REACHED" }[s.status];
      html += `<p><span class="badge st-${s.status}">${label}</span> ${esc(s.type)}</p><dl class="meta">` +
        `<dt>Entered</dt><dd>${s.entered} time${s.entered === 1 ? "" : "s"}</dd><dt>Retries</dt><dd>${s.retries}</dd></dl>` +
        pre(retried ? "Last retried error" : "Error", err[0]) + pre(retried ? "Its cause" : "Cause", err[1]) + pre("Input", s.input) + pre("Output", s.output);
    }
    if (eventIndex !== undefined) html += pre(`Event ${events[eventIndex].id} (${esc(events[eventIndex].type)})`, JSON.stringify(events[eventIndex]));
    panel.innerHTML = html;
    selectedRow = eventIndex;
    for (const tr of tbody.querySelectorAll("tr.sel")) tr.classList.remove("sel");
    if (eventIndex !== undefined) tbody.querySelector(`tr[data-i="${eventIndex}"]`)?.classList.add("sel");
  }

  function renderMeta() {
    const io = app.querySelector("#ex-io");
    const links = [];
    if (parent) links.push(`<dt>Started by</dt><dd><a href="#/ex/${encodeURIComponent(parent)}" class="parent-link">${esc(lastPart(parent))}</a> (parent execution)</dd>`);
    if (ex.mapRunArn) links.push(`<dt>Map Run</dt><dd><a href="#/maprun/${encodeURIComponent(ex.mapRunArn)}" class="maprun-link">${esc(lastPart(ex.mapRunArn))}</a></dd>`);
    if (mapRuns.length) links.push(`<dt>Map Runs</dt><dd>${mapRuns.map((r) => `<a href="#/maprun/${encodeURIComponent(r.mapRunArn)}" class="maprun-link">${esc(lastPart(r.mapRunArn))}</a>`).join(", ")}</dd>`);
    if (ex.redriveCount) links.push(`<dt>Redriven</dt><dd>${ex.redriveCount} time${ex.redriveCount === 1 ? "" : "s"}, last ${fmtTime(ex.redriveDate)}</dd>`);
    if (result.children.length) links.push(`<dt>Child executions</dt><dd>${result.children.map((c) => `<a href="#/ex/${encodeURIComponent(c)}" class="child-link">${esc(lastPart(c))}</a>`).join(", ")}</dd>`);
    app.querySelector("#ex-meta").innerHTML = `<dt>ARN</dt><dd><code>${esc(ex.executionArn)}</code></dd><dt>Started</dt><dd>${fmtTime(ex.startDate)}</dd>` +
      (ex.stopDate ? `<dt>Stopped</dt><dd>${fmtTime(ex.stopDate)} (${fmtDur(ex.stopDate - ex.startDate)})</dd>` : "") +
      (ex.error ? `<dt>Error</dt><dd><code>${esc(ex.error)}</code></dd>` : "") + links.join("") +
      (ex.status !== "RUNNING" ? `<dt>Test case</dt><dd><button type="button" id="case-dl">Download as test case</button></dd>` : "");
    io.innerHTML = pre("Input", ex.input) + pre("Output", ex.output) + pre("Cause", ex.cause);
    app.querySelector("#ex-status").innerHTML = badge(ex.status);
    app.querySelector("#stop").hidden = ex.status !== "RUNNING";
    app.querySelector("#redrive").hidden = ex.redriveStatus !== "REDRIVABLE";
  }

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
    const e = events[i];
    const prevTs = i > 0 ? events[i - 1].timestamp : e.timestamp;
    const st = result.stateOf[i] || "";
    const cls = (/Failed|TimedOut|Aborted/.test(e.type) ? "bad" : /Succeeded|Exited/.test(e.type) ? "good" : "") + (i === selectedRow ? " sel" : "");
    return `<tr data-i="${i}" tabindex="0" class="${cls}"><td>${e.id}</td><td>${esc(e.type)}</td><td>${esc(st)}</td><td>${fmtTime(e.timestamp)}</td>` +
      `<td>${fmtDur(e.timestamp - start)}</td><td>${fmtDur(e.timestamp - prevTs)}</td><td class="sum">${esc(eventSummary(e).slice(0, 160))}</td></tr>`;
  }
  function drawRows(force) {
    drawing = 0;
    if (!rowHeight && events.length) {
      tbody.innerHTML = rowHTML(0, events[0].timestamp);
      rowHeight = tbody.rows[0].getBoundingClientRect().height || 27;
    }
    const h = rowHeight || 27;
    const first = Math.max(0, Math.floor(wrap.scrollTop / h) - overscan);
    const last = Math.min(events.length, first + Math.ceil((wrap.clientHeight || 560) / h) + 2 * overscan);
    if (!force && first === drawn[0] && last === drawn[1]) return;
    drawn = [first, last];
    const start = events.length ? events[0].timestamp : 0;
    const parts = [];
    for (let i = first; i < last; i++) parts.push(rowHTML(i, start));
    const focused = document.activeElement?.closest?.("#events tr")?.dataset.i;
    app.querySelector("#ev-above").style.height = first * h + "px";
    app.querySelector("#ev-below").style.height = (events.length - last) * h + "px";
    tbody.innerHTML = parts.join("");
    if (focused !== undefined) tbody.querySelector(`tr[data-i="${focused}"]`)?.focus({ preventScroll: true });
    app.querySelector("#ev-count").textContent = `(${events.length})`;
  }
  wrap.addEventListener("scroll", () => {
    if (!drawing) drawing = requestAnimationFrame(() => drawRows(false));
  });
  // focusRow moves the keyboard focus to row i, scrolling it into view.
  function focusRow(i) {
    if (i < 0 || i >= events.length) return;
    const h = rowHeight || 27;
    if (i * h < wrap.scrollTop) wrap.scrollTop = i * h;
    else if ((i + 1) * h > wrap.scrollTop + wrap.clientHeight) wrap.scrollTop = (i + 1) * h - wrap.clientHeight + h;
    drawRows(false);
    tbody.querySelector(`tr[data-i="${i}"]`)?.focus({ preventScroll: true });
  }
  const pickRow = (tr) => {
    if (!tr) return;
    const i = +tr.dataset.i;
    const name = result.stateOf[i];
    if (graph && name) {
      for (const g of graph.el.querySelectorAll("g.node.selected")) g.classList.remove("selected");
      graph.nodes.get(name)?.classList.add("selected");
    }
    showState(name || "(execution)", i);
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
  // "Download as test case": the history and definition read here, turned
  // into a stepd test case by stepd serve (Stepd.CaseFromHistory), which
  // says what it could not replay exactly.
  app.querySelector("#ex-meta").addEventListener("click", async (ev) => {
    if (ev.target.id !== "case-dl") return;
    try {
      const r = await callStepd("CaseFromHistory", { history: { events: await history(arn) }, definition: smx.definition, executionArn: arn });
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([JSON.stringify(r.case, null, 2) + "\n"], { type: "application/json" }));
      a.download = ex.name + ".case.json";
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 0);
      panel.innerHTML = `<h2>Test case</h2><p>${esc(ex.name)}.case.json: ${r.reproduced ? "it reproduces the recorded outcome on stepd." : "it does <strong>not</strong> reproduce the recorded outcome on stepd."} Run it with <code>stepd test ${esc(ex.name)}.case.json</code>.</p>` +
        ((r.notes || []).length ? `<ul class="notes">${r.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : "");
    } catch (e) {
      panel.innerHTML = errorBox(e);
    }
  });

  app.querySelector("#stop").addEventListener("click", async () => {
    try {
      await call("StopExecution", { executionArn: arn, error: "Console.Stopped", cause: "stopped from the stepd console" });
      await refresh();
    } catch (e) {
      panel.innerHTML = errorBox(e);
    }
  });

  app.querySelector("#redrive").addEventListener("click", async () => {
    try {
      await call("RedriveExecution", { executionArn: arn });
      route(); // runs again: live updates while the redriven execution runs
    } catch (e) {
      panel.innerHTML = errorBox(e);
    }
  });

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
    if (gen !== generation) return false;
    Object.assign(ex, x);
    const before = events.length;
    events = evs;
    result = analyze(events, ex.status);
    if (graph) graph.setStatus(statusMap(result));
    if (evs.length !== before) drawRows(true);
    renderMeta();
    if (selected && result.states.has(selected)) showState(selected, selectedRow);
    return true;
  }
  await refresh();
  document.body.dataset.rendered = String(Math.round(performance.now()));
  app.dataset.loaded = arn;
  // Live updates while it runs.
  while (ex.status === "RUNNING") {
    await new Promise((r) => setTimeout(r, 1000));
    if (gen !== generation) return;
    try {
      if (!(await refresh())) return;
    } catch {
      /* try again on the next tick */
    }
  }
}

// ---------- a Map Run ----------

async function mapRunPage(arn, gen) {
  const r = await call("DescribeMapRun", { mapRunArn: arn });
  if (gen !== generation) return;
  const kids = [];
  let token;
  do {
    const page = await call("ListExecutions", token ? { mapRunArn: arn, maxResults: 1000, nextToken: token } : { mapRunArn: arn, maxResults: 1000 });
    kids.push(...(page.executions || []));
    token = page.nextToken;
  } while (token && kids.length < 10000);
  if (gen !== generation) return;
  document.title = lastPart(arn) + " · stepd";
  const keys = ["pending", "running", "succeeded", "failed", "timedOut", "aborted", "total", "resultsWritten"];
  const counts = (label, c) => `<tr><th>${label}</th>${keys.map((k) => `<td>${c ? c[k] : ""}</td>`).join("")}</tr>`;
  app.innerHTML = `<nav class="crumbs" aria-label="Breadcrumb"><a href="#/">State machines</a> › <a href="#/ex/${encodeURIComponent(r.executionArn)}">${esc(lastPart(r.executionArn))}</a> › Map Run</nav>
<h1>Map Run ${esc(lastPart(arn))} ${badge(r.status)}</h1>
<dl class="meta" id="maprun-meta"><dt>ARN</dt><dd><code>${esc(arn)}</code></dd><dt>Started</dt><dd>${fmtTime(r.startDate)}</dd>` +
    (r.stopDate ? `<dt>Stopped</dt><dd>${fmtTime(r.stopDate)} (${fmtDur(r.stopDate - r.startDate)})</dd>` : "") +
    `<dt>Max concurrency</dt><dd>${r.maxConcurrency || "no limit"}</dd><dt>Tolerated failures</dt><dd>${r.toleratedFailureCount} or ${r.toleratedFailurePercentage} %</dd>` +
    (r.redriveCount ? `<dt>Redriven</dt><dd>${r.redriveCount} time${r.redriveCount === 1 ? "" : "s"}, last ${fmtTime(r.redriveDate)}</dd>` : "") + `</dl>
<table class="list" id="maprun-counts"><thead><tr><th></th>${keys.map((k) => `<th>${k}</th>`).join("")}</tr></thead><tbody>${counts("Items", r.itemCounts)}${counts("Child executions", r.executionCounts)}</tbody></table>
<h2>Child executions <span class="muted small">(${kids.length})</span></h2>
<table class="list"><thead><tr><th>Name</th><th>Status</th><th>Started</th><th>Stopped</th></tr></thead><tbody id="maprun-children">${kids.map((e) =>
    `<tr><td><a href="#/ex/${encodeURIComponent(e.executionArn)}">${esc(e.name)}</a></td><td>${badge(e.status)}</td><td>${fmtTime(e.startDate)}</td><td>${e.stopDate ? fmtTime(e.stopDate) : ""}</td></tr>`).join("")}</tbody></table>`;
  app.dataset.loaded = arn;
}
