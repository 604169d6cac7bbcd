// The approvals strip above the live view: the selected run's pending approval cards (approve,
// reject, approve and remember for this team) and its approval settings (each team's mode, the
// remembered grants with Revoke). It loads when a run is opened and again whenever an
// `approval.*` event arrives over the run's stream, so a decision made elsewhere (the CLI,
// another tab) shows here too; after a reload or a restart of the lab it reads the same state.
import * as api from "../api.js";
import { debounce, h } from "../dom.js";
import { getLang, onLang, t } from "../i18n.js";
import { on, state } from "../state.js";
import { approvalCard } from "./card.js";
import { settingsBox } from "./settings.js";
import { modeWord } from "./words.js";

function teamsOf(view) {
  return (view?.teams || []).map((tm) => ({ id: tm.id, name: tm.display_name || tm.id }));
}

export class ApprovalsView {
  constructor(root) {
    this.root = root;
    this.runId = null;
    this.data = null; // {approvals, grants, modes}
    this.teamKey = "";
    this.settingsOpen = false;
    this.cards = new Map(); // approval id -> its card, kept while pending (a typed reason stays)
    this.lang = null;
    this.note = null; // the last change made here, shown under the settings
    this.reloadSoon = debounce(() => this.reload(), 150);
    on("view", (view) => this.viewChanged(view));
    on("events", (events) => {
      if (events.some((ev) => String(ev.kind).startsWith("approval."))) this.reloadSoon();
    });
    onLang(() => this.render());
  }

  /** A run that is driven here or by the CLI; a replay, a demo or an import decides nothing. */
  applies() {
    const run = state.run;
    return Boolean(run && run.mode === "live" && !run.read_only && !state.replay);
  }

  viewChanged(view) {
    if (!this.applies()) {
      this.runId = null;
      this.data = null;
      this.render();
      return;
    }
    const key = teamsOf(view).map((tm) => tm.id).join(",");
    if (state.run.id !== this.runId) {
      this.runId = state.run.id;
      this.data = null;
      this.note = null;
      this.teamKey = key;
      this.reload();
    } else if (key !== this.teamKey) {
      this.teamKey = key;
      this.reload(); // a team joined or left: its mode row follows
    }
  }

  url(path = "") {
    return api.runUrl(this.runId, `/approvals${path}`);
  }

  async reload() {
    const runId = this.runId;
    if (!runId) return;
    try {
      const [pending, grants, modes] = await Promise.all([
        api.get(this.url()),
        api.get(this.url("/grants")),
        api.get(this.url("/modes")),
      ]);
      if (runId !== this.runId) return; // another run was opened meanwhile
      this.data = { approvals: pending.approvals, grants: grants.grants, modes: modes.modes };
    } catch {
      if (runId !== this.runId) return;
      this.data = null; // a server without approvals: the strip stays hidden
    }
    this.render();
  }

  async decide(id, decision, reason) {
    const body = reason ? { decision, reason } : { decision };
    await api.send("POST", this.url(`/${encodeURIComponent(id)}/decide`), body);
    await this.reload();
  }

  async setMode(teamId, mode) {
    const answer = await api.send("PUT", api.runUrl(this.runId, `/teams/${encodeURIComponent(teamId)}/approval-mode`), { mode });
    if (this.data) this.data.modes[teamId] = answer.mode;
    this.note = { key: "ap_mode_saved", team: teamId, mode: answer.mode };
    return answer.mode;
  }

  async revoke(grantId) {
    await api.send("DELETE", this.url(`/grants/${encodeURIComponent(grantId)}`));
    this.note = { key: "ap_revoked" };
    await this.reload();
  }

  /** The cards of `pending`, reusing the ones already shown (same language). */
  cardsFor(pending, names) {
    const lang = getLang();
    if (lang !== this.lang) this.cards.clear();
    this.lang = lang;
    const kept = new Map();
    for (const item of pending) {
      const card = this.cards.get(item.id)
        || approvalCard(item, names[item.team_id] || item.team_id, (id, decision, reason) => this.decide(id, decision, reason));
      kept.set(item.id, card);
    }
    this.cards = kept;
    return [...kept.values()];
  }

  noteText(names) {
    const note = this.note;
    if (!note) return "";
    return t(note.key, { team: names[note.team] || note.team, mode: modeWord(note.mode) });
  }

  render() {
    const data = this.data;
    this.root.hidden = !data;
    if (!data) {
      this.root.replaceChildren();
      return;
    }
    const teams = teamsOf(state.view);
    const names = Object.fromEntries(teams.map((tm) => [tm.id, tm.name]));
    for (const tm of state.view?.exited || []) names[tm.id] ??= tm.display_name || tm.id;
    const pending = data.approvals;
    const head = h("div", { class: "approvals-head" },
      h("h2", { text: t("ap_title") }),
      h("span", { class: `chip ${pending.length ? "warn" : ""} waiting`, text: pending.length ? t("ap_waiting", { n: pending.length }) : t("ap_none") }));
    const cards = h("div", { class: "approval-cards" }, this.cardsFor(pending, names));
    const settings = settingsBox({
      teams,
      modes: data.modes,
      grants: data.grants,
      names,
      open: this.settingsOpen,
      note: this.noteText(names),
      setMode: (teamId, mode) => this.setMode(teamId, mode),
      revoke: (grantId) => this.revoke(grantId),
      onToggle: (open) => { this.settingsOpen = open; },
    });
    this.root.classList.toggle("has-pending", pending.length > 0);
    this.root.replaceChildren(head, cards, settings);
  }
}
