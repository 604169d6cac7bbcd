// The work log's filters: kind and team are asked of the server (the events API filters by
// kind and team, so a filter reaches back over the whole run); tool and text are matched over
// the records loaded in the page (earlier records load more).
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { JUDGER_KINDS } from "./eventview.js";

export const GROUPS = {
  steps: ["tool.call", "tool.result"],
  model: ["model.response", "model.error", "history.offload_failed"],
  plans: ["experiment.planned", "experiment.receipt", "todos.updated", "cases.proposed", "source.changed"],
  team: ["team.registered", "team.turn", "team.turn_end", "team.turn_timeout", "team.paused", "team.resumed", "team.exited", "watchdog.nudge"],
  a2a: ["a2a.message", "a2a.delivered", "a2a.acked", "a2a.released", "a2a.evaluation"],
  judger: JUDGER_KINDS,
  run: ["run.dispatch_started", "run.dispatch_stopped", "run.toolchain_preparing", "run.summary", "provider.paused", "provider.resume_requested", "provider.resumed"],
};

export class LogFilter {
  /** `onServer` reloads the log (kind or team changed); `onLocal` re-applies tool and text. */
  constructor(before, { onServer, onLocal }) {
    this.group = "";
    this.tool = "";
    this.team = "";
    this.text = "";
    this.kindSel = h("select", { id: "log-kind", onchange: (e) => { this.group = e.target.value; onServer(); } });
    this.toolSel = h("select", { id: "log-tool", onchange: (e) => { this.tool = e.target.value; onLocal(); } });
    this.teamSel = h("select", { id: "log-team", onchange: (e) => { this.team = e.target.value; onServer(); } });
    this.search = h("input", { id: "log-search", type: "search", oninput: (e) => { this.text = e.target.value.trim().toLowerCase(); onLocal(); } });
    this.bar = h("div", { class: "log-filters", role: "search" }, this.kindSel, this.toolSel, this.teamSel, this.search);
    before.before(this.bar);
    this.tools = new Set();
  }

  /** The kinds the server is asked for: the group's, within the session's own (the Judger's). */
  kinds(sessionKinds) {
    const group = GROUPS[this.group];
    if (!group) return sessionKinds;
    return sessionKinds ? group.filter((k) => sessionKinds.includes(k)) : group;
  }

  matchesEvent(ev, sessionKinds) {
    const kinds = this.kinds(sessionKinds);
    if (kinds && !kinds.includes(ev.kind)) return false;
    return !this.team || ev.team === this.team;
  }

  /** Tool and text, over a rendered row (its folded details included). */
  matchesRow(row) {
    if (this.tool && row.dataset.tool !== this.tool) return false;
    return !this.text || row.textContent.toLowerCase().includes(this.text);
  }

  get active() {
    return Boolean(this.group || this.tool || this.team || this.text);
  }

  noteTools(rows) {
    for (const row of rows) if (row.dataset.tool) this.tools.add(row.dataset.tool);
  }

  /** Options in the page's language; the team filter only where the log holds several teams. */
  render(teamNames, oneTeam) {
    const opt = (value, text, current) => h("option", { value, text, selected: value === current });
    this.kindSel.replaceChildren(opt("", t("st_kind_all"), this.group), ...Object.keys(GROUPS).map((g) => opt(g, t(`st_kind_${g}`), this.group)));
    this.toolSel.replaceChildren(opt("", t("st_tool_all"), this.tool), ...[...this.tools].sort().map((x) => opt(x, x, this.tool)));
    this.teamSel.replaceChildren(opt("", t("st_team_all"), this.team), ...Object.entries(teamNames).map(([id, name]) => opt(id, name, this.team)));
    this.teamSel.hidden = oneTeam;
    if (oneTeam) this.team = "";
    this.search.placeholder = t("st_search");
    this.kindSel.title = t("st_kind_title");
    this.toolSel.title = t("st_tool_title");
    this.search.title = t("st_search_title");
  }
}
