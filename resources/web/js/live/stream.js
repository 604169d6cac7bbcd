// The run's live event stream (SSE). The browser resumes after a drop with Last-Event-ID, so
// no event is lost or repeated; arrivals are handed on in small batches, one DOM update each.

const FLUSH_MS = 120;

export function openStream(runId, after, onBatch) {
  const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/stream?after=${after}`);
  let batch = [];
  let timer = null;
  let last = after;
  source.onmessage = (msg) => {
    const ev = JSON.parse(msg.data);
    if (ev.seq <= last) return;
    last = ev.seq;
    batch.push(ev);
    if (!timer) {
      timer = setTimeout(() => {
        const events = batch;
        batch = [];
        timer = null;
        onBatch(events);
      }, FLUSH_MS);
    }
  };
  return {
    close() {
      clearTimeout(timer);
      source.close();
    },
  };
}
