// The work log: the latest 160 events of the team (or the Judger) in time order, a tool's
// request and return as one step. Reading back (scrolling up) pauses insertion behind a "new
// events" marker; "follow latest" resumes. Only events that arrive while the page is open
// animate: not the first load, not a scrub. Filters: kind, tool, team, text (logfilter.js).
import * as api from "../api.js";
import { t } from "../i18n.js";
import { JUDGER_KINDS } from "./eventview.js";
import { LogFilter } from "./logfilter.js";
import { StepRows } from "./steprow.js";

export const KEEP = 160;
const BOTTOM_SLACK = 24;

export class WorkLog {
  constructor({ list, earlier, marker, follow, count }) {
    Object.assign(this, { list, earlier, marker, follow, count });
    this.runId = null;
    this.team = "";
    this.session = "team";
    this.at = null;
    this.teamNames = {};
    this.following = true;
    this.buffer = [];
    this.overflowed = false;
    this.exhausted = false; // nothing earlier than the first row (with the server-side filters)
    this.lastSeq = 0;
    this.generation = 0;
    this.loading = null;
    this.duringLoad = [];
    this.steps = new StepRows();
    this.filter = new LogFilter(list.closest(".log-wrap") || list, {
      onServer: () => this.reset(this),
      onLocal: () => this.applyFilter(),
    });
    list.addEventListener("scroll", () => this.onScroll());
    earlier.addEventListener("click", () => this.loadEarlier());
    marker.addEventListener("click", () => this.followLatest());
    follow.addEventListener("click", () => this.followLatest());
  }

  sessionKinds() {
    return this.session === "judger" ? JUDGER_KINDS : null;
  }

  matches(ev) {
    if (this.session !== "judger" && this.team && ev.team !== this.team) return false;
    return this.filter.matchesEvent(ev, this.sessionKinds());
  }

  query(extra = {}) {
    const params = { order: "desc", limit: KEEP, ...extra };
    const kinds = this.filter.kinds(this.sessionKinds());
    if (kinds) params.kind = kinds.length ? kinds : ["none"];
    const team = this.session === "judger" ? this.filter.team : this.team || this.filter.team;
    if (team) params.team = team;
    return params;
  }

  /** The run's state as of the shown position (a /view answer): which steps wait in vain. */
  setView(view) {
    this.steps.settle(view, this.teamNames);
  }

  /** Rows for events in time order: a tool return joins its request's row. */
  rows(events, animate) {
    const placed = events.map((ev) => this.steps.place(ev, this.teamNames, animate)).filter(Boolean);
    const rows = placed.filter((row, i) => placed.lastIndexOf(row) === i); // a moved step, once
    this.filter.noteTools(rows);
    for (const row of rows) row.hidden = !this.filter.matchesRow(row);
    return rows;
  }

  applyFilter() {
    for (const row of this.list.children) row.hidden = !this.filter.matchesRow(row);
    this.updateChrome();
  }

  /** Show the latest page (as of `at` in a replay), without animation. */
  async reset({ runId, team, session, at, teamNames }) {
    Object.assign(this, { runId, team: team || "", session, at, teamNames: teamNames || {} });
    const generation = ++this.generation;
    this.duringLoad = [];
    this.buffer = [];
    this.overflowed = false;
    this.following = true;
    this.steps.clear();
    this.filter.tools.clear();
    this.filter.render(this.teamNames, this.session !== "judger" && Boolean(this.team));
    const extra = at != null ? { before: at + 1 } : {};
    this.loading = api.get(api.runUrl(runId, "/events", this.query(extra)));
    let events = [];
    try {
      events = (await this.loading).events.reverse();
    } catch {
      events = [];
    }
    if (generation !== this.generation) return;
    this.exhausted = events.length < KEEP;
    this.list.replaceChildren(...this.rows(events, false));
    this.filter.render(this.teamNames, this.session !== "judger" && Boolean(this.team));
    this.lastSeq = events.length ? events[events.length - 1].seq : at ?? 0;
    this.loading = null;
    this.scrollToEnd();
    this.updateChrome();
    const missed = this.duringLoad;
    this.duringLoad = [];
    if (missed.length) this.arrive(missed);
  }

  /** Events that just happened (live stream or replay playback). */
  arrive(events, { animate = true } = {}) {
    if (this.loading) {
      this.duringLoad.push(...events);
      return;
    }
    const fresh = events.filter((ev) => ev.seq > this.lastSeq && this.matches(ev));
    if (!fresh.length) return;
    this.lastSeq = fresh[fresh.length - 1].seq;
    if (!this.following) {
      this.buffer.push(...fresh);
      if (this.buffer.length > KEEP) {
        this.buffer = this.buffer.slice(-KEEP);
        this.overflowed = true;
      }
      this.updateChrome();
      return;
    }
    this.list.append(...this.rows(fresh, animate));
    this.trim();
    this.scrollToEnd();
    this.updateChrome();
  }

  trim() {
    while (this.list.children.length > KEEP) {
      this.steps.forget(this.list.firstElementChild);
      this.list.firstElementChild.remove();
      this.exhausted = false;
    }
  }

  scrollToEnd() {
    this.list.scrollTop = this.list.scrollHeight;
  }

  atBottom() {
    const { scrollTop, scrollHeight, clientHeight } = this.list;
    return scrollHeight - scrollTop - clientHeight < BOTTOM_SLACK;
  }

  onScroll() {
    if (this.atBottom()) {
      if (!this.following && !this.buffer.length) {
        this.following = true;
        this.trim();
        this.updateChrome();
      }
      return;
    }
    if (this.following && this.list.scrollHeight > this.list.clientHeight) {
      this.following = false;
      this.updateChrome();
    }
  }

  async followLatest() {
    if (this.overflowed) {
      await this.reset(this);
      return;
    }
    const pending = this.buffer;
    this.buffer = [];
    this.following = true;
    this.list.append(...this.rows(pending, false));
    this.trim();
    this.scrollToEnd();
    this.updateChrome();
  }

  async loadEarlier() {
    const first = this.list.firstElementChild;
    const before = first ? Number(first.dataset.seq) : this.lastSeq + 1;
    const { events } = await api.get(api.runUrl(this.runId, "/events", this.query({ before })));
    this.exhausted = events.length < KEEP;
    if (!events.length) {
      this.updateChrome();
      return;
    }
    const height = this.list.scrollHeight;
    this.following = false;
    this.list.prepend(...this.rows(events.reverse(), false));
    this.filter.render(this.teamNames, this.session !== "judger" && Boolean(this.team));
    // show where the earlier records end: reading back, so insertion pauses
    this.list.scrollTop = Math.max(0, this.list.scrollHeight - height - this.list.clientHeight / 2);
    this.updateChrome();
  }

  updateChrome() {
    const waiting = this.buffer.length;
    this.marker.hidden = this.following || waiting === 0;
    this.marker.textContent = `↓ ${t("new_events", { n: waiting + (this.overflowed ? "+" : "") })}`;
    this.follow.hidden = this.following;
    this.earlier.textContent = t("earlier");
    const first = this.list.firstElementChild;
    const firstSeq = Math.min(...String(first?.dataset.events || first?.dataset.seq || "").split(" ").map(Number).filter((n) => n > 0));
    this.earlier.hidden = this.exhausted || !first || firstSeq <= 1;
    const rows = this.list.children.length;
    let text = rows ? `${rows} · #${this.list.lastElementChild.dataset.seq}` : t("log_empty");
    if (rows && this.filter.active) {
      const shown = [...this.list.children].filter((row) => !row.hidden).length;
      text = `${t("st_shown", { shown, rows })} · #${this.list.lastElementChild.dataset.seq}`;
    }
    this.count.textContent = text;
    this.list.classList.toggle("paused", !this.following);
  }
}
