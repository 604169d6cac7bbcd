// The approval settings of a run: each live team's mode (read-only / ask / auto) and the grants
// a person remembered ("approve and remember for this team"), each with Revoke.
import { clock, h } from "../dom.js";
import { t } from "../i18n.js";
import { MODES, modeWord, refusal } from "./words.js";

function modeRow(team, mode, setMode) {
  const status = h("span", { class: "mode-status small", role: "status" });
  const choice = h("select", {
    class: "mode",
    "aria-label": `${t("ap_mode")} · ${team.name}`,
    onchange: async () => {
      choice.disabled = true;
      status.className = "mode-status small";
      status.textContent = t("ap_sending");
      try {
        const saved = await setMode(team.id, choice.value);
        status.textContent = t("ap_mode_saved", { team: team.name, mode: modeWord(saved) });
      } catch (err) {
        choice.value = mode;
        status.className = "mode-status small bad";
        status.textContent = refusal(err);
      } finally {
        choice.disabled = false;
      }
    },
  }, MODES.map((m) => h("option", { value: m, title: t(`ap_mode_help_${m}`), text: modeWord(m), selected: m === mode })));
  return h("tr", { dataset: { team: team.id } },
    h("td", { text: team.name }),
    h("td", {}, choice, " ", status));
}

function grantRow(grant, teamName, revoke) {
  const status = h("span", { class: "grant-status small bad", role: "status" });
  const button = h("button", {
    type: "button",
    class: "revoke",
    text: t("ap_revoke"),
    onclick: async () => {
      button.disabled = true;
      try {
        await revoke(grant.id);
      } catch (err) {
        status.textContent = refusal(err);
        button.disabled = false;
      }
    },
  });
  const scope = grant.kind ? `${grant.tool} · ${grant.kind}` : grant.tool;
  return h("li", { dataset: { grant: grant.id, team: grant.team_id, tool: grant.tool } },
    h("span", { class: "mono", text: scope }), " ",
    h("span", { class: "chip team", text: teamName }), " ",
    h("span", { class: "muted small", text: t("ap_granted", { at: clock(grant.created_at), by: grant.created_by ?? "—" }) }), " ",
    button, " ", status);
}

/** The settings box: `teams` [{id, name}], `modes` {team: mode}, `grants` [...]. */
export function settingsBox({ teams, modes, grants, names, open, note, setMode, revoke, onToggle }) {
  const box = h("details", { class: "approval-settings", open: Boolean(open), ontoggle: (e) => onToggle(e.target.open) },
    h("summary", { text: t("ap_settings_summary", { grants: grants.length }) }));
  if (teams.length) {
    box.append(h("table", { class: "modes" },
      h("caption", { class: "muted small", text: t("ap_mode_title") }),
      h("tbody", {}, teams.map((team) => modeRow(team, modes[team.id] || "auto", setMode)))));
  }
  box.append(h("h3", { text: t("ap_grants") }));
  box.append(grants.length
    ? h("ul", { class: "grants" }, grants.map((g) => grantRow(g, names[g.team_id] || g.team_id, revoke)))
    : h("p", { class: "muted small no-grants", text: t("ap_no_grants") }));
  if (note) box.append(h("p", { class: "settings-status small", role: "status", text: note }));
  return box;
}
