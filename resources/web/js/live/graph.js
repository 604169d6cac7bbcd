// The A2A collaboration graph: teams as nodes (running ones pulse), messages, shared
// candidates and feedback as edges that carry moving dots. Drawn as inline SVG; the motion
// switch pauses every animation in place without changing what is shown.
import { h, num, s } from "../dom.js";
import { t } from "../i18n.js";
import { motionOn } from "../motion.js";

const W = 560;
const H = 420;
const MAX_EDGES = 400;
const MAX_DOTS = 60;
const EDGE_COLORS = { message: "#7aa2f7", candidate: "#e0af68", experience: "#9ece6a", feedback: "#f7768e" };

function layout(nodes) {
  const pos = new Map();
  const teams = nodes.filter((n) => n.id !== "judger" && n.id !== "lab");
  const specials = nodes.filter((n) => n.id === "judger" || n.id === "lab");
  const cx = W / 2;
  const cy = H / 2;
  if (teams.length <= 40) {
    const r = Math.min(W, H) / 2 - 50;
    teams.forEach((n, i) => {
      const a = (2 * Math.PI * i) / Math.max(teams.length, 1) - Math.PI / 2;
      pos.set(n.id, [cx + r * Math.cos(a), cy + r * Math.sin(a)]);
    });
  } else {
    const cols = Math.ceil(Math.sqrt(teams.length * (W / H)));
    const rows = Math.ceil(teams.length / cols);
    teams.forEach((n, i) => {
      pos.set(n.id, [30 + ((i % cols) + 0.5) * ((W - 60) / cols), 30 + (Math.floor(i / cols) + 0.5) * ((H - 60) / rows)]);
    });
  }
  specials.forEach((n, i) => pos.set(n.id, [cx + (i ? 60 : 0), cy]));
  return pos;
}

function signature(graph) {
  return JSON.stringify([graph.nodes.map((n) => [n.id, n.status, n.running]), graph.edges.map((e) => [e.source, e.target, e.type, e.count])]);
}

export class Graph {
  constructor(root) {
    this.root = root;
    this.sig = null;
  }

  render(graph) {
    const sig = signature(graph);
    if (sig === this.sig) return;
    this.sig = sig;
    const pos = layout(graph.nodes);
    const small = graph.nodes.length > 40;
    const radius = small ? 7 : 16;
    const edges = [...graph.edges].sort((a, b) => (b.last_seq || 0) - (a.last_seq || 0)).slice(0, MAX_EDGES);
    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "graph-svg", role: "img", "aria-label": t("graph_title") });
    const edgeLayer = s("g", { class: "edges" });
    edges.forEach((edge, i) => {
      const a = pos.get(edge.source);
      const b = pos.get(edge.target);
      if (!a || !b) return;
      const color = EDGE_COLORS[edge.type] || "#888";
      const path = `M ${a[0].toFixed(1)} ${a[1].toFixed(1)} L ${b[0].toFixed(1)} ${b[1].toFixed(1)}`;
      edgeLayer.append(
        s("path", {
          d: path,
          class: `edge edge-${edge.type}`,
          stroke: color,
          "stroke-width": Math.min(1 + Math.log2(edge.count || 1), 5).toFixed(1),
          dataset: { source: edge.source, target: edge.target },
        }, s("title", { text: `${edge.source} → ${edge.target} · ${edge.type} ×${edge.count}\n${edge.summary || ""}` })),
      );
      if (i < MAX_DOTS) {
        edgeLayer.append(
          s("circle", { r: 3.5, fill: color, class: "dot" },
            s("animateMotion", { dur: `${2 + (i % 5) * 0.4}s`, repeatCount: "indefinite", path })),
        );
      }
    });
    const nodeLayer = s("g", { class: "nodes" });
    for (const node of graph.nodes) {
      const [x, y] = pos.get(node.id);
      const cls = `node status-${node.status}${node.running ? " running" : ""}${node.offline ? " offline" : ""}`;
      nodeLayer.append(
        s("g", { class: cls, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})`, dataset: { team: node.id } },
          node.running ? s("circle", { r: radius + 6, class: "halo" }) : null,
          s("circle", { r: radius, class: "body" }),
          small ? null : s("text", { y: radius + 14, "text-anchor": "middle", class: "label", text: node.label }),
          s("title", { text: `${node.label} · ${node.status} · ${t("best_cycles")} ${num(node.best_cycles)}` })),
      );
    }
    svg.append(edgeLayer, nodeLayer);
    const parts = [svg];
    if (!graph.edges.length) parts.push(h("p", { class: "muted small graph-empty", text: t("graph_empty") }));
    this.root.replaceChildren(...parts);
    if (!motionOn()) svg.pauseAnimations();
  }

  invalidate() {
    this.sig = null;
  }
}
