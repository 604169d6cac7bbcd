// Model connections: the stored presets (a key is shown only as "stored"), a form to add one
// (the key field is write-only) and a "test connection" button per preset.
import * as api from "../api.js";
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { confirmButton, field, formStatus, input, problemText, say, select, submit, values } from "./form.js";
import { table } from "../results/tables.js";

async function test(name, out) {
  out.textContent = t("testing");
  out.className = "test-result";
  try {
    const report = await api.send("POST", `/api/config/models/${encodeURIComponent(name)}/test`);
    out.textContent = report.message;
    out.classList.add(report.ok ? "good" : "bad");
  } catch (err) {
    out.textContent = err.errors
      ? Object.entries(err.errors).map(([k, m]) => problemText(m, err.codes?.[k])).join("; ")
      : err.message;
    out.classList.add("bad");
  }
}

/** Where the preset's key comes from (stored, or JUSTKERNEL_PROVIDER_KEYS); never the key. */
function keyCell(m) {
  if (m.provider === "offline") return "—";
  if (!m.has_key) return t("key_missing");
  return `✓ ${t(m.key_source === "environment" ? "key_from_env" : "key_stored")}`;
}

/** A refusal's words: its code translated (cfg_err_<code> in i18n/config.js), else its detail. */
function refusalText(err) {
  const key = `cfg_err_${err.body?.code}`;
  if (err.body?.code && t(key) !== key) return t(key, err.body.params || {});
  return err.message;
}

/** Delete a local preset (and its stored key); a refusal says why in the row. */
function deleteButton(m, out, reload) {
  return confirmButton("delete", async () => {
    out.className = "test-result";
    try {
      await api.send("DELETE", `/api/config/models/${encodeURIComponent(m.name)}`);
      await reload();
    } catch (err) {
      out.textContent = refusalText(err);
      out.classList.add("bad");
    }
  }, { class: "delete" });
}

/** Where a preset is defined, in the page's words (an unknown source shows as itself). */
function sourceWord(source) {
  const key = `source_${source}`;
  const text = t(key);
  return text === key ? String(source ?? "—") : text;
}

function list(models, reload) {
  const rows = models.map((m) => {
    const out = h("span", { class: "test-result" });
    const deletable = m.source === "local" && m.provider !== "offline";
    return h("tr", { dataset: { model: m.name } },
      h("td", { class: "mono", text: m.name }),
      h("td", { text: m.provider }),
      h("td", { class: "mono", text: m.model }),
      h("td", { class: "mono", text: m.base_url || "—" }),
      h("td", { text: keyCell(m) }),
      h("td", { class: "source", dataset: { source: m.source || "" }, text: sourceWord(m.source) }),
      h("td", {}, h("button", { type: "button", class: "test", text: t("test"), onclick: () => test(m.name, out) }),
        deletable ? deleteButton(m, out, reload) : null, out));
  });
  return table([t("f_name"), t("f_provider"), t("f_model"), t("f_base_url"), t("f_api_key"), t("source"), ""], rows, "models");
}

function form(data, reload) {
  const f = h("form", { class: "form grid-form", novalidate: true, id: "model-form" });
  const efforts = [["", t("unset")], ...data.efforts.map((e) => [e, e])];
  f.append(
    h("h3", { text: t("model_form_title") }),
    field("name", "f_name", input("text", { placeholder: "my-model" })),
    field("provider", "f_provider", select(data.providers.map((p) => [p, p]), "openai_compatible")),
    field("model", "f_model", input("text", { placeholder: "qwen3.8-flash" })),
    field("base_url", "f_base_url", input("url", { placeholder: "https://…/v1" })),
    field("api_key", "f_api_key", input("password", { autocomplete: "new-password" }), "f_api_key_hint"),
    field("reasoning_effort", "f_reasoning_effort", select(efforts, "")),
    field("max_output_tokens", "f_max_output_tokens", input("number", { min: 1 })),
    field("context_window", "f_context_window", input("number", { min: 1 }), "f_context_window_hint"),
    field("display_name", "f_display_name", input("text")),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", text: t("save") })),
    formStatus(),
  );
  f.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = values(f);
    const saved = await submit(f, () => api.send("POST", "/api/config/models", body), reload);
    if (saved) {
      f.querySelector("[name=api_key]").value = "";
      say(f, `${t("saved")} ${saved.model.name}`);
    }
  });
  return f;
}

export async function renderModels(root) {
  const reload = async () => {
    const fresh = await api.get("/api/config/models");
    root.querySelector(".models-list").replaceChildren(list(fresh.models, reload));
  };
  const data = await api.get("/api/config/models");
  root.replaceChildren(h("div", { class: "models-list scroll-x" }, list(data.models, reload)), form(data, reload));
}
