// The graph model of a definition: for each scope (the machine, a Parallel
// branch, a Map's item processor) its nodes and edges, with Start and End
// markers, Choice rules as edge labels, Default and Catch edges marked.

let seq = 0;

// build returns the top scope of definition def (an object).
export function build(def) {
  seq = 0;
  return scope(def || {}, "");
}

function scope(def, label) {
  const id = "s" + seq++;
  const states = def && typeof def.States === "object" && def.States ? def.States : {};
  const nodes = [];
  const edges = [];
  const start = { id: id + ":start", kind: "start", name: "Start" };
  const end = { id: id + ":end", kind: "end", name: "End" };
  nodes.push(start);
  const byName = new Map();
  for (const [name, st] of Object.entries(states)) {
    const s = st && typeof st === "object" ? st : {};
    const n = { id: id + ":" + name, kind: "state", name, type: String(s.Type || "?"), def: s };
    if (s.Type === "Parallel" && Array.isArray(s.Branches)) {
      n.children = s.Branches.map((b, i) => scope(b, "Branch " + (i + 1)));
    } else if (s.Type === "Map" && (s.ItemProcessor || s.Iterator)) {
      n.children = [scope(s.ItemProcessor || s.Iterator, s.ItemProcessor && s.ItemProcessor.ProcessorConfig &&
        s.ItemProcessor.ProcessorConfig.Mode === "DISTRIBUTED" ? "Item processor (distributed)" : "Item processor")];
    }
    nodes.push(n);
    byName.set(name, n);
  }
  let usesEnd = false;
  const missing = new Map();
  const target = (name) => {
    if (byName.has(name)) return byName.get(name).id;
    if (!missing.has(name)) {
      const m = { id: id + ":missing:" + name, kind: "missing", name: String(name) };
      missing.set(name, m);
      nodes.push(m);
    }
    return missing.get(name).id;
  };
  if (def && def.StartAt !== undefined) edges.push({ from: start.id, to: target(def.StartAt), kind: "next" });
  for (const n of nodes) {
    if (n.kind !== "state") continue;
    const s = n.def;
    if (s.Type === "Choice") {
      (Array.isArray(s.Choices) ? s.Choices : []).forEach((rule, i) => {
        if (rule && rule.Next !== undefined) {
          const text = ruleText(rule);
          edges.push({ from: n.id, to: target(rule.Next), kind: "choice", label: short(text), title: `Rule ${i + 1}: ${text}` });
        }
      });
      if (s.Default !== undefined) edges.push({ from: n.id, to: target(s.Default), kind: "default", label: "Default" });
    } else if (s.Next !== undefined) {
      edges.push({ from: n.id, to: target(s.Next), kind: "next" });
    }
    if (s.End === true || s.Type === "Succeed" || s.Type === "Fail") {
      edges.push({ from: n.id, to: end.id, kind: "next" });
      usesEnd = true;
    }
    if (Array.isArray(s.Catch)) {
      for (const c of s.Catch) {
        if (!c || c.Next === undefined) continue;
        const errs = Array.isArray(c.ErrorEquals) ? c.ErrorEquals.join(", ") : "";
        edges.push({ from: n.id, to: target(c.Next), kind: "catch", label: short("Catch " + errs), title: "Catch: " + errs });
      }
    }
  }
  if (usesEnd || nodes.length === 1) nodes.push(end);
  return { id, label, nodes, edges };
}

function short(s) {
  return s.length > 34 ? s.slice(0, 33) + "…" : s;
}

const OPS = {
  StringEquals: "==", NumericEquals: "==", BooleanEquals: "==", TimestampEquals: "==",
  StringLessThan: "<", NumericLessThan: "<", TimestampLessThan: "<",
  StringGreaterThan: ">", NumericGreaterThan: ">", TimestampGreaterThan: ">",
  StringLessThanEquals: "<=", NumericLessThanEquals: "<=", TimestampLessThanEquals: "<=",
  StringGreaterThanEquals: ">=", NumericGreaterThanEquals: ">=", TimestampGreaterThanEquals: ">=",
  StringMatches: "matches",
};

// ruleText renders a Choice rule as a short expression, e.g.
// $.status == "failed", or a JSONata Condition as written.
export function ruleText(r) {
  if (!r || typeof r !== "object") return "?";
  if (typeof r.Condition === "string") return r.Condition.replace(/^\{%\s*|\s*%\}$/g, "");
  if (Array.isArray(r.And)) return r.And.map((x) => paren(ruleText(x))).join(" && ");
  if (Array.isArray(r.Or)) return r.Or.map((x) => paren(ruleText(x))).join(" || ");
  if (r.Not) return "!" + paren(ruleText(r.Not));
  const v = r.Variable || "";
  for (const key of Object.keys(r)) {
    if (key === "Variable" || key === "Next" || key === "Assign" || key === "Output" || key === "Comment") continue;
    const base = key.endsWith("Path") ? key.slice(0, -4) : key;
    if (OPS[base]) {
      const val = key.endsWith("Path") ? r[key] : JSON.stringify(r[key]);
      return `${v} ${OPS[base]} ${val}`;
    }
    if (key.startsWith("Is")) {
      const what = key.slice(2).toLowerCase();
      if (what === "present") return `${v} ${r[key] ? "is present" : "is absent"}`;
      return `${v} ${r[key] ? "is" : "is not"} ${what}`;
    }
  }
  return v || "rule";
}

function paren(s) {
  return /[ ]/.test(s) ? "(" + s + ")" : s;
}

// walk calls fn for every node of the scope and its nested scopes.
export function walk(sc, fn, depth = 0) {
  for (const n of sc.nodes) {
    fn(n, sc, depth);
    if (n.children) for (const c of n.children) walk(c, fn, depth + 1);
  }
}
