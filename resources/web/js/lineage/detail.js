// One candidate's panel in the lineage tab: its receipt, diff against its parent, official
// points and the messages that carried it. Everything goes in as text (dom.js), so a hostile
// source or message shows as what it is.
import { h, num, short, clock } from "../dom.js";
import { t, word } from "../i18n.js";
import { messageSummary } from "../live/eventview.js";
import { party } from "../state.js";

function field(label, value) {
  return h("div", { class: "lin-field" }, h("span", { class: "muted", text: label }), " ", value);
}

function statusText(code) {
  return code ? t(`status_${code}`) : "—";
}

function diffView(diff) {
  if (diff.error) return h("p", { class: "muted lin-diff-error", text: `${t("lin_diff_unavailable")}: ${diff.error}` });
  if (!diff.text) return h("p", { class: "muted", text: t("lin_diff_same") });
  const lines = diff.text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const rows = lines.map((line) => {
    let cls = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    return h("span", { class: `lin-line ${cls}`, text: line });
  });
  return h(
    "div",
    {},
    h("pre", { class: "lin-diff", "aria-label": t("lin_diff") }, rows),
    diff.clipped ? h("p", { class: "muted", text: t("lin_diff_clipped") }) : null,
  );
}

function receiptView(receipt, pipelineUrl) {
  if (!receipt) return h("p", { class: "muted", text: t("lin_no_receipt") });
  return h(
    "div",
    { class: "lin-receipt" },
    field(t("lin_receipt_id"), h("span", { class: "mono", text: short(receipt.receipt_id, 16) })),
    field(t("lin_receipt_status"), receipt.status ?? "—"),
    field(t("lin_cases"), `${num(receipt.cases_passed)} / ${num(receipt.cases_run)}`),
    field(t("lin_cycles"), num(receipt.total_est_cycles)),
    field(t("lin_when"), clock(receipt.ts)),
    pipelineUrl
      ? field(t("lin_pipeline"), h("a", { href: pipelineUrl, target: "_blank", rel: "noopener", text: t("lin_pipeline_open") }))
      : field(t("lin_pipeline"), h("span", { class: "muted", text: t("lin_pipeline_none") })),
  );
}

function officialView(official) {
  if (!official.summary) return h("p", { class: "muted", text: t("lin_no_official") });
  const last = official.results[official.results.length - 1];
  const points = (last?.points || []).map((p) =>
    h(
      "tr",
      { class: p.passed === true ? "pass" : p.passed === false ? "fail" : "" },
      h("td", { class: "mono", text: p.id ?? "—" }),
      h("td", { text: p.passed === true ? t("lin_pass") : p.passed === false ? t("lin_fail") : "—" }),
      h("td", { text: num(p.time_us) }),
      h("td", { text: p.outcome ?? "—" }),
    ),
  );
  return h(
    "div",
    {},
    field(t("lin_official_status"), statusText(official.summary.status)),
    field(t("lin_points_passed"), `${num(official.summary.passed)} / ${num(official.summary.points)}`),
    field(t("lin_prof_sum"), num(official.summary.prof_sum_us)),
    points.length
      ? h(
          "table",
          { class: "lin-points" },
          h("thead", {}, h("tr", {}, ...["lin_point", "lin_result", "lin_time_us", "lin_outcome"].map((k) => h("th", { text: t(k) })))),
          h("tbody", {}, points),
        )
      : null,
  );
}

function messagesView(messages) {
  if (!messages.length) return h("p", { class: "muted", text: t("lin_no_messages") });
  return h(
    "ul",
    { class: "lin-messages" },
    messages.map((m) =>
      h(
        "li",
        {},
        h("span", { class: "muted", text: `${clock(m.ts)} ${party(m.sender)} → ${party(m.to)} (${m.type ? word(m.type) : "?"})` }),
        " ",
        h("span", { class: "lin-message-summary", text: messageSummary(m) }),
      ),
    ),
  );
}

/** The panel for one /lineage/{id} answer; `onSelect(id)` follows parent/child links. */
export function renderDetail(detail, teamName, onSelect) {
  const link = (id) => h("a", { href: "#", class: "mono lin-jump", text: id, onclick: (e) => { e.preventDefault(); onSelect(id); } });
  const kind = detail.parent_kind ? t(`lin_kind_${detail.parent_kind}`) : "";
  return h(
    "div",
    { class: "lin-detail-body", dataset: { candidate: detail.candidate_id } },
    h("h3", { class: "mono", text: detail.candidate_id }),
    field(t("lin_team"), teamName(detail.team)),
    field(t("lin_status"), statusText(detail.status)),
    field(t("lin_parent"), detail.parent ? h("span", {}, link(detail.parent), ` (${kind})`) : h("span", { class: "muted", text: t("lin_root") })),
    detail.children.length ? field(t("lin_children"), h("span", {}, detail.children.slice(0, 20).flatMap((c) => [link(c), " "]))) : null,
    h("h4", { text: t("lin_receipt") }),
    receiptView(detail.receipt, detail.pipeline_url),
    h("h4", { text: t("lin_official") }),
    officialView(detail.official),
    h("h4", { text: t("lin_messages") }),
    messagesView(detail.messages),
    h("h4", { text: detail.parent ? t("lin_diff_parent", { id: detail.parent }) : t("lin_diff_root") }),
    diffView(detail.diff),
  );
}
