// The lineage tree's geometry, with no DOM: rows of /lineage become nodes placed by
// generation (y) and freezing order (x). Parents always come before children (the server keeps
// only such edges), so one pass finds every depth.

export const COL = 18; // px between two candidates in freezing order, at zoom 1
export const ROW = 56; // px between two generations
export const PAD = 28;

/** Nodes and edges from the endpoint's columns and rows. */
export function buildTree(data) {
  const col = Object.fromEntries(data.columns.map((name, i) => [name, i]));
  const nodes = [];
  const byId = new Map();
  const teams = [];
  for (const row of data.rows) {
    const node = {
      id: row[col.id],
      team: row[col.team],
      parent: row[col.parent],
      kind: row[col.kind],
      cycles: row[col.cycles],
      status: row[col.status],
      ts: row[col.ts],
      localPassed: row[col.local_passed],
      official: row[col.official],
      order: nodes.length,
      depth: 0,
    };
    const parent = node.parent ? byId.get(node.parent) : null;
    if (node.parent && !parent) node.parent = null; // the server checked it; keep the client honest too
    node.depth = parent ? parent.depth + 1 : 0;
    if (!teams.includes(node.team)) teams.push(node.team);
    nodes.push(node);
    byId.set(node.id, node);
  }
  const depth = nodes.reduce((m, n) => Math.max(m, n.depth), 0);
  return { nodes, byId, teams, depth };
}

/** Pixel position of a node at `zoom`. */
export function place(node, zoom) {
  return { x: PAD + node.order * COL * zoom, y: PAD + node.depth * ROW };
}

export function size(tree, zoom) {
  return {
    width: PAD * 2 + Math.max(0, tree.nodes.length - 1) * COL * zoom,
    height: PAD * 2 + tree.depth * ROW + 20,
  };
}

/** The nodes inside [left, right] (px), and the edges that cross it. */
export function visible(tree, zoom, left, right) {
  const step = COL * zoom;
  const first = Math.max(0, Math.floor((left - PAD) / step));
  const last = Math.min(tree.nodes.length - 1, Math.ceil((right - PAD) / step));
  const nodes = tree.nodes.slice(first, last + 1);
  const edges = [];
  for (const node of tree.nodes) {
    if (!node.parent) continue;
    const parent = tree.byId.get(node.parent);
    if (parent.order <= last && node.order >= first) edges.push([parent, node]);
  }
  return { nodes, edges };
}

/** A team's colour: hues spread by the golden angle, so neighbours differ. */
export function teamColour(index) {
  return `hsl(${Math.round((index * 137.508) % 360)}, 62%, 58%)`;
}

/** 1,234,567,890 → "1.23G": a label that fits under a node. */
export function compact(value) {
  if (value === null || value === undefined) return "—";
  const units = [[1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [size, unit] of units) {
    if (Math.abs(value) >= size) return `${(value / size).toPrecision(3)}${unit}`;
  }
  return String(value);
}
