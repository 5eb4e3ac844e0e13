// Coverage reports of stepd test --cover-report FILE.json on the graph: the
// report lists, per state machine, each state's visits; coverageFor picks
// the state machine of a definition and returns the states' statuses
// ("covered" or "uncovered") for GraphView.setStatus and a summary line.

// coverageFor returns { statuses: Map, summary } for the definition's model
// (model.js), or throws an Error saying why the report does not fit.
export function coverageFor(report, model, walk) {
  const machines = report && Array.isArray(report.stateMachines) ? report.stateMachines : null;
  if (!machines) throw new Error("not a coverage report of stepd test --cover-report FILE.json (no stateMachines)");
  const names = new Set();
  walk(model, (n) => {
    if (n.kind === "state") names.add(n.name);
  });
  // The state machine whose states are exactly this definition's.
  const fits = machines.filter((m) => {
    const detail = Array.isArray(m.detail) ? m.detail : [];
    return detail.length === names.size && detail.every((s) => names.has(s.name));
  });
  if (fits.length === 0) {
    throw new Error(`the report has no state machine with this definition's ${names.size} states (it has ${machines.map((m) => m.name).join(", ") || "none"})`);
  }
  const m = fits[0];
  const statuses = new Map();
  for (const s of m.detail) statuses.set(s.name, s.visits > 0 ? "covered" : "uncovered");
  const pct = (a, b) => (b === 0 ? "100%" : `${Math.round((a * 1000) / b) / 10}%`);
  const st = m.states || { covered: 0, total: 0 };
  const br = m.branches || { covered: 0, total: 0 };
  let summary = `coverage: ${pct(st.covered, st.total)} of states (${st.covered}/${st.total})`;
  summary += br.total ? `, ${pct(br.covered, br.total)} of branches (${br.covered}/${br.total})` : ", no branches";
  summary += ` — ${m.name}, ${m.cases} case${m.cases === 1 ? "" : "s"}`;
  return { statuses, summary };
}
