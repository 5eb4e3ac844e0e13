// Lays out a graph model (model.js) top to bottom with dagre, one scope at a
// time from the innermost out (a Parallel or Map state is a container node
// sized by its laid-out scopes), and renders it as SVG with pan and zoom.
import dagre from "@dagrejs/dagre";
import { esc } from "./util.js";

const CHAR = 7.1; // approximate width of a 13px sans-serif character
const NODE_H = 44;
const PAD = 14;
const HEADER = 30;
const BRANCH_GAP = 16;

function nodeSize(n) {
  if (n.kind === "start" || n.kind === "end") return { w: 64, h: 28 };
  const w = Math.max(110, Math.ceil(Math.max(n.name.length, (n.type || "").length + 2) * CHAR) + 28);
  return { w: Math.min(w, 320), h: NODE_H };
}

// layout sets x, y (centre), w and h on every node and points on every edge
// of sc and its nested scopes; it returns the scope's size.
export function layout(sc) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 46, edgesep: 12, marginx: 12, marginy: 12 });
  for (const n of sc.nodes) {
    let size = nodeSize(n);
    if (n.children) {
      let w = 0;
      let h = 0;
      for (const c of n.children) {
        const s = layout(c);
        c.w = s.w;
        c.h = s.h + 22;
        w += c.w;
        h = Math.max(h, c.h);
      }
      w += BRANCH_GAP * (n.children.length - 1) + 2 * PAD;
      n.innerW = w;
      size = { w: Math.max(w, size.w), h: h + HEADER + PAD };
    }
    n.w = size.w;
    n.h = size.h;
    g.setNode(n.id, { width: n.w, height: n.h });
  }
  sc.edges.forEach((e, i) => {
    const lw = e.label ? Math.ceil(e.label.length * 6.3) + 10 : 0;
    g.setEdge(e.from, e.to, { width: lw, height: e.label ? 18 : 0, labelpos: "c", minlen: e.kind === "catch" ? 1 : 1 }, "e" + i);
  });
  dagre.layout(g);
  sc.edges.forEach((e, i) => {
    const d = g.edge({ v: e.from, w: e.to, name: "e" + i });
    e.points = d.points;
    e.lx = d.x;
    e.ly = d.y;
  });
  for (const n of sc.nodes) {
    const d = g.node(n.id);
    n.x = d.x;
    n.y = d.y;
  }
  const gl = g.graph();
  sc.width = gl.width;
  sc.height = gl.height;
  return { w: gl.width, h: gl.height };
}

function path(pts) {
  if (!pts || pts.length === 0) return "";
  let d = `M${pts[0].x.toFixed(1)},${pts[0].y.toFixed(1)}`;
  if (pts.length === 2) return d + `L${pts[1].x.toFixed(1)},${pts[1].y.toFixed(1)}`;
  // Quadratic segments through the midpoints give smooth bends.
  for (let i = 1; i < pts.length - 1; i++) {
    const p = pts[i];
    const q = pts[i + 1];
    const mx = i === pts.length - 2 ? q.x : (p.x + q.x) / 2;
    const my = i === pts.length - 2 ? q.y : (p.y + q.y) / 2;
    d += `Q${p.x.toFixed(1)},${p.y.toFixed(1)} ${mx.toFixed(1)},${my.toFixed(1)}`;
  }
  return d;
}

function renderScope(sc, out) {
  for (const e of sc.edges) {
    out.push(`<g class="edge ${e.kind}">`);
    if (e.title) out.push(`<title>${esc(e.title)}</title>`);
    out.push(`<path d="${path(e.points)}" marker-end="url(#arrow-${e.kind === "catch" ? "catch" : "next"})"/>`);
    if (e.label) {
      const w = Math.ceil(e.label.length * 6.3) + 10;
      out.push(`<rect class="elabel" x="${(e.lx - w / 2).toFixed(1)}" y="${(e.ly - 9).toFixed(1)}" width="${w}" height="18" rx="4"/>`);
      out.push(`<text x="${e.lx.toFixed(1)}" y="${(e.ly + 4).toFixed(1)}" text-anchor="middle">${esc(e.label)}</text>`);
    }
    out.push("</g>");
  }
  for (const n of sc.nodes) {
    const x = n.x - n.w / 2;
    const y = n.y - n.h / 2;
    if (n.kind === "start" || n.kind === "end") {
      out.push(`<g class="marker ${n.kind}"><rect x="${x}" y="${y}" width="${n.w}" height="${n.h}" rx="14"/>` +
        `<text x="${n.x}" y="${n.y + 4}" text-anchor="middle">${n.name}</text></g>`);
      continue;
    }
    if (n.kind === "missing") {
      out.push(`<g class="node missing"><rect x="${x}" y="${y}" width="${n.w}" height="${n.h}" rx="6"/>` +
        `<text x="${n.x}" y="${n.y + 4}" text-anchor="middle">${esc(n.name)} (missing)</text></g>`);
      continue;
    }
    const label = `${n.name}, ${n.type} state`;
    out.push(`<g class="node ${n.children ? "container" : ""} t-${esc(n.type)}" data-state="${esc(n.name)}" data-status="none" tabindex="0" role="button" aria-label="${esc(label)}">`);
    out.push(`<title>${esc(label)}</title>`);
    if (n.children) {
      out.push(`<rect class="box" x="${x}" y="${y}" width="${n.w}" height="${n.h}" rx="8"/>`);
      out.push(`<text class="name" x="${x + 10}" y="${y + 19}">${esc(n.name)}</text>`);
      out.push(`<text class="type" x="${x + n.w - 10}" y="${y + 19}" text-anchor="end">${esc(n.type)}</text>`);
      let cx = n.x - n.innerW / 2 + PAD;
      for (const c of n.children) {
        const cy = y + HEADER;
        out.push(`<g class="scope" transform="translate(${cx.toFixed(1)},${cy.toFixed(1)})">`);
        out.push(`<rect class="branch" x="0" y="0" width="${c.w}" height="${c.h}" rx="6"/>`);
        out.push(`<text class="branch-label" x="8" y="15">${esc(c.label)}</text>`);
        out.push(`<g transform="translate(0,22)">`);
        renderScope(c, out);
        out.push("</g></g>");
        cx += c.w + BRANCH_GAP;
      }
    } else {
      out.push(`<rect class="box" x="${x}" y="${y}" width="${n.w}" height="${n.h}" rx="6"/>`);
      const name = n.name.length * CHAR > n.w - 16 ? n.name.slice(0, Math.floor((n.w - 20) / CHAR)) + "…" : n.name;
      out.push(`<text class="name" x="${n.x}" y="${n.y - 2}" text-anchor="middle">${esc(name)}</text>`);
      out.push(`<text class="type" x="${n.x}" y="${n.y + 13}" text-anchor="middle">${esc(n.type)}</text>`);
    }
    out.push("</g>");
  }
}

export const STATUS_LABELS = { running: "in progress", succeeded: "succeeded", failed: "failed", caught: "caught error", cancelled: "cancelled", none: "not reached", covered: "covered by the cases", uncovered: "not covered by the cases" };

const DEFS = `<defs>
<marker id="arrow-next" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker>
<marker id="arrow-catch" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead catch"/></marker>
</defs>`;

// GraphView shows a laid-out model in a container element with pan (drag,
// arrow keys), zoom (wheel, +/- buttons and keys) and selectable states
// (click, or Tab to a state and Enter).
export class GraphView {
  constructor(el, model, { onSelect, legend = false } = {}) {
    this.el = el;
    this.model = model;
    this.onSelect = onSelect;
    layout(model);
    const out = [];
    renderScope(model, out);
    el.classList.add("graph");
    el.innerHTML = `<div class="graph-tools" role="toolbar" aria-label="Graph view">
<button type="button" data-act="in" aria-label="Zoom in">+</button><button type="button" data-act="out" aria-label="Zoom out">−</button><button type="button" data-act="fit">Fit</button>
<span class="legend"${legend ? "" : " hidden"}><i class="lg running"></i>in progress <i class="lg succeeded"></i>succeeded <i class="lg failed"></i>failed <i class="lg caught"></i>caught error <i class="lg cancelled"></i>cancelled <i class="lg none"></i>not reached</span></div>
<svg tabindex="0" aria-label="State machine graph: drag or use the arrow keys to pan, + and - to zoom, Tab to reach the states" role="group">${DEFS}<g class="root">${out.join("")}</g></svg>`;
    this.svg = el.querySelector("svg");
    this.root = el.querySelector("g.root");
    this.nodes = new Map();
    for (const g of el.querySelectorAll("g.node[data-state]")) this.nodes.set(g.dataset.state, g);
    this.scale = 1;
    this.tx = 0;
    this.ty = 0;
    this.bind();
    requestAnimationFrame(() => this.fit());
  }

  apply() {
    this.root.setAttribute("transform", `translate(${this.tx.toFixed(1)},${this.ty.toFixed(1)}) scale(${this.scale.toFixed(4)})`);
  }

  fit() {
    const r = this.svg.getBoundingClientRect();
    const W = r.width || 800;
    const H = r.height || 500;
    const s = Math.min(1.2, (W - 20) / this.model.width, (H - 20) / this.model.height);
    this.scale = Math.max(0.1, s);
    this.tx = (W - this.model.width * this.scale) / 2;
    this.ty = Math.max(10, (H - this.model.height * this.scale) / 2);
    if (this.model.height * this.scale > H) this.ty = 10;
    this.apply();
  }

  zoom(f, cx, cy) {
    const r = this.svg.getBoundingClientRect();
    if (cx === undefined) {
      cx = r.width / 2;
      cy = r.height / 2;
    }
    const s = Math.min(4, Math.max(0.05, this.scale * f));
    this.tx = cx - ((cx - this.tx) * s) / this.scale;
    this.ty = cy - ((cy - this.ty) * s) / this.scale;
    this.scale = s;
    this.apply();
  }

  bind() {
    this.el.querySelector(".graph-tools").addEventListener("click", (ev) => {
      const act = ev.target.closest("button")?.dataset.act;
      if (act === "in") this.zoom(1.25);
      else if (act === "out") this.zoom(0.8);
      else if (act === "fit") this.fit();
    });
    this.svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = this.svg.getBoundingClientRect();
      this.zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
    }, { passive: false });
    let drag = null;
    this.svg.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0) return;
      drag = { x: ev.clientX, y: ev.clientY, tx: this.tx, ty: this.ty, moved: false };
    });
    window.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x;
      const dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) {
        this.tx = drag.tx + dx;
        this.ty = drag.ty + dy;
        this.apply();
      }
    });
    window.addEventListener("pointerup", () => {
      if (drag && drag.moved) this.justDragged = true;
      drag = null;
      setTimeout(() => (this.justDragged = false), 0);
    });
    this.svg.addEventListener("click", (ev) => {
      if (this.justDragged) return;
      const g = ev.target.closest("g.node[data-state]");
      if (g) {
        ev.stopPropagation();
        this.select(g.dataset.state);
      }
    });
    this.svg.addEventListener("keydown", (ev) => {
      const g = ev.target.closest && ev.target.closest("g.node[data-state]");
      if (g && (ev.key === "Enter" || ev.key === " ")) {
        ev.preventDefault();
        this.select(g.dataset.state);
        return;
      }
      const step = 40;
      const k = ev.key;
      if (k === "ArrowLeft") this.tx += step;
      else if (k === "ArrowRight") this.tx -= step;
      else if (k === "ArrowUp") this.ty += step;
      else if (k === "ArrowDown") this.ty -= step;
      else if (k === "+" || k === "=") return void this.zoom(1.25);
      else if (k === "-") return void this.zoom(0.8);
      else if (k === "0") return void this.fit();
      else return;
      ev.preventDefault();
      this.apply();
    });
    this.svg.addEventListener("focusin", (ev) => {
      const g = ev.target.closest && ev.target.closest("g.node[data-state]");
      if (g) this.reveal(g);
    });
  }

  // reveal pans so that element g is in view.
  reveal(g) {
    const r = this.svg.getBoundingClientRect();
    const b = g.getBoundingClientRect();
    let dx = 0;
    let dy = 0;
    if (b.left < r.left + 10) dx = r.left + 10 - b.left;
    else if (b.right > r.right - 10) dx = r.right - 10 - b.right;
    if (b.top < r.top + 10) dy = r.top + 10 - b.top;
    else if (b.bottom > r.bottom - 10) dy = r.bottom - 10 - b.bottom;
    if (dx || dy) {
      this.tx += dx;
      this.ty += dy;
      this.apply();
    }
  }

  select(name) {
    for (const g of this.el.querySelectorAll("g.node.selected")) g.classList.remove("selected");
    const g = this.nodes.get(name);
    if (g) g.classList.add("selected");
    if (this.onSelect) this.onSelect(name);
  }

  // setStatus sets data-status on every state: statuses maps a state name to
  // running, succeeded, failed, caught, cancelled; others are "none".
  setStatus(statuses) {
    for (const [name, g] of this.nodes) {
      const s = statuses.get(name) || "none";
      if (g.dataset.status === s) continue;
      g.dataset.status = s;
      // Say the status too: colour alone does not reach everyone.
      if (!g.dataset.label) g.dataset.label = g.getAttribute("aria-label");
      const label = g.dataset.label;
      g.setAttribute("aria-label", `${label}: ${STATUS_LABELS[s]}`);
      g.querySelector("title").textContent = `${label}: ${STATUS_LABELS[s]}`;
    }
  }
}
