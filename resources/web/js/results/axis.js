// Axis ticks for the result charts: round steps (1, 2, 5 × 10^k), labels that stay distinct
// (a flat series gets one tick, never "1.85G / 1.85G / 1.85G"), and a time axis in s/min/h.

const UNITS = [["G", 1e9], ["M", 1e6], ["k", 1e3]];

/** A number in G/M/k with `digits` significant digits. */
export function compact(v, digits = 3) {
  for (const [unit, size] of UNITS) if (Math.abs(v) >= size) return `${Number((v / size).toPrecision(digits))}${unit}`;
  return String(Number(v.toPrecision(digits)));
}

/** Labels for `values`, with as many digits as it takes for no two to read the same. */
export function distinctLabels(values, fmt = compact) {
  for (let digits = 3; digits <= 12; digits++) {
    const labels = values.map((v) => fmt(v, digits));
    if (new Set(labels).size === labels.length) return labels;
  }
  return values.map((v) => String(v));
}

function step(span, count) {
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

/**
 * Ticks over [lo, hi]: round values inside the range, about `count` of them; one tick when
 * the range is a single value. Returns {lo, hi, ticks} with the range widened to the ticks.
 */
export function niceTicks(lo, hi, count = 4) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return { lo: 0, hi: 1, ticks: [] };
  if (hi <= lo) {
    const pad = Math.abs(lo) * 0.05 || 1;
    return { lo: lo - pad, hi: lo + pad, ticks: [lo] };
  }
  const d = step(hi - lo, count);
  const first = Math.floor(lo / d) * d;
  const last = Math.ceil(hi / d) * d;
  const ticks = [];
  for (let v = first; v <= last + d / 2; v += d) ticks.push(Number(v.toPrecision(12)));
  return { lo: first, hi: last, ticks };
}

/** A duration in seconds as "45 s", "12 min", "1.5 h". */
export function duration(sec) {
  if (sec < 120) return `${Number(sec.toPrecision(3))} s`;
  if (sec < 7200) return `${Number((sec / 60).toPrecision(3))} min`;
  return `${Number((sec / 3600).toPrecision(3))} h`;
}

/** Time ticks (ms since t0) over a span of `spanMs`: round seconds, minutes or hours. */
export function timeTicks(spanMs, count = 5) {
  const sec = Math.max(spanMs / 1000, 1);
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  const d = steps.find((x) => sec / x <= count) ?? 86400 * Math.ceil(sec / (86400 * count));
  const ticks = [];
  for (let v = 0; v <= sec + 1e-9; v += d) ticks.push(v * 1000);
  return ticks;
}
