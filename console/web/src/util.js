// Small helpers shared by the pages.

const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

// esc escapes text for HTML and SVG markup.
export function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ESC[c]);
}

// pretty formats JSON text for display; other text is returned as is.
export function pretty(text) {
  if (text === undefined || text === null) return "";
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return String(text);
  }
}

export function fmtTime(epoch) {
  if (epoch === undefined || epoch === null) return "";
  const d = new Date(epoch * 1000);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

// fmtDur formats a duration in seconds.
export function fmtDur(s) {
  if (!(s >= 0)) return "";
  if (s < 1) return Math.round(s * 1000) + " ms";
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

// h creates an element from an HTML string.
export function h(html) {
  const t = document.createElement("template");
  t.innerHTML = html.trim();
  return t.content.firstElementChild;
}

// lastPart is the name at the end of an ARN.
export function lastPart(arn) {
  return String(arn || "").split(":").pop();
}

// badge is a status as a coloured label.
export function badge(status) {
  return `<span class="badge st-${esc(String(status).toLowerCase())}">${esc(status)}</span>`;
}

// errorBox shows an API error.
export function errorBox(err) {
  return `<div class="error-box" role="alert"><strong>${esc(err.code || "Error")}</strong> ${esc(err.message || "")}</div>`;
}

// Payloads longer than this are folded: a preview of their first lines
// and a "Show all" that unfolds the rest.
const FOLD_CHARS = 3000;
const FOLD_LINES = 40;
const PREVIEW_LINES = 12;
const PREVIEW_CHARS = 800;

// fmtSize formats a size in bytes.
export function fmtSize(n) {
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KB";
  return (n / 1024 / 1024).toFixed(1) + " MB";
}

// payload shows a state's or an execution's input, output, error or cause
// under a heading: JSON pretty-printed, and folded when large. Absent text
// shows as none (or not at all when none is not given).
export function payload(label, text, none) {
  if (text === undefined || text === null || text === "") {
    return none ? `<div class="payload"><h3>${esc(label)}</h3><p class="muted none">${esc(none)}</p></div>` : "";
  }
  const p = pretty(text);
  const lines = p.split("\n");
  if (p.length <= FOLD_CHARS && lines.length <= FOLD_LINES) return `<div class="payload"><h3>${esc(label)}</h3><pre class="code">${esc(p)}</pre></div>`;
  let preview = lines.slice(0, PREVIEW_LINES).join("\n");
  if (preview.length > PREVIEW_CHARS) preview = preview.slice(0, PREVIEW_CHARS);
  const size = new TextEncoder().encode(String(text)).length;
  return `<div class="payload folded"><h3>${esc(label)} <span class="size">${fmtSize(size)}, ${lines.length} line${lines.length === 1 ? "" : "s"}</span></h3>` +
    `<pre class="code preview">${esc(preview)}\n…</pre><details class="fold"><summary>Show all ${esc(label.toLowerCase())} (${fmtSize(size)})</summary>` +
    `<pre class="code">${esc(p)}</pre></details></div>`;
}
