// Reads an execution's history (GetExecutionHistory events, in order) into
// what the execution page shows: for each event the state it belongs to,
// and for each state its status, input, output, error, cause and retries.

const CONTAINER = /^(Parallel|Map)State(Entered|Exited)$/;

function details(e) {
  for (const k in e) if (k.endsWith("EventDetails")) return e[k];
  return null;
}

// analyze returns { stateOf: array of state names (or "") per event,
// states: Map name → info, children: [arn], startTs, iterOf, iterations,
// shown }. execStatus is DescribeExecution's status (RUNNING, SUCCEEDED,
// FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE).
//
// Each event also gets the inline Map iteration it ran in (iterOf: an
// iteration object { map: index of the Map's MapStateEntered event, name:
// the Map state's name, index, status, parent: the iteration the Map ran
// in, or null }, or null outside any iteration). iterations lists them in
// the order they started. pick, a Map from Map state names to iteration
// indexes, narrows the states' statuses, inputs and outputs to those
// iterations: an event inside an iteration of a picked Map with another
// index is left out (shown lists the indexes of the events kept).
export function analyze(events, execStatus, pick) {
  const n = events.length;
  const index = new Map();
  const enclosing = new Array(n); // index of the innermost open Parallel/Map Entered event, or -1
  const stateOf = new Array(n);
  const iterOf = new Array(n);
  const iterByKey = new Map();
  const iterations = [];
  const shown = [];
  const picked = pick && pick.size ? pick : null;
  const keeps = (it) => {
    for (let c = it; c; c = c.parent) if (picked.has(c.name) && picked.get(c.name) !== c.index) return false;
    return true;
  };
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
    let own = -1; // for a Parallel or Map state's own events, its Entered event
    if (cm && cm[2] === "Exited") {
      own = p >= 0 ? (CONTAINER.test(pt) && pt.endsWith("Entered") ? p : enclosing[p]) : -1;
      enclosing[i] = own >= 0 ? enclosing[own] : -1;
    } else if (p >= 0 && CONTAINER.test(pt) && pt.endsWith("Entered")) {
      enclosing[i] = p;
    } else {
      enclosing[i] = p >= 0 ? enclosing[p] : -1;
    }
    // Which iteration of an inline Map does it belong to? The iteration
    // events name their index; a Parallel or Map state's own events (their
    // previousEventId may point at a child's last event) belong where the
    // state was entered; the others follow their previous event.
    let it = p >= 0 ? iterOf[p] : null;
    if (t.startsWith("Execution")) {
      it = null; // the execution's own events belong to no iteration
    } else if (/^MapIteration/.test(t) && d && d.index !== undefined && enclosing[i] >= 0) {
      const m = enclosing[i];
      const key = m + ":" + d.index;
      it = iterByKey.get(key);
      if (!it) {
        it = { map: m, name: stateOf[m], index: d.index, status: "running", parent: iterOf[m], first: i };
        iterByKey.set(key, it);
        iterations.push(it);
      }
      if (/Succeeded$/.test(t)) it.status = "succeeded";
      else if (/Failed$/.test(t)) it.status = "failed";
      else if (/Aborted$/.test(t)) it.status = "aborted";
    } else if (cm && cm[2] === "Entered") {
      it = p >= 0 ? iterOf[p] : null;
    } else if (/^(Parallel|Map)/.test(t)) {
      const c = own >= 0 ? own : enclosing[i];
      it = c >= 0 ? iterOf[c] : null;
    }
    iterOf[i] = it || null;
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
    if (picked && it && !keeps(it)) continue;
    shown.push(i);
    if (t.startsWith("Execution")) {
      if ((t === "ExecutionFailed" || t === "ExecutionTimedOut") && p >= 0 && stateOf[p] && (!picked || !iterOf[p] || keeps(iterOf[p]))) {
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
  for (const it of iterations) if (it.status === "running" && !running) it.status = "cancelled";
  for (const s of states.values()) {
    s.retries = Math.max(0, s.scheduled - s.entered);
    if (s.entered === 0) s.status = "none";
    else if (s.entered > s.exited) {
      if (s.outcome === "fail") s.status = "failed";
      else if (s.aborted || !running) s.status = "cancelled";
      else s.status = "running";
    } else s.status = s.outcome === "fail" ? "caught" : "succeeded";
  }
  return { stateOf, states, children, startTs: n ? events[0].timestamp : 0, iterOf, iterations, shown, index };
}

// failure finds the state an execution that failed, timed out or was
// stopped ended in: from the execution's last event back along the
// previousEventId chain, the first state that failed (or, for a stopped or
// timed-out execution, was cancelled) and is not a Parallel or Map (their failure
// event points at the child's failure), else the first such container. It
// returns { name, event (its index), iteration (iterOf of that event) } or
// null. result is analyze's answer for the whole history (no pick).
export function failure(events, result) {
  const n = events.length;
  if (!n || !/^Execution(Failed|TimedOut|Aborted)$/.test(events[n - 1].type)) return null;
  const bad = events[n - 1].type === "ExecutionFailed" ? /^failed$/ : /^(failed|cancelled)$/;
  let container = null;
  let j = result.index.get(events[n - 1].previousEventId);
  for (let steps = 0; j !== undefined && steps < n; steps++) {
    const name = result.stateOf[j];
    const s = name ? result.states.get(name) : null;
    if (s && bad.test(s.status)) {
      const found = { name, event: j, iteration: result.iterOf[j] };
      if (s.type !== "Parallel" && s.type !== "Map") return found;
      if (!container) container = found;
    }
    j = result.index.get(events[j].previousEventId);
  }
  return container;
}

// statusMap maps state names to their status, for GraphView.setStatus.
export function statusMap(result) {
  const m = new Map();
  for (const [k, v] of result.states) m.set(k, v.status);
  return m;
}
