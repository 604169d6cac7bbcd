// An outside agent's team (A2A): its agent lives elsewhere and reaches the lab only over the
// A2A endpoint, so the scheduler never gives it a turn. It is shown as what it is, with its
// last message or submission and how long ago, never as a team queued for its first turn.
// Everything here is text (a team name and an addressee come from outside the lab).
import { h } from "../dom.js";
import { t, word } from "../i18n.js";
import { party, state } from "../state.js";

const OUTSIDE = "external"; // the fold's status of such a team (reports/fold.py)

export function isOutside(team) {
  return team?.status === OUTSIDE;
}

/** "now" for the ago: the browser's clock live, the shown position's last event in a replay. */
function reference() {
  const at = state.replay || state.at !== null ? Date.parse(state.view?.last_ts ?? "") : NaN;
  return Number.isNaN(at) ? Date.now() : at;
}

export function ago(ts, now = reference()) {
  const then = Date.parse(ts ?? "");
  if (Number.isNaN(then)) return t("outside_ago_unknown");
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return t("outside_ago_now");
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return t("outside_ago_min", { n: minutes });
  const hours = Math.round(minutes / 60);
  if (hours < 48) return t("outside_ago_h", { n: hours });
  return t("outside_ago_d", { n: Math.round(hours / 24) });
}

/** The team's last action over A2A, e.g. "last: submitted a candidate (measured) 2 min ago". */
export function lastAction(team) {
  const last = team?.last_outside;
  if (!last) return t("outside_none");
  const when = ago(last.ts);
  if (last.action === "candidate") {
    return t("outside_last_candidate", { status: word(last.status ?? "unknown"), ago: when });
  }
  const to = party(last.to);
  return t("outside_last_message", { to, ago: when });
}

/** The status words of a team row: "outside agent (A2A) · last: ..." */
export function outsideStatus(team, cls = "muted") {
  return h("span", {
    class: `${cls} outside-status`,
    dataset: { outside: "true" },
    text: ` ${word(OUTSIDE)} · ${lastAction(team)}`,
  });
}

/** What the plan panel says for such a team instead of "queued". */
export function outsideNote(team) {
  return h("p", { class: "muted outside-note", text: t("outside_note", { name: team.display_name }) });
}
