// The pipeline view of one receipt: per AI Core, one lane per pipe (MTE2 / V / MTE3 / S, as
// msprof's simulator chart), drawn on one canvas from the compact timeline the server builds
// out of the receipt's trace blob, with the bound pipe and each pipe's utilisation. Opened from
// the work log, the results and replays alike (`openPipeline(runId, receiptSha)`).
// A lane with more intervals than the server's limit arrives as time buckets: each segment is
// shaded by its busy share, and the view says so.
import * as api from "../api.js";
import { $, debounce, h, num } from "../dom.js";
import { onLang, t } from "../i18n.js";

const COLORS = { MTE2: "#58a6ff", V: "#3fb950", MTE3: "#d2a8ff", S: "#d29922" };
const ROW = 16;
const CORE_GAP = 6;
const LABEL = 96;
const AXIS = 22;

let current = null; // { runId, sha, data }

function color(pipe) {
  return COLORS[pipe] || "#8b949e";
}

function pct(value) {
  return value == null ? "—" : `${(value * 100).toFixed(1)} %`;
}

function compact(value) {
  for (const [unit, size] of [["G", 1e9], ["M", 1e6], ["k", 1e3]]) {
    if (Math.abs(value) >= size) return `${(value / size).toPrecision(3)}${unit}`;
  }
  return String(Math.round(value));
}

function shell() {
  let box = $("#pipeline-view");
  if (box) return box;
  box = h("div", { id: "pipeline-view", class: "pipeline-view", role: "dialog", hidden: true },
    h("div", { class: "pipeline-card" },
      h("div", { class: "pipeline-head" },
        h("h2", { class: "pipeline-title" }),
        h("label", { class: "pipeline-pick" }, h("span", { class: "pipeline-case-label" }), h("select", { class: "pipeline-case" })),
        h("button", { type: "button", id: "pipeline-close", class: "pipeline-close" })),
      h("p", { class: "pipeline-bound" }),
      h("p", { class: "pipeline-note muted small" }),
      h("div", { class: "pipeline-scroll" }, h("canvas", { class: "pipeline-chart" })),
      h("div", { class: "pipeline-tip", hidden: true }),
      h("div", { class: "pipeline-figures-wrap" })));
  document.body.append(box);
  $("#pipeline-close").addEventListener("click", closePipeline);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !box.hidden) closePipeline(); });
  $(".pipeline-case", box).addEventListener("change", (e) => load(current.runId, current.sha, e.target.value));
  const canvas = $("canvas.pipeline-chart", box);
  canvas.addEventListener("mousemove", (e) => hover(canvas, e));
  canvas.addEventListener("mouseleave", () => { $(".pipeline-tip", box).hidden = true; });
  window.addEventListener("resize", debounce(redrawPipeline, 150));
  onLang(() => { if (!box.hidden && current?.data) render(current.data); });
  return box;
}

/** The work log's and the results' button for a receipt blob, or null when the receipt cannot
 * have pipeline figures (a probe, the C port's callgrind counters, no blob). */
export function pipelineButton(runId, sha, mode, toolchain) {
  if (!sha || mode !== "full" || !toolchain || toolchain === "cpu") return null;
  return h("button", {
    type: "button",
    class: "pipeline-open",
    text: t("pipeline_open"),
    title: t("pipeline_open_title"),
    dataset: { receipt: sha },
    onclick: (e) => {
      e.stopPropagation();
      openPipeline(runId(), sha);
    },
  });
}

/** Draw the open view again (after a resize; the bench times it). */
export function redrawPipeline() {
  const box = $("#pipeline-view");
  if (box && !box.hidden && current?.data) draw(current.data);
}

export function closePipeline() {
  const box = $("#pipeline-view");
  if (box) box.hidden = true;
  current = null;
}

export async function openPipeline(runId, sha) {
  const box = shell();
  box.hidden = false;
  current = { runId, sha, data: null };
  await load(runId, sha, null);
}

async function load(runId, sha, caseId) {
  const box = shell();
  $(".pipeline-title", box).textContent = t("pipeline_title");
  $(".pipeline-note", box).textContent = t("pipeline_loading");
  let data;
  try {
    data = await api.get(api.runUrl(runId, `/receipts/${encodeURIComponent(sha)}/pipeline`, { case: caseId }));
  } catch (err) {
    $(".pipeline-bound", box).textContent = "";
    $(".pipeline-note", box).textContent = `${t("pipeline_error")}: ${err.message}`;
    return;
  }
  if (!current || current.sha !== sha) return;
  current.data = data;
  render(data);
}

function render(data) {
  const box = shell();
  const p = data.pipeline || {};
  $(".pipeline-title", box).textContent = `${t("pipeline_title")} · ${data.receipt.slice(0, 12)}`;
  $(".pipeline-case-label", box).textContent = t("pipeline_case");
  $("#pipeline-close").textContent = t("pipeline_close");
  const select = $(".pipeline-case", box);
  select.replaceChildren(...data.cases.map((c) => h("option", { value: c.case_id, text: c.case_id, selected: c.case_id === data.case })));
  $(".pipeline-bound", box).textContent = `${t("pipeline_bound", { pipe: p.bound_pipe ?? "—" })} · ${t("pipeline_total", { n: num(p.total) })} · ${t("pipeline_cores", { n: num(p.block_dim) })}`;
  const tl = data.timeline;
  const notes = [];
  if (!tl) notes.push(data.timeline_error ? `${t("pipeline_no_trace")}: ${data.timeline_error}` : t("pipeline_no_trace"));
  else if (tl.downsampled) notes.push(t("pipeline_downsampled", { n: num(tl.max_segments), w: num(tl.bucket_cycles) }));
  else notes.push(t("pipeline_exact"));
  if (p.trace_truncated) notes.push(t("pipeline_truncated"));
  notes.push(t("pipeline_model", { model: p.model ?? "—", soc: p.soc ?? "—" }));
  $(".pipeline-note", box).textContent = notes.join(" · ");
  figures(box, p);
  draw(data);
}

function figures(box, p) {
  const pipes = Object.entries(p.pipes || {});
  const order = ["MTE2", "V", "MTE3", "S"];
  pipes.sort(([a], [b]) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
  const head = ["pipeline_col_pipe", "pipeline_col_busy", "pipeline_col_util", "pipeline_col_instr"].map((k) => h("th", { text: t(k) }));
  const rows = pipes.map(([pipe, f]) => h("tr", { dataset: { pipe }, class: pipe === p.bound_pipe ? "bound" : "" },
    h("td", {}, h("span", { class: `swatch pipe-${COLORS[pipe] ? pipe : "other"}` }), pipe, pipe === p.bound_pipe ? h("span", { class: "chip warn", text: t("pipeline_bound_chip") }) : null),
    h("td", { text: num(f.busy) }),
    h("td", { text: pct(f.utilisation) }),
    h("td", { text: num(f.instructions) })));
  const cores = (p.cores || []).length > 1
    ? h("p", { class: "muted small", text: t("pipeline_core_note") })
    : null;
  const table = h("table", { class: "grid pipeline-figures" }, h("thead", {}, h("tr", {}, head)), h("tbody", {}, rows));
  $(".pipeline-figures-wrap", box).replaceChildren(...[table, cores].filter(Boolean));
}

/** A core's label: the trace's own name, unless it is only "core N" (the server's fallback,
 * or a trace that numbers its cores), which the page says in its language. */
export function coreName(core) {
  const numbered = /^core\s*(\d+)$/i.exec(String(core.name ?? ""));
  if (numbered || core.name == null) return t("pipeline_core_name", { n: numbered ? numbered[1] : core.core });
  return String(core.name);
}

function rowsOf(tl) {
  const rows = [];
  let y = AXIS;
  for (const core of tl.cores) {
    for (const lane of core.lanes) {
      rows.push({ core, lane, y });
      y += ROW;
    }
    y += CORE_GAP;
  }
  return { rows, height: y };
}

/** The busy share of each pixel column of a lane (0..1): segments spread over the columns
 * they cover, so a lane costs O(segments + pixels) whatever its zoom. */
function busyPerPixel(seg, total, plot) {
  const cols = Math.max(1, Math.ceil(plot));
  const cover = new Float32Array(cols);
  const scale = plot / total;
  for (let i = 0; i < seg.length; i += 3) {
    const a = seg[i] * scale;
    const b = Math.max(a + 1e-9, seg[i + 1] * scale);
    const density = seg[i + 2] / Math.max(1, seg[i + 1] - seg[i]);
    for (let p = Math.floor(a); p < Math.min(cols, Math.ceil(b)); p += 1) {
      cover[p] += density * (Math.min(b, p + 1) - Math.max(a, p));
    }
  }
  return cover;
}

/** Runs of columns with the same shade as one rect each, one fill per shade: a handful of
 * canvas calls per lane instead of one per segment. Any busy column shows (20 % at least). */
function paintLane(ctx, cover, left, top, height) {
  const LEVELS = 10;
  const runs = Array.from({ length: LEVELS + 1 }, () => []);
  let start = 0;
  let level = 0;
  for (let p = 0; p <= cover.length; p += 1) {
    const c = p < cover.length ? Math.min(1, cover[p]) : 0;
    const next = c <= 0 ? 0 : Math.max(2, Math.round(c * LEVELS));
    if (next !== level) {
      if (level) runs[level].push(start, p);
      start = p;
      level = next;
    }
  }
  for (let l = 1; l <= LEVELS; l += 1) {
    if (!runs[l].length) continue;
    ctx.globalAlpha = l / LEVELS;
    ctx.beginPath();
    for (let i = 0; i < runs[l].length; i += 2) ctx.rect(left + runs[l][i], top, runs[l][i + 1] - runs[l][i], height);
    ctx.fill();
  }
  ctx.globalAlpha = 1;
}

function draw(data) {
  const box = shell();
  const canvas = $("canvas.pipeline-chart", box);
  const tl = data.timeline;
  canvas.dataset.case = data.case;
  if (!tl || !tl.cores.length) {
    canvas.hidden = true;
    canvas.dataset.lanes = "";
    canvas.dataset.segments = "0";
    return;
  }
  canvas.hidden = false;
  const { rows, height } = rowsOf(tl);
  const width = Math.max(360, canvas.parentElement.clientWidth - 2);
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const plot = width - LABEL - 8;
  const total = Math.max(1, tl.total);
  const x = (c) => LABEL + (c / total) * plot;
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = "#8b949e";
  ctx.strokeStyle = "#2a313c";
  for (let i = 0; i <= 4; i += 1) {
    const px = x((total * i) / 4);
    ctx.fillText(compact((total * i) / 4), Math.min(px, width - 40), 12);
    ctx.beginPath();
    ctx.moveTo(px + 0.5, AXIS - 4);
    ctx.lineTo(px + 0.5, height);
    ctx.stroke();
  }
  const bound = data.pipeline?.bound_pipe;
  let drawn = 0;
  let lastCore = null;
  for (const { core, lane, y } of rows) {
    ctx.fillStyle = "#d8dee9";
    if (core !== lastCore) {
      ctx.fillText(coreName(core), 2, y + ROW - 3);
      lastCore = core;
    }
    ctx.fillStyle = lane.pipe === bound ? "#ffe58f" : "#8b949e";
    ctx.fillText(lane.pipe, LABEL - 36, y + ROW - 3);
    ctx.fillStyle = color(lane.pipe);
    paintLane(ctx, busyPerPixel(lane.segments, total, plot), LABEL, y + 2, ROW - 4);
    drawn += lane.segments.length / 3;
  }
  canvas.dataset.lanes = (tl.cores[0]?.lanes || []).map((l) => l.pipe).join(",");
  canvas.dataset.segments = String(drawn);
  canvas.dataset.cores = tl.cores.map(coreName).join(","); // the labels drawn, for a reader
  current.layout = { rows, plot, total };
}

function hover(canvas, e) {
  const box = shell();
  const tip = $(".pipeline-tip", box);
  const layout = current?.layout;
  if (!layout) return;
  const rect = canvas.getBoundingClientRect();
  const px = e.clientX - rect.left;
  const py = e.clientY - rect.top;
  const row = layout.rows.find((r) => py >= r.y && py < r.y + ROW);
  if (!row || px < LABEL) {
    tip.hidden = true;
    return;
  }
  const cycle = ((px - LABEL) / layout.plot) * layout.total;
  const seg = row.lane.segments;
  let lo = 0;
  let hi = seg.length / 3 - 1;
  let hit = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (seg[mid * 3 + 1] < cycle) lo = mid + 1;
    else { hit = mid; hi = mid - 1; }
  }
  const lines = [`${coreName(row.core)} · ${row.lane.pipe} · ${t("pipeline_tip_util", { u: pct(row.lane.utilisation) })}`];
  if (hit >= 0 && seg[hit * 3] <= cycle) {
    const [s, end, busy] = [seg[hit * 3], seg[hit * 3 + 1], seg[hit * 3 + 2]];
    lines.push(t("pipeline_tip_span", { s: num(s), e: num(end), b: num(busy) }));
  } else {
    lines.push(t("pipeline_tip_idle", { c: num(Math.round(cycle)) }));
  }
  tip.textContent = lines.join("\n");
  tip.hidden = false;
  const card = $(".pipeline-card", box).getBoundingClientRect();
  tip.style.left = `${e.clientX - card.left + 12}px`;
  tip.style.top = `${e.clientY - card.top + 12}px`;
}
