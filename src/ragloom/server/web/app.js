// ragloom web page: wiring and start.
// Loaded after core.js: classic scripts share one global scope.
"use strict";

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
