// ragloom web page: the chat screen (sessions, streamed answers, citations).
// Loaded after core.js: classic scripts share one global scope.
"use strict";

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

// A small Markdown subset built from DOM nodes (never parsed as HTML): paragraphs,
// "- " / "1. " lists, **bold**, `code`; "[n]" becomes a button opening source n.
function renderAnswer(text, sources) {
  const body = el("div", { class: "answer-text" });
  for (const block of String(text).split(/\n{2,}/)) {
    const lines = block.split("\n").filter((line) => line.trim());
    if (!lines.length) continue;
    const bullet = /^\s*(?:[-*]|\d+[.)])\s+/;
    if (lines.every((line) => bullet.test(line))) {
      const ordered = /^\s*\d/.test(lines[0]);
      body.append(el(ordered ? "ol" : "ul", {}, ...lines.map((line) =>
        el("li", {}, ...inline(line.replace(bullet, ""), sources)))));
    } else {
      body.append(el("p", {}, ...inline(block, sources)));
    }
  }
  return body;
}

function inline(text, sources) {
  const out = [];
  for (const part of text.split(/(\*\*[^*\n]+\*\*|`[^`\n]+`|\[\d+\])/)) {
    if (!part) continue;
    const cite = /^\[(\d+)\]$/.exec(part);
    const source = cite && sources.find((s) => s.number === Number(cite[1]));
    if (source) {
      out.push(el("button", {
        type: "button", class: "cite", "aria-label": "Source " + cite[1] + ": " + source.source,
        onclick: () => openPassage(source, quoteFor(source)),
      }, cite[1]));
    } else if (/^\*\*.+\*\*$/.test(part)) out.push(el("strong", {}, part.slice(2, -2)));
    else if (/^`.+`$/.test(part)) out.push(el("code", {}, part.slice(1, -1)));
    else out.push(document.createTextNode(part));
  }
  return out;
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
      const notice = el("p", { class: "notice" }, "The answer failed: " + message);
      if (text) body.append(notice);
      else body.replaceChildren(notice);
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
