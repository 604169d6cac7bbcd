// Replay mode: a timeline scrubber over an imported run or the demo. Play feeds events to the
// live view at the recorded pace times the speed (they animate as arrivals); a jump redraws the
// view as of that event, without animation. The demo plays as soon as it is opened, at its
// run's speed, and starts again from the beginning when it reaches the end.
import * as api from "./api.js";
import { $ } from "./dom.js";
import { t } from "./i18n.js";
import { emit, state } from "./state.js";

const CHUNK = 200;
const MAX_GAP_MS = 1500;
const FRAME_MS = 30;
const LOOP_PAUSE_MS = 4000; // the demo's last picture stays this long before it starts again

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class ReplayPlayer {
  constructor(live) {
    this.live = live;
    this.bar = $("#replay-bar");
    this.range = $("#replay-range");
    this.playBtn = $("#replay-play");
    this.playing = false;
    this.loop = false;
    this.max = 0;
    this.token = 0;
    this.range.addEventListener("change", () => this.jump(Number(this.range.value)));
    this.range.addEventListener("input", () => this.label(Number(this.range.value)));
    this.playBtn.addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    $("#replay-start").addEventListener("click", () => this.jump(0));
    $("#replay-end").addEventListener("click", () => this.jump(this.max));
    $("#replay-back").addEventListener("click", () => this.jump(Math.max(0, state.at - 100)));
    $("#replay-forward").addEventListener("click", () => this.jump(Math.min(this.max, state.at + 100)));
  }

  speed() {
    return Number($("#replay-speed").value) || 1;
  }

  /** Show the scrubber over `run`; `loop` (the demo) starts it playing from the first event
   * and plays it again after the end, at the run's own speed. */
  enter(run, { loop = false } = {}) {
    this.pause();
    this.max = run.last_seq;
    this.loop = loop;
    state.replay = true;
    state.at = loop ? 0 : this.max;
    this.range.max = String(this.max);
    this.bar.hidden = false;
    this.bar.classList.toggle("demo", loop);
    if (loop && run.meta?.speed) this.setSpeed(Number(run.meta.speed));
    this.sync();
  }

  setSpeed(speed) {
    const select = $("#replay-speed");
    const value = String(speed);
    if (![...select.options].some((o) => o.value === value)) {
      select.append(new Option(`${speed}×`, value));
    }
    select.value = value;
  }

  leave() {
    this.pause();
    this.loop = false;
    state.replay = false;
    state.at = null;
    this.bar.hidden = true;
  }

  label(at) {
    $("#replay-pos").textContent = t("position", { at, n: this.max });
  }

  sync() {
    this.range.value = String(state.at);
    this.label(state.at);
    this.playBtn.textContent = this.playing ? t("pause_play") : t("play");
    this.playBtn.dataset.playing = String(this.playing);
    emit("position", state.at); // the header's event count is this position while replaying
  }

  async jump(at) {
    const wasPlaying = this.playing;
    this.pause();
    state.at = Math.max(0, Math.min(this.max, at));
    this.sync();
    await this.live.open();
    emit("scrubbed", state.at);
    if (wasPlaying && state.at < this.max) this.play();
  }

  pause() {
    this.playing = false;
    this.token += 1;
    this.sync();
  }

  async play() {
    if (state.at >= this.max) await this.jump(0);
    this.playing = true;
    const token = ++this.token;
    this.sync();
    let previous = null;
    while (this.playing && token === this.token && state.at < this.max) {
      const { events } = await api.get(api.runUrl(state.run.id, "/events", { after: state.at, limit: CHUNK }));
      if (!events.length) break;
      let batch = [];
      let waited = 0;
      for (const ev of events) {
        const ts = Date.parse(ev.ts);
        const gap = previous == null ? 0 : Math.min(Math.max(0, ts - previous) / this.speed(), MAX_GAP_MS);
        previous = ts;
        waited += gap;
        batch.push(ev);
        if (waited >= FRAME_MS) {
          await sleep(waited);
          waited = 0;
          if (!this.playing || token !== this.token) return;
          this.deliver(batch);
          batch = [];
        }
      }
      if (batch.length && this.playing && token === this.token) this.deliver(batch);
    }
    if (token === this.token) {
      this.playing = false;
      this.sync();
      await this.live.refresh();
      if (this.loop && state.at >= this.max) {
        await sleep(LOOP_PAUSE_MS);
        if (token === this.token && this.loop) await this.restart();
      }
    }
  }

  /** The demo from its first event again: the view is drawn empty, then events arrive. */
  async restart() {
    state.at = 0;
    this.sync();
    await this.live.open();
    emit("scrubbed", state.at);
    await this.play();
  }

  deliver(batch) {
    state.at = batch[batch.length - 1].seq;
    this.live.arrive(batch, { animate: true });
    this.sync();
  }
}
