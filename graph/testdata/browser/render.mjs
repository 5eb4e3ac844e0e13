// Browser check of stepd graph's output, driven by graph's
// TestBrowserRendering: node render.mjs CASES.json OUT_DIR
// CASES.json is [{"name", "mermaid", "svg", "states"}]. In headless
// Chromium, each Mermaid text goes through Mermaid's own parser
// (mermaid.parse) and renderer (mermaid.render), and each SVG is shown in a
// page, where it must draw every state with a non-empty box; the first
// case's pictures are saved as PNG in OUT_DIR. Exits non-zero on the first
// failure.
import { chromium } from "playwright-core";
import { readFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const [casesFile, outDir] = process.argv.slice(2);
if (!casesFile || !outDir) {
  console.error("usage: node render.mjs CASES.json OUT_DIR");
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const here = dirname(fileURLToPath(import.meta.url));
const mermaidJS = join(here, "node_modules", "mermaid", "dist", "mermaid.min.js");

const browser = await chromium.launch({
  executablePath: process.env.STEPD_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let failed = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.setContent("<!doctype html><html><body><div id=out></div></body></html>");
  await page.addScriptTag({ path: mermaidJS });
  await page.evaluate(() => window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" }));
  for (const [i, c] of cases.entries()) {
    const r = await page.evaluate(async ({ text, i }) => {
      try {
        await window.mermaid.parse(text);
        const { svg } = await window.mermaid.render("m" + i, text);
        const out = document.getElementById("out");
        out.innerHTML = svg;
        const nodes = out.querySelectorAll("g.node").length;
        const edges = out.querySelectorAll("path.flowchart-link, g.edgePaths path").length;
        return { ok: true, nodes, edges };
      } catch (e) {
        return { ok: false, error: String(e && e.message ? e.message : e) };
      }
    }, { text: c.mermaid, i });
    if (!r.ok) {
      console.log(`FAIL mermaid ${c.name}: ${r.error}\n${c.mermaid}`);
      failed++;
      continue;
    }
    if (r.nodes < c.states) {
      console.log(`FAIL mermaid ${c.name}: ${r.nodes} nodes drawn, want at least ${c.states}`);
      failed++;
      continue;
    }
    if (i === 0) await page.locator("#out").screenshot({ path: join(outDir, "mermaid.png") });
    console.log(`ok mermaid ${c.name}: ${r.nodes} nodes, ${r.edges} edges`);
  }
  for (const [i, c] of cases.entries()) {
    const p = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await p.setContent(`<!doctype html><html><body style="margin:0">${c.svg}</body></html>`);
    const r = await p.evaluate(() => {
      const svg = document.querySelector("body > svg");
      if (!svg) return { ok: false, error: "no svg element" };
      const states = [...svg.querySelectorAll("g[data-state]")];
      const empty = states.filter((g) => {
        const b = g.querySelector("rect.box").getBBox();
        return !(b.width > 0 && b.height > 0);
      }).map((g) => g.dataset.state);
      const texts = [...svg.querySelectorAll("text")].filter((t) => t.textContent && t.getComputedTextLength() === 0).length;
      const box = svg.getBoundingClientRect();
      return { ok: true, states: states.length, empty, texts, w: box.width, h: box.height };
    });
    if (!r.ok || r.empty.length || r.texts || r.states !== c.states || !(r.w > 0 && r.h > 0)) {
      console.log(`FAIL svg ${c.name}: ${JSON.stringify(r)}, want ${c.states} states`);
      failed++;
    } else {
      console.log(`ok svg ${c.name}: ${r.states} states in ${r.w}x${r.h}`);
    }
    if (i === 0) await p.screenshot({ path: join(outDir, "svg.png"), fullPage: true });
    await p.close();
  }
} finally {
  await browser.close();
}
if (failed) {
  console.log(`${failed} failed`);
  process.exit(1);
}
