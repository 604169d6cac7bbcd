// DOM helpers. Text always goes in as text nodes (never innerHTML), so event data cannot
// become markup or script.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(node, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key === "text") node.textContent = String(value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "value" || key === "checked" || key === "selected" || key === "disabled") node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** h("li", {class: "row", text: "..."}, child, ...) */
export function h(tag, props = {}, ...children) {
  return fill(document.createElement(tag), props, children);
}

/** The same for SVG elements. */
export function s(tag, props = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), props, children);
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function $$(selector, root = document) {
  return [...root.querySelectorAll(selector)];
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

/** A missing figure is shown as missing, never as 0. */
export function num(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return typeof value === "number" ? value.toLocaleString("en-US") : String(value);
}

export function short(sha, n = 12) {
  return sha ? String(sha).slice(0, n) : "—";
}

export function clock(ts) {
  if (!ts) return "—";
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleTimeString("en-GB", { hour12: false });
}

export function clip(text, n) {
  const str = String(text ?? "");
  return str.length > n ? `${str.slice(0, n)}…` : str;
}

/** Calls `fn` once, `ms` after the last of a burst of calls. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** Calls `fn` at most once per `ms`, and once more after the last call of a burst. */
export function throttle(fn, ms) {
  let last = 0;
  let timer = null;
  return (...args) => {
    const wait = last + ms - Date.now();
    clearTimeout(timer);
    if (wait <= 0) {
      last = Date.now();
      fn(...args);
    } else {
      timer = setTimeout(() => {
        last = Date.now();
        fn(...args);
      }, wait);
    }
  };
}
