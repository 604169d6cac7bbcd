// Task settings (single main team or multi-team, the model per team and per member, limits),
// start / pause / resume, and the teams of the selected run (add, remove; resume a connection
// paused for auth or balance once its key or balance is fixed and its test passes).
import * as api from "../api.js";
import { h } from "../dom.js";
import { t, word } from "../i18n.js";
import { emit, state } from "../state.js";
import { MODES, modeWord } from "../approvals/words.js";
import { confirmButton, field, formStatus, input, say, select, showErrors, submit } from "./form.js";

const ROLES = ["analyst", "developer", "reviewer"];

function memberSelects(presets, members, prefix) {
  const options = [["", t("same_as_team")], ...presets.map((p) => [p, p])];
  return h("div", { class: "members" }, ROLES.map((role) =>
    field(`${prefix}members.${role}`, role, select(options, members?.[role] || "", { dataset: { role } }))));
}

function teamRow(presets, plan, index, onRemove) {
  return h("div", { class: "team-row", dataset: { index: String(index) } },
    field(`teams.${index}.model`, "team", select(presets.map((p) => [p, p]), plan.model, { class: "team-model" })),
    memberSelects(presets, plan.members, `teams.${index}.`),
    h("button", { type: "button", class: "remove-team", text: t("remove"), onclick: onRemove }));
}

function readTeams(f) {
  return [...f.querySelectorAll(".team-row")].map((row) => {
    const members = {};
    row.querySelectorAll("[data-role]").forEach((el) => { if (el.value) members[el.dataset.role] = el.value; });
    return { model: row.querySelector(".team-model").value, members };
  });
}

function taskForm(data, onStarted) {
  const task = data.task;
  const presets = data.presets;
  const f = h("form", { class: "form", novalidate: true, id: "task-form" });
  const teamsBox = h("div", { class: "teams-box" });
  const draw = (teams) => {
    teamsBox.replaceChildren(...teams.map((plan, i) => teamRow(presets, plan, i, () => {
      const current = readTeams(f);
      current.splice(i, 1);
      draw(current);
    })));
  };
  const modeSelect = select([["single", t("mode_single")], ["multi", t("mode_multi")]], task.mode);
  const members = input("checkbox", { checked: task.members });
  const showMembers = () => f.classList.toggle("no-members", !members.checked);
  members.addEventListener("change", showMembers);
  f.append(
    field("name", "f_task_name", input("text", { value: task.name })),
    field("mode", "f_mode", modeSelect),
    h("label", { class: "check" }, members, " ", t("f_members")),
    h("div", { class: "field", dataset: { field: "teams" } },
      h("label", { text: t("teams_title") }), teamsBox,
      h("small", { class: "error", dataset: { errorFor: "teams" } })),
    h("button", { type: "button", id: "add-team-row", text: `+ ${t("add_team")}`, onclick: () => {
      const current = readTeams(f);
      current.push({ model: presets.includes("offline") ? "offline" : presets[0], members: {} });
      if (current.length > 1) modeSelect.value = "multi";
      draw(current);
    } }),
    field("minutes", "f_minutes", input("number", { min: 0, step: "any", value: task.minutes ?? "" })),
    field("slots", "f_slots", input("number", { min: 1, max: 8, value: task.slots ?? "" })),
    field("model_calls", "f_model_calls", input("number", { min: 1, max: 64, value: task.model_calls })),
    field("toolchain", "f_toolchain", select([
      ["", t("toolchain_default", { id: data.default_toolchain || "ascendc-cpu" })],
      ["ascendc-cpu", t("toolchain_ascendc_cpu")],
      ["cpu", t("toolchain_cpu")],
      ["cann", t("toolchain_cann")],
    ], task.toolchain || "")),
    field("approval_mode", "f_approval_mode", select(MODES.map((m) => [m, modeWord(m)]), task.approval_mode || "auto"),
      "f_approval_mode_hint"),
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "task-save", text: t("save"), onclick: () => save(false) }),
      h("button", { type: "button", id: "task-start", class: "primary", text: t("start"), onclick: () => save(true) })),
    formStatus(),
  );
  draw(task.teams);
  showMembers();
  const body = () => {
    const num = (name) => {
      const value = f.querySelector(`[name=${name}]`).value;
      return value === "" ? null : Number(value);
    };
    return {
      name: f.querySelector("[name=name]").value,
      mode: modeSelect.value,
      members: members.checked,
      teams: readTeams(f),
      minutes: num("minutes"),
      slots: num("slots"),
      model_calls: num("model_calls") ?? 4,
      toolchain: f.querySelector("[name=toolchain]").value || null,
      approval_mode: f.querySelector("[name=approval_mode]").value,
    };
  };
  async function save(start) {
    const payload = body();
    const result = await submit(f, () => api.send(start ? "POST" : "PUT", start ? "/api/task/start" : "/api/config/task", payload));
    if (start && result?.run) {
      say(f, `${t("start")}: ${result.run.id}`);
      onStarted(result.run);
    }
  }
  return f;
}

function runControls(status, reload) {
  const run = state.run;
  const box = h("div", { class: "run-controls", id: "run-controls" });
  if (!run || run.mode !== "live") return box;
  const active = status?.active_run === run.id;
  const f = h("form", { class: "form", novalidate: true }, formStatus());
  const act = async (what) => {
    await submit(f, () => api.send("POST", api.runUrl(run.id, `/${what}`)));
    await reload();
  };
  box.append(
    h("p", {}, h("strong", { text: run.name }), " ", h("span", { class: "muted", text: active ? t("dispatch_running") : t("dispatch_stopped") })),
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "run-pause", text: t("pause"), disabled: !active, onclick: () => act("pause") }),
      h("button", { type: "button", id: "run-resume", text: t("resume"), disabled: active || Boolean(status?.active_run), onclick: () => act("resume") })),
    ...(status?.last_error ? [h("p", { class: "bad small", text: status.last_error })] : []),
    f,
  );
  return box;
}

// The connections (model presets) the run's scheduler stopped dispatching to (auth, balance),
// each with the one action that starts it again and idles the teams paused for it. The button
// tests the connection first and resumes only when the test succeeds: a key that is still
// wrong would only pause the teams again.
async function connectionWorks(name, f) {
  say(f, t("testing"));
  try {
    const report = await api.send("POST", `/api/config/models/${encodeURIComponent(name)}/test`);
    if (report.ok) return true;
    say(f, `${t("connection_test_failed")}: ${report.message}`, false);
    return false;
  } catch (err) {
    if (err.errors?.name) return true; // not a preset (an older run paused a provider type)
    say(f, `${t("connection_test_failed")}: ${err.message}`, false);
    return false;
  }
}

function pausedProviders(run, f, reload) {
  const paused = Object.entries(state.view.paused_providers || {});
  if (!paused.length) return [];
  return [h("ul", { class: "paused-providers", id: "paused-providers" }, paused.map(([provider, reason]) =>
    h("li", { dataset: { provider } },
      h("strong", { text: `${t("provider_paused")}: ${provider}` }),
      h("span", { class: "small muted", text: reason ? ` ${word(reason)}` : "" }), " ",
      h("button", { type: "button", class: "resume-provider", text: t("resume_provider"), onclick: async () => {
        if (!(await connectionWorks(provider, f))) return;
        const path = `/providers/${encodeURIComponent(provider)}/resume`;
        await submit(f, () => api.send("POST", api.runUrl(run.id, path)));
        await reload();
      } }))))];
}

function runTeams(presets, reload) {
  const run = state.run;
  const box = h("div", { id: "run-teams-body" });
  if (!run || run.mode !== "live" || !state.view) return box;
  const f = h("form", { class: "form inline", novalidate: true, id: "add-team-form" });
  const model = select(presets.map((p) => [p, p]), presets.includes("offline") ? "offline" : presets[0]);
  f.append(field("model", "team", model), memberSelects(presets, {}, ""), h("button", { type: "submit", text: t("add_team") }), formStatus());
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    const members = {};
    f.querySelectorAll("[data-role]").forEach((el) => { if (el.value) members[el.dataset.role] = el.value; });
    const done = await submit(f, () => api.send("POST", api.runUrl(run.id, "/teams"), { model: model.value, members }));
    if (done) await reload();
  });
  const rows = state.view.teams.map((team) => h("li", { dataset: { team: team.id } },
    h("strong", { text: team.display_name }), h("span", { class: "muted", text: ` ${team.model_preset} · ${word(team.status)}` }),
    Object.keys(team.config?.member_models || {}).length
      ? h("span", { class: "small muted", text: ` (${Object.entries(team.config.member_models).map(([r, m]) => `${r}: ${m}`).join(", ")})` })
      : null,
    confirmButton("remove", async () => {
      await submit(f, () => api.send("DELETE", api.runUrl(run.id, `/teams/${encodeURIComponent(team.id)}`)));
      await reload();
    }, { class: "remove" })));
  box.append(...pausedProviders(run, f, reload), h("ul", { class: "team-list" }, rows), f);
  return box;
}

export async function renderTask(taskRoot, teamsRoot) {
  const data = await api.get("/api/config/task");
  if (!data.task) {
    taskRoot.replaceChildren(h("p", { class: "muted", text: t("cannot_run") }));
    teamsRoot.replaceChildren();
    return;
  }
  const reload = async () => {
    if (state.run) state.view = await api.get(api.runUrl(state.run.id, "/view"));
    emit("refresh-view");
    await renderTask(taskRoot, teamsRoot);
  };
  const started = (run) => emit("run-started", run);
  taskRoot.replaceChildren(taskForm(data, started), runControls(data.status, reload));
  teamsRoot.replaceChildren(runTeams(data.presets, reload));
  showErrors(taskRoot, {});
}
