// The candidate lineage tab: every candidate of the run as a tree, parent = the source it was
// derived from (the team's previous candidate, or a public one it fetched and adopted).
// Generations go down, freezing order goes right; only the nodes in view are drawn, so a run
// with thousands of candidates scrolls smoothly. Click a node for its panel (detail.js).
import * as api from "../api.js";
import { $, h, s, num } from "../dom.js";
import { t } from "../i18n.js";
import { state } from "../state.js";
import { renderDetail } from "./detail.js";
import { buildTree, compact, place, size, teamColour, visible } from "./layout.js";

const MARGIN = 300; // px drawn beyond each side of the view
const ZOOMS = [0.35, 0.6, 1, 1.6, 2.6];

/** The `lineage` and `run` of a `#run=…&lineage=…` link (null without a lineage part). */
function hashTarget() {
  const params = new URLSearchParams(location.hash.slice(1));
  const id = params.get("lineage");
  return id ? { run: params.get("run"), id } : null;
}

/** Open the tab through its button, once the page has booted (app.js owns the tabs). */
function openTab() {
  const click = () => $('[data-tab="lineage"]')?.click();
  if (document.body?.dataset.ready === "true") {
    click();
    return;
  }
  const watch = new MutationObserver(() => {
    if (document.body.dataset.ready !== "true") return;
    watch.disconnect();
    click();
  });
  watch.observe(document.body, { attributes: true, attributeFilter: ["data-ready"] });
}

function statusClass(node) {
  if (node.status === "official_pass") return "st-pass";
  if (node.status === "official_fail") return "st-fail";
  if (node.status === "submitted") return "st-submitted";
  if (node.status === "rejected") return "st-rejected";
  return node.localPassed === false ? "st-unverified" : "st-measured";
}

export class LineageView {
  constructor() {
    this.tree = null;
    this.data = null;
    this.zoomIndex = 2;
    this.selected = null;
    this.wanted = null; // a deep link's {run, id}, selected once that run's tree is there
    this.frame = 0;
    // the deep link: read before app.js rewrites the hash to the run alone
    this.followLink();
    window.addEventListener("hashchange", () => this.followLink());
  }

  followLink() {
    const target = hashTarget();
    if (!target || (target.run === state.run?.id && target.id === this.selected)) return;
    this.wanted = target;
    openTab();
  }

  get zoom() {
    return ZOOMS[this.zoomIndex];
  }

  teamName(team) {
    return this.data?.team_names?.[team] || team || "—";
  }

  async load() {
    const root = $("#lineage");
    if (!state.run) {
      root.replaceChildren(h("p", { class: "muted", text: t("lin_no_run") }));
      return;
    }
    const runId = state.run.id;
    let data;
    try {
      data = await api.get(api.runUrl(runId, "/lineage", { at: state.at }));
    } catch (err) {
      root.replaceChildren(h("p", { class: "bad", text: err.message }));
      return;
    }
    if (state.run?.id !== runId) return;
    if (this.runId !== runId) this.selected = null;
    this.runId = runId;
    this.data = data;
    this.tree = buildTree(data);
    this.render(root);
    let pick = this.selected && this.tree.byId.has(this.selected) ? this.selected : null;
    if (this.wanted && (!this.wanted.run || this.wanted.run === runId)) {
      if (this.tree.byId.has(this.wanted.id)) pick = this.wanted.id;
      this.wanted = null;
    }
    if (pick) await this.select(pick, true);
  }

  render(root) {
    const tree = this.tree;
    if (!tree.nodes.length) {
      root.replaceChildren(h("p", { class: "muted", id: "lineage-empty", text: t("lin_empty") }));
      return;
    }
    this.scroller = h("div", { class: "lin-scroll", id: "lineage-scroll", onscroll: () => this.schedule() });
    this.svg = s("svg", { class: "lin-svg", id: "lineage-svg", role: "img", "aria-label": t("lineage_title") });
    this.scroller.append(this.svg);
    this.panel = h("aside", { class: "lin-detail", id: "lineage-detail" }, h("p", { class: "muted", text: t("lin_pick") }));
    const dropped = this.data.dropped_parents ? h("span", { class: "chip bad", text: t("lin_dropped", { n: this.data.dropped_parents }) }) : null;
    const bar = h(
      "div",
      { class: "lin-bar" },
      h("span", { text: t("lin_count", { n: num(tree.nodes.length), teams: tree.teams.length, depth: tree.depth + 1 }) }),
      h("button", { type: "button", id: "lineage-zoom-out", text: "−", title: t("lin_zoom_out"), onclick: () => this.setZoom(-1) }),
      h("button", { type: "button", id: "lineage-zoom-in", text: "+", title: t("lin_zoom_in"), onclick: () => this.setZoom(1) }),
      dropped,
      this.legend(),
    );
    root.replaceChildren(bar, h("div", { class: "lin-layout" }, this.scroller, this.panel));
    this.draw();
  }

  legend() {
    const item = (cls, key) => h("span", { class: "lin-legend-item" }, h("span", { class: `lin-dot ${cls}` }), t(key));
    return h(
      "span",
      { class: "lin-legend" },
      item("st-measured", "lin_measured"),
      item("st-unverified", "lin_unverified"),
      item("st-submitted", "status_submitted"),
      item("st-pass", "status_official_pass"),
      item("st-fail", "status_official_fail"),
      item("st-rejected", "status_rejected"),
      h("span", { class: "lin-legend-item" }, h("span", { class: "lin-edge-own" }), t("lin_kind_own")),
      h("span", { class: "lin-legend-item" }, h("span", { class: "lin-edge-adopted" }), t("lin_kind_adopted")),
    );
  }

  setZoom(step) {
    const next = Math.max(0, Math.min(ZOOMS.length - 1, this.zoomIndex + step));
    if (next === this.zoomIndex || !this.scroller) return;
    const centre = (this.scroller.scrollLeft + this.scroller.clientWidth / 2) / this.zoom;
    this.zoomIndex = next;
    this.draw();
    this.scroller.scrollLeft = centre * this.zoom - this.scroller.clientWidth / 2;
    this.draw();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Draw the nodes and edges in view (and MARGIN around it). */
  draw() {
    const tree = this.tree;
    const zoom = this.zoom;
    const { width, height } = size(tree, zoom);
    this.svg.setAttribute("width", String(width));
    this.svg.setAttribute("height", String(height));
    const left = this.scroller.scrollLeft - MARGIN;
    const right = this.scroller.scrollLeft + (this.scroller.clientWidth || 1200) + MARGIN;
    const { nodes, edges } = visible(tree, zoom, left, right);
    const lines = edges.map(([parent, child]) => {
      const a = place(parent, zoom);
      const b = place(child, zoom);
      const mid = (a.y + b.y) / 2;
      return s("path", { class: `lin-edge ${child.kind === "adopted" ? "adopted" : "own"}`, d: `M${a.x},${a.y} C${a.x},${mid} ${b.x},${mid} ${b.x},${b.y}` });
    });
    const labels = zoom >= 1;
    const circles = nodes.map((node) => {
      const { x, y } = place(node, zoom);
      const colour = teamColour(tree.teams.indexOf(node.team));
      const title = `${node.id} · ${this.teamName(node.team)} · ${num(node.cycles)} · ${t(`status_${node.status}`)}`;
      return s(
        "g",
        {
          class: `lin-node ${statusClass(node)}${node.id === this.selected ? " selected" : ""}`,
          transform: `translate(${x},${y})`,
          dataset: { id: node.id, team: node.team || "" },
          tabindex: "0",
          onclick: () => this.select(node.id),
          onkeydown: (e) => { if (e.key === "Enter") this.select(node.id); },
        },
        s("title", { text: title }),
        s("circle", { r: 7, fill: colour, class: "lin-body" }),
        s("circle", { r: 10, class: "lin-ring" }),
        labels ? s("text", { y: 22, class: "lin-label", text: compact(node.cycles) }) : null,
      );
    });
    this.svg.replaceChildren(s("g", { class: "lin-edges" }, lines), s("g", { class: "lin-nodes" }, circles));
  }

  async select(id, scroll = false) {
    const tree = this.tree;
    if (!tree?.byId.has(id)) return;
    this.selected = id;
    const runId = state.run.id;
    history.replaceState(null, "", `#run=${encodeURIComponent(runId)}&lineage=${encodeURIComponent(id)}`);
    if (scroll) {
      const { x } = place(tree.byId.get(id), this.zoom);
      this.scroller.scrollLeft = Math.max(0, x - this.scroller.clientWidth / 2);
    }
    this.draw();
    this.panel.replaceChildren(h("p", { class: "muted", text: "…" }));
    try {
      const detail = await api.get(api.runUrl(runId, `/lineage/${encodeURIComponent(id)}`, { at: state.at }));
      if (this.selected !== id) return;
      this.panel.replaceChildren(renderDetail(detail, (team) => this.teamName(team), (next) => this.select(next, true)));
    } catch (err) {
      this.panel.replaceChildren(h("p", { class: "bad", text: err.message }));
    }
  }
}
