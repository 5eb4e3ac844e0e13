// Unit tests of the console's pure modules, run with node --test (the Go
// test TestJavaScript in package console runs them). The fixtures are
// histories recorded with stepd run --format json from the .def.json
// definitions beside them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { analyze, failure } from "../src/status.js";
import { build, ruleText, walk } from "../src/model.js";
import { locate } from "../src/jsonpos.js";
import { layout } from "../src/graph.js";
import { readSince } from "../src/since.js";
import { payload } from "../src/util.js";

const fixture = (name) => JSON.parse(readFileSync(new URL(`fixtures/${name}.json`, import.meta.url), "utf8"));

function statuses(name) {
  const run = fixture(name);
  const r = analyze(run.history, run.status);
  const out = {};
  for (const [k, v] of r.states) out[k] = v.status;
  return { out, r };
}

test("a Parallel whose branch fails and whose Catch recovers", () => {
  const { out, r } = statuses("parallel-caught");
  assert.deepEqual(out, { Prepare: "succeeded", Charge: "caught", Authorize: "succeeded", Decline: "failed", SendInvoice: "succeeded", Done: "succeeded" });
  const run = fixture("parallel-caught");
  const i = run.history.findIndex((e) => e.type === "ParallelStateFailed");
  assert.equal(r.stateOf[i], "Charge", "the Parallel's own events belong to it, not to its last child");
  assert.equal(r.stateOf[0], "", "execution events belong to no state");
});

test("a Map with a tolerated failed iteration", () => {
  const { out, r } = statuses("map-tolerated");
  assert.deepEqual(out, { Each: "succeeded", Check: "succeeded", Good: "succeeded", Bad: "failed", After: "succeeded" });
  assert.equal(r.states.get("Check").entered, 3);
});

test("the iterations of an inline Map, and one picked", () => {
  const run = fixture("map-tolerated");
  const all = analyze(run.history, run.status);
  assert.deepEqual(all.iterations.map((it) => [it.name, it.index, it.status, it.parent]),
    [["Each", 0, "succeeded", null], ["Each", 1, "failed", null], ["Each", 2, "succeeded", null]]);
  assert.equal(all.shown.length, run.history.length, "no pick: every event is shown");
  const one = analyze(run.history, run.status, new Map([["Each", 1]]));
  const st = {};
  for (const [k, v] of one.states) st[k] = v.status;
  assert.deepEqual(st, { Each: "succeeded", Check: "succeeded", Bad: "failed", After: "succeeded" }, "Good did not run in iteration 1");
  assert.equal(one.states.get("Check").input, "2");
  assert.equal(one.states.get("Check").entered, 1);
  const ids = one.shown.map((i) => run.history[i].id);
  assert.deepEqual(ids, [1, 2, 3, 10, 11, 12, 13, 14, 21, 22, 23, 24, 25], "the Map's own events, iteration 1's, and the rest");
});

test("nested Map iterations run concurrently", () => {
  const run = fixture("map-nested");
  const all = analyze(run.history, run.status);
  const inner = all.iterations.filter((it) => it.name === "Inner");
  assert.deepEqual(inner.map((it) => `${it.parent.name}[${it.parent.index}].${it.index}`), ["Outer[0].0", "Outer[0].1", "Outer[1].0", "Outer[1].1", "Outer[1].2"]);
  assert.ok(inner.every((it) => it.status === "succeeded"));
  const r = analyze(run.history, run.status, new Map([["Outer", 1], ["Inner", 2]]));
  const d = r.states.get("Double");
  assert.equal(d.entered, 1);
  assert.equal(d.input, "5");
  assert.equal(d.output, '{"v":10}');
  assert.equal(r.states.get("Inner").output, '[{"v":6},{"v":8},{"v":10}]', "the inner Map state of the picked outer iteration");
  assert.equal(r.states.get("Outer").status, "succeeded");
});

test("the state a failed, timed-out or stopped execution ended in", () => {
  const at = (name, status) => {
    const run = fixture(name);
    return failure(run.history, analyze(run.history, status || run.status));
  };
  const m = at("map-failed");
  assert.equal(m.name, "Bad", "the Fail state inside the Map, not the Map");
  assert.equal(m.iteration.name, "Each");
  assert.equal(m.iteration.index, 1);
  assert.equal(at("task-retries-failed").name, "Call");
  assert.equal(at("timed-out").name, "Hold");
  assert.equal(at("parallel-caught"), null, "a succeeded execution has none");
  const p = fixture("parallel-caught");
  assert.equal(failure(p.history.slice(0, 3), analyze(p.history.slice(0, 3), "RUNNING")), null, "nor a running one");
  const t = fixture("timed-out");
  const stopped = [t.history[0], t.history[1], { id: 3, previousEventId: 2, type: "ExecutionAborted", timestamp: t.history[1].timestamp }];
  assert.equal(failure(stopped, analyze(stopped, "ABORTED")).name, "Hold", "a stopped execution: the state it was in");
  // An execution that timed out while iteration 1 ran: its last event
  // follows that iteration's, and still belongs to the execution.
  const mf = fixture("map-failed").history;
  const cut = [...mf.slice(0, 10), { id: 11, previousEventId: 10, type: "ExecutionTimedOut", timestamp: mf[9].timestamp }];
  const other = analyze(cut, "TIMED_OUT", new Map([["Each", 0]]));
  assert.ok(other.shown.includes(10), "the execution's last event is shown whichever iteration is picked");
  const ft = failure(cut, analyze(cut, "TIMED_OUT"));
  assert.equal(ft.name, "Check", "the state the timed-out iteration was in");
  assert.equal(ft.iteration.index, 1);
});

test("a Task that fails after its retries", () => {
  const { out, r } = statuses("task-retries-failed");
  assert.deepEqual(out, { Call: "failed" });
  const call = r.states.get("Call");
  assert.equal(call.retries, 2);
  assert.equal(call.error, "Service.Down");
  assert.equal(call.cause, "try later");
});

test("an execution that timed out in a Wait", () => {
  const { out } = statuses("timed-out");
  assert.deepEqual(out, { Hold: "failed" });
});

test("a running execution and a stopped one", () => {
  const run = fixture("timed-out");
  const h = run.history.slice(0, 2);
  assert.equal(analyze(h, "RUNNING").states.get("Hold").status, "running");
  assert.equal(analyze(h, "ABORTED").states.get("Hold").status, "cancelled");
});

test("the graph model of a definition", () => {
  const m = build(fixture("parallel-caught.def"));
  const kinds = m.edges.map((e) => e.kind).sort();
  assert.deepEqual(kinds, ["catch", "next", "next", "next", "next", "next"]);
  const charge = m.nodes.find((n) => n.name === "Charge");
  assert.equal(charge.children.length, 1);
  assert.equal(m.edges.find((e) => e.kind === "catch").label, "Catch Payment.CardDeclined");
  const names = [];
  walk(m, (n) => n.kind === "state" && names.push(n.name));
  assert.deepEqual(names.sort(), ["Authorize", "Charge", "Decline", "Done", "Prepare", "SendInvoice"]);
  const map = build(fixture("map-tolerated.def"));
  const each = map.nodes.find((n) => n.name === "Each");
  assert.equal(each.children[0].nodes.filter((n) => n.kind === "state").length, 3);
  assert.deepEqual(each.children[0].edges.map((e) => e.kind).sort(), ["choice", "default", "next", "next", "next"]);
  // A missing target is drawn as such.
  const bad = build({ StartAt: "A", States: { A: { Type: "Pass", Next: "B" } } });
  assert.ok(bad.nodes.some((n) => n.kind === "missing" && n.name === "B"));
});

test("Choice rules as edge labels", () => {
  assert.equal(ruleText({ Variable: "$.status", StringEquals: "failed", Next: "X" }), '$.status == "failed"');
  assert.equal(ruleText({ Variable: "$.n", NumericGreaterThanEqualsPath: "$.max", Next: "X" }), "$.n >= $.max");
  assert.equal(ruleText({ Variable: "$.x", IsPresent: false, Next: "X" }), "$.x is absent");
  assert.equal(ruleText({ Variable: "$.x", IsNull: true, Next: "X" }), "$.x is null");
  assert.equal(ruleText({ Not: { Variable: "$.a", BooleanEquals: true }, Next: "X" }), "!($.a == true)");
  assert.equal(ruleText({ And: [{ Variable: "$.a", NumericLessThan: 1 }, { Variable: "$.b", StringMatches: "x*" }], Next: "X" }),
    '($.a < 1) && ($.b matches "x*")');
  assert.equal(ruleText({ Condition: "{% $states.input.n > 3 %}", Next: "X" }), "$states.input.n > 3");
});

test("diagnostic locations in the definition text", () => {
  const text = '{\n  "StartAt": "A",\n  "States": {\n    "C": {"Type": "Choice", "Choices": [{"Next": "A"}]},\n    "A": {"Type": "Pass", "Next": "B"}\n  }\n}';
  const at = locate(text, "/States/A/Next");
  assert.equal(text.slice(at.start, at.end), '"Next": "B"');
  assert.equal(at.line, 5);
  const el = locate(text, "/States/C/Choices[0]/Next");
  assert.equal(text.slice(el.start, el.end), '"Next": "A"');
  assert.equal(locate(text, "/States/C/Choices/0/Next").start, el.start, "both array notations");
  assert.equal(locate(text, "/States/A/Missing").line, 5, "an absent member falls back to its parent");
  assert.equal(locate("{not json", "/States"), null);
});

test("layout of 150 states", () => {
  const States = {};
  for (let i = 0; i < 150; i++) {
    States["S" + i] = i % 10 === 5 ? { Type: "Choice", Choices: [{ Variable: "$.x", NumericEquals: i, Next: "S" + (i + 1) }], Default: "S" + (i + 2) }
      : i === 149 ? { Type: "Succeed" } : { Type: "Pass", Next: "S" + (i + 1) };
  }
  const m = build({ StartAt: "S0", States });
  const t0 = performance.now();
  layout(m);
  const ms = performance.now() - t0;
  for (const n of m.nodes) assert.ok(Number.isFinite(n.x) && Number.isFinite(n.y), n.name);
  console.log(`layout of 150 states: ${ms.toFixed(0)} ms`);
});

// pages serves a history of ids 1..n newest first, size events a page, and
// counts the pages read.
function pages(n, size) {
  const all = Array.from({ length: n }, (_, i) => ({ id: n - i, type: "PassStateEntered" }));
  const f = async (token) => {
    f.reads++;
    const from = token ? +token : 0;
    const events = all.slice(from, from + size);
    return from + size < n ? { events, nextToken: String(from + size) } : { events };
  };
  f.reads = 0;
  return f;
}

test("a poll reads only the events after the last one shown", async () => {
  const ids = (evs) => evs.map((e) => e.id);
  let p = pages(10, 3);
  assert.deepEqual(ids(await readSince(p, 8)), [9, 10]);
  assert.equal(p.reads, 1, "one page when the new events fit in it");
  p = pages(10, 3);
  assert.deepEqual(ids(await readSince(p, 3)), [4, 5, 6, 7, 8, 9, 10]);
  assert.equal(p.reads, 3, "pages until the one holding the last event shown");
  p = pages(10, 3);
  assert.deepEqual(await readSince(p, 10), [], "nothing new");
  assert.equal(p.reads, 1);
  assert.deepEqual(ids(await readSince(pages(10, 4), 0)), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "from the start");
  const gap = async () => ({ events: [{ id: 12 }, { id: 11 }, { id: 9 }] });
  assert.equal(await readSince(gap, 9), null, "events that skip an id ask for a full read");
});

test("a coverage report colours the states of its state machine", async () => {
  const { coverageFor } = await import("../src/coverage.js");
  const model = build({ StartAt: "A", States: { A: { Type: "Choice", Choices: [{ Variable: "$.x", IsPresent: true, Next: "B" }], Default: "C" }, B: { Type: "Succeed" }, C: { Type: "Succeed" } } });
  const report = { stateMachines: [
    { name: "other.json", cases: 1, states: { covered: 1, total: 1 }, branches: { covered: 0, total: 0 }, detail: [{ name: "Z", visits: 1 }] },
    { name: "m.json", cases: 2, states: { covered: 2, total: 3 }, branches: { covered: 1, total: 2 }, detail: [{ name: "A", visits: 2 }, { name: "B", visits: 2 }, { name: "C", visits: 0 }] },
  ] };
  const { statuses, summary } = coverageFor(report, model, walk);
  assert.deepEqual([...statuses], [["A", "covered"], ["B", "covered"], ["C", "uncovered"]]);
  assert.equal(summary, "coverage: 66.7% of states (2/3), 50% of branches (1/2) — m.json, 2 cases");
  assert.throws(() => coverageFor({ stateMachines: [report.stateMachines[0]] }, model, walk), /no state machine with this definition's 3 states \(it has other.json\)/);
  assert.throws(() => coverageFor({}, model, walk), /not a coverage report/);
});

test("payloads: pretty-printed, and folded when large", () => {
  assert.equal(payload("Input", undefined), "", "no text, no block");
  assert.match(payload("Output", undefined, "none: the state did not exit"), /<h3>Output<\/h3><p class="muted none">none: the state did not exit<\/p>/);
  const small = payload("Input", '{"a":1}');
  assert.ok(small.includes('<pre class="code">{\n  &quot;a&quot;: 1\n}</pre>') && !small.includes("folded"), small);
  const big = JSON.stringify({ rows: Array.from({ length: 100 }, (_, i) => ({ i, s: "<row " + i + ">" })) });
  const f = payload("Input", big);
  assert.ok(f.includes('class="payload folded"') && f.includes("Show all input"), "a large payload is folded");
  const preview = /<pre class="code preview">([^]*?)<\/pre>/.exec(f)[1];
  assert.equal(preview.split("\n").length, 13, "12 lines and an ellipsis");
  assert.ok(f.includes("&lt;row 99&gt;"), "the whole text is there, escaped, to unfold");
  assert.ok(/\d+\.\d KB, \d+ lines/.test(f), "its size is said");
  const line = payload("Cause", "x".repeat(5000));
  assert.equal(/<pre class="code preview">([^]*?)<\/pre>/.exec(line)[1].length, 802, "one long line is cut to 800 characters");
});
