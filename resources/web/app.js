// Boot: language, runs, tabs and header actions. Live, demo and replay all use this one page.
import * as api from "./js/api.js";
import { $, $$, h } from "./js/dom.js";
import { ApprovalsView } from "./js/approvals/approvals.js";
import { applyI18n, getLang, onLang, setLang, t } from "./js/i18n.js";
import { LineageView } from "./js/lineage/lineage.js";
import { LiveView } from "./js/live/live.js";
import { applyMotion, motionOn, setMotion } from "./js/motion.js";
import { ReplayPlayer } from "./js/replay.js";
import { renderConfig } from "./js/config/config.js";
import { renderHealth } from "./js/health.js";
import { ResultsView } from "./js/results/results.js";
import { renderStart, showStart } from "./js/start/start.js";
import { on, simulated, state } from "./js/state.js";

const live = new LiveView();
const results = new ResultsView();
const lineage = new LineageView();
const player = new ReplayPlayer(live);
new ApprovalsView($("#approvals")); // cards of a supervised team, above the live panels

function notice(text, good = true) {
  const box = $("#notice");
  box.textContent = text;
  box.className = `notice ${good ? "good" : "bad"}`;
  box.hidden = !text;
  fitLive();
}

// The live panels fill the window below whatever sits above them (the simulated banner, the
// replay bar, a notice): their height is the viewport less --live-top (css/start.css), kept
// current as those bars appear, wrap or go, so the log's footer stays on screen.
function fitLive() {
  const grid = $("#tab-live .live-grid");
  if (!grid || grid.offsetParent === null) return;
  const top = grid.getBoundingClientRect().top + window.scrollY;
  document.documentElement.style.setProperty("--live-top", `${Math.round(top)}px`);
}

function watchLayout() {
  const observer = new ResizeObserver(() => fitLive());
  for (const el of [$("#sim-banner"), $(".topbar"), $("#replay-bar"), $("#notice"), $("#start-screen"), $("#approvals")]) {
    if (el) observer.observe(el);
  }
  window.addEventListener("resize", fitLive);
}

function chip(text, cls = "") {
  return h("span", { class: `chip ${cls}`, text });
}

// an imported run is never shown as this lab's own: its bundle's simulated flag is a claim
function importedLabel(run) {
  return run.meta?.simulated === true ? t("imported_claims_simulated") : t("imported_claims_not_simulated");
}

function runLabel(run) {
  const tags = [t(`mode_${run.mode}`)];
  if (run.mode !== "demo" && run.meta?.simulated === true) tags.push(t("simulated"));
  if (run.meta?.imported === true) tags.push(importedLabel(run));
  return `${run.name} · ${tags.join(" · ")}`;
}

// one number for the header and the scrubber: replaying, the events shown so far
function eventCount() {
  return state.replay && state.at !== null ? state.at : state.view?.last_seq ?? 0;
}

function renderCount() {
  const count = $("#run-badges .events-count");
  if (count) count.textContent = t("events_count", { n: eventCount() });
}

function renderHeader() {
  const run = state.run;
  const banner = $("#sim-banner");
  banner.hidden = !simulated();
  banner.textContent = state.info?.demo || run?.mode === "demo" ? t("simulated_banner") : t("simulated_run_banner");
  document.body.classList.toggle("simulated", simulated());
  const badges = [];
  if (run) {
    badges.push(chip(t(`mode_${run.mode}`), `mode-${run.mode}`));
    if (simulated()) badges.push(chip(t("simulated"), "simulated"));
    if (run.meta?.offline) badges.push(chip(t("offline"), "offline"));
    // the run's target; a run from before targets ran on the C port
    if (run.mode !== "demo") badges.push(chip(`${t("target")}: ${run.meta?.toolchain || "cpu"}`, "target"));
    if (run.meta?.imported === true) badges.push(chip(importedLabel(run), "imported"));
    const dispatch = state.view?.dispatch;
    badges.push(chip(dispatch === "running" ? t("dispatch_running") : dispatch === "stopped" ? t("dispatch_stopped") : t("dispatch_none")));
    if (state.view) badges.push(chip(t("events_count", { n: eventCount() }), "events-count"));
  }
  $("#run-badges").replaceChildren(...badges);
  renderHealth(run ? state.view : null);
  for (const [id, path] of [["#export-link", "/export"], ["#report-md", "/report.md"], ["#report-html", "/report.html"]]) {
    const link = $(id);
    link.hidden = !run;
    if (run) {
      // the report's headings follow the dashboard's language
      const params = path.startsWith("/report") && getLang() === "zh" ? { lang: "zh" } : {};
      link.href = api.runUrl(run.id, path, params);
      link.setAttribute("download", "");
    }
  }
  $("#demo-btn").hidden = !state.info?.can_demo;
  $("#lang-btn").textContent = t("lang_switch");
}

function renderRunSelect() {
  const select = $("#run-select");
  if (!state.runs.length) {
    select.replaceChildren(h("option", { value: "", text: t("start_no_runs") }));
    return;
  }
  // the full label as each option's tooltip and the picker's: a long name is cut on screen
  select.replaceChildren(...state.runs.map((run) => h("option", { value: run.id, title: `${runLabel(run)} (${run.id})`, text: runLabel(run) })));
  select.value = state.run?.id ?? "";
  select.title = select.selectedOptions[0]?.title ?? "";
}

let runsSeen = "";

async function loadRuns() {
  const { runs } = await api.get("/api/runs");
  state.runs = runs;
  const seen = runs.map((r) => r.id).join(",");
  if (seen !== runsSeen || !state.runs.length) renderRunSelect();
  runsSeen = seen;
  return runs;
}

async function selectRun(runId) {
  const run = await api.get(`/api/runs/${encodeURIComponent(runId)}`);
  state.run = run;
  state.view = null;
  state.teamId = null;
  history.replaceState(null, "", `#run=${encodeURIComponent(run.id)}`);
  if (run.mode === "replay") player.enter(run);
  else if (run.mode === "demo") player.enter(run, { loop: true }); // plays when opened, loops
  else player.leave();
  showStart(false);
  renderRunSelect();
  renderHeader();
  await live.open();
  renderHeader();
  if (run.mode === "demo" && !player.playing) player.play();
  if (state.tab === "results") await results.load();
  if (state.tab === "lineage") await lineage.load();
  if (state.tab === "config") await renderConfig();
}

async function showTab(tab) {
  state.tab = tab;
  $$("[data-tab]").forEach((b) => b.classList.toggle("on", b.dataset.tab === tab));
  $$("[data-tabpanel]").forEach((p) => { p.hidden = p.dataset.tabpanel !== tab; });
  showStart(tab === "live" && !state.run && startScreenWanted());
  fitLive();
  if (tab === "results") await results.load();
  if (tab === "lineage") await lineage.load();
  if (tab === "config") await renderConfig();
}

function preferredRun(runs) {
  const wanted = new URLSearchParams(location.hash.slice(1)).get("run");
  if (wanted && runs.some((r) => r.id === wanted)) return wanted;
  if (state.info?.demo) return runs.find((r) => r.mode === "demo")?.id;
  return runs[0]?.id;
}

async function importBundle(file) {
  notice("…");
  try {
    // the run is named as in its bundle, not after the file it came in
    const result = await api.send("POST", "/api/import", file);
    await loadRuns();
    await selectRun(result.run.id);
    notice(t("import_done", { run: result.run.id }));
  } catch (err) {
    notice(err.message, false);
  }
}

async function startDemo() {
  const { run } = await api.send("POST", "/api/demo/start");
  await loadRuns();
  await selectRun(run.id);
}

function renderStartScreen() {
  renderStart(state.info, {
    onRun: async (run) => {
      await loadRuns();
      await selectRun(run.id);
    },
    onDemo: startDemo,
    onConfigure: async () => {
      await showTab("config");
      $("#model-form [name=name]")?.focus();
    },
  });
}

// a fresh lab opens on the start screen, not on three empty panels
function startScreenWanted() {
  return !state.runs.length && !state.info?.demo && (state.info?.can_run || state.info?.can_demo);
}

// a `#run=` link pasted into an open tab (or the history's back/forward) opens that run
async function followHash() {
  const wanted = new URLSearchParams(location.hash.slice(1)).get("run");
  if (!wanted || wanted === state.run?.id) return;
  const runs = state.runs.some((r) => r.id === wanted) ? state.runs : await loadRuns();
  if (runs.some((r) => r.id === wanted)) await selectRun(wanted);
}

function wire() {
  window.addEventListener("hashchange", () => followHash().catch((err) => notice(err.message, false)));
  $("#run-select").addEventListener("change", (e) => {
    e.target.title = e.target.selectedOptions[0]?.title ?? "";
    if (e.target.value) selectRun(e.target.value);
  });
  $$("[data-tab]").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
  $("#lang-btn").addEventListener("click", () => setLang(getLang() === "zh" ? "en" : "zh"));
  const motion = $("#motion-toggle");
  motion.checked = motionOn();
  motion.addEventListener("change", () => setMotion(motion.checked));
  $("#import-btn").addEventListener("click", () => $("#import-file").click());
  $("#import-file").addEventListener("change", (e) => {
    const [file] = e.target.files;
    if (file) importBundle(file);
    e.target.value = "";
  });
  $("#demo-btn").addEventListener("click", () => startDemo().catch((err) => notice(err.message, false)));
  onLang(async () => {
    if (startScreenWanted()) renderStartScreen();
    renderRunSelect();
    renderHeader();
    player.sync();
    if (state.run) await live.open();
    if (state.tab === "results") await results.load();
    if (state.tab === "lineage") await lineage.load();
    if (state.tab === "config") await renderConfig();
  });
  on("view", () => renderHeader());
  on("position", () => renderCount());
  on("run-started", async (run) => {
    await loadRuns();
    await selectRun(run.id);
  });
  on("refresh-view", () => live.refresh());
  setInterval(async () => {
    const known = state.runs.length;
    const runs = await loadRuns().catch(() => state.runs);
    if (!state.run && runs.length && runs.length !== known) await selectRun(preferredRun(runs));
  }, 5000);
}

async function boot() {
  applyI18n();
  applyMotion();
  wire();
  watchLayout();
  state.info = await api.get("/api/info");
  renderHeader();
  const runs = await loadRuns();
  const first = preferredRun(runs);
  if (first) await selectRun(first);
  else if (startScreenWanted()) {
    renderStartScreen();
    showStart(true);
  }
  await showTab("live");
  document.body.dataset.ready = "true";
}

boot().catch((err) => notice(err.message, false));
