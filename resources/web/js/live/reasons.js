// Why a team or a run paused, stopped, failed or ended, in the page's language. The server
// sends a code and its values (core/reasons.py; docs/events.md, Reason codes): an event
// carries `reason_code` and `reason_params` beside its English words, and for an event older
// than the codes the server reads the words back into their code before it sends them. The
// page only translates codes; words without a code (a model's, a person's) are shown as written.
import { t, word } from "../i18n.js";

const NUMBER = new Intl.NumberFormat("en", { maximumSignificantDigits: 6, useGrouping: false });

function shown(name, value) {
  if (name === "unit") return t(`st_unit_${value}`);
  if (name === "kind") return word(value);
  if (typeof value === "number") return NUMBER.format(value);
  return String(value ?? "");
}

/** The words for `code` with its values, or `fallback` (the English the event holds) when the
 * code is absent or this page does not know it. */
export function reasonText(code, params, fallback) {
  const key = `reason_${code}`;
  if (!code || t(key) === key) return fallback == null ? "" : String(fallback);
  const values = Object.fromEntries(Object.entries(params || {}).map(([k, v]) => [k, shown(k, v)]));
  return t(key, values);
}

/** An event payload's reason: its code, else its words (`field`: reason, detail or message). */
export function payloadReason(p, field = "reason") {
  return reasonText(p?.reason_code, p?.reason_params, p?.[field]);
}

/** A team row's status reason (the run view sends `status_reason_code` and its values). */
export function teamReason(team) {
  return reasonText(team?.status_reason_code, team?.status_reason_params, team?.status_reason);
}
