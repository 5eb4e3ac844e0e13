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
