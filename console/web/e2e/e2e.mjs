// End-to-end test of the console in headless Chromium, driven by
// cmd/stepd/console_test.go against a real stepd serve:
//   node e2e.mjs BASE_URL ARTIFACTS_DIR [AUTH_URL ACCESS_KEY_ID SECRET]
// It creates a state machine through the page (after seeing the diagnostics
// of an invalid definition), starts an execution that takes a Catch path,
// checks the graph's status colours and the event table, opens states'
// input and output, stops a running execution, shows a Distributed Map's
// Map Run and redrives its failed parent, measures the execution page
// of a 1000-event execution, and saves screenshots. It exits non-zero on
// the first failed check. With AUTH_URL, a server that requires SigV4, it
// also signs in through the page and lists and creates state machines there.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [base, outDir, authBase, keyId, secret] = process.argv.slice(2);
if (!base || !outDir) {
  console.error("usage: node e2e.mjs BASE_URL ARTIFACTS_DIR");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const url = base.replace(/\/$/, "") + "/";

const bad = JSON.stringify({
  StartAt: "Prepare",
  States: { Prepare: { Type: "Pass", Next: "Charge" }, Done: { Type: "Succeed" } },
}, null, 2);

// Charge fails in its branch (a Fail state) and the Parallel's Catch sends
// the execution to SendInvoice; Receipt, on the success path, is not reached.
const good = JSON.stringify({
  Comment: "Charge a card; send an invoice when the card is declined",
  StartAt: "Prepare",
  States: {
    Prepare: { Type: "Pass", Result: { amount: 42 }, ResultPath: "$.order", Next: "Charge" },
    Charge: {
      Type: "Parallel",
      Branches: [{ StartAt: "Authorize", States: {
        Authorize: { Type: "Pass", Next: "Approved?" },
        "Approved?": { Type: "Choice", Choices: [{ Variable: "$.order.amount", NumericLessThan: 10, Next: "Approve" }], Default: "Decline" },
        Approve: { Type: "Succeed" },
        Decline: { Type: "Fail", Error: "Payment.CardDeclined", Cause: "insufficient funds" },
      } }],
      Catch: [{ ErrorEquals: ["Payment.CardDeclined"], ResultPath: "$.error", Next: "SendInvoice" }],
      Next: "Receipt",
    },
    Receipt: { Type: "Pass", Next: "Done" },
    SendInvoice: { Type: "Pass", Result: "invoiced", ResultPath: "$.fallback", Next: "Done" },
    Done: { Type: "Succeed" },
  },
}, null, 2);

const waiting = JSON.stringify({ StartAt: "Hold", States: { Hold: { Type: "Wait", Seconds: 600, Next: "After" }, After: { Type: "Pass", End: true } } });

// n rounds of a Pass and a Choice: 4n + 4 events (250 rounds: 1004).
const loopOf = (n) => JSON.stringify({
  StartAt: "Inc",
  States: {
    Inc: { Type: "Pass", Parameters: { "i.$": "States.MathAdd($.i, 1)" }, Next: "More" },
    More: { Type: "Choice", Choices: [{ Variable: "$.i", NumericLessThan: n, Next: "Inc" }], Default: "Done" },
    Done: { Type: "Succeed" },
  },
});
const loop = loopOf(250);

// virtualTable checks the event table of an execution of n events: its
// count, that only rows near the view are in the document, that scrolling
// to the end shows the last events, and that the keyboard moves between
// rows past the ones first drawn.
async function virtualTable(p, n, what) {
  check((await p.textContent("#ev-count")) === `(${n})`, `${what} counts its ${n} events`);
  const drawn = await p.locator("#events tbody tr").count();
  check(drawn > 0 && drawn < 200, `${what} draws only the rows near the view: ${drawn}`);
  await p.$eval("#ev-wrap", (w) => { w.scrollTop = w.scrollHeight; });
  await p.waitForSelector(`#events tbody tr[data-i="${n - 1}"]`, { timeout: 5000 });
  check((await p.textContent(`#events tbody tr[data-i="${n - 1}"] td:first-child`)) === String(n), `${what} scrolled to the end shows event ${n}`);
  await p.$eval("#ev-wrap", (w) => { w.scrollTop = 0; });
  await p.waitForSelector('#events tbody tr[data-i="0"]');
  await p.focus('#events tbody tr[data-i="0"]');
  // The table redraws on the next frame after a move: wait for each move
  // to land before the next key (a loaded machine lags), so a key is never
  // pressed while the row it would act on is being replaced.
  const settled = (fn, arg) => p.waitForFunction(fn, arg, { timeout: 10000 }).then(() => true, () => false);
  let moved = true;
  for (let i = 1; i <= 80 && moved; i++) {
    await p.keyboard.press("ArrowDown");
    moved = await settled((want) => document.activeElement?.dataset?.i === want, String(i));
  }
  check(moved && await settled(() => document.activeElement?.dataset?.i === "80"), `${what}: the arrow keys move through the rows`);
  await p.keyboard.press("Enter");
  check(await settled(() => document.querySelector("#panel")?.textContent.includes("Event 81")), `${what}: Enter on a row shows its event`);
}

// waitDone waits until execution arn is no longer running.
async function waitDone(arn) {
  for (let i = 0; i < 2000; i++) { // 100 s at most: a busy machine may be slow
    const d = await api("DescribeExecution", { executionArn: arn });
    if (d.status !== "RUNNING") return d;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(arn + " still runs");
}

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
  console.log("ok   " + what);
}

async function api(op, body) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AWSStepFunctions." + op }, body: JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(op + ": " + JSON.stringify(j));
  return j;
}

const browser = await chromium.launch({
  executablePath: process.env.STEPD_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let failed = false;
const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
const foreign = [];
page.on("request", (r) => {
  if (!r.url().startsWith(url)) foreign.push(r.url());
});
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(String(e)));
const shot = async (name) => {
  await page.screenshot({ path: join(outDir, name), fullPage: true });
  console.log("screenshot " + join(outDir, name));
};
const status = (name) => page.getAttribute(`#graph g.node[data-state="${name}"]`, "data-status");

try {
  // 1. An invalid definition shows its diagnostics at their location.
  await page.goto(url);
  await page.waitForSelector("#create");
  await page.fill("input[name=name]", "checkout");
  await page.fill("#definition", bad);
  await page.click("#validate");
  await page.waitForSelector("#diagnostics li");
  const diag = await page.textContent("#diagnostics");
  check(/MISSING_TRANSITION_TARGET/.test(diag) && /line 6, column 7/.test(diag), "diagnostics name the missing target at its line: " + diag.replace(/\s+/g, " ").slice(0, 120));
  await page.click("#diagnostics li button");
  const sel = await page.evaluate(() => {
    const t = document.getElementById("definition");
    return t.value.slice(t.selectionStart, t.selectionEnd);
  });
  check(sel === '"Next": "Charge"', "clicking a diagnostic selects its location in the editor: " + sel);
  await shot("01-create-diagnostics.png");
  await page.click("button[type=submit]");
  check((await page.url()).endsWith("/"), "an invalid definition is not created");

  // 2. A valid one is created.
  await page.fill("#definition", good);
  await page.click("#validate");
  await page.waitForSelector("#diag-summary .ok");
  await page.waitForSelector("#preview g.node[data-state=Charge]");
  await page.click("button[type=submit]");
  await page.waitForSelector("#start");
  check((await page.textContent("h1")).includes("checkout"), "the state machine page opens");
  check(await page.locator("#graph g.node[data-state]").count() === 9, "the graph has the 9 states");
  check(await page.locator("#graph .edge.catch").count() === 1, "the Catch edge is drawn as such");
  check(await page.locator("#graph .edge.default").count() === 1, "the Default edge is drawn as such");
  check((await page.textContent("#graph .edge.choice")).includes("$.order.amount < 10"), "the Choice edge is labelled with its rule");
  await shot("02-state-machine.png");

  // 2b. A coverage report of stepd test colours the states its cases entered.
  const names = await page.$$eval("#graph g.node[data-state]", (gs) => gs.map((g) => g.dataset.state));
  const report = { stateMachines: [{ name: "checkout.json", cases: 1, states: { covered: 2, total: names.length }, branches: { covered: 0, total: 2 },
    detail: names.map((n) => ({ name: n, type: "Pass", visits: n === "Prepare" || n === "Charge" ? 1 : 0, branches: [] })) }] };
  await page.setInputFiles("#cover-file", { name: "cover.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(report)) });
  await page.waitForSelector("#cover-msg .ok");
  check((await page.textContent("#cover-msg")).includes(`coverage: 22.2% of states (2/${names.length}), 0% of branches (0/2)`), "a coverage report shows its summary: " + (await page.textContent("#cover-msg")));
  check((await status("Prepare")) === "covered" && (await status("Done")) === "uncovered", "a coverage report colours covered and uncovered states");
  const uncovered = await page.evaluate(() => getComputedStyle(document.querySelector('#graph g.node[data-state="Done"] > rect.box')).fill);
  check(uncovered !== "rgb(255, 255, 255)", "an uncovered state is coloured: " + uncovered);
  await page.setInputFiles("#cover-file", { name: "wrong.json", mimeType: "application/json", buffer: Buffer.from('{"stateMachines":[]}') });
  await page.waitForSelector("#cover-msg .bad");
  check((await page.textContent("#cover-msg")).includes("no state machine with this definition"), "a report of another state machine is refused");

  // 3. An execution that takes the Catch path.
  await page.fill("#input", '{"customer": "c-1"}');
  await page.click("#start button[type=submit]");
  await page.waitForSelector("main[data-loaded]");
  await page.waitForFunction(() => document.querySelector("#ex-status")?.textContent === "SUCCEEDED", null, { timeout: 10000 });
  await page.waitForFunction(() => document.querySelector('#graph g.node[data-state="Done"]')?.dataset.status === "succeeded");
  const want = { Prepare: "succeeded", Charge: "caught", Authorize: "succeeded", "Approved?": "succeeded", Decline: "failed",
    Approve: "none", SendInvoice: "succeeded", Receipt: "none", Done: "succeeded" };
  for (const [name, st] of Object.entries(want)) check((await status(name)) === st, `state ${name} is ${st}`);
  const colour = await page.evaluate(() => getComputedStyle(document.querySelector('#graph g.node[data-state="Charge"] > rect.box')).fill);
  check(colour !== "rgb(255, 255, 255)" && colour !== "rgb(251, 251, 253)", "a caught error is coloured: " + colour);
  const rows = await page.locator("#events tbody tr").count();
  check(rows === 17, "the event table has the 17 events: " + rows);
  const types = await page.locator("#events tbody tr td:nth-child(2)").allTextContents();
  check(types.includes("ParallelStateFailed") && types.at(-1) === "ExecutionSucceeded", "the events include the caught failure and the success");
  // Open a state with the keyboard: focus it and press Enter.
  await page.focus('#graph g.node[data-state="SendInvoice"]');
  await page.keyboard.press("Enter");
  await page.waitForSelector("#panel h2");
  const panel = await page.textContent("#panel");
  check(panel.includes("SendInvoice") && panel.includes("Input") && panel.includes("Output") && panel.includes("Payment.CardDeclined") && panel.includes("invoiced"),
    "the side panel shows the state's input and output");
  await shot("03-execution-caught.png");
  await page.click('#graph g.node[data-state="Decline"]');
  const p2 = await page.textContent("#panel");
  check(p2.includes("FAILED") && p2.includes("Decline") && p2.includes("insufficient funds"), "a failed state is shown as failed, with its cause");
  await page.click('#graph g.node[data-state="Charge"]', { position: { x: 30, y: 12 } });
  const p3 = await page.textContent("#panel");
  check(p3.includes("CAUGHT ERROR") && p3.includes("Payment.CardDeclined"), "the Parallel state shows its caught error");
  await page.click("#events tbody tr:nth-child(9)");
  check((await page.textContent("#panel")).includes("Event 9"), "clicking an event shows its details");
  await shot("04-execution-state-selected.png");

  // 3b. A failed execution opens on its failure: the error and cause in
  // a banner, the state it failed in selected, in the iteration of the
  // Map it failed in; the iteration picker shows one iteration at a time;
  // a large input is folded.
  const mapFail = await api("CreateStateMachine", { name: "map-fail", roleArn: "arn:aws:iam::123456789012:role/x", definition: JSON.stringify({
    StartAt: "Prep", States: { Prep: { Type: "Pass", Next: "Each" }, Each: { Type: "Map", ItemsPath: "$.items", MaxConcurrency: 1, Next: "Report",
      ItemProcessor: { StartAt: "Check", States: { Check: { Type: "Choice", Choices: [{ Variable: "$", NumericEquals: 2, Next: "Bad" }], Default: "Good" },
        Good: { Type: "Pass", Parameters: { "double.$": "States.MathAdd($, $)" }, End: true },
        Bad: { Type: "Fail", Error: "Item.Bad", Cause: "item 2 is refused" } } } },
    Report: { Type: "Succeed" } } }) });
  const blob = Array.from({ length: 300 }, (_, i) => ({ line: i, text: "payload line " + i }));
  const fex = await api("StartExecution", { stateMachineArn: mapFail.stateMachineArn, name: "map-fail-run", input: JSON.stringify({ items: [1, 2, 3], blob }) });
  await waitDone(fex.executionArn);
  const fevents = (await api("GetExecutionHistory", { executionArn: fex.executionArn, maxResults: 1000 })).events.length;
  await page.goto(url + "#/ex/" + encodeURIComponent(fex.executionArn));
  await page.waitForSelector(`main[data-loaded="${fex.executionArn}"]`);
  const banner = await page.textContent("#ex-failure");
  check(await page.isVisible("#ex-failure") && banner.includes("Execution failed") && banner.includes("Item.Bad") && banner.includes("item 2 is refused") &&
    banner.includes("in state Bad (iteration 1 of Each)"), "a failed execution shows its error, cause and state first: " + banner.replace(/\s+/g, " "));
  check(await page.getAttribute('#graph g.node[data-state="Bad"]', "class").then((c) => c.includes("selected")), "the failed state is selected in the graph");
  const fpanel = await page.textContent("#panel");
  check(/^Bad/.test(fpanel) && fpanel.includes("FAILED") && fpanel.includes("iteration 1 of Each") && fpanel.includes("item 2 is refused"),
    "the side panel opens on the failed state with its error and cause: " + fpanel.replace(/\s+/g, " ").slice(0, 160));
  check((await page.textContent("#panel .payload:has(h3:text-is('Input')) pre")).trim() === "2", "the failed state's input is its item");
  check((await page.inputValue('select.iter-pick[data-map="Each"]')) === "1", "the picker shows the failed iteration");
  check((await status("Bad")) === "failed" && (await status("Good")) === "none" && (await status("Check")) === "succeeded" && (await status("Each")) === "failed",
    "the graph shows the failed iteration's states");
  const scoped = await page.$$eval("#events tbody tr", (rows) => rows.map((r) => r.children[2].textContent));
  check(!scoped.includes("Good") && scoped.includes("Bad") && (await page.textContent("#ev-count")) === `(${scoped.length} of ${fevents})`,
    "the event table shows that iteration's events: " + (await page.textContent("#ev-count")));
  // The header's buttons are buttons, at button size, outside the heading.
  check(await page.locator("h1 button").count() === 0 && await page.isVisible("#ex-actions #redrive"), "the header's buttons are outside the heading");
  const sizes = await page.evaluate(() => [getComputedStyle(document.querySelector("h1")).fontSize, getComputedStyle(document.querySelector("#redrive")).fontSize]);
  check(parseFloat(sizes[1]) < parseFloat(sizes[0]) && parseFloat(sizes[1]) <= 14, "the Redrive button is at button size: " + sizes.join(" vs "));
  await shot("09-execution-failed.png");
  // Pick iteration 0: Good ran there, Bad did not.
  await page.selectOption('select.iter-pick[data-map="Each"]', "0");
  await page.waitForFunction(() => document.querySelector('#graph g.node[data-state="Good"]')?.dataset.status === "succeeded");
  check((await status("Bad")) === "none", "iteration 0 does not reach Bad");
  check((await page.textContent("#panel")).includes("did not run"), "the selected state says it did not run in that iteration");
  await page.click('#graph g.node[data-state="Good"]');
  const gpanel = await page.textContent("#panel");
  check(gpanel.includes("iteration 0 of Each") && /"double": 2/.test(gpanel), "a state of the picked iteration shows its input and output: " + gpanel.replace(/\s+/g, " ").slice(0, 160));
  const rows0 = await page.$$eval("#events tbody tr", (rows) => rows.map((r) => r.children[2].textContent));
  check(rows0.includes("Good") && !rows0.includes("Bad"), "the event table follows the picked iteration");
  check(await page.locator('select.iter-pick[data-map="Each"] option').count() === 3, "the picker lists all and the two iterations that ran");
  await shot("10-map-iteration.png");
  // The banner's state link goes back to where it failed.
  await page.click("#failed-state");
  await page.waitForFunction(() => document.querySelector('#graph g.node[data-state="Bad"]')?.dataset.status === "failed");
  check((await page.inputValue('select.iter-pick[data-map="Each"]')) === "1" && (await page.textContent("#panel h2")) === "Bad",
    "the banner's state link shows the failed state in its iteration again");
  await page.click("#iter-clear");
  await page.waitForFunction((n) => document.querySelector("#ev-count")?.textContent === `(${n})`, fevents);
  check((await status("Good")) === "succeeded" && (await status("Bad")) === "failed", "Show all brings every iteration back");
  // Nested Maps: the inner Map offers the iterations of the picked outer one.
  const nested = await api("CreateStateMachine", { name: "nested-maps", roleArn: "arn:aws:iam::123456789012:role/x", definition: JSON.stringify({
    StartAt: "Outer", States: { Outer: { Type: "Map", MaxConcurrency: 2, End: true, ItemProcessor: { StartAt: "Inner", States: {
      Inner: { Type: "Map", ItemsPath: "$.xs", End: true, ItemProcessor: { StartAt: "Double", States: {
        Double: { Type: "Pass", Parameters: { "v.$": "States.MathAdd($, $)" }, End: true } } } } } } } } }) });
  const nex = await api("StartExecution", { stateMachineArn: nested.stateMachineArn, name: "nested-run", input: JSON.stringify([{ xs: [1, 2] }, { xs: [3, 4, 5] }]) });
  await waitDone(nex.executionArn);
  await page.goto(url + "#/ex/" + encodeURIComponent(nex.executionArn));
  await page.waitForSelector(`main[data-loaded="${nex.executionArn}"]`);
  check(!(await page.isVisible("#ex-failure")), "a succeeded execution has no failure banner");
  check(await page.locator('select.iter-pick[data-map="Inner"] option').count() === 4, "the inner Map offers the indexes of both outer iterations (0 to 2)");
  await page.selectOption('select.iter-pick[data-map="Outer"]', "0");
  await page.waitForFunction(() => document.querySelectorAll('select.iter-pick[data-map="Inner"] option').length === 3);
  check(true, "with outer iteration 0 picked, the inner Map offers its two iterations there");
  await page.selectOption('select.iter-pick[data-map="Outer"]', "1");
  await page.waitForFunction(() => document.querySelectorAll('select.iter-pick[data-map="Inner"] option').length === 4);
  await page.selectOption('select.iter-pick[data-map="Inner"]', "2");
  await page.waitForFunction(() => document.querySelector('select.iter-pick[data-map="Inner"]')?.value === "2");
  await page.click('#graph g.node[data-state="Double"]');
  const npanel = await page.textContent("#panel");
  check(npanel.includes("iteration 1 of Outer") && npanel.includes("iteration 2 of Inner") && /"v": 10/.test(npanel) && npanel.includes("Entered1 time"),
    "a state of nested iterations shows that iteration's input and output: " + npanel.replace(/\s+/g, " ").slice(0, 160));
  await page.selectOption('select.iter-pick[data-map="Outer"]', "0");
  await page.waitForFunction(() => document.querySelector('select.iter-pick[data-map="Inner"]')?.value === "");
  check(true, "picking another outer iteration lets the inner Map show all its iterations again");
  await page.goto(url + "#/ex/" + encodeURIComponent(fex.executionArn));
  await page.waitForSelector(`main[data-loaded="${fex.executionArn}"]`);
  await page.click("#iter-clear");
  await page.waitForFunction((n) => document.querySelector("#ev-count")?.textContent === `(${n})`, fevents);
  // A large input is folded to a preview, and unfolds.
  await page.click('#graph g.node[data-state="Prep"]');
  await page.waitForSelector("#panel .payload.folded");
  check(await page.isVisible("#panel .payload.folded pre.preview") && !(await page.isVisible("#panel .payload.folded details pre")), "a large input is folded");
  await page.click("#panel .payload.folded summary");
  check(!(await page.isVisible("#panel .payload.folded pre.preview")) && (await page.textContent("#panel .payload.folded details pre")).includes("payload line 299"),
    "Show all unfolds it");

  // 4. A running execution updates live and can be stopped.
  const w = await api("CreateStateMachine", { name: "hold", definition: waiting, roleArn: "arn:aws:iam::123456789012:role/x" });
  const run = await api("StartExecution", { stateMachineArn: w.stateMachineArn, name: "held" });
  await page.goto(url + "#/ex/" + encodeURIComponent(run.executionArn));
  await page.waitForSelector("main[data-loaded]");
  check((await status("Hold")) === "running", "a Wait in progress is shown running");
  check(await page.isVisible("#stop"), "a running execution can be stopped");
  await shot("05-execution-running.png");
  await page.click("#stop");
  await page.waitForFunction(() => document.querySelector("#ex-status")?.textContent === "ABORTED", null, { timeout: 10000 });
  await page.waitForFunction(() => document.querySelector('#graph g.node[data-state="Hold"]')?.dataset.status === "cancelled", null, { timeout: 5000 });
  check(true, "stopping the execution shows it aborted and the Wait cancelled");
  check((await status("After")) === "none", "a state after it is not reached");
  await page.waitForSelector("#ex-failure:not([hidden])");
  check((await page.textContent("#ex-failure")).includes("was stopped in state Hold") && (await page.textContent("#ex-failure")).includes("Console.Stopped"),
    "a stopped execution says where it stopped, and why: " + (await page.textContent("#ex-failure")).replace(/\s+/g, " "));
  // The status and the event table update from separate reads: wait for
  // the table to catch up rather than reading it at once.
  const stoppedEvents = (await api("GetExecutionHistory", { executionArn: run.executionArn })).events.length;
  check(await page.waitForFunction((n) => document.querySelectorAll("#events tbody tr").length === n, stoppedEvents, { timeout: 10000 }).then(() => true, () => false),
    "the live table holds every event of the stopped execution");
  // A finished execution downloads as a stepd test case (Stepd.CaseFromHistory).
  const [dl] = await Promise.all([page.waitForEvent("download"), page.click("#case-dl")]);
  const stream = await dl.createReadStream();
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  const kase = JSON.parse(Buffer.concat(chunks).toString());
  check(dl.suggestedFilename() === "held.case.json" && kase.expected.status === "ABORTED" && kase.run.executionName === "held",
    "a finished execution downloads as a test case");
  await page.waitForFunction(() => document.querySelector("#panel")?.textContent.includes("stepd test held.case.json"), null, { timeout: 10000 });
  check(true, "the panel says how to run the downloaded case, and what it could not replay");

  // An execution that moves on while its page is open: it waits for an
  // activity worker, which the test plays once the page shows it running;
  // the polls that read only the new events bring the rest.
  const act = await api("CreateActivity", { name: "console-worker" });
  const moving = await api("CreateStateMachine", { name: "moving", roleArn: "arn:aws:iam::123456789012:role/x",
    definition: JSON.stringify({ StartAt: "Work", States: { Work: { Type: "Task", Resource: act.activityArn, Next: "Then" }, Then: { Type: "Pass", Next: "Last" }, Last: { Type: "Pass", End: true } } }) });
  const mrun = await api("StartExecution", { stateMachineArn: moving.stateMachineArn, name: "moving-run", input: '{"n":1}' });
  await page.goto(url + "#/ex/" + encodeURIComponent(mrun.executionArn));
  await page.waitForSelector(`main[data-loaded="${mrun.executionArn}"]`);
  check((await status("Work")) === "running", "the activity task is shown running");
  const work = await api("GetActivityTask", { activityArn: act.activityArn, workerName: "e2e" });
  await api("SendTaskSuccess", { taskToken: work.taskToken, output: '{"done":true}' });
  await page.waitForFunction(() => document.querySelector("#ex-status")?.textContent === "SUCCEEDED", null, { timeout: 15000 });
  const mh = (await api("GetExecutionHistory", { executionArn: mrun.executionArn })).events;
  const rowIds = await page.$$eval("#events tbody tr", (rows) => rows.map((r) => r.children[0].textContent.trim()));
  check(rowIds.join(",") === mh.map((e) => String(e.id)).join(",") && (await status("Last")) === "succeeded",
    "live updates add each new event once and colour the states reached: " + rowIds.join(","));

  // 5. The execution list filters by status.
  await page.goto(url + "#/sm/" + encodeURIComponent(w.stateMachineArn));
  await page.waitForSelector("#ex-rows tr td a");
  await page.selectOption("#ex-filter", "SUCCEEDED");
  await page.waitForFunction(() => document.querySelector("#ex-rows").textContent.includes("No executions"));
  await page.selectOption("#ex-filter", "ABORTED");
  await page.waitForSelector("#ex-rows a");
  check((await page.textContent("#ex-rows")).includes("held"), "the status filter lists the aborted execution");

  // 6. The execution page of a 1000-event execution.
  const l = await api("CreateStateMachine", { name: "loop", definition: loop, roleArn: "arn:aws:iam::123456789012:role/x" });
  const big = await api("StartExecution", { stateMachineArn: l.stateMachineArn, name: "big", input: '{"i":0}' });
  for (let i = 0; i < 100; i++) {
    const d = await api("DescribeExecution", { executionArn: big.executionArn });
    if (d.status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const fresh = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  fresh.on("request", (r) => {
    if (!r.url().startsWith(url)) foreign.push(r.url());
  });
  const t0 = Date.now();
  await fresh.goto(url + "#/ex/" + encodeURIComponent(big.executionArn));
  await fresh.waitForSelector("main[data-loaded]");
  const wall = Date.now() - t0;
  const inPage = await fresh.evaluate(() => +document.body.dataset.rendered);
  await virtualTable(fresh, 1004, "the 1000-event execution");
  console.log(`RENDER_1000_EVENTS wall=${wall}ms in-page=${inPage}ms (from navigation start to the rendered graph and table)`);

  await fresh.screenshot({ path: join(outDir, "06-execution-1004-events.png") });
  // The largest history AWS allows a Standard execution: 24,996 events.
  const l25 = await api("CreateStateMachine", { name: "loop25k", definition: loopOf(6248), roleArn: "arn:aws:iam::123456789012:role/x" });
  const huge = await api("StartExecution", { stateMachineArn: l25.stateMachineArn, name: "huge", input: '{"i":0}' });
  let hd;
  for (let i = 0; i < 300; i++) {
    hd = await api("DescribeExecution", { executionArn: huge.executionArn });
    if (hd.status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  check(hd.status === "SUCCEEDED", "an execution of 24,996 events, just under AWS's limit, succeeds");
  const t25 = Date.now();
  await fresh.goto(url + "#/ex/" + encodeURIComponent(huge.executionArn));
  await fresh.waitForSelector(`main[data-loaded="${huge.executionArn}"]`);
  const wall25 = Date.now() - t25;
  check((await fresh.textContent("#ex-status")).includes("SUCCEEDED"), "the 24,996-event execution is shown succeeded");
  await virtualTable(fresh, 24996, "the 24,996-event execution");
  // The page only changes its hash here, so its in-page clock started with
  // the previous page: the wall clock is the measure.
  console.log(`RENDER_25000_EVENTS wall=${wall25}ms (from navigation to the rendered graph and table)`);
  await fresh.close();

  // 7. Parent and child executions link to each other.
  const child = await api("CreateStateMachine", { name: "child", roleArn: "arn:aws:iam::123456789012:role/x",
    definition: JSON.stringify({ StartAt: "Work", States: { Work: { Type: "Pass", End: true } } }) });
  const parentSM = await api("CreateStateMachine", { name: "parent", roleArn: "arn:aws:iam::123456789012:role/x",
    definition: JSON.stringify({ StartAt: "RunChild", States: { RunChild: { Type: "Task", Resource: "arn:aws:states:::states:startExecution.sync:2",
      Parameters: { StateMachineArn: child.stateMachineArn, Input: { "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id" } }, End: true } } }) });
  const pex = await api("StartExecution", { stateMachineArn: parentSM.stateMachineArn, name: "parent-run" });
  for (let i = 0; i < 100; i++) {
    if ((await api("DescribeExecution", { executionArn: pex.executionArn })).status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.goto(url + "#/ex/" + encodeURIComponent(pex.executionArn));
  await page.waitForSelector("main[data-loaded] a.child-link");
  await page.click("a.child-link");
  await page.waitForSelector("main[data-loaded] a.parent-link");
  check((await page.textContent("h1")) !== "" && (await page.getAttribute("a.parent-link", "href")).includes(encodeURIComponent(pex.executionArn)),
    "a parent links to its child execution and the child back to its parent");

  // The execution list pages through 25 executions, 20 a page.
  for (let i = 0; i < 24; i++) await api("StartExecution", { stateMachineArn: child.stateMachineArn, name: "c" + i });
  await page.goto(url + "#/sm/" + encodeURIComponent(child.stateMachineArn));
  await page.waitForSelector("#ex-rows a");
  check(await page.locator("#ex-rows tr").count() === 20 && await page.isEnabled("#ex-next"), "the first page lists 20 executions");
  await page.click("#ex-next");
  await page.waitForFunction(() => document.querySelectorAll("#ex-rows tr").length === 5);
  check((await page.textContent("#ex-page")) === "page 2" && !(await page.isEnabled("#ex-next")), "the second page lists the other 5");
  await page.click("#ex-prev");
  await page.waitForFunction(() => document.querySelectorAll("#ex-rows tr").length === 20);

  // 8. A Distributed Map: the parent links to its Map Run, which counts and
  // lists its child executions; a child links back to it; the failed
  // parent is redriven from its page and succeeds.
  const dact = await api("CreateActivity", { name: "dmap-worker" });
  const dsm = await api("CreateStateMachine", { name: "dmap", roleArn: "arn:aws:iam::123456789012:role/x",
    definition: JSON.stringify({ StartAt: "M", States: { M: { Type: "Map", Label: "Items", End: true,
      ItemProcessor: { ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" }, StartAt: "W", States: { W: { Type: "Task", Resource: dact.activityArn, End: true } } } } } }) });
  const dex = await api("StartExecution", { stateMachineArn: dsm.stateMachineArn, name: "dmap-run", input: "[1,2]" });
  const t1 = await api("GetActivityTask", { activityArn: dact.activityArn, workerName: "e2e" });
  const t2 = await api("GetActivityTask", { activityArn: dact.activityArn, workerName: "e2e" });
  await api("SendTaskSuccess", { taskToken: t1.taskToken, output: '"ok"' });
  await api("SendTaskFailure", { taskToken: t2.taskToken, error: "E2E.Broken" });
  for (let i = 0; i < 100; i++) {
    if ((await api("DescribeExecution", { executionArn: dex.executionArn })).status !== "RUNNING") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.goto(url + "#/ex/" + encodeURIComponent(dex.executionArn));
  await page.waitForSelector(`main[data-loaded="${dex.executionArn}"] a.maprun-link`);
  check(await page.isVisible("#redrive"), "a failed execution can be redriven");
  // Its failed child execution is picked, and the state that failed there
  // is selected; the other child shows its own run.
  const dsel = 'select.iter-pick[data-map="M"][data-kind="distributed"]';
  const dopts = await page.$$eval(dsel + " option", (os) => os.map((o) => [o.value, o.textContent]));
  check(dopts.length === 3, "the picker lists the Map Run's two child executions: " + dopts.map((o) => o[1]).join(", "));
  const failedKid = dopts.find((o) => o[1].includes("failed"));
  check(failedKid && (await page.inputValue(dsel)) === failedKid[0], "the failed child execution is picked");
  check((await status("W")) === "failed" && (await page.textContent("#ex-failure")).includes("in state W (child execution"),
    "the banner names the state that failed in the child: " + (await page.textContent("#ex-failure")).replace(/\s+/g, " "));
  check((await page.textContent("#panel")).includes("E2E.Broken"), "the child's failed state shows its error");
  check((await page.textContent("#ev-scope")).includes("child execution"), "the event table shows the child's events");
  await page.selectOption(dsel, dopts.find((o) => o[1].includes("succeeded"))[0]);
  await page.waitForFunction(() => document.querySelector('#graph g.node[data-state="W"]')?.dataset.status === "succeeded");
  await page.click('#graph g.node[data-state="W"]');
  check((await page.textContent("#panel")).includes('"ok"'), "the other child shows its output");
  await page.click("a.maprun-link");
  await page.waitForSelector("#maprun-counts");
  const counts = await page.$$eval("#maprun-counts tbody tr:nth-child(2) td", (tds) => tds.map((td) => td.textContent));
  check(counts[2] === "1" && counts[3] === "1" && counts[6] === "2", "the Map Run counts its child executions: " + counts.join(","));
  check(await page.locator("#maprun-children tr").count() === 2, "the Map Run lists its two child executions");
  await shot("08-map-run.png");
  await page.click("#maprun-children a");
  await page.waitForSelector("main[data-loaded] a.maprun-link");
  check((await page.textContent("#ex-meta")).includes("Map Run"), "a child execution links to its Map Run");
  await page.goto(url + "#/ex/" + encodeURIComponent(dex.executionArn));
  await page.waitForSelector(`main[data-loaded="${dex.executionArn}"] #redrive:not([hidden])`);
  await page.click("#redrive");
  await page.waitForFunction(() => document.querySelector("#ex-status")?.textContent === "RUNNING", null, { timeout: 10000 });
  const t3 = await api("GetActivityTask", { activityArn: dact.activityArn, workerName: "e2e" });
  await api("SendTaskSuccess", { taskToken: t3.taskToken, output: '"again"' });
  await page.waitForFunction(() => document.querySelector("#ex-status")?.textContent === "SUCCEEDED", null, { timeout: 15000 });
  check((await page.textContent("#ex-meta")).includes("Redriven"), "the redriven execution succeeds and says it was redriven");

  // 9. A server that requires SigV4: the page asks for keys and signs.
  if (authBase) {
    const authURL = authBase.replace(/\/$/, "") + "/";
    const ap = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    ap.on("request", (r) => {
      if (!r.url().startsWith(authURL)) foreign.push(r.url());
    });
    ap.on("pageerror", (e) => pageErrors.push(String(e)));
    await ap.goto(authURL);
    await ap.waitForSelector(".modal input[name=id]");
    await ap.screenshot({ path: join(outDir, "07-sign-in.png") });
    await ap.fill(".modal input[name=id]", keyId);
    await ap.fill(".modal input[name=secret]", secret);
    await ap.click(".modal button[type=submit]");
    // The list shows "Loading…" until the signed ListStateMachines answers.
    await ap.waitForFunction(() => !document.querySelector("#sm-rows")?.textContent.includes("Loading"), null, { timeout: 15000 });
    check((await ap.textContent("#sm-rows")).includes("No state machines yet"), "signed requests list the state machines: " + (await ap.textContent("#sm-rows")));
    // Upload the definition as a file: it fills the editor and the name.
    await ap.setInputFiles("input[name=file]", { name: "signed.asl.json", mimeType: "application/json", buffer: Buffer.from(good) });
    await ap.waitForSelector("#diag-summary .ok");
    check((await ap.inputValue("input[name=name]")) === "signed", "an uploaded definition names the state machine after its file");
    await ap.click("button[type=submit]");
    await ap.waitForSelector("#start");
    check((await ap.textContent("h1")).includes("signed"), "a state machine is created with signed requests");
    check(await ap.evaluate(() => !!sessionStorage.getItem("stepd.credentials")), "the keys are kept in session storage");
    await ap.close();
  }

  check(foreign.length === 0, "no requests leave the server: " + foreign.join(" "));
  check(pageErrors.length === 0, "no script errors: " + pageErrors.join(" | "));
} catch (e) {
  failed = true;
  console.error(String(e && e.stack || e));
  await shot("failure.png").catch(() => {});
}
await browser.close();
process.exit(failed ? 1 : 0);
