// ragloom web page: the search screen.
// Loaded after core.js: classic scripts share one global scope.
"use strict";

screens.search = async function () { await loadKbs(); };

async function search(event) {
  event.preventDefault();
  if (!needKb()) return;
  const form = event.target;
  say("");
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
