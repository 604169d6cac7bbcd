// The page's state and a tiny publish/subscribe, so modules never call each other in circles.

import { t } from "./i18n.js";

export const state = {
  info: null, // what the server can do (/api/info)
  runs: [],
  run: null, // the selected run (as /api/runs/{id})
  view: null, // its latest /view answer
  teamId: null, // the team whose plan and log are shown ("" = all teams)
  session: "team", // work log: "team" or "judger"
  tab: "live",
  at: null, // replay position (event seq); null follows the live head
  replay: false,
};

const topics = new Map();

export function on(topic, fn) {
  if (!topics.has(topic)) topics.set(topic, new Set());
  topics.get(topic).add(fn);
  return () => topics.get(topic).delete(fn);
}

export function emit(topic, data) {
  for (const fn of topics.get(topic) || []) fn(data);
}

export function simulated() {
  return Boolean(state.info?.demo || state.run?.mode === "demo" || state.run?.meta?.simulated === true);
}

/** A message's sender or recipient as the page names it: a team by its display name, "all"
 * and the Judger in the page's language (ids and the raw "all" showed before). */
export function party(id) {
  if (id == null || id === "") return "?";
  if (id === "all") return t("outside_to_all");
  if (id === "judger") return t("judger_node");
  for (const team of [...(state.view?.teams || []), ...(state.view?.exited || [])]) {
    if (team.id === id) return team.display_name || id;
  }
  return String(id);
}
