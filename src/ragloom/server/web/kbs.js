// ragloom web page: the knowledge bases screen.
// Loaded after core.js: classic scripts share one global scope.
"use strict";

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
