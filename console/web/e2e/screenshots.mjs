// Takes the docs' screenshots of the seed workflows in examples/ with
// headless Chromium against a real stepd serve:
//   go build -o /tmp/stepd ./cmd/stepd
//   node console/web/e2e/screenshots.mjs /tmp/stepd docs/img
// It starts the binary on a free port with a mock configuration merged from
// the examples' case files, runs the cases, and saves PNGs of the pages.
import { chromium } from "playwright-core";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [bin, outArg] = process.argv.slice(2);
if (!bin || !outArg) {
  console.error("usage: node screenshots.mjs STEPD_BINARY OUT_DIR");
  process.exit(2);
}
const out = resolve(outArg);
mkdirSync(out, { recursive: true });
const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (p) => JSON.parse(readFileSync(join(repo, p), "utf8"));

// Each run: a machine, a case file whose mocks become a test case, and the
// input (Waits shortened: the server waits in real time).
const fast = { evaluationIntervalSeconds: 1, evaluationWindowSeconds: 900, jobCheckIntervalSeconds: 1,
  sla: { deadline: "2026-11-22T08:00:00Z", expectedDuration: "30m" } };
const runs = [
  { machine: "data-pipeline", def: "examples/data-pipeline/data-pipeline.json", cas: "examples/data-pipeline/cases/happy-path.json", test: "HappyPath",
    input: { pipelineId: "sales", scheduleId: "daily", date: "2026-11-22", config: fast }, shot: "data-pipeline-succeeded.png", select: "CheckJob" },
  { machine: "data-pipeline", def: "examples/data-pipeline/data-pipeline.json", cas: "examples/data-pipeline/cases/check-job-infra-failure.json", test: "InfraFailure",
    input: { pipelineId: "sales", scheduleId: "daily", date: "2026-11-22", config: fast }, shot: "data-pipeline-infra-failure.png", top: true },
  { machine: "job-poller", def: "examples/job-poller/job-poller.json", cas: "examples/job-poller/cases/throttled-then-succeeds.json", test: "Throttled",
    input: {}, shot: "job-poller.png", select: "Run Job" },
  { machine: "nested-loop", def: "examples/nested-loop/nested-loop.json", cas: "examples/nested-loop/cases/two-rounds.json", test: "TwoRounds",
    input: {}, shot: "nested-loop-running.png", running: true },
  // An inline Map, one of whose items is rejected (tolerated): the picker
  // shows that iteration.
  { machine: "orders", definition: {
    StartAt: "ProcessOrders", States: { ProcessOrders: { Type: "Map", ItemsPath: "$.orders", ToleratedFailureCount: 1, MaxConcurrency: 2, End: true,
      ItemProcessor: { StartAt: "Valid?", States: {
        "Valid?": { Type: "Choice", Choices: [{ Variable: "$.qty", NumericGreaterThan: 0, Next: "Price" }], Default: "Reject" },
        Price: { Type: "Pass", Parameters: { "sku.$": "$.sku", "total.$": "States.MathAdd($.qty, 10)" }, End: true },
        Reject: { Type: "Fail", Error: "Order.Invalid", Cause: "quantity must be positive" } } } } } },
    input: { orders: [{ sku: "a-1", qty: 2 }, { sku: "b-7", qty: 1 }, { sku: "c-3", qty: 0 }, { sku: "d-9", qty: 5 }] },
    shot: "map-iteration-picker.png", pick: { map: "ProcessOrders", value: "2" }, select: "Reject", top: true },
];

const mocks = { StateMachines: {}, MockedResponses: {} };
for (const r of runs) {
  if (!r.cas) continue;
  const c = read(r.cas).mocks;
  const tc = {};
  for (const [state, resp] of Object.entries(c.TestCase)) tc[state] = r.test + "." + resp;
  for (const [name, v] of Object.entries(c.MockedResponses)) mocks.MockedResponses[r.test + "." + name] = v;
  mocks.StateMachines[r.machine] ??= { TestCases: {} };
  mocks.StateMachines[r.machine].TestCases[r.test] = tc;
}
const tmp = mkdtempSync(join(tmpdir(), "stepd-shots-"));
writeFileSync(join(tmp, "mocks.json"), JSON.stringify(mocks));

const port = await new Promise((ok) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => ok(p));
  });
});
const url = `http://127.0.0.1:${port}/`;
const srv = spawn(bin, ["serve", "--addr", "127.0.0.1:" + port, "--data", "", "--mock-config", join(tmp, "mocks.json")], { stdio: ["ignore", "pipe", "inherit"] });
await new Promise((ok) => srv.stdout.on("data", (d) => String(d).includes("listening") && ok()));

async function api(op, body) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AWSStepFunctions." + op }, body: JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(op + ": " + JSON.stringify(j));
  return j;
}

const browser = await chromium.launch({ executablePath: process.env.STEPD_CHROMIUM || "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
try {
  const arns = {};
  for (const r of runs) {
    const definition = r.definition ? JSON.stringify(r.definition) : readFileSync(join(repo, r.def), "utf8");
    arns[r.machine] ??= (await api("CreateStateMachine", { name: r.machine, definition, roleArn: "arn:aws:iam::123456789012:role/stepd" })).stateMachineArn;
  }
  const page = await browser.newPage({ viewport: { width: 1400, height: 1700 }, deviceScaleFactor: 1 });
  // The state machine page of the 18-state pipeline.
  await page.goto(url + "#/sm/" + encodeURIComponent(arns["data-pipeline"]));
  await page.waitForSelector("#graph g.node");
  await page.waitForTimeout(200);
  await page.locator(".split").screenshot({ path: join(out, "data-pipeline-graph.png") });
  for (const r of runs) {
    const ex = await api("StartExecution", { stateMachineArn: arns[r.machine] + (r.test ? "#" + r.test : ""), name: r.test || r.machine, input: JSON.stringify(r.input) });
    for (let i = 0; i < 600 && !r.running; i++) {
      if ((await api("DescribeExecution", { executionArn: ex.executionArn })).status !== "RUNNING") break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    if (r.running) await new Promise((ok) => setTimeout(ok, 500));
    await page.goto(url + "#/ex/" + encodeURIComponent(ex.executionArn));
    await page.waitForSelector("main[data-loaded]");
    if (r.pick) await page.selectOption(`select.iter-pick[data-map="${r.pick.map}"]`, r.pick.value);
    if (r.select) await page.click(`#graph g.node[data-state="${r.select}"]`);
    await page.waitForTimeout(200);
    if (r.top) {
      // The page's head too: the name, the buttons, the failure, the picker.
      const from = await page.locator(".page-head").boundingBox();
      const to = await page.locator(".split").boundingBox();
      await page.screenshot({ path: join(out, r.shot), clip: { x: to.x, y: from.y, width: to.width, height: to.y + to.height - from.y } });
    } else await page.locator(".split").screenshot({ path: join(out, r.shot) });
    console.log(join(out, r.shot));
  }
} finally {
  await browser.close();
  srv.kill();
}
