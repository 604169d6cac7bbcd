// One work-log row per event: what happened, by whom, the tool's name, and the details
// (arguments, actual returns, diffs, receipts) folded behind a <details>.
import { clip, clock, h, num, short } from "../dom.js";
import { t } from "../i18n.js";
import { state } from "../state.js";
import { pipelineButton } from "./pipeline.js";

export const JUDGER_KINDS = [
  "candidate.frozen",
  "judger.review",
  "judger.nomination",
  "judger.approval",
  "judger.submission",
  "official.result",
];

function pretty(text) {
  if (typeof text !== "string") return JSON.stringify(text, null, 1);
  try {
    return JSON.stringify(JSON.parse(text), null, 1);
  } catch {
    return text;
  }
}

function details(...body) {
  return h("details", {}, h("summary", { text: t("details") }), ...body);
}

function pre(text, cls = "") {
  return h("pre", { class: cls, text: String(text ?? "") });
}

function diffBlock(diff) {
  const lines = String(diff || "").split("\n");
  return h(
    "pre",
    { class: "diff" },
    lines.map((line) => {
      let cls = "";
      if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
      else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
      else if (line.startsWith("@@")) cls = "hunk";
      return h("span", { class: cls, text: `${line}\n` });
    }),
  );
}

function table(rows) {
  return h("table", { class: "mini" }, rows.map(([k, v]) => h("tr", {}, h("th", { text: k }), h("td", { text: v }))));
}

function tool(name) {
  return h("span", { class: "tool", text: name || "?" });
}

function chip(text, cls = "") {
  return h("span", { class: `chip ${cls}`, text });
}

function countDiff(diff) {
  let add = 0;
  let del = 0;
  for (const line of String(diff || "").split("\n")) {
    if (line.startsWith("+") && !line.startsWith("+++")) add += 1;
    else if (line.startsWith("-") && !line.startsWith("---")) del += 1;
  }
  return `+${add} −${del}`;
}

const RENDER = {
  "model.response": (p) => {
    const usage = p.usage;
    const tokens = usage ? `${num(usage.input_tokens)} → ${num(usage.output_tokens)} tok${p.usage_estimated ? ` (${t("tokens_est")})` : ""}` : "";
    return {
      label: "k_analysis",
      head: [
        p.offline ? chip(t("offline"), "offline") : null,
        p.purpose === "summary" ? chip(t("summary_call")) : null,
        ...(p.tool_calls || []).map((c) => tool(c.name)),
      ],
      body: p.text ? clip(p.text, 400) : "",
      meta: tokens,
      more: p.tool_calls?.length || (p.text && p.text.length > 400)
        ? details(p.text && p.text.length > 400 ? pre(p.text) : null, ...(p.tool_calls || []).map((c) => h("div", {}, tool(c.name), pre(pretty(c.args)))))
        : null,
    };
  },
  "tool.call": (p) => ({ label: "k_tool_call", head: [tool(p.name)], body: clip(p.args, 160), more: details(pre(pretty(p.args))) }),
  "tool.result": (p) => ({
    label: "k_tool_result",
    head: [tool(p.name), p.error ? chip(t("error"), "bad") : null],
    body: clip(p.content, 200),
    meta: p.seconds != null ? `${p.seconds} s` : "",
    more: details(pre(p.content)),
  }),
  "source.changed": (p) => ({
    label: "k_diff",
    body: `${countDiff(p.diff)} · tree ${short(p.tree_sha256)}`,
    more: details(diffBlock(p.diff)),
  }),
  "experiment.planned": (p) => ({
    label: "k_plan",
    head: [chip(`#${p.experiment}`)],
    body: p.hypothesis,
    more: details(table([
      ["evidence", p.failure_evidence],
      ["change", p.change],
      ["criterion", p.validation_criterion],
      ["cases", (p.case_ids || []).join(", ") || "—"],
    ])),
  }),
  "experiment.receipt": (p) => {
    const r = p.receipt || {};
    const ex = p.executor || {};
    const good = r.status === "measured" || r.status === "probe_passed";
    return {
      label: "k_receipt",
      head: [
        chip(`#${p.experiment}`),
        chip(r.status || "?", good ? "good" : "bad"),
        r.cache_hit ? chip(t("cache_hit")) : null,
        pipelineButton(() => state.run?.id, p.blobs?.[0], r.mode, ex.toolchain_id),
      ],
      body: `${r.mode || ""} · ${num(r.cases_passed)}/${num(r.cases_run)} cases · ${num(r.total_est_cycles)} cycles`,
      more: details(table([
        ["receipt", r.receipt_id || "—"],
        ["source SHA-256", r.source_sha256 || "—"],
        ["commit", p.commit || "—"],
        ["executor", `${ex.host || "?"}/${ex.worker || "?"}/slot ${ex.slot ?? "—"}`],
        ["toolchain", `${ex.toolchain_id || "?"} ${ex.toolchain_version || ""}`],
        ...Object.entries(r.cycles || {}).map(([k, v]) => [`cycles ${k}`, num(v)]),
        ...(r.failed_cases || []).map((f) => [`failed ${f.case_id}`, `${f.outcome} ${f.detail || ""} ratio ${f.error_ratio ?? "—"}`]),
      ])),
    };
  },
  "todos.updated": (p) => {
    const todos = p.todos || [];
    const done = todos.filter((x) => x.status === "completed").length;
    return { label: "k_todos", body: `${done}/${todos.length} ${t("todo_completed")}`, more: details(h("ul", {}, todos.map((x) => h("li", { text: `[${x.status}] ${x.content}` })))) };
  },
  "team.registered": (p) => ({ label: "k_registered", head: [p.offline ? chip(t("offline"), "offline") : null], body: `${p.display_name} · ${p.model_preset} (${p.provider})` }),
  "team.turn": (p) => ({ label: "k_turn", body: p.state }),
  "team.turn_end": (p) => ({ label: "k_turn_end", body: [p.status, p.detail].filter(Boolean).join(" · ") }),
  "team.paused": (p) => ({ label: "k_paused", body: p.reason }),
  "team.resumed": (p) => ({ label: "k_resumed", body: p.reason || "" }),
  "team.exited": (p) => ({ label: "k_exited", body: p.reason }),
  "watchdog.nudge": (p) => ({ label: "k_nudge", body: p.message }),
  "model.error": (p) => ({ label: "k_model_error", head: [chip(p.kind, "bad")], body: p.message }),
  "provider.paused": (p) => ({ label: "k_provider", body: `${p.connection || p.provider}: ${p.reason}` }),
  "provider.resumed": (p) => ({ label: "k_provider", body: `${p.connection || p.provider}` }),
  "run.dispatch_started": (p) => ({ label: "k_dispatch_started", body: p.seconds ? `${p.seconds} s` : "" }),
  "run.dispatch_stopped": (p) => ({ label: "k_dispatch_stopped", body: p.reason }),
  "run.toolchain_preparing": (p) => ({ label: "k_toolchain_preparing", body: p.detail || p.toolchain }),
  "run.summary": (p) => ({ label: "k_summary", body: p.reason }),
  "a2a.message": (p) => ({ label: "k_a2a", head: [chip(p.type || "message")], body: `→ ${p.to}: ${clip(p.summary, 200)}` }),
  "a2a.delivered": (p) => ({ label: "k_a2a", body: `delivered ${short(p.message_id)} from ${p.sender}` }),
  "a2a.acked": (p) => ({ label: "k_a2a", body: `acked ${short(p.message_id)}` }),
  "candidate.frozen": (p) => ({
    label: "k_frozen",
    head: [chip(p.candidate_id)],
    body: `${num(p.cycles_sum)} cycles · source ${short(p.source_sha256)}`,
    more: details(table([["source SHA-256", p.source_sha256], ["commit", p.commit], ["receipt", p.receipt_key]])),
  }),
  "judger.review": (p) => ({
    label: "k_review",
    head: [chip(p.candidate_id), chip(p.verdict, p.verdict === "accepted" ? "good" : "bad")],
    body: (p.reasons || []).join("; "),
    meta: p.reviewer,
  }),
  "judger.nomination": (p) => ({
    label: "k_nomination",
    head: [chip(p.candidate_id), p.awaiting_approval ? chip(t("awaiting_title"), "warn") : null],
    body: `${num(p.cycles_sum)} vs champion ${num(p.champion_cycles)}`,
  }),
  "judger.approval": (p) => ({ label: "k_approval", head: [chip(p.candidate_id), chip(p.decision, p.decision === "approved" ? "good" : "bad")], body: `by ${p.by}` }),
  "judger.submission": (p) => ({
    label: "k_submission",
    head: [chip(p.candidate_id), chip(p.backend)],
    body: `${p.submission_id} · quota ${num(p.quota_used)}/${num(p.quota_limit)} · source ${short(p.source_sha256)}`,
  }),
  "official.result": (p) => ({
    label: "k_official",
    head: [chip(p.candidate_id || "?"), chip(p.status, p.status === "official_pass" ? "good" : "bad")],
    body: `${p.submission_id} · prof_sum ${num(p.prof_sum_us)} µs${p.sota_changed ? " · SOTA" : ""}`,
    more: details(h("table", { class: "mini" },
      h("tr", {}, ["point", "result", "error ratio", "time (µs)", "best (µs)"].map((x) => h("th", { text: x }))),
      (p.points || []).map((pt) => h("tr", {},
        h("td", { text: pt.id }),
        h("td", { text: pt.passed == null ? "—" : pt.passed ? t("pass") : t("fail") }),
        h("td", { text: pt.error_ratio != null ? num(pt.error_ratio) : pt.error_bucket ?? "—" }),
        h("td", { text: num(pt.time_us) }),
        h("td", { text: num(pt.best_time_us) }))))),
  }),
};

export function renderEvent(ev, teamNames = {}, animate = false) {
  const render = RENDER[ev.kind] || ((p) => ({ label: ev.kind, body: clip(JSON.stringify(p), 200) }));
  const view = render(ev.payload || {});
  const row = h(
    "li",
    { class: `ev kind-${ev.kind.replace(/\./g, "-")}${animate ? " arrive" : ""}`, dataset: { seq: String(ev.seq), kind: ev.kind } },
    h(
      "div",
      { class: "ev-head" },
      h("span", { class: "seq", text: `#${ev.seq}` }),
      h("time", { datetime: ev.ts, text: clock(ev.ts) }),
      ev.team ? h("span", { class: "team", text: teamNames[ev.team] || ev.team }) : null,
      h("span", { class: "label", text: t(view.label) }),
      ...(view.head || []),
      view.meta ? h("span", { class: "meta", text: view.meta }) : null,
    ),
    view.body ? h("div", { class: "ev-body", text: view.body }) : null,
    view.more || null,
  );
  return row;
}
