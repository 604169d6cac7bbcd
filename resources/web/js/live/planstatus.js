// A plan's status comes from its receipts, never from the plan alone: a plan whose probe came
// back `incorrect` says so (issue #16, 8). A full receipt outranks probes; the latest decides.
import { h } from "../dom.js";
import { t } from "../i18n.js";

const GOOD = new Set(["measured", "probe_passed"]);

/** "planned" with no receipt; else the status of the latest full receipt, else of the latest probe. */
export function planStatus(receipts) {
  const list = receipts || [];
  const full = list.filter((r) => r.mode === "full");
  const last = (full.length ? full : list).at(-1);
  return last?.status || "planned";
}

/** The plan's badge, in the page's language; unknown statuses are shown as they are. */
export function statusLabel(status) {
  const key = `st_plan_${status}`;
  const text = t(key);
  return text === key ? String(status) : text;
}

export function planBadge(status) {
  const cls = status === "planned" ? "plan-planned" : GOOD.has(status) ? "good" : "bad";
  return h("span", { class: `chip plan-status ${cls}`, dataset: { status }, text: statusLabel(status) });
}
