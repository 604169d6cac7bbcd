// The work log as steps: a tool request and its return are one row (tool, state, duration,
// the requesting model call's tokens, arguments and return as foldable data), joined by the
// tool call id in whichever order they are loaded (live, a page, earlier records). A plan row
// keeps the status its receipts give it.
import { clip, h } from "../dom.js";
import { t } from "../i18n.js";
import { TODO_MARKS, chip, details, eventRow, renderEvent, seconds, todoView, tokens, tool } from "./eventview.js";
import { dataView, readData } from "./jsonview.js";
import { planBadge, planStatus } from "./planstatus.js";
import { todosFromReturn } from "./pyrepr.js";

const TODOS = "write_todos";

function argsSummary(name, args) {
  const value = readData(args);
  if (name === TODOS && Array.isArray(value?.todos)) {
    const done = value.todos.filter((x) => x?.status === "completed").length;
    return t("st_todos_summary", { n: value.todos.length, done });
  }
  return clip(args, 160);
}

function argsView(name, args) {
  const value = readData(args);
  if (name === TODOS && Array.isArray(value?.todos)) return todoView(value.todos);
  return dataView(args);
}

function resultView(name, content) {
  const todos = name === TODOS ? todosFromReturn(content) : null;
  if (todos) {
    const lines = [t("st_todos_updated"), ...todos.map((x) => `${TODO_MARKS[x?.status] || "·"} ${x?.content ?? ""}`)];
    return h("pre", { class: "todo-lines", text: lines.join("\n") });
  }
  return dataView(content, "pre");
}

function part(key, view) {
  return h("div", { class: `step-part ${key}` }, h("h4", { text: t(`st_${key}`) }), view);
}

function stateChip(r, settled) {
  if (r) return r.error ? chip(t("error"), "bad step-state") : chip(t("st_ok"), "good step-state");
  if (!settled) return chip(t("st_running"), "warn step-state");
  const badge = chip(t("st_no_result"), "muted step-state no-result");
  badge.title = t("st_no_result_title");
  return badge;
}

/** Fill (or refill) a step row from the call and the result it holds so far; `settled`: no
 * result will come any more (the run stopped, the team's turn ended), so it is not running. */
function paint(row, { call, result, usage }, teamNames, settled = false) {
  const first = call || result;
  const p = first.payload || {};
  const r = result?.payload;
  const state = stateChip(r, settled);
  const meta = [r ? seconds(r.seconds) : "", usage ? t("st_call_tokens", { seq: usage.seq, tokens: tokens(usage.usage, usage.estimated) }) : ""];
  const view = {
    label: "st_k_step",
    head: [tool(p.name), p.member ? chip(p.member) : null, state],
    meta: meta.filter(Boolean).join(" · "),
    body: call ? argsSummary(p.name, call.payload?.args) : clip(r?.content, 160),
    more: details(
      call ? part("arguments", argsView(p.name, call.payload?.args)) : part("arguments", h("p", { class: "muted small", text: t("st_call_not_loaded") })),
      r ? part("return", resultView(p.name, r.content)) : null,
    ),
  };
  const fresh = eventRow(first, view, teamNames, false, ` step${r ? " kind-tool-result" : ""}${r?.error ? " failed" : ""}`);
  if (call && result) fresh.querySelector(".seq").textContent = `#${call.seq}→#${result.seq}`;
  fresh.dataset.events = [call?.seq, result?.seq].filter((x) => x != null).join(" "); // the seqs it holds
  fresh.dataset.kind = "tool.call";
  fresh.dataset.tool = p.name || "";
  fresh.dataset.state = r ? (r.error ? "error" : "returned") : settled ? "no-result" : "running";
  const open = row?.querySelector(":scope > details")?.open;
  if (open) fresh.querySelector(":scope > details").open = true;
  if (row) {
    row.replaceChildren(...fresh.childNodes);
    row.className = fresh.className.replace(" arrive", "") + (row.classList.contains("arrive") ? " arrive" : "");
    Object.assign(row.dataset, fresh.dataset);
    return row;
  }
  return fresh;
}

/** Whether a step's missing result can still come, as of a /view answer that folded events
 * past its request: not once the run's dispatch stopped or the team is not in a turn (its turn
 * ended, it paused or exited). A view older than the request says nothing yet. */
function settledBy(view, call) {
  if (!view || !call || call.seq > (view.last_seq ?? 0)) return false;
  if (view.dispatch === "stopped") return true;
  const team = [...(view.teams || []), ...(view.exited || [])].find((tm) => tm.id === call.team);
  return !team || !team.running || team.status === "paused" || team.status === "exited";
}

export class StepRows {
  constructor() {
    this.view = null;
    this.clear();
  }

  /** The run's state changed (a new /view): repaint the steps that wait for a result. */
  settle(view, teamNames = {}) {
    this.view = view;
    for (const entry of this.steps.values()) {
      if (entry.result) continue;
      const settled = settledBy(view, entry.call);
      if (settled !== Boolean(entry.settled)) {
        entry.settled = settled;
        paint(entry.row, entry, teamNames, settled);
      }
    }
  }

  clear() {
    this.steps = new Map(); // tool call id -> {row, call, result, usage}
    this.usage = new Map(); // tool call id -> the requesting model call's usage
    this.plans = new Map(); // team/experiment -> {rows, receipts}
  }

  /** Drop what a removed row held. */
  forget(row) {
    const id = row.dataset.call;
    if (id && this.steps.get(id)?.row === row) this.steps.delete(id);
  }

  plan(ev) {
    const key = `${ev.team || ""}/${ev.payload?.experiment}`;
    if (!this.plans.has(key)) this.plans.set(key, { rows: new Set(), receipts: [] });
    return this.plans.get(key);
  }

  repaintPlan(plan) {
    plan.receipts.sort((a, b) => a.seq - b.seq);
    const status = planStatus(plan.receipts);
    for (const row of plan.rows) row.querySelector(".plan-status")?.replaceWith(planBadge(status));
  }

  /** The row for `ev`, or null when the event completed a row already shown. */
  place(ev, teamNames = {}, animate = false) {
    const p = ev.payload || {};
    if (ev.kind === "model.response") {
      for (const c of p.tool_calls || []) if (c.id) this.usage.set(c.id, { seq: ev.seq, usage: p.usage, estimated: p.usage_estimated });
    }
    if ((ev.kind === "tool.call" || ev.kind === "tool.result") && p.id) return this.step(ev, teamNames, animate);
    const row = renderEvent(ev, teamNames, animate);
    if (ev.kind === "experiment.planned") {
      const plan = this.plan(ev);
      plan.rows.add(row);
      this.repaintPlan(plan);
    } else if (ev.kind === "experiment.receipt" && p.experiment != null) {
      const plan = this.plan(ev);
      plan.receipts.push({ seq: ev.seq, mode: p.receipt?.mode, status: p.receipt?.status });
      this.repaintPlan(plan);
    }
    return row;
  }

  /** A step's row sits where its latest event is: a return moves its row to the end (the row
   * is returned again), an earlier request joins its return's row in place (null). */
  step(ev, teamNames, animate) {
    const id = ev.payload.id;
    const known = this.steps.get(id);
    const side = ev.kind === "tool.call" ? "call" : "result";
    if (known && known[side]?.seq === ev.seq) return null; // shown already (earlier records overlap)
    if (known && !known[side]) {
      known[side] = ev;
      known.usage = known.usage || this.usage.get(id);
      known.settled = !known.result && settledBy(this.view, known.call);
      paint(known.row, known, teamNames, known.settled);
      known.row.dataset.seq = String(Math.max(known.call?.seq ?? 0, known.result?.seq ?? 0));
      if (side === "call") return null;
      if (animate) known.row.classList.add("arrive");
      return known.row;
    }
    const entry = { call: null, result: null, usage: this.usage.get(id) };
    entry[side] = ev;
    entry.settled = !entry.result && settledBy(this.view, entry.call);
    entry.row = paint(null, entry, teamNames, entry.settled);
    entry.row.dataset.call = id;
    if (animate) entry.row.classList.add("arrive");
    this.steps.set(id, entry);
    return entry.row;
  }
}
