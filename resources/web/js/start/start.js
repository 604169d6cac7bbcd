// The start screen: what a fresh lab (no run yet) shows instead of three empty panels. Three
// ways in, each one click: an offline tournament (started through the same control API the
// Configuration page uses), the recorded demo, and the model settings.
import * as api from "../api.js";
import { $, h } from "../dom.js";
import { t } from "../i18n.js";

// three teams on the offline model: runs with no key, no network, no cost
export const OFFLINE_TOURNAMENT = {
  name: "offline tournament",
  mode: "multi",
  teams: [{ model: "offline" }, { model: "offline" }, { model: "offline" }],
};

function card(id, titleKey, textKey, buttonKey, action, primary = false) {
  const status = h("p", { class: "start-status small", role: "status" });
  const button = h("button", { type: "button", class: primary ? "primary" : "", id, text: t(buttonKey) });
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = "…";
    status.classList.remove("bad");
    try {
      await action();
      status.textContent = "";
    } catch (err) {
      status.textContent = err.message;
      status.classList.add("bad");
    } finally {
      button.disabled = false;
    }
  });
  return h("article", { class: "start-card" },
    h("h3", { text: t(titleKey) }), h("p", { text: t(textKey) }), button, status);
}

/** Draw the start screen into #start-screen. `info` is /api/info; the callbacks open what
 * was started (`onRun(run)`), start the demo (`onDemo()`) and show the settings (`onConfigure()`). */
export function renderStart(info, { onRun, onDemo, onConfigure }) {
  const root = $("#start-screen");
  const cards = [];
  if (info?.can_run) {
    cards.push(card("start-tournament", "start_tournament_title", "start_tournament_text", "start_tournament", async () => {
      const { run } = await api.send("POST", "/api/task/start", OFFLINE_TOURNAMENT);
      await onRun(run);
    }, true));
  }
  if (info?.can_demo) {
    cards.push(card("start-demo", "start_demo_title", "start_demo_text", "start_demo", onDemo, !info?.can_run));
  }
  if (info?.can_run) {
    cards.push(card("start-configure", "start_configure_title", "start_configure_text", "start_configure", onConfigure));
  }
  root.replaceChildren(
    h("h2", { text: t("start_title") }),
    h("p", { class: "start-lead", text: t("start_lead") }),
    h("div", { class: "start-cards" }, cards),
  );
}

/** Show the start screen in place of the live panels while the lab has no run. */
export function showStart(visible) {
  $("#start-screen").hidden = !visible;
  document.body.classList.toggle("starting", visible);
}
