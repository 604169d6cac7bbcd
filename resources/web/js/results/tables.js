// The Judger table: one row per candidate, its official test points folded below (the
// leaderboard and token usage are in board.js). A figure the events do not hold shows as "—",
// never as 0.
import * as api from "../api.js";
import { h, num, short } from "../dom.js";
import { t } from "../i18n.js";

export function table(header, rows, cls = "") {
  return h(
    "table",
    { class: `grid ${cls}` },
    h("thead", {}, h("tr", {}, header.map((x) => h("th", { text: x })))),
    h("tbody", {}, rows),
  );
}

function cell(value, cls = "") {
  return h("td", { class: cls, text: value == null || value === "" ? "—" : String(value) });
}

function shaCell(sha) {
  return h("td", { class: "mono", title: sha || "", text: sha ? short(sha, 16) : "—" });
}

function decisionButtons(runId, cand, onDone) {
  const decide = async (action) => {
    try {
      await api.send("POST", api.runUrl(runId, `/candidates/${encodeURIComponent(cand.candidate_id)}/${action}`));
    } finally {
      onDone();
    }
  };
  return h("span", { class: "decide" },
    h("button", { type: "button", class: "approve", text: t("approve"), onclick: () => decide("approve") }),
    h("button", { type: "button", class: "reject", text: t("reject"), onclick: () => decide("reject") }));
}

// A code from the server in the page's words; an unknown code shows as itself.
function word(prefix, code) {
  if (code == null || code === "") return null;
  const key = `${prefix}_${code}`;
  const text = t(key);
  return text === key ? String(code) : text;
}

function pointResult(point) {
  if (point.passed == null) return cell(null);
  return cell(point.passed ? t("pass") : t("fail"), point.passed ? "good" : "bad");
}

// Why a result failed: the judge's code (compile_failed, incorrect...), else the one outcome
// every failing point shares (results logged before the code was kept).
function failureCode(result) {
  if (!result || result.status === "official_pass") return null;
  if (result.outcome && result.outcome !== "passed") return result.outcome;
  const outcomes = new Set((result.points || []).filter((p) => !p.passed).map((p) => p.outcome).filter(Boolean));
  return outcomes.size === 1 ? [...outcomes][0] : null;
}

function failureCell(result) {
  const code = failureCode(result);
  const lines = result?.diagnostics || [];
  if (!code && !lines.length) return cell(null);
  return h("td", { class: "failure bad", dataset: { outcome: code || "" } },
    code ? h("span", { class: "outcome", text: word("outcome", code) }) : null,
    lines.length
      ? h("details", { class: "diagnostics" },
        h("summary", { text: t("diagnostics_n", { n: lines.length }) }),
        h("pre", { class: "mono", text: lines.join("\n") }))
      : code === "compile_failed" ? h("span", { class: "muted no-diagnostics", text: t("diagnostics_none") }) : null);
}

function coverage(result) {
  const points = result?.points || [];
  if (!points.length) return null;
  return `${points.filter((p) => p.passed).length}/${points.length}`;
}

function pointsTable(result) {
  const header = ["col_point", "col_result", "col_outcome", "col_error_ratio", "col_time", "col_best_time"].map((k) => t(k));
  return table(header, (result.points || []).map((point) => h("tr", { dataset: { point: point.id } },
    cell(point.id),
    pointResult(point),
    cell(word("outcome", point.outcome)),
    cell(point.error_ratio != null ? num(point.error_ratio) : point.error_bucket ?? null),
    cell(num(point.time_us)),
    cell(num(point.best_time_us)))), "points");
}

// Which candidates show their official points; kept across the reloads new events cause.
const expanded = new Set();

function lineageLink(runId, id) {
  const href = `#run=${encodeURIComponent(runId)}&lineage=${encodeURIComponent(id)}`;
  return h("td", { class: "mono" }, h("a", { class: "lineage-link", href, text: id, title: t("open_lineage") }));
}

export function judgerTable(data, { runId, canDecide, onDone }) {
  if (!data.candidates.length) return h("p", { class: "muted", text: t("judger_empty") });
  const rows = [];
  const header = ["", "col_candidate", "col_team", "col_status", "col_review", "col_approval", "col_submission",
    "col_sha", "col_official", "col_prof_sum", "col_failure"].map((k) => (k ? t(k) : ""));
  for (const cand of data.candidates) {
    const id = cand.candidate_id;
    const review = cand.reviews.at(-1);
    const approval = cand.approvals.at(-1);
    const awaiting = cand.nomination?.awaiting_approval && !(approval && approval.seq > cand.nomination.seq);
    const result = cand.results.at(-1) || null;
    const submission = result ? result.submission_id : cand.submissions.at(-1)?.submission_id;
    const hasPoints = Boolean(result?.points?.length);
    const open = hasPoints && expanded.has(id);
    const detail = hasPoints
      ? h("tr", { class: "points-row", dataset: { candidate: id }, hidden: !open },
        h("td", { colspan: String(header.length) }, pointsTable(result)))
      : null;
    const toggle = hasPoints
      ? h("button", {
        type: "button", class: "expand", "aria-expanded": String(open), title: t("show_points"), text: open ? "▾" : "▸",
        onclick: (ev) => {
          const now = !expanded.has(id);
          if (now) expanded.add(id); else expanded.delete(id);
          detail.hidden = !now;
          ev.currentTarget.setAttribute("aria-expanded", String(now));
          ev.currentTarget.textContent = now ? "▾" : "▸";
        },
      })
      : null;
    rows.push(h("tr", { class: "cand", dataset: { candidate: id, status: cand.status } },
      h("td", { class: "toggle" }, toggle),
      lineageLink(runId, id),
      cell(data.team_names?.[cand.team] || cand.team),
      cell(word("status", cand.status), `status ${cand.status}`),
      cell(review ? `${word("verdict", review.verdict)} · ${review.reviewer ?? ""}` : null),
      awaiting && canDecide
        ? h("td", { class: "approval" }, decisionButtons(runId, cand, onDone))
        : cell(approval ? `${word("decision", approval.decision)} (${approval.by})` : awaiting ? t("awaiting_title") : null),
      cell(submission, "mono"),
      shaCell(result?.source_sha256 || cand.frozen?.source_sha256),
      cell(coverage(result), result ? (result.status === "official_pass" ? "good" : "bad") : ""),
      cell(num(result?.prof_sum_us)),
      failureCell(result)));
    if (detail) rows.push(detail);
  }
  const parts = [table(header, rows, "judger")];
  if (data.champion) {
    const team = data.team_names?.[data.champion.team] || data.champion.team;
    parts.unshift(h("p", { class: "champion", text: `${t("champion")}: ${data.champion.submission_id} · ${team} · ${num(data.champion.prof_sum_us)} µs` }));
  }
  return h("div", {}, parts);
}
