// The results tab: the Judger table, leaderboard, cycles-over-time plot, throughput and token
// usage. Loaded when shown, refreshed (debounced) as events arrive.
import * as api from "../api.js";
import { $, throttle } from "../dom.js";
import { on, state } from "../state.js";
import { cyclesPlot } from "./plot.js";
import { leaderboard, usageTables } from "./board.js";
import { judgerTable } from "./tables.js";
import { throughputPanel } from "./throughput.js";

export class ResultsView {
  constructor() {
    this.refreshSoon = throttle(() => this.load(), 1500);
    on("events", () => {
      if (state.tab === "results") this.refreshSoon();
    });
  }

  async load() {
    if (!state.run) return;
    const runId = state.run.id;
    const params = { at: state.at };
    const [judger, results, throughput] = await Promise.all([
      api.get(api.runUrl(runId, "/judger", params)),
      api.get(api.runUrl(runId, "/results", params)),
      api.get(api.runUrl(runId, "/throughput", params)),
    ]);
    if (state.run?.id !== runId) return;
    const canDecide = !state.run.read_only && !state.info?.demo && !state.replay;
    $("#judger-table").replaceChildren(judgerTable(judger, { runId, canDecide, onDone: () => this.load() }));
    $("#leaderboard").replaceChildren(leaderboard(results.leaderboard, runId));
    $("#cycles-plot").replaceChildren(cyclesPlot(results.series));
    $("#throughput").replaceChildren(throughputPanel(throughput));
    $("#usage").replaceChildren(usageTables(results.usage));
  }
}
