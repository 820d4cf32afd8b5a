// ragloom's web page, shared part: state, element building, API calls with the key.
// Plain JavaScript over the native API (/api), no build step; one file per screen.
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


function needKb() {
  if (state.kb) return true;
  say("Create a knowledge base first.", true);
  return false;
}


// Text with the first occurrence of `needle` in a <mark>; all of it as text nodes.
function highlighted(text, needle) {
  const at = needle ? text.toLowerCase().indexOf(needle.trim().toLowerCase()) : -1;
  if (at < 0) return [document.createTextNode(text)];
  const end = at + needle.trim().length;
  return [document.createTextNode(text.slice(0, at)), el("mark", {}, text.slice(at, end)),
    document.createTextNode(text.slice(end))];
}
