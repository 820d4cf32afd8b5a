// ragloom's web page: plain JavaScript over the native API (/api), no build step.
// Everything that comes from documents, models or users is put in the page as text
// (textContent / text nodes), never parsed as HTML.
"use strict";

const KEY = "ragloom.apiKey";
const state = { kb: null, kbs: [], session: null, llm: "", graph: null, screen: "kbs" };
const $ = (sel) => document.querySelector(sel);

// el("p", {class: "x"}, "text", child): an element whose strings become text nodes.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "text") node.textContent = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(message, isError) {
  const box = $("#status");
  box.textContent = message || "";
  box.classList.toggle("error", Boolean(isError));
}

// ---- API ------------------------------------------------------------------------
class ApiFailure extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function headers(extra) {
  const h = Object.assign({}, extra || {});
  const key = sessionStorage.getItem(KEY);
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

let keyPrompt = null;
function askForKey() {
  if (keyPrompt) return keyPrompt;
  const dialog = $("#key-dialog");
  keyPrompt = new Promise((resolve) => {
    const done = () => {
      const value = $("#key-input").value.trim();
      if (value) sessionStorage.setItem(KEY, value);
      keyPrompt = null;
      resolve(Boolean(value));
    };
    dialog.addEventListener("close", done, { once: true });
    dialog.showModal();
  });
  return keyPrompt;
}

async function errorMessage(response) {
  try {
    const body = await response.json();
    if (body && body.error && body.error.message) return body.error.message;
  } catch (e) { /* not JSON */ }
  return response.status + " " + response.statusText;
}

// fetch with the key; a 401 asks for a key and tries again.
async function call(path, options) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const opts = Object.assign({}, options || {});
    opts.headers = headers(opts.headers);
    const response = await fetch(path, opts);
    if (response.status === 401) {
      sessionStorage.removeItem(KEY);
      if (await askForKey()) continue;
    }
    if (!response.ok) throw new ApiFailure(response.status, await errorMessage(response));
    return response;
  }
  throw new ApiFailure(401, "an API key is needed");
}

async function api(path, method, body) {
  const options = { method: method || "GET" };
  if (body !== undefined) {
    options.body = JSON.stringify(body);
    options.headers = { "Content-Type": "application/json" };
  }
  const response = await call(path, options);
  return response.status === 204 ? null : response.json();
}

const kbPath = (kb) => "/api/knowledge-bases/" + encodeURIComponent(kb);

// ---- navigation -----------------------------------------------------------------
const screens = {};
function show(name) {
  if (!screens[name]) name = "kbs";
  state.screen = name;
  for (const section of document.querySelectorAll(".screen")) {
    section.hidden = section.id !== "screen-" + name;
  }
  for (const link of document.querySelectorAll("#tabs a")) {
    if (link.dataset.screen === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  say("");
  screens[name]().catch(report);
}

function report(error) {
  say(error && error.message ? error.message : String(error), true);
}

// ---- knowledge bases -------------------------------------------------------------
async function loadKbs() {
  const list = await api("/api/knowledge-bases");
  state.kbs = list.data;
  const select = $("#kb-select");
  select.replaceChildren(...state.kbs.map((kb) => el("option", { value: kb.name }, kb.name)));
  if (!state.kbs.some((kb) => kb.name === state.kb)) {
    state.kb = state.kbs.length ? state.kbs[0].name : null;
  }
  if (state.kb) select.value = state.kb;
  select.disabled = !state.kbs.length;
}

screens.kbs = async function () {
  await loadKbs();
  const rows = state.kbs.map((kb) => el("tr", {},
    el("td", {}, el("a", { href: "#docs", onclick: () => pickKb(kb.name) }, kb.name)),
    el("td", {}, kb.embedder),
    el("td", { class: "num" }, kb.document_count),
    el("td", { class: "num" }, kb.chunk_count),
    el("td", {}, new Date(kb.created_at * 1000).toLocaleString()),
    el("td", {}, el("button", {
      type: "button", class: "danger", "aria-label": "Delete " + kb.name,
      onclick: () => deleteKb(kb.name),
    }, "Delete"))));
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No knowledge base yet: create one above.")));
  $("#kb-table tbody").replaceChildren(...rows);
};

function pickKb(name) {
  state.kb = name;
  state.session = null;
  $("#kb-select").value = name;
}

async function deleteKb(name) {
  if (!confirm("Delete the knowledge base " + name + " and all its documents?")) return;
  await api(kbPath(name), "DELETE").catch(report);
  await screens.kbs().catch(report);
}

async function createKb(event) {
  event.preventDefault();
  const form = event.target;
  const body = { name: form.name.value.trim() };
  if (form.embedder.value.trim()) body.embedder = form.embedder.value.trim();
  if (form.chunk_size.value) body.chunking = { chunk_size: Number(form.chunk_size.value) };
  try {
    const kb = await api("/api/knowledge-bases", "POST", body);
    if (form.graph.checked) {
      await api(kbPath(kb.id) + "/graph", "PUT", { enabled: true, extractor: "offline" });
    }
    form.reset();
    pickKb(kb.name);
    await screens.kbs();
    say("Created " + kb.name + ".");
  } catch (error) { report(error); }
}

function needKb() {
  if (state.kb) return true;
  say("Create a knowledge base first.", true);
  return false;
}

// ---- documents -------------------------------------------------------------------
screens.docs = async function () {
  await loadKbs();
  await loadDocs();
};

async function loadDocs() {
  const body = $("#doc-table tbody");
  if (!state.kb) { body.replaceChildren(); return needKb(); }
  const list = await api(kbPath(state.kb) + "/documents");
  const filter = $("#doc-filter").value.trim().toLowerCase();
  const docs = list.data.filter((d) => !filter || d.source.toLowerCase().includes(filter));
  const rows = docs.map((doc) => el("tr", {},
    el("td", {}, doc.source),
    el("td", { class: "num" }, doc.chunk_count),
    el("td", {}, (doc.metadata && doc.metadata.mime_type) || ""),
    el("td", {}, el("button", {
      type: "button", class: "danger", "aria-label": "Delete " + doc.source,
      onclick: () => deleteDoc(doc),
    }, "Delete"))));
  if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: 4, class: "muted" }, list.data.length ? "No document matches the filter." : "No document yet.")));
  body.replaceChildren(...rows);
}

async function deleteDoc(doc) {
  if (!confirm("Delete " + doc.source + "?")) return;
  try {
    await api(kbPath(state.kb) + "/documents/" + encodeURIComponent(doc.id), "DELETE");
    await loadDocs();
  } catch (error) { report(error); }
}

const STATUS_TEXT = { uploading: "uploading", in_progress: "in progress", completed: "completed", failed: "failed", cancelled: "cancelled" };

function uploadFiles(files) {
  if (!needKb()) return;
  for (const file of files) uploadOne(file, state.kb);
}

// One request per file so that each file has its own progress bar and job.
function uploadOne(file, kb) {
  const bar = el("progress", { max: 100, value: 0, "aria-label": "Upload of " + file.name });
  const status = el("span", { class: "state-uploading" }, "uploading");
  const row = el("li", { "data-file": file.name }, el("span", { class: "name" }, file.name), bar, status);
  $("#uploads").prepend(row);
  const setStatus = (name, detail) => {
    status.className = "state-" + name;
    status.textContent = STATUS_TEXT[name] + (detail ? ": " + detail : "");
    row.dataset.status = name;
  };
  const form = new FormData();
  form.append("files", file, file.name);
  const send = (retried) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", kbPath(kb) + "/documents");
    const key = sessionStorage.getItem(KEY);
    if (key) xhr.setRequestHeader("Authorization", "Bearer " + key);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = Math.round(100 * e.loaded / e.total); };
    xhr.onerror = () => setStatus("failed", "the upload did not reach the server");
    xhr.onload = async () => {
      if (xhr.status === 401 && !retried) {
        sessionStorage.removeItem(KEY);
        if (await askForKey()) return send(true);
      }
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch (e) { /* not JSON */ }
      if (xhr.status !== 202 || !body || !body.jobs || !body.jobs.length) {
        const message = body && body.error ? body.error.message : "HTTP " + xhr.status;
        return setStatus("failed", message);
      }
      bar.value = 100;
      setStatus("in_progress");
      pollJob(body.jobs[0].id, setStatus);
    };
    xhr.send(form);
  };
  send(false);
}

async function pollJob(jobId, setStatus) {
  let delay = 300;
  for (;;) {
    let job;
    try { job = await api("/api/jobs/" + encodeURIComponent(jobId)); } catch (error) {
      return setStatus("failed", error.message);
    }
    if (job.status !== "in_progress") {
      const detail = job.status === "completed"
        ? job.chunks + (job.chunks === 1 ? " chunk" : " chunks")
        : job.error ? (job.error.reason ? job.error.reason + " — " : "") + job.error.message : "";
      setStatus(job.status, detail);
      if (state.screen === "docs") loadDocs().catch(report);
      return;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 1.5, 2000);
  }
}

// ---- chat ------------------------------------------------------------------------
screens.chat = async function () {
  await loadKbs();
  await loadSessions();
  if (state.session) await openSession(state.session);
  else $("#messages").replaceChildren(el("p", { class: "muted" }, "Ask a question: a new chat starts over the selected knowledge base."));
};

async function loadSessions() {
  const list = await api("/api/sessions");
  // The sessions over the knowledge base chosen in the header.
  const current = state.kbs.find((kb) => kb.name === state.kb);
  const mine = list.data.filter((s) => !current || s.knowledge_bases.includes(current.id));
  if (state.session && !mine.some((s) => s.id === state.session)) state.session = null;
  const items = mine.map((s) => el("li", {},
    el("button", {
      type: "button", class: "open", "aria-current": s.id === state.session ? "true" : null,
      title: s.title, onclick: () => openSession(s.id).catch(report),
    }, s.title || "Untitled chat"),
    el("button", { type: "button", class: "del", "aria-label": "Delete chat " + (s.title || s.id), onclick: () => deleteSession(s.id) }, "×")));
  $("#session-list").replaceChildren(...items);
}

async function deleteSession(id) {
  try {
    await api("/api/sessions/" + encodeURIComponent(id), "DELETE");
    if (state.session === id) state.session = null;
    await screens.chat();
  } catch (error) { report(error); }
}

async function openSession(id) {
  state.session = id;
  const session = await api("/api/sessions/" + encodeURIComponent(id));
  const box = $("#messages");
  box.replaceChildren();
  for (const message of session.messages) {
    if (message.role === "user") box.append(userMessage(message.content));
    else {
      const view = answerView();
      box.append(view.node);
      view.finish({ answer: message.content, sources: message.sources || [], citations: message.citations || [] });
    }
  }
  await loadSessions();
}

function userMessage(text) {
  return el("div", { class: "msg user" }, el("div", { class: "body" }, el("p", {}, text)));
}

// Answer text as paragraphs; "[n]" becomes a button opening source n.
function renderAnswer(text, sources) {
  const body = el("div", { class: "answer-text" });
  for (const para of String(text).split(/\n{2,}/)) {
    const p = el("p");
    const parts = para.split(/\[(\d+)\]/);
    parts.forEach((part, i) => {
      if (i % 2 === 0) { if (part) p.append(document.createTextNode(part)); return; }
      const source = sources.find((s) => s.number === Number(part));
      if (!source) { p.append(document.createTextNode("[" + part + "]")); return; }
      p.append(el("button", {
        type: "button", class: "cite", "aria-label": "Source " + part + ": " + source.source,
        onclick: () => openPassage(source, quoteFor(source)),
      }, part));
    });
    body.append(p);
  }
  return body;
}

let currentQuotes = [];
function quoteFor(source) {
  const q = currentQuotes.find((x) => x.number === source.number) || currentQuotes[0];
  return q ? q.text : "";
}

// The server's model is "provider:model"; an answer names the model that wrote it, maybe
// with a provider's version suffix. Neither containing the other: the fallback answered.
function fromOtherModel(model) {
  if (!model || !state.llm || state.llm === "none") return false;
  const a = model.toLowerCase(), b = state.llm.toLowerCase();
  const bare = (x) => x.slice(x.indexOf(":") + 1);
  return !(a === b || a.includes(bare(b)) || b.includes(bare(a)));
}

function answerView() {
  const node = el("div", { class: "msg assistant" });
  const notices = el("div");
  const body = el("div", { class: "body" }, el("p", { class: "muted" }, "Searching…"));
  node.append(notices, body);
  let text = "";
  let sources = [];
  return {
    node,
    sources(payload) {
      sources = payload.sources || [];
      if (payload.degraded || payload.notice) notices.append(el("p", { class: "notice" }, payload.notice || "Answered from a fallback search."));
      body.replaceChildren(el("p", { class: "muted" }, sources.length ? "Writing the answer…" : "No passage found."));
    },
    delta(piece) {
      text += piece;
      body.replaceChildren(el("p", {}, text));
    },
    finish(done) {
      sources = done.sources || sources;
      const quotes = done.supporting_quotes || [];
      currentQuotes = quotes;
      if (fromOtherModel(done.model)) {
        notices.append(el("p", { class: "notice" }, "Answered by the fallback model " + done.model + "."));
      }
      if (done.origin === "quote") {
        notices.append(el("p", { class: "notice" }, "The model's answer was not supported by the sources, so the evidence is quoted."));
      }
      const quoteNodes = quotes.filter((q) => q.text).map((q) => el("blockquote", { class: "quote" }, q.text, q.number ? " [" + q.number + "]" : ""));
      const cited = new Set((done.citations || []).map((c) => c.number));
      const list = el("ol", { class: "sources", "aria-label": "Sources" }, ...sources
        .filter((s) => !cited.size || cited.has(s.number))
        .map((s) => el("li", { value: s.number }, el("button", {
          type: "button", onclick: () => openPassage(s, quoteFor(s)),
        }, s.source + (s.page ? ", page " + s.page : "")))));
      body.replaceChildren(renderAnswer(done.answer || text, sources), ...quoteNodes, sources.length ? list : "");
      const mine = quotes;
      node.addEventListener("click", () => { currentQuotes = mine; }, true);
    },
    fail(message) {
      body.append(el("p", { class: "notice" }, "The answer failed: " + message));
    },
  };
}

async function ask(event) {
  event.preventDefault();
  const field = $("#question");
  const question = field.value.trim();
  if (!question || !needKb()) return;
  const button = $("#ask-button");
  button.disabled = true;
  try {
    if (!state.session) {
      const session = await api("/api/sessions", "POST", { knowledge_bases: [state.kb], title: question.slice(0, 80) });
      state.session = session.id;
      await loadSessions();
      $("#messages").replaceChildren();
    }
    field.value = "";
    const view = answerView();
    $("#messages").append(userMessage(question), view.node);
    const response = await call("/api/sessions/" + encodeURIComponent(state.session) + "/ask", {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question, stream: true }),
    });
    await readEvents(response, (name, data) => {
      if (name === "sources") view.sources(data);
      else if (name === "delta") view.delta(data.text || "");
      else if (name === "done") view.finish(data);
      else if (name === "error") view.fail(data.error ? data.error.message : "unknown error");
    });
  } catch (error) { report(error); } finally { button.disabled = false; }
}

// Server-sent events from a fetch body: blocks separated by a blank line.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const flush = (block) => {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length) onEvent(name, JSON.parse(data.join("\n")));
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      flush(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
    }
  }
  if (buffer.trim()) flush(buffer);
}

// The cited passage with the quote (or the given words) highlighted.
function openPassage(source, highlight) {
  $("#passage-title").textContent = "[" + source.number + "] " + source.source;
  $("#passage-meta").textContent = [source.page ? "page " + source.page : "", "passage " + (source.index + 1),
    source.knowledge_base ? "knowledge base " + source.knowledge_base : ""].filter(Boolean).join(" · ");
  $("#passage-text").replaceChildren(...highlighted(source.text || "", highlight));
  $("#passage-dialog").showModal();
}

function highlighted(text, needle) {
  const at = needle ? text.toLowerCase().indexOf(needle.trim().toLowerCase()) : -1;
  if (at < 0) return [document.createTextNode(text)];
  const end = at + needle.trim().length;
  return [document.createTextNode(text.slice(0, at)), el("mark", {}, text.slice(at, end)),
    document.createTextNode(text.slice(end))];
}

// ---- search ----------------------------------------------------------------------
screens.search = async function () { await loadKbs(); };

async function search(event) {
  event.preventDefault();
  if (!needKb()) return;
  const form = event.target;
  const body = { query: form.query.value, knowledge_bases: [state.kb], mode: form.mode.value,
    top_k: Number(form.top_k.value || 5), graph: form.graph.checked };
  if (form.filters.value.trim()) {
    try { body.filters = JSON.parse(form.filters.value); } catch (e) {
      return say("Filters are not valid JSON: " + e.message, true);
    }
  }
  try {
    const result = await api("/api/search", "POST", body);
    const notice = $("#search-notice");
    notice.hidden = !(result.degraded || result.notice);
    notice.textContent = result.notice || "";
    const items = result.matches.map((m) => el("li", {},
      el("div", { class: "meta" }, el("strong", {}, m.source), m.page ? ", page " + m.page : "",
        " · score " + m.score.toFixed(3) + " (raw " + m.raw_score.toFixed(3) + ")"),
      el("p", { class: "text" }, m.text)));
    if (!items.length) items.push(el("li", { class: "muted" }, "No match."));
    $("#search-results").replaceChildren(...items);
  } catch (error) { report(error); }
}

// ---- graph -----------------------------------------------------------------------
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

// ---- start -----------------------------------------------------------------------
function wire() {
  $("#kb-form").addEventListener("submit", createKb);
  $("#kb-select").addEventListener("change", (e) => { pickKb(e.target.value); show(state.screen); });
  const drop = $("#drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => { e.preventDefault(); drop.classList.remove("over"); uploadFiles(e.dataTransfer.files); });
  $("#file-input").addEventListener("change", (e) => { uploadFiles(e.target.files); e.target.value = ""; });
  $("#doc-filter").addEventListener("input", () => loadDocs().catch(report));
  $("#doc-refresh").addEventListener("click", () => loadDocs().catch(report));
  $("#new-session").addEventListener("click", () => { state.session = null; screens.chat().catch(report); $("#question").focus(); });
  $("#ask-form").addEventListener("submit", ask);
  $("#question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#ask-form").requestSubmit(); }
  });
  $("#search-form").addEventListener("submit", search);
  $("#graph-go").addEventListener("click", findEntity);
  $("#graph-search").addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); findEntity(); } });
  $("#graph-search").addEventListener("input", () => {
    const q = $("#graph-search").value.trim().toLowerCase();
    markNodes((n) => Boolean(q) && n.toLowerCase().includes(q), "match");
  });
  $("#graph-toggle").addEventListener("click", toggleGraph);
  $("#key-form").addEventListener("submit", (e) => { e.preventDefault(); $("#key-dialog").close(); });
  $("#passage-close").addEventListener("click", () => $("#passage-dialog").close());
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
}

async function start() {
  wire();
  fetch("/ready").then((r) => r.json()).then((r) => { state.llm = r.llm || ""; }).catch(() => {});
  show(location.hash.slice(1) || "kbs");
}

document.addEventListener("DOMContentLoaded", start);
