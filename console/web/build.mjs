// Builds the console into ../dist: index.html, app.js and app.css, plus
// source.sha256, a hash of the sources the Go test compares against to
// detect a committed build that is older than its sources.
import * as esbuild from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "..", "dist");

// sourceFiles lists what the build depends on, sorted, as paths relative to
// console/web with forward slashes. The Go test (console/console_test.go)
// lists the same files the same way.
export function sourceFiles() {
  const out = ["build.mjs", "package-lock.json", "package.json"];
  const walk = (dir) => {
    for (const e of readdirSync(join(here, dir), { withFileTypes: true })) {
      const p = dir + "/" + e.name;
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk("src");
  return out.sort();
}

// sourceHash is sha256 over, for each file, its path, a NUL, its length in
// bytes, a NUL and its contents.
export function sourceHash() {
  const h = createHash("sha256");
  for (const f of sourceFiles()) {
    const b = readFileSync(join(here, f));
    h.update(f + "\0" + b.length + "\0");
    h.update(b);
  }
  return h.digest("hex");
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
await esbuild.build({
  entryPoints: { app: join(here, "src/main.js") },
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  outdir: dist,
  legalComments: "none",
  logLevel: "warning",
});
const html = readFileSync(join(here, "src/index.html"), "utf8");
writeFileSync(join(dist, "index.html"), html);
writeFileSync(join(dist, "source.sha256"), sourceHash() + "\n");
for (const f of readdirSync(dist)) console.log(relative(here, join(dist, f)));
