// The Judger's settings (model, daily quota, strategy, diagnosis allowance, human approval) and the candidates
// awaiting a human decision, with approve / reject.
import * as api from "../api.js";
import { h, num } from "../dom.js";
import { t } from "../i18n.js";
import { state } from "../state.js";
import { field, formStatus, input, select, submit } from "./form.js";

const STRATEGIES = ["verified", "official-driven"];

function settingsForm(settings, presets) {
  const f = h("form", { class: "form", novalidate: true, id: "judger-form" });
  const models = [["rules", "rules"], ...presets.map((p) => [p, p])];
  const approval = input("checkbox", { checked: settings.human_approval });
  f.append(
    field("model", "f_judger_model", select(models, settings.model)),
    field("quota_per_day", "f_daily_quota", input("number", { min: 0, max: 50, value: settings.quota_per_day, placeholder: t("quota_no_cap") })),
    field("margin", "f_margin", input("number", { min: 0, max: 0.99, step: "0.001", value: settings.margin })),
    field("strategy", "f_strategy", select(STRATEGIES.map((x) => [x, x]), settings.strategy)),
    field("diagnosis_per_day", "f_diagnosis_per_day", input("number", { min: 0, max: 50, value: settings.diagnosis_per_day })),
    h("div", { class: "field", dataset: { field: "human_approval" } },
      h("label", { class: "check" }, approval, " ", t("f_human_approval")),
      h("small", { class: "error", dataset: { errorFor: "human_approval" } })),
    h("div", { class: "buttons" }, h("button", { type: "submit", text: t("save") })),
    formStatus(),
  );
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    const number = (name) => {
      const value = f.querySelector(`[name=${name}]`).value;
      return value === "" ? null : Number(value);
    };
    await submit(f, () => api.send("PUT", "/api/config/judger", {
      model: f.querySelector("[name=model]").value,
      quota_per_day: number("quota_per_day"),
      margin: number("margin"),
      strategy: f.querySelector("[name=strategy]").value,
      diagnosis_per_day: number("diagnosis_per_day"),
      human_approval: approval.checked,
    }));
  });
  return f;
}

async function awaiting(root) {
  const run = state.run;
  if (!run || run.read_only) return h("div");
  const data = await api.get(api.runUrl(run.id, "/judger"));
  const pending = data.candidates.filter((c) => c.nomination?.awaiting_approval && !c.approvals.some((a) => a.seq > c.nomination.seq));
  const box = h("div", { class: "awaiting" }, h("h3", { text: t("awaiting_title") }));
  if (!pending.length) box.append(h("p", { class: "muted", text: t("none_awaiting") }));
  for (const cand of pending) {
    const decide = async (action) => {
      await api.send("POST", api.runUrl(run.id, `/candidates/${encodeURIComponent(cand.candidate_id)}/${action}`)).catch(() => null);
      await renderJudger(root);
    };
    box.append(h("div", { class: "pending", dataset: { candidate: cand.candidate_id } },
      h("strong", { class: "mono", text: cand.candidate_id }), ` ${cand.team || ""} · ${num(cand.nomination.cycles_sum)} cycles `,
      h("button", { type: "button", class: "approve", text: t("approve"), onclick: () => decide("approve") }),
      h("button", { type: "button", class: "reject", text: t("reject"), onclick: () => decide("reject") })));
  }
  return box;
}

export async function renderJudger(root) {
  const [{ settings }, task] = await Promise.all([api.get("/api/config/judger"), api.get("/api/config/task")]);
  if (!settings) {
    root.replaceChildren();
    return;
  }
  root.replaceChildren(settingsForm(settings, task.presets || []), await awaiting(root));
}
