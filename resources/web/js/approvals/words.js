// The approvals part's codes in the page's language: modes, statuses and the server's refusals
// (`{code, params}` beside the English `detail`; a code the page does not know shows the detail).
import { t } from "../i18n.js";

export const MODES = ["read_only", "ask", "auto"];

export function modeWord(mode) {
  const key = `ap_mode_${mode}`;
  const text = t(key);
  return text === key ? String(mode ?? "") : text;
}

export function statusWord(status) {
  const key = `ap_status_${status}`;
  const text = t(key);
  return text === key ? String(status ?? "") : text;
}

/** An ApiError (or any error) as one sentence in the page's language. */
export function refusal(err) {
  const body = err?.body || {};
  const code = body.code;
  if (code) {
    const params = { ...(body.params || {}) };
    if (params.decided) params.decided = statusWord(params.decided);
    const key = `ap_err_${code}`;
    const text = t(key, params);
    if (text !== key) return text;
  }
  return t("ap_err_failed", { detail: err?.message || String(err) });
}
