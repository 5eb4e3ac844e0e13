// The console's client of the Step Functions API: the same POST / with
// X-Amz-Target that every SDK sends. When the server requires SigV4, the
// requests are signed in the browser with WebCrypto, with keys the user
// types in, kept in sessionStorage only.

const CRED_KEY = "stepd.credentials";

export class APIError extends Error {
  constructor(code, message, status) {
    super(message || code);
    this.code = code;
    this.status = status;
  }
}

export function credentials() {
  try {
    return JSON.parse(sessionStorage.getItem(CRED_KEY) || "null");
  } catch {
    return null;
  }
}

export function setCredentials(c) {
  if (c) sessionStorage.setItem(CRED_KEY, JSON.stringify(c));
  else sessionStorage.removeItem(CRED_KEY);
}

const enc = new TextEncoder();

function hex(buf) {
  const b = new Uint8Array(buf);
  let s = "";
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, "0");
  return s;
}

async function sha256(data) {
  return hex(await crypto.subtle.digest("SHA-256", typeof data === "string" ? enc.encode(data) : data));
}

async function hmac(key, data) {
  const k = await crypto.subtle.importKey("raw", typeof key === "string" ? enc.encode(key) : key,
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", k, enc.encode(data));
}

// sign returns the headers that sign a POST / request with SigV4 for
// service "states".
export async function sign(cred, host, headers, body, now = new Date()) {
  const amzDate = now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const day = amzDate.slice(0, 8);
  const region = cred.region || "us-east-1";
  const payloadHash = await sha256(body);
  const h = { ...headers, host, "x-amz-date": amzDate, "x-amz-content-sha256": payloadHash };
  const names = Object.keys(h).map((n) => n.toLowerCase()).sort();
  const lower = {};
  for (const [k, v] of Object.entries(h)) lower[k.toLowerCase()] = String(v).trim().replace(/\s+/g, " ");
  const signed = names.join(";");
  const canonical = ["POST", "/", "", ...names.map((n) => n + ":" + lower[n]), "", signed, payloadHash].join("\n");
  const scope = `${day}/${region}/states/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, await sha256(canonical)].join("\n");
  let key = await hmac("AWS4" + cred.secretAccessKey, day);
  key = await hmac(key, region);
  key = await hmac(key, "states");
  key = await hmac(key, "aws4_request");
  const sig = hex(await hmac(key, toSign));
  const out = { ...headers, "x-amz-date": amzDate, "x-amz-content-sha256": payloadHash };
  out.authorization = `AWS4-HMAC-SHA256 Credential=${cred.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${sig}`;
  return out;
}

// authNeeded is called with the error when the server refuses a request
// for want of a valid signature; it resolves once new credentials are set.
export let onAuthNeeded = null;
export function setAuthHandler(fn) {
  onAuthNeeded = fn;
}

const AUTH_CODES = new Set(["MissingAuthenticationTokenException", "UnrecognizedClientException",
  "InvalidSignatureException", "IncompleteSignatureException"]);

// call invokes an operation and returns its decoded response.
export async function call(op, input = {}, retried = false) {
  return send("AWSStepFunctions." + op, input, retried);
}

// callStepd invokes one of stepd serve's own operations ("CaseFromHistory").
export async function callStepd(op, input = {}) {
  return send("Stepd." + op, input, false);
}

async function send(target, input, retried) {
  const body = JSON.stringify(input);
  let headers = {
    "content-type": "application/x-amz-json-1.0",
    "x-amz-target": target,
    // stepd's extension: describe Express executions too (AWS refuses).
    "x-stepd-express-details": "1",
  };
  const cred = credentials();
  if (cred && crypto.subtle) headers = await sign(cred, location.host, headers, body);
  const res = await fetch("/", { method: "POST", headers, body });
  const text = await res.text();
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    throw new APIError("InternalFailure", text.slice(0, 200), res.status);
  }
  if (!res.ok) {
    const code = (data.__type || "").split("#").pop() || "HTTP" + res.status;
    const err = new APIError(code, data.message || data.Message, res.status);
    if (AUTH_CODES.has(code) && onAuthNeeded && !retried) {
      await onAuthNeeded(err);
      return send(target, input, true);
    }
    throw err;
  }
  return data;
}
