// The leaderboard and token usage of the results tab. The leaderboard fits its half of the
// page at 1440 px (short receipt ids, names and coverage that wrap) and scrolls inside its
// panel below that; a figure the events do not hold shows as "—", never as 0.
import { h, num, short } from "../dom.js";
import { t, word } from "../i18n.js";
import { pipelineButton } from "../live/pipeline.js";
import { table } from "./tables.js";

function cell(value, cls = "") {
  return h("td", { class: cls, text: value == null || value === "" ? "—" : String(value) });
}

function gain(row) {
  if (row.best_cycles == null || !row.baseline_cycles) return null;
  return `${((1 - row.best_cycles / row.baseline_cycles) * 100).toFixed(1)} %`;
}

function coverageCell(cov) {
  if (!cov) return cell(null);
  // the API names the status by its code (official_pass); the page shows its word in the
  // page's language, as the Judger table does
  return h("td", { class: "wrap" }, `${cov.passed}/${cov.total} (${word(cov.status)})`);
}

export function leaderboard(rows, runId = null) {
  const sorted = [...rows].sort((a, b) => (a.best_official_us ?? Infinity) - (b.best_official_us ?? Infinity)
    || (a.best_cycles ?? Infinity) - (b.best_cycles ?? Infinity));
  const header = ["col_team", "col_best_official", "col_coverage", "col_best_local", "col_gain", "col_receipt"].map((k) => t(k));
  return table(header, sorted.map((row) => h("tr", { dataset: { team: row.id } },
    h("td", { class: "wrap team-name" }, row.display_name, row.offline ? h("span", { class: "chip offline", text: t("offline") }) : null),
    cell(num(row.best_official_us)),
    coverageCell(row.latest_official),
    cell(num(row.best_cycles)),
    cell(gain(row)),
    h("td", { class: "mono receipt", title: row.best?.receipt_id || "" },
      row.best?.receipt_id ? short(row.best.receipt_id, 10) : "—",
      pipelineButton(() => runId, row.best?.blob, row.best?.mode, row.best?.executor?.toolchain_id)))), "leaderboard");
}

function usageRow(name, u) {
  return h("tr", {},
    cell(name, "wrap"),
    cell(num(u.calls)),
    cell(num(u.input_tokens)),
    cell(num(u.output_tokens)),
    cell(num(u.reasoning_tokens)),
    cell(num(u.cached_input_tokens)),
    cell(`${num(u.total)}${u.estimated ? ` (${t("tokens_est")})` : ""}`),
    cell(u.cost_usd == null ? null : u.cost_usd.toFixed(4)));
}

/** Providers, teams (and the Judger's reviewer), members: each table scrolls on its own. */
export function usageTables(usage) {
  const cols = ["col_calls", "col_input", "col_output", "col_reasoning", "col_cached", "col_total", "col_cost"].map((k) => t(k));
  const teams = usage.teams.map((u) => usageRow(u.label, u));
  if (usage.judger) teams.push(usageRow(t("judger_reviewer"), usage.judger));
  const wrap = (tbl) => h("div", { class: "scroll-x" }, tbl);
  const box = h("div", { class: "usage" });
  // a table with no row is no figure: before any model call the panel says so in one line
  if (!usage.providers.length && !teams.length) {
    box.append(h("p", { class: "muted usage-none", text: t("usage_none") }));
    return box;
  }
  if (usage.providers.length) {
    box.append(wrap(table([t("col_provider"), ...cols], usage.providers.map((u) => usageRow(u.provider, u)), "usage providers")));
  }
  if (teams.length) box.append(wrap(table([t("col_team"), ...cols], teams, "usage teams")));
  const members = usage.members || [];
  if (members.length) {
    box.append(wrap(table([t("col_member"), ...cols], members.map((u) => usageRow(`${u.label} · ${u.member}`, u)), "usage")));
  }
  return box;
}
