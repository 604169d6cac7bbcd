// The A2A collaboration graph: teams as nodes (running ones pulse), messages, shared
// candidates, feedback and adoptions (a team fetched another's candidate) as directed edges
// with an arrowhead, a count and a moving dot. Drawn as inline SVG sized to its panel; the
// motion switch pauses every animation in place without changing what is shown.
import { h, num, s } from "../dom.js";
import { t, word } from "../i18n.js";
import { motionOn } from "../motion.js";
import { party } from "../state.js";
import { messageSummary } from "./eventview.js";

const MAX_EDGES = 400;
const MAX_DOTS = 60;
const MIN_W = 320;
const MIN_H = 260;
export const EDGE_COLORS = {
  message: "#7aa2f7", candidate: "#e0af68", experience: "#9ece6a", feedback: "#f7768e", adoption: "#2ac3de",
};
const EDGE_TYPES = Object.keys(EDGE_COLORS);

/** Node centres filling a W x H box: an ellipse for up to 40 teams, a grid beyond. */
function layout(nodes, W, H) {
  const pos = new Map();
  const teams = nodes.filter((n) => n.id !== "judger" && n.id !== "lab");
  const specials = nodes.filter((n) => n.id === "judger" || n.id === "lab");
  const cx = W / 2;
  const cy = H / 2;
  if (teams.length <= 40) {
    const rx = W / 2 - 48; // half a label beside the node
    const ry = H / 2 - 42;
    teams.forEach((n, i) => {
      const a = (2 * Math.PI * i) / Math.max(teams.length, 1) - Math.PI / 2;
      pos.set(n.id, [cx + rx * Math.cos(a), cy + ry * Math.sin(a)]);
    });
  } else {
    const cols = Math.ceil(Math.sqrt(teams.length * (W / H)));
    const rows = Math.ceil(teams.length / cols);
    teams.forEach((n, i) => {
      pos.set(n.id, [30 + ((i % cols) + 0.5) * ((W - 60) / cols), 30 + (Math.floor(i / cols) + 0.5) * ((H - 60) / rows)]);
    });
  }
  specials.forEach((n, i) => pos.set(n.id, [cx + (i ? 70 : 0), cy]));
  return pos;
}

/** A node's label: the lab's own nodes (the Judger, the lab) in the page's words. */
function nodeLabel(node) {
  if (node.id === "judger") return t("judger_node");
  if (node.id === "lab") return t("lab_node");
  return node.label;
}

function signature(graph, W, H) {
  return JSON.stringify([W, H, graph.nodes.map((n) => [n.id, n.status, n.running]), graph.edges.map((e) => [e.source, e.target, e.type, e.count])]);
}

/** One marker (arrowhead) per edge type, coloured as its edges. */
function markers() {
  return s("defs", {}, EDGE_TYPES.map((type) => s("marker", {
    id: `jk-arrow-${type}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
    markerUnits: "userSpaceOnUse", orient: "auto", class: "arrow",
  }, s("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: EDGE_COLORS[type] }))));
}

/**
 * An edge from a to b as a quadratic curve bent by `bend` (so a→b and b→a, or two kinds
 * between one pair, do not overlap), trimmed to the node circles so the arrowhead shows.
 */
function geometry(a, b, bend, trim) {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len = Math.hypot(dx, dy) || 1;
  const [ux, uy] = [dx / len, dy / len];
  const [nx, ny] = [-uy, ux];
  const c = [(a[0] + b[0]) / 2 + nx * bend, (a[1] + b[1]) / 2 + ny * bend];
  const cut = Math.min(trim, len / 3);
  const start = [a[0] + ux * cut, a[1] + uy * cut];
  const end = [b[0] - ux * (cut + 2), b[1] - uy * (cut + 2)];
  const mid = [0.25 * start[0] + 0.5 * c[0] + 0.25 * end[0], 0.25 * start[1] + 0.5 * c[1] + 0.25 * end[1]];
  return { start, c, end, mid };
}

const f = (v) => v.toFixed(1);

function legend(edges) {
  const shown = EDGE_TYPES.filter((type) => edges.some((e) => e.type === type));
  const types = shown.length ? shown : EDGE_TYPES;
  return h("div", { class: "graph-legend small" },
    types.map((type) => h("span", { class: "legend-item", dataset: { type } },
      h("span", { class: `swatch edge-swatch edge-swatch-${type}` }), // colours: css/charts.css (no inline style under the CSP)
      t(`edge_${type}`))),
    h("span", { class: "legend-item muted", text: t("graph_reading") }));
}

export class Graph {
  constructor(root) {
    this.root = root;
    this.sig = null;
    this.last = null;
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(() => {
        if (this.last) this.render(this.last);
      }).observe(root);
    }
  }

  /** The drawing box: the panel's free space, so the graph uses all of it. */
  size() {
    const w = Math.floor(this.root.clientWidth);
    const hgt = Math.floor(this.root.clientHeight - 34); // the legend's line
    return [Math.max(MIN_W, w || 560), Math.max(MIN_H, hgt > 0 ? hgt : 420)];
  }

  render(graph) {
    this.last = graph;
    const [W, H] = this.size();
    const sig = signature(graph, W, H);
    if (sig === this.sig) return;
    this.sig = sig;
    const pos = layout(graph.nodes, W, H);
    const small = graph.nodes.length > 40;
    const radius = small ? 7 : 16;
    const edges = [...graph.edges].sort((a, b) => (b.last_seq || 0) - (a.last_seq || 0)).slice(0, MAX_EDGES);
    const svg = s("svg", {
      viewBox: `0 0 ${W} ${H}`, class: "graph-svg", role: "img", "aria-label": t("graph_title"),
      preserveAspectRatio: "xMidYMid meet",
    });
    svg.append(markers());
    const edgeLayer = s("g", { class: "edges" });
    const countLayer = s("g", { class: "edge-counts" });
    const pairs = new Map(); // edges drawn so far between one unordered pair
    edges.forEach((edge, i) => {
      const a = pos.get(edge.source);
      const b = pos.get(edge.target);
      if (!a || !b || edge.source === edge.target) return;
      const key = [edge.source, edge.target].sort().join("\u0000");
      const k = pairs.get(key) || 0;
      pairs.set(key, k + 1);
      // the same bend for a→b and b→a mirrors them apart, since their normals point opposite ways
      const bend = (small ? 8 : 18) * (1 + k);
      const type = EDGE_COLORS[edge.type] ? edge.type : "message";
      const color = EDGE_COLORS[type];
      const g = geometry(a, b, bend, radius + 3);
      const d = `M ${f(g.start[0])} ${f(g.start[1])} Q ${f(g.c[0])} ${f(g.c[1])} ${f(g.end[0])} ${f(g.end[1])}`;
      const count = edge.count || 1;
      edgeLayer.append(
        s("path", {
          d,
          class: `edge edge-${type}`,
          stroke: color,
          "stroke-width": Math.min(1 + Math.log2(count), 5).toFixed(1),
          "marker-end": `url(#jk-arrow-${type})`,
          dataset: { source: edge.source, target: edge.target, type, count },
        }, s("title", { text: `${party(edge.source)} → ${party(edge.target)} · ${t(`edge_${type}`)} ×${count}\n${messageSummary(edge)}` })),
      );
      if (!small) {
        countLayer.append(s("text", {
          x: f(g.mid[0]), y: f(g.mid[1] + 4), "text-anchor": "middle", class: "edge-count",
          fill: color, dataset: { source: edge.source, target: edge.target, type }, text: String(count),
        }));
      }
      if (i < MAX_DOTS) {
        // the dot sits on its edge's start and moves relative to it: an animation not yet
        // sampled (motion off from the first paint) leaves it on the edge, not at 0,0
        const rel = `M 0 0 Q ${f(g.c[0] - g.start[0])} ${f(g.c[1] - g.start[1])} ${f(g.end[0] - g.start[0])} ${f(g.end[1] - g.start[1])}`;
        edgeLayer.append(
          s("circle", { cx: f(g.start[0]), cy: f(g.start[1]), r: 3.5, fill: color, class: "dot" },
            s("animateMotion", { dur: `${2 + (i % 5) * 0.4}s`, repeatCount: "indefinite", path: rel })),
        );
      }
    });
    const nodeLayer = s("g", { class: "nodes" });
    const labelLayer = s("g", { class: "node-labels" });
    for (const node of graph.nodes) {
      const [x, y] = pos.get(node.id);
      const cls = `node status-${node.status}${node.running ? " running" : ""}${node.offline ? " offline" : ""}`;
      nodeLayer.append(
        s("g", { class: cls, transform: `translate(${f(x)} ${f(y)})`, dataset: { team: node.id } },
          node.running ? s("circle", { r: radius + 6, class: "halo" }) : null,
          s("circle", { r: radius, class: "body" }),
          s("title", { text: `${nodeLabel(node)} · ${word(node.status)} · ${t("best_cycles")} ${num(node.best_cycles)}` })),
      );
      // labels go above every edge and count, on a halo of the panel's colour (css/charts.css),
      // so crossing edges never hide a team's name
      if (!small) {
        labelLayer.append(s("text", {
          x: f(x), y: f(y + radius + 14), "text-anchor": "middle", class: "label node-label",
          dataset: { team: node.id }, text: nodeLabel(node),
        }));
      }
    }
    svg.append(edgeLayer, nodeLayer, countLayer, labelLayer);
    const parts = [legend(edges), svg];
    if (!graph.edges.length) parts.push(h("p", { class: "muted small graph-empty", text: t("graph_empty") }));
    this.root.replaceChildren(...parts);
    if (!motionOn()) svg.pauseAnimations();
  }

  invalidate() {
    this.sig = null;
  }
}
