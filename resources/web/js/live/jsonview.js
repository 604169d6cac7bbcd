// Data shown as data: JSON (or a Python literal) pretty-printed with every object and array
// foldable; anything else as plain text. Built from text nodes only, so a tool's return can
// never become markup.
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { parsePython } from "./pyrepr.js";

const FOLD_ENTRIES = 12; // nested containers larger than this start folded

/** The structured value of `text` (JSON, else a Python dict/list literal), or undefined. */
export function readData(text) {
  if (typeof text !== "string") return text ?? undefined;
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    const value = parsePython(trimmed);
    return value !== null && typeof value === "object" ? value : undefined;
  }
}

function scalar(value) {
  if (value === null) return h("span", { class: "j-null", text: "null" });
  if (typeof value === "string") return h("span", { class: "j-str", text: JSON.stringify(value).replace(/\\n/g, "\n") });
  if (typeof value === "number") return h("span", { class: "j-num", text: String(value) });
  return h("span", { class: "j-bool", text: String(value) });
}

function node(value, depth) {
  if (value === null || typeof value !== "object") return scalar(value);
  const array = Array.isArray(value);
  const entries = array ? value.map((v, i) => [i, v]) : Object.entries(value);
  const [open, close] = array ? ["[", "]"] : ["{", "}"];
  if (!entries.length) return h("span", { text: open + close });
  const folded = depth > 0 && entries.length > FOLD_ENTRIES;
  const pad = "  ".repeat(depth + 1);
  const inner = h(
    "span",
    { class: "j-inner" },
    entries.map(([key, v], i) => [
      `\n${pad}`,
      array ? null : [h("span", { class: "j-key", text: JSON.stringify(String(key)) }), ": "],
      node(v, depth + 1),
      i < entries.length - 1 ? "," : "",
    ]),
    `\n${"  ".repeat(depth)}`,
  );
  const more = h("span", { class: "j-more", text: ` ${t("st_json_items", { n: entries.length })} ` });
  const box = h("span", { class: `j-box${folded ? " folded" : ""}` });
  const toggle = h("button", {
    type: "button",
    class: "j-toggle",
    "aria-expanded": String(!folded),
    title: t("st_json_fold"),
    text: open,
    onclick: (e) => {
      e.preventDefault();
      const nowFolded = box.classList.toggle("folded");
      toggle.setAttribute("aria-expanded", String(!nowFolded));
    },
  });
  box.append(toggle, more, inner, close);
  return box;
}

/** `text` as foldable data in a `tag` element (class "json"), or as plain text. */
export function dataView(text, tag = "div") {
  const value = readData(text);
  if (value === undefined || value === null || typeof value !== "object") {
    return h(tag, { class: "plain", text: String(text ?? "") });
  }
  return h(tag, { class: "json" }, node(value, 0));
}
