// Best cycles over time, one step line per team: the line moves only when a measured receipt
// beats the team's best. Inline SVG, no library, no CDN. Y ticks are round and distinct (a
// flat series gets one tick); the x axis is time since the first receipt.
import { h, s } from "../dom.js";
import { t } from "../i18n.js";
import { compact, distinctLabels, duration, niceTicks, timeTicks } from "./axis.js";

const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/** A legend label that fits the legend's column (the full name is its tooltip). */
function clip(label, n = 18) {
  return label.length > n ? `${label.slice(0, n - 1)}…` : label;
}

export function cyclesPlot(series) {
  const pts = series.flatMap((line) => line.points.map((p) => [Date.parse(p[0]), p[2]]));
  if (!pts.length) return h("p", { class: "muted", text: t("plot_empty") });
  const W = 640;
  const H = 290;
  const L = 64;
  const R = 150;
  const T = 12;
  const B = 40;
  const t0 = Math.min(...pts.map((p) => p[0]));
  const t1 = Math.max(Math.max(...pts.map((p) => p[0])), t0 + 1000);
  const yAxis = niceTicks(Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1])));
  const [c0, c1] = [yAxis.lo, yAxis.hi];
  const x = (v) => L + ((v - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - (v - c0) / (c1 - c0)) * (H - T - B);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot", role: "img", "aria-label": t("plot_title") });
  const labels = distinctLabels(yAxis.ticks);
  yAxis.ticks.forEach((v, i) => {
    svg.append(s("line", { x1: L, y1: y(v), x2: W - R, y2: y(v), class: "grid-line" }));
    svg.append(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick y-tick", text: labels[i] }));
  });
  svg.append(s("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }), s("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  for (const ms of timeTicks(t1 - t0)) {
    svg.append(s("text", { x: x(t0 + ms), y: H - B + 14, "text-anchor": "middle", class: "tick x-tick", text: duration(ms / 1000) }));
  }
  svg.append(s("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "axis-title", text: t("plot_time") }));
  series.forEach((line, i) => {
    const color = COLORS[i % COLORS.length];
    const coords = [];
    line.points.forEach((p, n) => {
      const px = x(Date.parse(p[0]));
      if (n) coords.push(`${px.toFixed(1)},${coords.at(-1).split(",")[1]}`);
      coords.push(`${px.toFixed(1)},${y(p[2]).toFixed(1)}`);
    });
    coords.push(`${x(t1).toFixed(1)},${coords.at(-1).split(",")[1]}`);
    svg.append(s("polyline", { points: coords.join(" "), fill: "none", stroke: color, "stroke-width": 2, dataset: { team: line.team } },
      s("title", { text: `${line.label}: ${line.points.map((p) => compact(p[2])).join(" → ")}` })));
    if (i < 14) {
      svg.append(s("rect", { x: W - R + 12, y: T + i * 16, width: 10, height: 10, fill: color }),
        s("text", { x: W - R + 26, y: T + i * 16 + 9, class: "tick", text: clip(line.label) }, s("title", { text: line.label })));
    }
  });
  return svg;
}
