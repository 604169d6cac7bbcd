// The left panel: the selected team's todo list as the agent keeps it (pending, in progress,
// done), else its registered experiment plans, else that it is queued; and the teams that
// exited, folded away with their code and official history.
import { $, clip, h, num, short } from "../dom.js";
import { t, word } from "../i18n.js";
import { TODO_MARKS as TODO_MARK } from "./eventview.js";
import { planBadge, planStatus } from "./planstatus.js";
import { isOutside, outsideNote, outsideStatus } from "./outside.js";
import { teamReason } from "./reasons.js";

export function renderTeamSelect(select, teams, current) {
  const options = [h("option", { value: "", text: t("all_teams") })];
  for (const team of teams) {
    const label = `${team.display_name}${team.offline ? ` · ${t("offline")}` : ""}${team.external ? " · A2A" : ""}`;
    options.push(h("option", { value: team.id, text: label }));
  }
  select.replaceChildren(...options);
  select.value = current ?? "";
}

function teamStatus(team) {
  return h(
    "div",
    {},
    h("span", { class: `status-dot ${team.running ? "running" : team.status}` }),
    h("strong", { text: team.display_name }),
    team.offline ? h("span", { class: "chip offline", text: t("offline") }) : null,
    isOutside(team)
      ? outsideStatus(team)
      : h("span", { class: "muted", text: ` ${word(team.status)}${team.status_reason ? ` (${teamReason(team)})` : ""}` }),
    h("div", { class: "small" },
      `${t("best_cycles")}: ${num(team.best_cycles)} · ${t("baseline")}: ${num(team.baseline_cycles)} · ${t("experiments")}: ${num(team.experiments)}`),
  );
}

function todoList(todos) {
  return [
    h("h3", { text: t("todo_title") }),
    h(
      "ol",
      { class: "todos", id: "todo-list" },
      todos.map((todo) =>
        h(
          "li",
          { class: `todo ${todo.status}`, dataset: { status: todo.status } },
          h("span", { class: "mark", "aria-hidden": "true", text: TODO_MARK[todo.status] || "·" }),
          h("span", { class: "content", text: todo.content }),
          h("span", { class: "todo-state", text: t(`todo_${todo.status}`) }),
        ),
      ),
    ),
    h("p", { class: "muted small", text: t("todo_note") }),
  ];
}

function planList(experiments) {
  return [
    h("h3", { text: t("plans_title") }),
    h(
      "ol",
      { class: "plans" },
      experiments.map((exp) => {
        const status = planStatus(exp.receipts);
        return h(
          "li",
          { dataset: { experiment: String(exp.number), status } },
          h("span", { class: "chip", text: `#${exp.number}` }),
          planBadge(status),
          " ",
          clip(exp.hypothesis || exp.change || "", 160),
        );
      }),
    ),
  ];
}

export function renderPlan(body, statusEl, plan) {
  if (!plan) {
    statusEl.replaceChildren();
    body.replaceChildren(h("p", { class: "muted", text: t("no_plan") }));
    return;
  }
  statusEl.replaceChildren(teamStatus(plan.team));
  const parts = [];
  if (plan.todos?.length) parts.push(...todoList(plan.todos));
  else if (plan.experiments?.length) parts.push(...planList(plan.experiments));
  else if (isOutside(plan.team)) parts.push(outsideNote(plan.team));
  else parts.push(h("p", { class: "muted", text: plan.team.status === "idle" ? t("queued_work") : t("no_plan") }));
  if (plan.todos?.length && plan.experiments?.length) parts.push(...planList(plan.experiments.slice(-5)));
  body.replaceChildren(...parts);
}

export function renderAllTeams(body, statusEl, teams) {
  statusEl.replaceChildren();
  body.replaceChildren(
    h("ul", { class: "team-list" }, teams.map((team) =>
      h("li", {}, h("span", { class: `status-dot ${team.running ? "running" : team.status}` }), h("strong", { text: team.display_name }),
        isOutside(team)
          ? outsideStatus(team, "muted small")
          : h("span", { class: "muted small", text: ` ${word(team.status)} · ${num(team.best_cycles)}` })))),
  );
}

export function renderExited(section, exited) {
  section.hidden = !exited.length;
  $("#exited-summary").textContent = t("exited_title", { n: exited.length });
  $("#exited-body").replaceChildren(
    ...exited.map((team) =>
      h(
        "div",
        { class: "exited-team" },
        h("strong", { text: team.display_name }),
        h("div", { class: "small muted", text: `${t("exit_reason")}: ${teamReason(team) || "—"}` }),
        h("div", { class: "small", text: `${t("best_cycles")}: ${num(team.best_cycles)} · commit ${short(team.best?.commit)} · source ${short(team.best?.source_sha256)}` }),
        h("div", { class: "small", text: t("st_exited_official", { n: team.official_count, us: num(team.best_official_us) }) }),
      ),
    ),
  );
}
