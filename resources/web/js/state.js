// The page's state and a tiny publish/subscribe, so modules never call each other in circles.

export const state = {
  info: null, // what the server can do (/api/info)
  runs: [],
  run: null, // the selected run (as /api/runs/{id})
  view: null, // its latest /view answer
  teamId: null, // the team whose plan and log are shown ("" = all teams)
  session: "team", // work log: "team" or "judger"
  tab: "live",
  at: null, // replay position (event seq); null follows the live head
  replay: false,
};

const topics = new Map();

export function on(topic, fn) {
  if (!topics.has(topic)) topics.set(topic, new Set());
  topics.get(topic).add(fn);
  return () => topics.get(topic).delete(fn);
}

export function emit(topic, data) {
  for (const fn of topics.get(topic) || []) fn(data);
}

export function simulated() {
  return Boolean(state.info?.demo || state.run?.mode === "demo" || state.run?.meta?.simulated === true);
}
