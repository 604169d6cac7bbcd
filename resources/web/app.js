// Minimal live view: lists runs and streams the selected run's events over SSE.
const STRINGS = {
  en: { runs: "Runs", events: "Events", replay: "replay", demo: "simulated", none: "No runs yet." },
  zh: { runs: "运行", events: "事件", replay: "回放", demo: "模拟数据", none: "还没有运行。" },
};
let lang = (localStorage.getItem("lang") || navigator.language || "en").startsWith("zh") ? "zh" : "en";
let source = null;

function t(key) { return STRINGS[lang][key]; }

function applyLanguage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  document.getElementById("lang").textContent = lang === "zh" ? "English" : "中文";
}

function eventRow(ev) {
  const li = document.createElement("li");
  const kind = Object.assign(document.createElement("span"), { className: "kind", textContent: `#${ev.seq} ${ev.kind}` });
  li.append(kind);
  if (ev.team) li.append(Object.assign(document.createElement("span"), { className: "team", textContent: ev.team }));
  li.append(document.createTextNode(JSON.stringify(ev.payload).slice(0, 200)));
  return li;
}

function openRun(run, item) {
  document.querySelectorAll("#runs li").forEach((el) => el.classList.remove("selected"));
  item.classList.add("selected");
  document.getElementById("run-title").textContent = run.name;
  const list = document.getElementById("events");
  list.replaceChildren();
  if (source) source.close();
  source = new EventSource(`/api/runs/${encodeURIComponent(run.id)}/stream`);
  source.onmessage = (msg) => {
    list.prepend(eventRow(JSON.parse(msg.data)));
    while (list.children.length > 160) list.lastChild.remove();
  };
}

async function loadRuns() {
  const response = await fetch("/api/runs");
  if (!response.ok) return;
  const { runs } = await response.json();
  const list = document.getElementById("runs");
  list.replaceChildren();
  if (!runs.length) list.append(Object.assign(document.createElement("li"), { textContent: t("none") }));
  for (const run of runs) {
    const li = document.createElement("li");
    li.textContent = run.name;
    if (run.mode !== "live") li.append(Object.assign(document.createElement("span"), { className: "badge", textContent: t(run.mode === "demo" ? "demo" : "replay") }));
    li.addEventListener("click", () => openRun(run, li));
    list.append(li);
  }
}

document.getElementById("lang").addEventListener("click", () => {
  lang = lang === "zh" ? "en" : "zh";
  localStorage.setItem("lang", lang);
  applyLanguage();
  loadRuns();
});
applyLanguage();
loadRuns();
