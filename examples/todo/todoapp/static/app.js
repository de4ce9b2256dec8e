// The todo page: every change goes to the JSON API and the list is then
// drawn again from the server's answer, so the page never disagrees with
// the database for long.
"use strict";

const api = "/api/todos";
const list = document.getElementById("todo-list");
const input = document.getElementById("new-todo");
const footer = document.getElementById("footer");
const count = document.getElementById("todo-count");
const errorBox = document.getElementById("error");
let todos = [];

// call sends a request to the API and returns the decoded JSON answer, or
// null for an empty one. A non-2xx answer throws the server's message.
async function call(method, path, body) {
  return (await send(method, api + path, body)).data;
}

// send is call for a full URL; it also returns the response, for its headers.
async function send(method, url, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(url, init);
  const text = await resp.text();
  const data = text ? JSON.parse(text) : null;
  if (!resp.ok) {
    throw new Error((data && data.error) || resp.status + " " + resp.statusText);
  }
  return { resp, data };
}

// loadAll fetches the whole list. The API sends it a page at a time, with
// a Link header rel="next" while more follows; the page needs every todo
// for its counts, so it follows the links to the end. Pages start after
// the last id of the one before, so none is repeated or missed even if
// the list changes meanwhile.
async function loadAll() {
  const all = [];
  for (let url = api; url; ) {
    const { resp, data } = await send("GET", url);
    all.push(...data);
    const next = nextLink(resp.headers.get("Link"));
    url = next && new URL(next, resp.url).href;
  }
  return all;
}

// nextLink returns the target of the rel="next" link in a Link header
// value, or null. Targets are in <>, and the API's never contain , or ;.
function nextLink(header) {
  for (const link of (header || "").split(",")) {
    const m = link.match(/^\s*<([^>]*)>(.*)$/);
    if (m && m[2].split(";").some((p) => /^\s*rel\s*=\s*"?next"?\s*$/i.test(p))) {
      return m[1];
    }
  }
  return null;
}

function showError(err) {
  errorBox.textContent = err ? String(err.message || err) : "";
  errorBox.hidden = !err;
}

// run performs one change, then reloads the list; errors are shown, not lost.
async function run(change) {
  try {
    await change();
    todos = await loadAll();
    showError(null);
  } catch (err) {
    showError(err);
  }
  render();
}

function filter() {
  const state = location.hash.replace(/^#\/?/, "") || "all";
  return ["all", "active", "completed"].includes(state) ? state : "all";
}

function render() {
  const state = filter();
  list.replaceChildren(...todos
    .filter((t) => state === "all" || (state === "completed") === t.completed)
    .map(item));
  const left = todos.filter((t) => !t.completed).length;
  count.textContent = left + (left === 1 ? " item left" : " items left");
  footer.hidden = todos.length === 0;
  document.getElementById("clear-completed").hidden = left === todos.length;
  for (const a of document.querySelectorAll(".filters a")) {
    a.classList.toggle("selected", a.dataset.state === state);
  }
}

// item builds one <li>; the text goes in with textContent, never as HTML.
function item(todo) {
  const li = document.createElement("li");
  li.classList.toggle("completed", todo.completed);

  const box = document.createElement("input");
  box.type = "checkbox";
  box.checked = todo.completed;
  box.setAttribute("aria-label", "completed");
  box.addEventListener("change", () => run(() => call("POST", "/" + todo.id + "/toggle")));

  const label = document.createElement("label");
  label.textContent = todo.text;
  label.addEventListener("dblclick", () => edit(li, todo));

  const destroy = document.createElement("button");
  destroy.className = "destroy";
  destroy.type = "button";
  destroy.textContent = "×";
  destroy.setAttribute("aria-label", "delete");
  destroy.addEventListener("click", () => run(() => call("DELETE", "/" + todo.id)));

  li.append(box, label, destroy);
  return li;
}

// edit swaps the item for a text field: Enter or leaving saves, Escape
// cancels, and saving empty text deletes the todo, as TodoMVC does.
function edit(li, todo) {
  const field = document.createElement("input");
  field.className = "edit";
  field.value = todo.text;
  field.maxLength = 1000;
  let done = false;
  const finish = (save) => {
    if (done) return;
    done = true;
    const text = field.value.trim();
    if (!save || text === todo.text) {
      render();
    } else if (text === "") {
      run(() => call("DELETE", "/" + todo.id));
    } else {
      run(() => call("PUT", "/" + todo.id, { text }));
    }
  };
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter") finish(true);
    if (e.key === "Escape") finish(false);
  });
  field.addEventListener("blur", () => finish(true));
  li.replaceChildren(field);
  field.focus();
}

// The field is emptied once the server has the todo: a text it refuses
// stays in the field, beside the error, to be corrected.
document.getElementById("new-todo-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (text === "") return;
  run(async () => {
    await call("POST", "", { text });
    if (input.value.trim() === text) input.value = "";
  });
});

document.getElementById("clear-completed").addEventListener("click", () =>
  run(() => call("POST", "/clear-completed")));

window.addEventListener("hashchange", render);
run(async () => {});
