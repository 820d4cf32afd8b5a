// ragloom web page: the documents screen (uploads with progress, job status, list).
// Loaded after core.js: classic scripts share one global scope.
"use strict";

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
