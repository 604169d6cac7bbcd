// One approval card: a team's tool call that waits for a person. The tool's arguments come from
// the model (hostile text): they are shown only through dataView (text nodes, never markup).
import { clock, h } from "../dom.js";
import { t } from "../i18n.js";
import { dataView } from "../live/jsonview.js";
import { refusal } from "./words.js";

const DECISIONS = [
  ["approve", "ap_approve", "approve primary"],
  ["reject", "ap_reject", "reject"],
  ["remember", "ap_remember", "remember"],
];

/** The card of `item` ({id, team_id, tool, kind, args, created_at}, the desk's request); `decide(id, decision, reason)`
 * sends the decision and resolves once the server took it. */
export function approvalCard(item, teamName, decide) {
  const reason = h("input", { type: "text", class: "reason", maxlength: "500", placeholder: t("ap_reason"), "aria-label": t("ap_reason") });
  const status = h("p", { class: "card-status small", role: "status" });
  const buttons = DECISIONS.map(([decision, label, cls]) => h("button", {
    type: "button",
    class: cls,
    dataset: { decision },
    text: t(label),
    onclick: async () => {
      for (const b of buttons) b.disabled = true;
      status.className = "card-status small";
      status.textContent = t("ap_sending");
      try {
        await decide(item.id, decision, reason.value.trim());
      } catch (err) {
        status.className = "card-status small bad";
        status.textContent = refusal(err);
        for (const b of buttons) b.disabled = false;
      }
    },
  }));
  const args = h("details", { class: "args", open: true },
    h("summary", { text: t("ap_args") }),
    dataView(item.args ?? {}, "pre"));
  return h("article", { class: "approval-card", dataset: { approval: item.id, team: item.team_id, tool: item.tool } },
    h("header", {},
      h("span", { class: "tool mono", title: t("ap_tool"), text: item.tool }),
      item.kind ? h("span", { class: "chip kind mono", text: item.kind }) : null, // e.g. a full simulation
      h("span", { class: "chip team", title: t("ap_team"), text: teamName }),
      h("time", { class: "asked muted small", title: t("ap_asked"), datetime: item.created_at || "", text: clock(item.created_at) })),
    args,
    h("div", { class: "decide" }, reason, ...buttons),
    status);
}
