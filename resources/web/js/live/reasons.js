// The scheduler, the budget and the watchdog write their reasons as English sentences into
// the event log (which is append-only, so old runs keep them). The work log reads the known
// sentences back as message codes with their values and shows them in the page's language;
// a sentence it does not know is shown as written.
import { t, word } from "../i18n.js";

const STATIC = {
  "no team has work left": "st_r_no_work",
  stopped: "st_r_stopped",
  "time limit reached": "st_r_time_limit",
  "the team has nothing left to try": "st_r_nothing_left",
  "removed from the dashboard": "st_r_removed",
  paused: "st_r_paused",
};

// [pattern, message code, names of the captured values]
const PATTERNS = [
  [/^Watchdog: no progress for a while/, "st_r_watchdog", []],
  [/^turn timed out after ([\d.]+) s$/, "st_r_turn_timeout", ["s"]],
  [/^turn failed \(([^)]*)\): ([\s\S]*); retry in ([\d.]+) s$/, "st_r_turn_failed", ["kind", "message", "s"]],
  [/^provider (\S+) paused: ([\s\S]*)$/, "st_r_provider_paused", ["provider", "reason"]],
  [/^budget: ([\s\S]*)$/, "st_r_budget", ["reason"]],
  [/^the run would exceed its cap of ([\d.e+]+) (tokens|USD) with this call$/, "st_r_run_cap", ["cap", "unit"]],
  [/^team (\S+) would exceed its cap of ([\d.e+]+) (tokens|USD) with this call$/, "st_r_team_cap", ["team", "cap", "unit"]],
  [/^the team's agent cannot be built: ([\s\S]*)$/, "st_r_agent_unbuilt", ["error"]],
];

/** A code and its values for a known sentence, else null. */
export function reasonCode(text) {
  const str = String(text ?? "").trim();
  if (STATIC[str]) return { code: STATIC[str], values: {} };
  for (const [pattern, code, names] of PATTERNS) {
    const m = pattern.exec(str);
    if (m) return { code, values: Object.fromEntries(names.map((n, i) => [n, m[i + 1]])) };
  }
  return null;
}

/** The sentence in the page's language (nested reasons translated too). */
export function reasonText(text) {
  if (text == null || text === "") return "";
  const found = reasonCode(text);
  if (!found) return String(text);
  const values = { ...found.values };
  if (values.reason) values.reason = reasonText(values.reason);
  if (values.unit) values.unit = t(`st_unit_${values.unit}`);
  if (values.kind) values.kind = word(values.kind);
  return t(found.code, values);
}
