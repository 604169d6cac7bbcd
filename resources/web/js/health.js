// The run's health in the header: red, with the reason, when the run cannot make progress
// (every team's latest turns failed); hidden while the run is healthy. The server decides
// (`health` in the run view, web/run_health.py) and sends a code; the words are ours.
import { $, h } from "./dom.js";
import { t } from "./i18n.js";

export function renderHealth(view) {
  const box = $("#run-health");
  if (!box) return;
  const health = view?.health;
  if (!health || health.state !== "failing") {
    box.hidden = true;
    box.replaceChildren();
    box.removeAttribute("title");
    return;
  }
  const vars = { n: health.failed_turns ?? "?", teams: health.teams ?? "?" };
  box.hidden = false;
  box.dataset.code = health.code || "";
  box.setAttribute("role", "alert");
  box.title = health.detail || "";
  box.replaceChildren(
    h("strong", { text: t(`health_${health.code}`, vars) }),
    health.error ? h("span", { class: "health-error mono", text: health.error }) : null,
    health.detail ? h("span", { class: "health-detail", text: health.detail }) : null,
  );
}
