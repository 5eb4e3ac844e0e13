// The stepd console: a single page with hash routes
//   #/                 state machines: list and create
//   #/sm/<arn>         a state machine: graph, definition, executions, start
//   #/ex/<arn>         an execution: coloured graph, events, state details
//   #/maprun/<arn>     a Distributed Map's Map Run: counts, limits, child executions
// It talks to the Step Functions API at POST / like any other client.
import "./style.css";
import { call, credentials, setAuthHandler, setCredentials } from "./api.js";
import { build, walk } from "./model.js";
import { GraphView } from "./graph.js";
import { executionPage } from "./execution.js";
import { coverageFor } from "./coverage.js";
import { locate, positions } from "./jsonpos.js";
import { badge, errorBox, esc, fmtDur, fmtTime, h, lastPart, pretty } from "./util.js";

const app = document.getElementById("app");
let generation = 0; // bumped on every navigation; pollers of old pages stop

const STATUSES = ["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"];

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
  else if ((m = /^\/ex\/(.+)$/.exec(hash))) page = executionPage(app, decodeURIComponent(m[1]), { live: () => gen === generation, reload: route });
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
