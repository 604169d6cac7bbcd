// The live view: task planning (left), the A2A graph (center), the work log (right). One
// fold on the server answers the panels; new events come over SSE (or from the replay
// player) and refresh the panels in one debounced round trip.
import * as api from "../api.js";
import { $, throttle } from "../dom.js";
import { emit, state } from "../state.js";
import { Graph } from "./graph.js";
import { renderAllTeams, renderExited, renderPlan, renderTeamSelect } from "./plan.js";
import { openStream } from "./stream.js";
import { WorkLog } from "./worklog.js";

const QUIET_KINDS = new Set(["tool.call", "tool.result"]);

export class LiveView {
  constructor() {
    this.log = new WorkLog({
      list: $("#log-list"),
      earlier: $("#log-earlier"),
      marker: $("#log-new"),
      follow: $("#log-follow"),
      count: $("#log-count"),
    });
    this.graph = new Graph($("#graph"));
    this.stream = null;
    this.refreshSoon = throttle(() => this.refresh(), 700);
    $("#team-select").addEventListener("change", (e) => this.setTeam(e.target.value));
    $("#session-team").addEventListener("click", () => this.setSession("team"));
    $("#session-judger").addEventListener("click", () => this.setSession("judger"));
  }

  close() {
    this.stream?.close();
    this.stream = null;
  }

  teamNames() {
    const names = { ...(this.names || {}) };
    for (const team of [...(state.view?.teams || []), ...(state.view?.exited || [])]) names[team.id] = team.display_name;
    return names;
  }

  /** A replay shows team names from the start, even before their registration event. */
  async loadNames(runId) {
    if (this.namesFor === runId) return;
    const head = await api.get(api.runUrl(runId, "/view"));
    this.names = {};
    for (const team of [...head.teams, ...head.exited]) this.names[team.id] = team.display_name;
    this.namesFor = runId;
  }

  /** Load everything for the selected run as of `state.at` (live head when null). */
  async open() {
    this.close();
    const runId = state.run.id;
    this.graph.invalidate();
    if (state.replay) await this.loadNames(runId);
    else [this.names, this.namesFor] = [{}, null];
    const view = await api.get(api.runUrl(runId, "/view", { at: state.at }));
    state.view = view;
    this.log.setView(view);
    if (state.teamId === null || (state.teamId && !view.teams.some((tm) => tm.id === state.teamId))) {
      state.teamId = view.teams[0]?.id ?? "";
    }
    emit("view", view);
    renderTeamSelect($("#team-select"), view.teams, state.teamId);
    await Promise.all([this.refreshPanels(view), this.resetLog()]);
    if (!state.replay) {
      this.stream = openStream(runId, view.last_seq, (events) => this.arrive(events));
    }
  }

  resetLog() {
    return this.log.reset({
      runId: state.run.id,
      team: state.teamId,
      session: state.session,
      at: state.at,
      teamNames: this.teamNames(),
    });
  }

  arrive(events, options = {}) {
    this.log.arrive(events, options);
    emit("events", events);
    if (events.some((ev) => !QUIET_KINDS.has(ev.kind))) this.refreshSoon();
  }

  async refresh() {
    if (!state.run) return;
    const view = await api.get(api.runUrl(state.run.id, "/view", { at: state.at }));
    state.view = view;
    this.log.setView(view);
    emit("view", view);
    const select = $("#team-select");
    if (select.options.length !== view.teams.length + 1) renderTeamSelect(select, view.teams, state.teamId);
    this.log.teamNames = this.teamNames();
    await this.refreshPanels(view);
  }

  async refreshPanels(view) {
    const runId = state.run.id;
    const graphReq = api.get(api.runUrl(runId, "/graph", { at: state.at }));
    let plan = null;
    if (state.teamId && view.teams.some((tm) => tm.id === state.teamId)) {
      plan = await api.get(api.runUrl(runId, `/teams/${encodeURIComponent(state.teamId)}/plan`, { at: state.at })).catch(() => null);
    }
    if (state.teamId) renderPlan($("#plan-body"), $("#team-status"), plan);
    else renderAllTeams($("#plan-body"), $("#team-status"), view.teams);
    renderExited($("#exited-section"), view.exited);
    this.graph.render(await graphReq);
  }

  async setTeam(teamId) {
    state.teamId = teamId;
    await Promise.all([this.refreshPanels(state.view), this.resetLog()]);
  }

  async setSession(session) {
    state.session = session;
    $("#session-team").classList.toggle("on", session === "team");
    $("#session-judger").classList.toggle("on", session === "judger");
    await this.resetLog();
  }
}
