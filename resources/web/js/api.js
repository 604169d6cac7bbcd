// The JSON API: one place for fetch, errors and the field-by-field refusals of forms.

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.detail || body?.error || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
    this.errors = this.body.errors || null;
    this.codes = this.body.codes || null; // per field: {code, ...params}, see config/form.js
  }
}

async function parse(response) {
  const type = response.headers.get("content-type") || "";
  const body = type.includes("application/json") ? await response.json() : await response.text();
  if (!response.ok) throw new ApiError(response.status, typeof body === "object" ? body : { detail: body });
  return body;
}

export async function get(url) {
  return parse(await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }));
}

export async function send(method, url, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body instanceof Blob || body instanceof ArrayBuffer) {
    init.body = body;
    init.headers["Content-Type"] = "application/octet-stream";
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  return parse(await fetch(url, init));
}

export function runUrl(runId, path = "", params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) value.forEach((v) => query.append(key, v));
    else if (value !== null && value !== undefined && value !== "") query.set(key, value);
  }
  const qs = query.toString();
  return `/api/runs/${encodeURIComponent(runId)}${path}${qs ? `?${qs}` : ""}`;
}
