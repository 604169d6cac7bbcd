// Form building blocks with a message slot under every field: the server refuses invalid
// input field by field (400 {"errors": {"field": "English"}, "codes": {"field": {code, ...}}})
// and each refusal lands here, translated from its code (words in i18n/errors.js).
import { h } from "../dom.js";
import { getLang, t } from "../i18n.js";

function param(value) {
  if (Array.isArray(value)) return value.join(getLang() === "zh" ? "、" : ", ");
  if (typeof value === "number") return value.toLocaleString(getLang() === "zh" ? "zh-CN" : "en-US");
  return String(value ?? "");
}

/** One field's refusal in the page's language: its code's sentence with the parameters
 * filled in; the server's English only for a code this page does not know. */
export function problemText(message, coded) {
  const key = coded?.code ? `err_${coded.code}` : null;
  if (!key || t(key) === key || (coded.code === "invalid" && getLang() === "en" && message)) return message || t("err_invalid");
  const vars = Object.fromEntries(Object.entries(coded).map(([k, v]) => [k, param(v)]));
  return t(key, vars);
}

export function field(name, labelKey, input, hintKey = null) {
  input.name = name;
  input.id = input.id || `f-${name}-${Math.random().toString(36).slice(2, 7)}`;
  return h(
    "div",
    { class: "field", dataset: { field: name } },
    h("label", { for: input.id, text: t(labelKey) }),
    input,
    hintKey ? h("small", { class: "hint", text: t(hintKey) }) : null,
    h("small", { class: "error", dataset: { errorFor: name }, role: "alert" }),
  );
}

export function input(type = "text", props = {}) {
  return h("input", { type, autocomplete: "off", spellcheck: "false", ...props });
}

export function select(options, value = "", props = {}) {
  return h(
    "select",
    props,
    options.map(([val, label]) => h("option", { value: val, text: label, selected: val === value })),
  );
}

export function showErrors(form, errors, codes = null) {
  form.querySelectorAll(".error").forEach((el) => { el.textContent = ""; });
  form.querySelectorAll(".invalid").forEach((el) => el.classList.remove("invalid"));
  const general = [];
  for (const name of new Set([...Object.keys(errors || {}), ...Object.keys(codes || {})])) {
    const message = problemText(errors?.[name], codes?.[name]);
    const slot = form.querySelector(`.error[data-error-for="${CSS.escape(name)}"]`);
    if (slot) {
      slot.textContent = message;
      slot.closest(".field")?.classList.add("invalid");
    } else {
      general.push(`${name}: ${message}`);
    }
  }
  const status = form.querySelector(".form-status");
  if (status) {
    status.textContent = general.join(" · ");
    status.classList.toggle("bad", general.length > 0);
  }
}

export function formStatus() {
  return h("p", { class: "form-status", role: "status" });
}

export function say(form, text, good = true) {
  const status = form.querySelector(".form-status");
  if (!status) return;
  status.textContent = text;
  status.classList.toggle("bad", !good);
  status.classList.toggle("good", good);
}

/** Named inputs to a plain object: checkboxes as booleans, numbers as numbers, "" as unset. */
export function values(form) {
  const out = {};
  form.querySelectorAll("[name]").forEach((el) => {
    if (el.closest("[data-skip]")) return;
    if (el.type === "checkbox") out[el.name] = el.checked;
    else if (el.type === "number") out[el.name] = el.value === "" ? null : Number(el.value);
    else out[el.name] = el.value;
  });
  return out;
}

/** Submit through `action`; field errors are shown, other failures said once. */
export async function submit(form, action, done) {
  showErrors(form, {});
  try {
    const result = await action();
    say(form, t("saved"));
    if (done) await done(result);
    return result;
  } catch (err) {
    if (err.errors) showErrors(form, err.errors, err.codes);
    else say(form, err.message, false);
    return null;
  }
}

const ARMED_MS = 4000; // how long a destructive button waits for its second click

/** A button for a destructive action that needs a second click: the first one arms it (its
 * text asks to click again), the second within ARMED_MS acts; otherwise it disarms. No
 * window.confirm: a modal blocks the page's live updates and is easy to click through. */
export function confirmButton(labelKey, action, props = {}) {
  let timer = null;
  const button = h("button", { type: "button", text: t(labelKey), ...props });
  const disarm = () => {
    clearTimeout(timer);
    delete button.dataset.armed;
    button.textContent = t(labelKey);
  };
  button.addEventListener("click", async () => {
    if (button.dataset.armed !== "true") {
      button.dataset.armed = "true";
      button.textContent = t("confirm_click_again");
      timer = setTimeout(disarm, ARMED_MS);
      return;
    }
    disarm();
    await action();
  });
  return button;
}
