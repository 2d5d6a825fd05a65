// cloudflow-deployer console: the one hand-written script (no framework, no network but this
// emulator). Pages are complete without it; it adds live updates, selection, forms and keys.
// Live updates apply server-computed deltas: there is no second copy of the fold here.

const token = document.querySelector('meta[name="emulator-token"]')?.content || "";
const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Emulator-Token": token },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(`${data.Code || response.status}: ${data.Message || "failed"}`);
  return data;
}

function jsonField(textarea, errorBox) {
  try {
    const value = JSON.parse(textarea.value || "{}");
    errorBox.textContent = "";
    return value;
  } catch (error) {
    errorBox.textContent = `Invalid JSON: ${error.message}`;
    textarea.focus();
    return undefined;
  }
}

let lastAnnounce = 0;
function announce(text, force = false) {
  const region = $("[data-announce]");
  const now = Date.now();
  if (!region || (!force && now - lastAnnounce < 2000)) return;
  lastAnnounce = now;
  region.textContent = text;
}

// --- every page -------------------------------------------------------------------------------

$("[data-region-select]")?.addEventListener("change", (event) => {
  location.href = `/_console/r/${encodeURIComponent(event.target.value)}/flows`;
});

for (const input of $$("[data-filter]")) {
  const table = $(`[data-filterable="${input.dataset.filter}"]`);
  input.addEventListener("input", () => {
    const needle = input.value.toLowerCase();
    for (const row of $$("tbody tr", table)) row.hidden = !row.dataset.name.toLowerCase().includes(needle);
  });
}

for (const form of $$("form[data-start]")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const errorBox = $(".form-error", form);
    const value = jsonField(form.elements.input, errorBox);
    if (value === undefined) return;
    try {
      const started = await post(form.dataset.start, { name: form.elements.name.value, input: JSON.stringify(value) });
      location.href = started.url;
    } catch (error) { errorBox.textContent = error.message; }
  });
}

for (const form of $$("form[data-invoke]")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const errorBox = $(".form-error", form);
    const value = jsonField(form.elements.event, errorBox);
    if (value === undefined) return;
    const out = $("[data-invoke-result]");
    try {
      const result = await post(form.dataset.invoke, { event: JSON.stringify(value) });
      out.hidden = false;
      out.textContent = `${result.status} (${result.request_id})\n${result.payload || ""}\n\n${result.log || ""}`;
    } catch (error) { errorBox.textContent = error.message; }
  });
}

for (const button of $$("[data-copy]")) {
  button.addEventListener("click", () => navigator.clipboard?.writeText(button.dataset.copy));
}
$("[data-copy-link]")?.addEventListener("click", () => navigator.clipboard?.writeText(location.href));

// --- the header's engine facts, live on every page ----------------------------------------------

function applyFacts(facts) {
  const engine = $("[data-engine]");
  if (engine) engine.textContent = `${facts.running} running · ${facts.timers} timers · ${facts.in_flight} in flight`;
  const clock = $("[data-clock]");
  if (clock) {
    if (facts.clock === "virtual") clock.innerHTML = `virtual · <time datetime="${facts.now}">${facts.now}</time>`;
    else clock.textContent = facts.clock;
  }
}
function setFactsLive(on) {
  const dot = $("[data-facts-live]");
  if (!dot) return;
  dot.dataset.factsLive = on ? "on" : "off";
  dot.title = on ? "The header's engine facts update live" : "Not updating (reconnecting)";
}
let engineSource = null;
function engineStream() {
  if (engineSource || !$("[data-engine]")) return;
  engineSource = new EventSource("/_console/api/engine/stream");
  engineSource.addEventListener("open", () => setFactsLive(true));
  engineSource.addEventListener("engine", (event) => applyFacts(JSON.parse(event.data)));
  engineSource.addEventListener("error", () => setFactsLive(false));
}

// --- the execution page -----------------------------------------------------------------------

const bootNode = $("#console-state");
if (bootNode) executionPage(JSON.parse(bootNode.textContent));
else engineStream();

function executionPage(boot) {
  const state = { ...boot, pinnedState: boot.state, pinnedVisit: boot.visit };
  const actionError = $("[data-action-error]");

  function setQuery(changes) {
    const url = new URL(location.href);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === undefined || value === "") url.searchParams.delete(key);
      else url.searchParams.set(key, value);
    }
    history.replaceState(null, "", url);
  }

  // tabs
  const tabs = $$("[data-tab]");
  function showTab(key) {
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.tab === key));
    for (const panel of $$("[data-view]")) panel.hidden = panel.dataset.view !== key;
    setQuery({ view: key === "graph" ? null : key });
  }
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", (event) => { event.preventDefault(); showTab(tab.dataset.tab); });
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      const next = tabs[(i + step + tabs.length) % tabs.length];
      next.focus();
      showTab(next.dataset.tab);
    });
  });
  $(".skip-inline")?.addEventListener("click", (event) => { event.preventDefault(); showTab("table"); $("[data-table-view]")?.focus(); });

  // selection: nodes, visit links
  const nodes = () => $$("svg.graph .node");
  function markSelected(name) {
    for (const node of nodes()) node.setAttribute("aria-pressed", String(node.dataset.key === name));
  }
  async function select(name, visit) {
    state.pinnedState = name;
    state.pinnedVisit = visit || null;
    markSelected(name);
    setQuery({ state: name, visit: visit || null });
    const url = new URL(boot.panel, location.origin);
    url.searchParams.set("state", name);
    if (visit) url.searchParams.set("visit", visit);
    const response = await fetch(url);
    if (response.ok) {
      const data = await response.json();
      $("[data-panel]").innerHTML = data.html;
    }
    if (!state.finished) connect(); // the stream's panel follows the new selection
  }
  for (const node of nodes()) {
    node.addEventListener("click", () => select(node.dataset.key));
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(node.dataset.key); return; }
      const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const all = nodes();
      all[(all.indexOf(node) + step + all.length) % all.length].focus();
    });
  }
  $("[data-panel]")?.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-visit]");
    if (!link) return;
    event.preventDefault();
    select(state.pinnedState || state.selected.state, Number(link.dataset.visit));
  });

  // events filter
  const filter = () => {
    const kind = $("[data-event-filter]")?.value || "";
    for (const row of $$("[data-events] tbody tr")) row.hidden = kind !== "" && row.dataset.kind !== kind;
  };
  document.addEventListener("change", (event) => { if (event.target.matches("[data-event-filter]")) filter(); });

  // stop and start again
  const stop = $("[data-stop]");
  stop?.addEventListener("click", () => {
    if ($(".confirm")) return;
    const box = document.createElement("div");
    box.className = "confirm";
    box.innerHTML = '<span>Stop this execution?</span><label>Error <input name="error" maxlength="128"></label>' +
      '<label>Cause <input name="cause" maxlength="4096"></label><button type="button" class="danger" data-confirm-stop>Stop execution</button>' +
      '<button type="button" data-cancel>Cancel</button>';
    stop.after(box);
    $("[data-cancel]", box).addEventListener("click", () => box.remove());
    $("[data-confirm-stop]", box).addEventListener("click", async () => {
      try {
        await post(stop.dataset.stop, { error: $("input[name=error]", box).value, cause: $("input[name=cause]", box).value });
        box.remove();
      } catch (error) { actionError.textContent = error.message; }
    });
    $("[data-confirm-stop]", box).focus();
  });
  const again = $("[data-start-again]");
  again?.addEventListener("click", async () => {
    try {
      const started = await post(again.dataset.startAgain, { name: "", input: again.dataset.input });
      location.href = started.url;
    } catch (error) { actionError.textContent = error.message; }
  });

  // live updates: one server-sent-event stream, keyed on the execution's version
  const liveBadge = $("[data-live]");
  const LIVE = { connecting: "○ Connecting…", live: "● Live", reconnecting: "○ Reconnecting…",
    final: "Final", gone: "Deleted" };
  function setLive(mode) {
    if (!liveBadge) return;
    liveBadge.dataset.live = mode;
    liveBadge.textContent = LIVE[mode];
  }
  function applyNode(n) {
    const el = $(`svg.graph .node[data-key="${CSS.escape(n.key)}"]`);
    if (!el) return;
    el.dataset.status = n.status;
    el.dataset.visits = String(n.visits);
    el.setAttribute("aria-label", n.aria);
    $(".icon", el).textContent = n.icon;
    $(".sub", el).textContent = n.sub;
    const badge = $(".vbadge", el);
    if (n.visits < 2) badge.setAttribute("display", "none"); else badge.removeAttribute("display");
    $("text", badge).textContent = `×${n.visits}`;
  }
  function applyEdge(e) {
    const el = $(`svg.graph [data-edge="${CSS.escape(e.key)}"]`);
    if (!el) return;
    el.classList.toggle("taken", e.taken);
    $("path", el).setAttribute("marker-end", `url(#arrow${e.taken ? "-taken" : ""})`);
    $(".ecount", el).textContent = e.count > 1 ? `×${e.count}` : "";
  }
  function apply(delta) {
    delta.nodes.forEach(applyNode);
    delta.edges.forEach(applyEdge);
    const s = delta.summary;
    const summary = $("[data-summary]");
    summary.innerHTML = delta.html.summary;
    summary.dataset.version = String(s.version);
    for (const key of ["table", "events", "timeline"]) {
      const box = $(`[data-fragment="${key}"]`);
      if (box) box.innerHTML = delta.html[key];
    }
    filter();
    const output = $('[data-fragment="output"]');
    if (output) output.textContent = delta.html.output;
    $("[data-panel]").innerHTML = delta.html.panel;
    state.selected = delta.selected;
    markSelected(delta.selected.state);
    state.version = s.version;
    state.finished = s.finished;
    if (stop) stop.hidden = s.finished;
    if (s.finished) { $(".confirm")?.remove(); announce(`Execution ${s.name}: ${s.word}`, true); }
    else if (s.current) announce(`Execution ${s.name}: ${s.current}`);
  }
  function streamUrl() {
    const url = new URL(boot.stream, location.origin);
    const params = { state: state.pinnedState, visit: state.pinnedVisit, page: boot.page, since: state.version };
    for (const [key, value] of Object.entries(params)) if (value !== null && value !== undefined) url.searchParams.set(key, value);
    return url;
  }
  let source = null;
  function connect() {
    source?.close();
    if (state.finished) { setLive("final"); engineStream(); return; }
    setLive("connecting");
    const events = new EventSource(streamUrl());
    source = events;
    events.addEventListener("open", () => { setLive("live"); setFactsLive(true); });
    events.addEventListener("step", (event) => apply(JSON.parse(event.data)));
    events.addEventListener("engine", (event) => applyFacts(JSON.parse(event.data)));
    events.addEventListener("end", () => { events.close(); state.finished = true; setLive("final"); engineStream(); });
    events.addEventListener("gone", () => { events.close(); setLive("gone"); setFactsLive(false); });
    events.addEventListener("error", () => {
      setFactsLive(false);
      if (events.readyState !== EventSource.CLOSED) setLive("reconnecting");
      else if (source === events) setLive("gone");
    });
  }
  connect();
}

