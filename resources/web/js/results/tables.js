// Result tables: the Judger's candidates down to each official test point, the leaderboard
// and token usage. A figure the events do not hold shows as "—", never as 0.
import * as api from "../api.js";
import { h, num, short } from "../dom.js";
import { t } from "../i18n.js";
import { pipelineButton } from "../live/pipeline.js";

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

function pointResult(point) {
  if (point.passed == null) return cell(null);
  return cell(point.passed ? t("pass") : t("fail"), point.passed ? "good" : "bad");
}

export function judgerTable(data, { runId, canDecide, onDone }) {
  if (!data.candidates.length) return h("p", { class: "muted", text: t("judger_empty") });
  const rows = [];
  for (const cand of data.candidates) {
    const review = cand.reviews.at(-1);
    const approval = cand.approvals.at(-1);
    const awaiting = cand.nomination?.awaiting_approval && !(approval && approval.seq > cand.nomination.seq);
    const approvalCell = () => (awaiting && canDecide
      ? h("td", {}, decisionButtons(runId, cand, onDone))
      : cell(approval ? `${approval.decision} (${approval.by})` : awaiting ? t("awaiting_title") : null));
    const results = cand.results.length ? cand.results : [null];
    for (const result of results) {
      const points = result?.points?.length ? result.points : [null];
      const submission = result
        ? result.submission_id
        : cand.submissions.at(-1)?.submission_id;
      for (const point of points) {
        rows.push(h("tr", { dataset: { candidate: cand.candidate_id, status: cand.status } },
          cell(cand.candidate_id, "mono"),
          cell(data.team_names?.[cand.team] || cand.team),
          cell(cand.status, `status ${cand.status}`),
          cell(review ? `${review.verdict} · ${review.reviewer ?? ""}` : null),
          approvalCell(),
          cell(submission, "mono"),
          shaCell(result?.source_sha256 || cand.frozen?.source_sha256),
          cell(point?.id),
          point ? pointResult(point) : cell(null),
          cell(point ? (point.error_ratio != null ? num(point.error_ratio) : point.error_bucket ?? null) : null),
          cell(point ? num(point.time_us) : null),
          cell(point ? num(point.best_time_us) : null)));
      }
    }
  }
  const header = ["col_candidate", "col_team", "col_status", "col_review", "col_approval", "col_submission",
    "col_sha", "col_point", "col_result", "col_error_ratio", "col_time", "col_best_time"].map((k) => t(k));
  const parts = [table(header, rows, "judger")];
  if (data.champion) {
    parts.unshift(h("p", { class: "champion", text: `${t("champion")}: ${data.champion.submission_id} · ${data.champion.team} · ${num(data.champion.prof_sum_us)} µs` }));
  }
  return h("div", {}, parts);
}

function gain(row) {
  if (row.best_cycles == null || !row.baseline_cycles) return null;
  return `${((1 - row.best_cycles / row.baseline_cycles) * 100).toFixed(1)} %`;
}

export function leaderboard(rows, runId = null) {
  const sorted = [...rows].sort((a, b) => (a.best_official_us ?? Infinity) - (b.best_official_us ?? Infinity)
    || (a.best_cycles ?? Infinity) - (b.best_cycles ?? Infinity));
  const header = ["col_team", "col_best_official", "col_coverage", "col_best_local", "col_gain", "col_receipt"].map((k) => t(k));
  return table(header, sorted.map((row) => {
    const cov = row.latest_official;
    return h("tr", { dataset: { team: row.id } },
      h("td", {}, row.display_name, row.offline ? h("span", { class: "chip offline", text: t("offline") }) : null),
      cell(num(row.best_official_us)),
      cell(cov ? `${cov.passed}/${cov.total} (${cov.status})` : null),
      cell(num(row.best_cycles)),
      cell(gain(row)),
      h("td", { class: "mono", title: row.best?.receipt_id || "" },
        row.best?.receipt_id ? short(row.best.receipt_id, 16) : "—",
        pipelineButton(() => runId, row.best?.blob, row.best?.mode, row.best?.executor?.toolchain_id)));
  }), "leaderboard");
}

function usageRow(name, u) {
  return h("tr", {},
    cell(name),
    cell(num(u.calls)),
    cell(num(u.input_tokens)),
    cell(num(u.output_tokens)),
    cell(num(u.reasoning_tokens)),
    cell(num(u.cached_input_tokens)),
    cell(`${num(u.total)}${u.estimated ? ` (${t("tokens_est")})` : ""}`),
    cell(u.cost_usd == null ? null : u.cost_usd.toFixed(4)));
}

export function usageTables(usage) {
  const cols = ["col_calls", "col_input", "col_output", "col_reasoning", "col_cached", "col_total", "col_cost"].map((k) => t(k));
  const teams = usage.teams.map((u) => usageRow(u.label, u));
  if (usage.judger) teams.push(usageRow(t("judger_reviewer"), usage.judger));
  const box = h("div", {},
    table([t("col_provider"), ...cols], usage.providers.map((u) => usageRow(u.provider, u))),
    table([t("col_team"), ...cols], teams));
  const members = usage.members || [];
  if (members.length) {
    box.append(table([t("col_member"), ...cols], members.map((u) => usageRow(`${u.label} · ${u.member}`, u))));
  }
  return box;
}
