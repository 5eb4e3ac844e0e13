// Reads an execution's history (GetExecutionHistory events, in order) into
// what the execution page shows: for each event the state it belongs to,
// and for each state its status, input, output, error, cause and retries.

const CONTAINER = /^(Parallel|Map)State(Entered|Exited)$/;

function details(e) {
  for (const k in e) if (k.endsWith("EventDetails")) return e[k];
  return null;
}

// analyze returns { stateOf: array of state names (or "") per event,
// states: Map name → info, children: [arn], startTs }. execStatus is
// DescribeExecution's status (RUNNING, SUCCEEDED, FAILED, TIMED_OUT,
// ABORTED, PENDING_REDRIVE).
export function analyze(events, execStatus) {
  const n = events.length;
  const index = new Map();
  const enclosing = new Array(n); // index of the innermost open Parallel/Map Entered event, or -1
  const stateOf = new Array(n);
  const states = new Map();
  const children = [];
  const info = (name) => {
    let s = states.get(name);
    if (!s) {
      s = { name, entered: 0, exited: 0, scheduled: 0, outcome: "", aborted: false, type: "",
        input: undefined, output: undefined, error: undefined, cause: undefined, events: [] };
      states.set(name, s);
    }
    return s;
  };
  for (let i = 0; i < n; i++) {
    const e = events[i];
    index.set(e.id, i);
    const t = e.type;
    const d = details(e);
    const p = index.has(e.previousEventId) ? index.get(e.previousEventId) : -1;
    const pt = p >= 0 ? events[p].type : "";
    const cm = CONTAINER.exec(t);
    // Which container is this event inside?
    if (cm && cm[2] === "Exited") {
      const entered = p >= 0 ? (CONTAINER.test(pt) && pt.endsWith("Entered") ? p : enclosing[p]) : -1;
      enclosing[i] = entered >= 0 ? enclosing[entered] : -1;
    } else if (p >= 0 && CONTAINER.test(pt) && pt.endsWith("Entered")) {
      enclosing[i] = p;
    } else {
      enclosing[i] = p >= 0 ? enclosing[p] : -1;
    }
    // Which state does it belong to?
    let name = "";
    if (t.endsWith("StateEntered") || t.endsWith("StateExited")) {
      name = (d && d.name) || "";
    } else if (t.startsWith("Execution")) {
      name = "";
    } else if (/^(Parallel|Map)/.test(t)) {
      const c = enclosing[i];
      name = c >= 0 ? stateOf[c] : "";
    } else if (p >= 0) {
      name = stateOf[p];
    }
    stateOf[i] = name;
    if (t.startsWith("Execution")) {
      if ((t === "ExecutionFailed" || t === "ExecutionTimedOut") && p >= 0 && stateOf[p]) {
        const s = info(stateOf[p]);
        if (s.entered > s.exited) {
          s.outcome = "fail";
          if (d && s.error === undefined) {
            s.error = d.error;
            s.cause = d.cause;
          }
        }
      }
      continue;
    }
    if (!name) continue;
    const s = info(name);
    s.events.push(i);
    if (t.endsWith("StateEntered")) {
      s.entered++;
      s.type = t.slice(0, -"StateEntered".length);
      s.input = d && d.input;
      s.outcome = "";
      if (t === "FailStateEntered") s.outcome = "fail";
    } else if (t.endsWith("StateExited")) {
      s.exited++;
      s.output = d && d.output;
    } else if (/(Failed|TimedOut)$/.test(t)) {
      s.outcome = "fail";
      if (d && (d.error !== undefined || d.cause !== undefined)) {
        s.error = d.error;
        s.cause = d.cause;
      }
    } else if (/Aborted$/.test(t)) {
      s.aborted = true;
    } else if (/Scheduled$/.test(t)) {
      s.scheduled++;
      s.outcome = "";
    } else if (/Succeeded$/.test(t)) {
      if (t !== "MapIterationSucceeded") s.outcome = "";
    }
    if ((t === "TaskSubmitted" || t === "TaskSucceeded") && d && d.output &&
      (d.resourceType === "states" && /^startExecution/.test(d.resource || "") || /states:::states:startExecution/.test(d.resource || ""))) {
      try {
        const o = JSON.parse(d.output);
        const arn = o.ExecutionArn || o.executionArn;
        if (arn && !children.includes(arn)) children.push(arn);
      } catch {
        /* not JSON */
      }
    }
  }
  const running = execStatus === "RUNNING";
  for (const s of states.values()) {
    s.retries = Math.max(0, s.scheduled - s.entered);
    if (s.entered === 0) s.status = "none";
    else if (s.entered > s.exited) {
      if (s.outcome === "fail") s.status = "failed";
      else if (s.aborted || !running) s.status = "cancelled";
      else s.status = "running";
    } else s.status = s.outcome === "fail" ? "caught" : "succeeded";
  }
  return { stateOf, states, children, startTs: n ? events[0].timestamp : 0 };
}

// statusMap maps state names to their status, for GraphView.setStatus.
export function statusMap(result) {
  const m = new Map();
  for (const [k, v] of result.states) m.set(k, v.status);
  return m;
}
