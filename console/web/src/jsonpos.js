// Finds where a JSON pointer (as in ValidateStateMachineDefinition's
// diagnostics: /States/Foo/Next, /States/C/Choices[0]/Next) points in JSON
// text, so that a diagnostic can be shown at its line and selected in the
// editor.

// positions returns a Map from pointer to [start, end] offsets of the
// member (key and value) or element, for every value in text; null when the
// text is not JSON.
export function positions(text) {
  const out = new Map();
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const str = () => {
    const s = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(s, i));
  };
  const val = (ptr, start) => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") i++;
      else {
        for (;;) {
          ws();
          const ks = i;
          const k = str();
          ws();
          if (text[i] !== ":") throw new Error("colon");
          i++;
          val(ptr + "/" + k, ks);
          ws();
          if (text[i] === ",") i++;
          else if (text[i] === "}") {
            i++;
            break;
          } else throw new Error("object");
        }
      }
    } else if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") i++;
      else {
        for (let n = 0; ; n++) {
          ws();
          val(ptr + "[" + n + "]", i);
          ws();
          if (text[i] === ",") i++;
          else if (text[i] === "]") {
            i++;
            break;
          } else throw new Error("array");
        }
      }
    } else if (c === '"') str();
    else {
      const m = /^(true|false|null|-?\d+(\.\d+)?([eE][-+]?\d+)?)/.exec(text.slice(i, i + 64));
      if (!m) throw new Error("value");
      i += m[0].length;
    }
    out.set(ptr || "/", [start, i]);
  };
  try {
    val("", 0);
    return out;
  } catch {
    return null;
  }
}

// locate returns {start, end, line, col} for pointer in text, falling back
// to the nearest enclosing pointer that exists; null when nothing matches.
export function locate(text, pointer, pos = positions(text)) {
  if (!pos) return null;
  let p = pointer || "/";
  // Diagnostics may use /a/b/0 for array elements as well.
  const alt = p.replace(/\/(\d+)(?=\/|$)/g, "[$1]");
  for (const cand of alt === p ? [p] : [alt, p]) {
    let q = cand;
    while (q) {
      if (pos.has(q)) return at(text, pos.get(q));
      const cut = Math.max(q.lastIndexOf("/"), q.lastIndexOf("["));
      if (cut <= 0) break;
      q = q.slice(0, cut);
    }
  }
  return pos.has("/") ? at(text, pos.get("/")) : null;
}

function at(text, [start, end]) {
  let line = 1;
  let last = -1;
  for (let k = 0; k < start; k++) if (text.charCodeAt(k) === 10) {
    line++;
    last = k;
  }
  return { start, end, line, col: start - last };
}
