// Throughput: worker slots as lanes with one bar per evaluation job (from its receipt's start
// and finish), the queue length over time on the same time axis, a legend of what the colours
// mean, and the mean seconds per stage over the jobs that ran (computed by the server).
import { h, num, s } from "../dom.js";
import { t, word } from "../i18n.js";
import { table } from "./tables.js";
import { duration, timeTicks } from "./axis.js";

const STATUS_COLORS = { measured: "#2ca02c", probe_passed: "#7fbf7f", incorrect: "#d62728", compile_failed: "#ff7f0e", api_misuse: "#9467bd" };
const OTHER = "#888";

function ms(ts) {
  return ts ? Date.parse(ts) : null;
}

function legend(jobs, hasQueue) {
  const seen = [...new Set(jobs.map((j) => (STATUS_COLORS[j.status] ? j.status : "other")))];
  return h("div", { class: "chart-legend small throughput-legend" },
    h("span", { class: "muted", text: t("legend_job") }),
    seen.map((status) => h("span", { class: "legend-item", dataset: { status } },
      h("span", { class: `swatch job-swatch job-${status}` }), // colours: css/charts.css
      status === "other" ? "—" : word(status))),
    hasQueue ? h("span", { class: "legend-item" }, h("span", { class: "swatch queue-swatch" }), t("legend_queue")) : null);
}

function stagePart(data) {
  const means = data.stage_means;
  if (!data.stage_jobs) return h("p", { class: "muted small stage-none", text: t("stage_none") });
  const stageTable = table(Object.keys(means), [h("tr", {}, Object.values(means).map((v) => h("td", { text: v == null ? "—" : `${v} s` })))], "stage-means");
  return h("div", {},
    h("p", { class: "muted small", text: `${t("stage_means")} · ${t("stage_jobs", { n: num(data.stage_jobs) })}` }),
    h("div", { class: "scroll-x" }, stageTable));
}

export function throughputPanel(data) {
  const jobs = data.lanes.flatMap((lane) => lane.jobs);
  if (!jobs.length) return h("p", { class: "muted", text: t("throughput_empty") });
  const times = jobs.flatMap((j) => [ms(j.submitted_at), ms(j.started_at), ms(j.finished_at)]).filter((v) => v != null);
  const t0 = Math.min(...times);
  const t1 = Math.max(...times, t0 + 1000);
  const W = 900;
  const L = 150;
  const laneH = 20;
  const queueH = 60;
  const axisH = 34;
  const H = data.lanes.length * laneH + queueH + 30 + axisH;
  const x = (v) => L + ((v - t0) / (t1 - t0)) * (W - L - 10);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "lanes", role: "img", "aria-label": t("throughput_title") });
  const bottom = H - axisH;
  const ticks = timeTicks(t1 - t0, 8);
  for (const tick of ticks) {
    const px = x(t0 + tick);
    svg.append(s("line", { x1: px, y1: 6, x2: px, y2: bottom, class: "grid-line" }));
    svg.append(s("text", { x: px, y: bottom + 14, "text-anchor": "middle", class: "tick x-tick", text: duration(tick / 1000) }));
  }
  svg.append(s("line", { x1: L, y1: bottom, x2: W - 10, y2: bottom, class: "axis" }));
  svg.append(s("text", { x: (L + W) / 2, y: H - 4, "text-anchor": "middle", class: "axis-title", text: t("time_axis") }));
  data.lanes.forEach((lane, i) => {
    const y = 10 + i * laneH;
    svg.append(s("text", { x: 4, y: y + 13, class: "tick", text: lane.lane }));
    svg.append(s("line", { x1: L, y1: y + laneH - 2, x2: W - 10, y2: y + laneH - 2, class: "lane-rule" }));
    for (const job of lane.jobs) {
      const end = ms(job.finished_at);
      const start = ms(job.started_at) ?? end;
      const width = Math.max(2, x(end) - x(start));
      const stages = Object.entries(job.stages || {}).filter(([, v]) => v != null).map(([k, v]) => `${k} ${v}s`).join(", ");
      svg.append(s("rect", {
        x: x(start).toFixed(1), y: y + 2, width: width.toFixed(1), height: laneH - 6, rx: 2,
        fill: STATUS_COLORS[job.status] || OTHER, class: "job", dataset: { team: job.team, status: job.status || "" },
      }, s("title", { text: `${job.team} · ${job.mode} · ${word(job.status)}${job.cache_hit ? ` (${t("cache_hit")})` : ""} · ${num(job.cycles)} cycles\n${stages}` })));
    }
  });
  const qy = 10 + data.lanes.length * laneH + 10;
  const maxQ = Math.max(1, ...data.queue.map((q) => q[1]));
  svg.append(s("text", { x: 4, y: qy + 14, class: "tick", text: t("queue_length") }));
  if (data.queue.length) {
    const pts = [];
    data.queue.forEach(([ts, n], k) => {
      const px = x(ms(ts));
      const py = qy + queueH - (n / maxQ) * (queueH - 10);
      if (k) pts.push(`${px.toFixed(1)},${pts.at(-1).split(",")[1]}`);
      pts.push(`${px.toFixed(1)},${py.toFixed(1)}`);
    });
    svg.append(s("polyline", { points: pts.join(" "), class: "queue-line", fill: "none" }));
    svg.append(s("text", { x: L - 6, y: qy + 14, "text-anchor": "end", class: "tick", text: t("queue_max", { n: maxQ }) }));
  }
  return h("div", {}, legend(jobs, data.queue.length > 0), svg,
    h("p", { class: "muted small", text: t("jobs_drawn", { shown: num(data.jobs_shown), total: num(data.jobs_total) }) }), stagePart(data));
}
