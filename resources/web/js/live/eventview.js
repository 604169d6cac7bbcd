// One work-log row per event: what happened, by whom, the tool's name, and the details
// (arguments, actual returns, diffs, receipts) folded behind a <details>. Every word comes
// from the dictionaries (kinds, statuses, the server's known reasons), so the Chinese page
// reads Chinese; data (names, ids, model text) is shown as it is.
import { clip, clock, h, num, short } from "../dom.js";
import { t, word } from "../i18n.js";
import { party, state } from "../state.js";
import { dataView } from "./jsonview.js";
import { pipelineButton } from "./pipeline.js";
import { planBadge } from "./planstatus.js";
import { payloadReason } from "./reasons.js";

export const JUDGER_KINDS = [
  "candidate.frozen",
  "judger.review",
  "judger.model_review",
  "judger.nomination",
  "judger.approval",
  "judger.submission",
  "judger.unavailable",
  "official.result",
];

const SUMMARY_CODES = new Set(["feedback_own", "feedback_public", "fetched", "frozen"]);

/** A board message's (or a graph edge's) summary: the lab's own (the Judger's feedback) as a code and values the
 * page translates, a team's words (and an older log's) as written. */
export function messageSummary(p) {
  const code = p?.summary_code;
  const params = p?.summary_params || {};
  if (!SUMMARY_CODES.has(code)) return p?.summary || "";
  return t(`a2a_sum_${code}`, { ...params, status: word(params.status) });
}

export function details(...body) {
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
  return h("table", { class: "mini" }, rows.map(([k, v]) => h("tr", {}, h("th", { text: t(k) }), h("td", { text: v }))));
}

export function tool(name) {
  return h("span", { class: "tool", text: name || "?" });
}

export function chip(text, cls = "") {
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

/** "1,200 → 300 tok" as the provider reported them, or "" when it reported none. */
export function tokens(usage, estimated) {
  if (!usage) return "";
  const est = estimated ? ` (${t("tokens_est")})` : "";
  return t("st_tokens", { tin: num(usage.input_tokens), tout: num(usage.output_tokens) }) + est;
}

export function seconds(value) {
  return value == null ? "" : t("st_seconds", { s: num(Math.round(value * 1000) / 1000) });
}

export const TODO_MARKS = { pending: "○", in_progress: "◐", completed: "✓" };

/** A todo list (write_todos' arguments or return, todos.updated) as a list, not a repr. */
export function todoView(todos) {
  const marks = TODO_MARKS;
  return h(
    "ul",
    { class: "todo-view" },
    (todos || []).map((x) =>
      h(
        "li",
        { class: `todo ${x?.status || ""}` },
        h("span", { class: "mark", "aria-hidden": "true", text: marks[x?.status] || "·" }),
        h("span", { class: "todo-state", text: t(`todo_${x?.status}`) === `todo_${x?.status}` ? String(x?.status ?? "") : t(`todo_${x?.status}`) }),
        h("span", { class: "content", text: String(x?.content ?? "") }),
      ),
    ),
  );
}

function receiptChip(status) {
  return chip(word(status || "?"), status === "measured" || status === "probe_passed" ? "good" : "bad");
}

const RENDER = {
  "model.response": (p) => ({
    label: "k_analysis",
    head: [
      p.offline ? chip(t("offline"), "offline") : null,
      p.purpose === "summary" ? chip(t("summary_call")) : null,
      p.member ? chip(word(p.member)) : null,
      ...(p.tool_calls || []).map((c) => tool(c.name)),
    ],
    body: p.text ? clip(p.text, 400) : "",
    meta: [seconds(p.seconds), tokens(p.usage, p.usage_estimated)].filter(Boolean).join(" · "),
    more: p.tool_calls?.length || (p.text && p.text.length > 400)
      ? details(p.text && p.text.length > 400 ? pre(p.text) : null, ...(p.tool_calls || []).map((c) => h("div", {}, tool(c.name), dataView(c.args))))
      : null,
  }),
  "tool.call": (p) => ({ label: "k_tool_call", head: [tool(p.name)], body: clip(p.args, 160), more: details(dataView(p.args)) }),
  "tool.result": (p) => ({
    label: "k_tool_result",
    head: [tool(p.name), p.error ? chip(t("error"), "bad") : null],
    body: clip(p.content, 200),
    meta: seconds(p.seconds),
    more: details(dataView(p.content, "pre")),
  }),
  "source.changed": (p) => ({
    label: "k_diff",
    body: t("st_diff_body", { lines: countDiff(p.diff), tree: short(p.tree_sha256) }),
    more: details(diffBlock(p.diff)),
  }),
  "experiment.planned": (p) => ({
    label: "k_plan",
    head: [chip(`#${p.experiment}`), planBadge("planned")],
    body: p.hypothesis,
    more: details(table([
      ["st_f_evidence", p.failure_evidence],
      ["st_f_change", p.change],
      ["st_f_criterion", p.validation_criterion],
      ["st_f_cases", (p.case_ids || []).join(", ") || "—"],
    ])),
  }),
  "experiment.receipt": (p) => {
    const r = p.receipt || {};
    const ex = p.executor || {};
    return {
      label: "k_receipt",
      head: [
        chip(`#${p.experiment}`),
        r.mode ? chip(word(r.mode)) : null,
        receiptChip(r.status),
        r.cache_hit ? chip(t("cache_hit")) : null,
        pipelineButton(() => state.run?.id, p.blobs?.[0], r.mode, ex.toolchain_id),
      ],
      body: t("st_receipt_body", { passed: num(r.cases_passed), run: num(r.cases_run), cycles: num(r.total_est_cycles) }),
      more: details(table([
        ["st_f_receipt", r.receipt_id || "—"],
        ["st_f_source", r.source_sha256 || "—"],
        ["st_f_commit", p.commit || "—"],
        ["st_f_executor", `${ex.host || "?"}/${ex.worker || "?"}/slot ${ex.slot ?? "—"}`],
        ["st_f_toolchain", `${ex.toolchain_id || "?"} ${ex.toolchain_version || ""}`],
        ...(r.detail ? [["st_f_detail", r.detail]] : []),
      ]), table([
        ...Object.entries(r.cycles || {}).map(([k, v]) => [t("st_f_cycles_of", { case: k }), num(v)]),
        ...(r.failed_cases || []).map((f) => [t("st_f_failed", { case: f.case_id }), `${word(f.outcome)} ${f.detail || ""} · ${t("st_f_error_ratio")} ${f.error_ratio ?? "—"}`]),
      ])),
    };
  },
  "todos.updated": (p) => {
    const todos = p.todos || [];
    const done = todos.filter((x) => x.status === "completed").length;
    return { label: "k_todos", body: `${done}/${todos.length} ${t("todo_completed")}`, more: details(todoView(todos)) };
  },
  "cases.proposed": (p) => ({ label: "st_k_cases_proposed", body: t("st_cases_body", { n: (p.cases || []).length, why: p.rationale || "" }), more: details(dataView(p.cases || [])) }),
  "history.offload_failed": (p) => ({ label: "st_k_offload_failed", head: [chip(t("error"), "bad")], body: `${p.path || ""}: ${p.error || ""}` }),
  "team.registered": (p) => ({ label: "k_registered", head: [p.offline ? chip(t("offline"), "offline") : null], body: `${p.display_name} · ${p.model_preset}${p.provider ? ` (${p.provider})` : ""}` }),
  "team.turn": (p) => ({ label: "k_turn", body: word(p.state) }),
  "team.turn_end": (p) => {
    const failed = turnFailed(p);
    return {
      label: "k_turn_end",
      head: [failed ? chip(t("error"), "bad") : p.status ? chip(word(p.status)) : null],
      body: payloadReason(p, "detail"),
      failed,
    };
  },
  "team.turn_timeout": () => ({ label: "st_k_turn_timeout" }),
  "team.paused": (p) => ({ label: "k_paused", body: payloadReason(p) }),
  "team.resumed": (p) => ({ label: "k_resumed", body: payloadReason(p) }),
  "team.exited": (p) => ({ label: "k_exited", body: payloadReason(p) }),
  "watchdog.nudge": (p) => ({ label: "k_nudge", body: payloadReason(p, "message") }),
  "model.error": (p) => ({ label: "k_model_error", head: [chip(word(p.kind), "bad")], body: p.message }),
  "provider.paused": (p) => ({ label: "k_provider", head: [chip(t("st_paused"), "bad")], body: `${p.connection || p.provider}: ${p.reason || ""}` }),
  "provider.resume_requested": (p) => ({ label: "k_provider", head: [chip(t("st_resume_requested"))], body: `${p.connection || p.provider}` }),
  "provider.resumed": (p) => ({ label: "k_provider", head: [chip(t("st_resumed"), "good")], body: `${p.connection || p.provider}` }),
  "run.dispatch_started": (p) => ({ label: "k_dispatch_started", body: seconds(p.seconds) }),
  "run.dispatch_stopped": (p) => ({ label: "k_dispatch_stopped", body: payloadReason(p) }),
  "run.toolchain_preparing": (p) => ({ label: "k_toolchain_preparing", body: t("st_toolchain_preparing", { toolchain: p.toolchain || "" }) }),
  "run.summary": (p) => ({ label: "k_summary", body: payloadReason(p) }),
  "a2a.message": (p) => ({ label: "k_a2a", head: [chip(word(p.type || "message"))], body: `→ ${party(p.to)}: ${clip(messageSummary(p), 200)}` }),
  "a2a.delivered": (p) => ({ label: "k_a2a", body: t("st_a2a_delivered", { id: short(p.message_id), from: party(p.sender) }) }),
  "a2a.acked": (p) => ({ label: "k_a2a", body: t("st_a2a_acked", { id: short(p.message_id) }) }),
  "a2a.released": (p) => ({ label: "k_a2a", body: t("st_a2a_released", { id: short(p.message_id) }) }),
  "a2a.evaluation": (p) => ({ label: "st_k_a2a_evaluation", head: [receiptChip(p.status)], body: t("st_receipt_body", { passed: num(p.cases_passed), run: num(p.cases_run), cycles: "—" }) }),
  "candidate.frozen": (p) => ({
    label: "k_frozen",
    head: [chip(p.candidate_id)],
    body: t("st_frozen_body", { cycles: num(p.cycles_sum), source: short(p.source_sha256) }),
    more: details(table([["st_f_source", p.source_sha256], ["st_f_commit", p.commit], ["st_f_receipt", p.receipt_key]])),
  }),
  "judger.review": (p) => ({
    label: "k_review",
    head: [chip(p.candidate_id), chip(word(p.verdict), p.verdict === "accepted" ? "good" : "bad")],
    body: (p.reasons || []).join("; "),
    meta: p.reviewer,
  }),
  "judger.model_review": (p) => ({
    label: "st_k_model_review",
    head: [chip(word(p.verdict), p.verdict === "accept" ? "good" : "bad")],
    body: (p.reasons || []).join("; "),
    meta: [p.reviewer, seconds(p.seconds), tokens(p.usage)].filter(Boolean).join(" · "),
  }),
  "judger.nomination": (p) => ({
    label: "k_nomination",
    head: [chip(p.candidate_id), p.awaiting_approval ? chip(t("awaiting_title"), "warn") : null],
    body: t("st_nomination_body", { cycles: num(p.cycles_sum), champion: num(p.champion_cycles) }),
  }),
  "judger.approval": (p) => ({ label: "k_approval", head: [chip(p.candidate_id), chip(word(p.decision), p.decision === "approved" ? "good" : "bad")], body: t("st_by", { who: p.by || "?" }) }),
  "judger.submission": (p) => ({
    label: "k_submission",
    head: [chip(p.candidate_id), chip(p.backend)],
    body: t("st_submission_body", { id: p.submission_id, used: num(p.quota_used), limit: num(p.quota_limit), source: short(p.source_sha256) }),
  }),
  "judger.unavailable": (p) => ({ label: "st_k_judger_unavailable", head: [chip(t("error"), "bad")], body: p.detail }),
  "official.result": (p) => ({
    label: "k_official",
    head: [chip(p.candidate_id || "?"), chip(word(p.status), p.status === "official_pass" ? "good" : "bad")],
    body: t("st_official_body", { id: p.submission_id, us: num(p.prof_sum_us) }) + (p.sota_changed ? " · SOTA" : ""),
    more: details(h("table", { class: "mini" },
      h("tr", {}, ["st_f_point", "st_f_result", "st_f_error_ratio", "st_f_time", "st_f_best"].map((x) => h("th", { text: t(x) }))),
      (p.points || []).map((pt) => h("tr", {},
        h("td", { text: pt.id }),
        h("td", { text: pt.passed == null ? "—" : pt.passed ? t("pass") : t("fail") }),
        h("td", { text: pt.error_ratio != null ? num(pt.error_ratio) : pt.error_bucket ?? "—" }),
        h("td", { text: num(pt.time_us) }),
        h("td", { text: num(pt.best_time_us) }))))),
  }),
};

const FAILED_TURN_CODES = new Set(["turn_failed", "agent_unbuilt"]);

/** A turn end that is a failure (the scheduler ends it as idle, its reason code
 * `turn_failed`): shown in red like an error, never grey like a plain end. */
function turnFailed(p) {
  return p.status === "failed" || FAILED_TURN_CODES.has(p.reason_code);
}

/** A kind the page has no renderer for: its translated name (or the kind) and its payload as data. */
function unknown(kind) {
  return (p) => {
    const key = `st_k_${kind.replace(/\./g, "_")}`;
    return { label: t(key) === key ? kind : key, more: details(dataView(p)) };
  };
}

/** The row's frame (sequence, time, team, translated kind) around a view's parts. */
export function eventRow(ev, view, teamNames = {}, animate = false, extraClass = "") {
  return h(
    "li",
    {
      class: `ev kind-${ev.kind.replace(/\./g, "-")}${extraClass}${animate ? " arrive" : ""}`,
      dataset: { seq: String(ev.seq), kind: ev.kind, team: ev.team || "" },
    },
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
}

export function renderEvent(ev, teamNames = {}, animate = false) {
  const render = RENDER[ev.kind] || unknown(ev.kind);
  const view = render(ev.payload || {});
  return eventRow(ev, view, teamNames, animate, view.failed ? " failed" : "");
}
