// ragloom web page: the knowledge graph screen (SVG force layout, entity panel).
// Loaded after core.js: classic scripts share one global scope.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

screens.graph = async function () {
  await loadKbs();
  $("#entity-panel").replaceChildren(el("p", { class: "muted" }, "Click an entity to see the passages that mention it."));
  if (!state.kb) { $("#graph-svg").replaceChildren(); return needKb(); }
  const graph = await api(kbPath(state.kb) + "/graph?limit=80");
  state.graph = graph;
  const on = graph.settings && graph.settings.extractor;
  $("#graph-setting").textContent = on ? "extraction: " + graph.settings.extractor : "extraction is off";
  $("#graph-toggle").textContent = on ? "Disable extraction" : "Enable extraction";
  $("#entity-names").replaceChildren(...graph.entities.map((e) => el("option", { value: e.name })));
  drawGraph(graph);
};

// A small force layout (Fruchterman-Reingold): circle start, repulsion between all
// nodes, springs along relations, a pull to the centre, cooling steps.
function layout(nodes, edges, width, height) {
  const n = nodes.length;
  nodes.forEach((node, i) => {
    const angle = 2 * Math.PI * i / Math.max(n, 1);
    node.x = width / 2 + (width / 4) * Math.cos(angle);
    node.y = height / 2 + (height / 4) * Math.sin(angle);
  });
  const k = 0.55 * Math.sqrt(width * height / Math.max(n, 1));
  const steps = 250;
  for (let step = 0; step < steps; step++) {
    const temperature = (width / 10) * (1 - step / steps) + 1;
    for (const a of nodes) { a.dx = (width / 2 - a.x) * 0.05; a.dy = (height / 2 - a.y) * 0.05; }
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = nodes[i], b = nodes[j];
        const dx = a.x - b.x, dy = a.y - b.y;
        const d = Math.max(Math.sqrt(dx * dx + dy * dy), 0.5);
        const f = k * k / d / d;
        a.dx += dx * f; a.dy += dy * f; b.dx -= dx * f; b.dy -= dy * f;
      }
    }
    for (const [a, b, r] of edges) {
      const dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.max(Math.sqrt(dx * dx + dy * dy), 0.5);
      const f = d / k * Math.min(r.weight || 0.5, 1);
      a.dx += dx * f; a.dy += dy * f; b.dx -= dx * f; b.dy -= dy * f;
    }
    for (const a of nodes) {
      const len = Math.max(Math.sqrt(a.dx * a.dx + a.dy * a.dy), 1e-9);
      const move = Math.min(len, temperature);
      a.x = Math.min(width - 20, Math.max(20, a.x + a.dx / len * move));
      a.y = Math.min(height - 20, Math.max(20, a.y + a.dy / len * move));
    }
  }
}

function drawGraph(graph) {
  const box = $("#graph-svg");
  const nodes = graph.entities.map((e) => Object.assign({}, e));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = graph.relations.filter((r) => byId.has(r.source_id) && byId.has(r.target_id))
    .map((r) => [byId.get(r.source_id), byId.get(r.target_id), r]);
  if (!nodes.length) {
    box.replaceChildren(svg("text", { x: 400, y: 300, "text-anchor": "middle" },
      graph.settings && graph.settings.extractor ? "No entity yet: upload documents." : "Graph extraction is off for this knowledge base: enable it, then upload documents."));
    return;
  }
  layout(nodes, edges, 800, 600);
  const lines = edges.map(([a, b, r]) => svg("line", {
    x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": Math.min(1 + r.weight, 4),
  }, svg("title", {}, a.name + " " + r.relation + " " + b.name)));
  const maxWeight = Math.max(...nodes.map((n) => n.weight || 1));
  const groups = nodes.map((node) => {
    const radius = 6 + 10 * Math.sqrt((node.weight || 1) / maxWeight);
    const g = svg("g", {
      class: "node " + (node.type === "concept" ? "concept" : "name"), tabindex: 0, role: "button",
      "aria-label": node.name + " (" + node.type + ", " + node.mentions + " mentions)",
      "data-entity": node.name, transform: "translate(" + node.x.toFixed(1) + " " + node.y.toFixed(1) + ")",
      onclick: () => openEntity(node.name),
      onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openEntity(node.name); } },
    }, svg("circle", { r: radius.toFixed(1) }),
    // Labels on the right half point left so that they stay inside the view.
    node.x > 560 ? svg("text", { x: -radius - 3, y: 4, "text-anchor": "end" }, node.name)
      : svg("text", { x: radius + 3, y: 4 }, node.name));
    return g;
  });
  box.replaceChildren(svg("g", {}, ...lines), svg("g", {}, ...groups));
}

function markNodes(predicate, cls) {
  for (const g of document.querySelectorAll("#graph-svg .node")) {
    g.classList.toggle(cls, predicate(g.dataset.entity));
  }
}

async function openEntity(name) {
  markNodes((n) => n === name, "selected");
  const panel = $("#entity-panel");
  try {
    const data = await api(kbPath(state.kb) + "/graph/entities/" + encodeURIComponent(name));
    const e = data.entity;
    const mentions = data.mentions.map((m) => el("li", {},
      el("strong", {}, m.source || m.document_id),
      m.evidence ? el("p", { class: "muted" }, "“" + m.evidence + "”") : "",
      el("p", { class: "text" }, ...highlighted(m.text || "", e.name))));
    const neighbours = data.neighbours.map((nb) => el("button", {
      type: "button", onclick: () => openEntity(nb.name), title: nb.relation,
    }, nb.name + " (" + nb.relation.replace(/_/g, " ") + ")"));
    const documents = [...new Set(data.mentions.map((m) => m.source || m.document_id))];
    panel.replaceChildren(
      el("h2", {}, e.name),
      el("p", { class: "muted" }, e.type + " · " + e.mentions + " mentions in " + e.documents + " documents" +
        (e.aliases && e.aliases.length ? " · also " + e.aliases.join(", ") : "")),
      el("h3", {}, "Documents"), el("ul", {}, ...documents.map((d) => el("li", {}, d))),
      neighbours.length ? el("h3", {}, "Neighbours") : "", el("div", { class: "neigh" }, ...neighbours),
      el("h3", {}, "Passages"), el("ul", { class: "mentions" }, ...mentions));
  } catch (error) { report(error); }
}

async function toggleGraph() {
  if (!needKb()) return;
  const on = state.graph && state.graph.settings && state.graph.settings.extractor;
  try {
    await api(kbPath(state.kb) + "/graph", "PUT", { enabled: !on, extractor: "offline" });
    await screens.graph();
    say(on ? "Graph extraction is off." : "Graph extraction is on for documents uploaded from now on.");
  } catch (error) { report(error); }
}

function findEntity() {
  const query = $("#graph-search").value.trim().toLowerCase();
  markNodes((n) => Boolean(query) && n.toLowerCase().includes(query), "match");
  if (!query || !state.graph) return;
  const hit = state.graph.entities.find((e) => e.name.toLowerCase() === query) ||
    state.graph.entities.find((e) => e.name.toLowerCase().includes(query));
  openEntity(hit ? hit.name : query);
}
