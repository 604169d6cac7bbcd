// Best cycles over time, one step line per team: the line moves only when a measured receipt
// beats the team's best. Inline SVG, no library, no CDN.
import { h, s } from "../dom.js";
import { t } from "../i18n.js";

const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

function fmt(v) {
  for (const [unit, size] of [["G", 1e9], ["M", 1e6], ["k", 1e3]]) if (Math.abs(v) >= size) return `${(v / size).toPrecision(3)}${unit}`;
  return v.toPrecision(3);
}

export function cyclesPlot(series) {
  const pts = series.flatMap((line) => line.points.map((p) => [Date.parse(p[0]), p[2]]));
  if (!pts.length) return h("p", { class: "muted", text: t("plot_empty") });
  const W = 640;
  const H = 280;
  const L = 64;
  const R = 150;
  const T = 12;
  const B = 30;
  let [t0, t1] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
  let [c0, c1] = [Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1]))];
  t1 = Math.max(t1, t0 + 1000);
  c1 = Math.max(c1, c0 + 1);
  const x = (v) => L + ((v - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - (v - c0) / (c1 - c0)) * (H - T - B);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot", role: "img", "aria-label": t("plot_title") });
  svg.append(s("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }), s("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
  for (const frac of [0, 0.5, 1]) {
    const v = c0 + frac * (c1 - c0);
    svg.append(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick", text: fmt(v) }));
  }
  svg.append(s("text", { x: L, y: H - 8, class: "tick", text: "0 s" }), s("text", { x: W - R, y: H - 8, "text-anchor": "end", class: "tick", text: `${Math.round((t1 - t0) / 1000)} s` }));
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
      s("title", { text: `${line.label}: ${line.points.map((p) => fmt(p[2])).join(" → ")}` })));
    if (i < 14) {
      svg.append(s("rect", { x: W - R + 12, y: T + i * 16, width: 10, height: 10, fill: color }),
        s("text", { x: W - R + 26, y: T + i * 16 + 9, class: "tick", text: line.label }));
    }
  });
  return svg;
}
