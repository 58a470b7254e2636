// tooldeck console: the few live parts of server-rendered pages. No dependencies.
//
// * Live updates: the server's event stream (/events) says which topic changed (runs,
//   approvals, metrics, settings, tools); parts of the page marked data-live="topic ..." are
//   reloaded from the server (the same page, rendered and escaped there) unless the person is
//   typing in them or has typed in them.
// * The Approvals badge in the navigation bar counts the calls waiting for a person.
// * Filters (input[data-filter]) hide table rows whose data-filter-text does not match.
// * Routing cells show their decision's reason when clicked.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]');
  // The versions the page's data is at least as new as: a topic that moved on since it was
  // rendered (even before the event stream connected) reloads the parts that show it.
  let seen = {};
  try { seen = JSON.parse(document.body.getAttribute("data-versions") || "{}"); } catch (e) { seen = {}; }

  function setBadge(count) {
    const badge = document.getElementById("pending-count");
    if (!badge) return;
    if (typeof count === "number" && count > 0) {
      badge.textContent = String(count);
      badge.hidden = false;
    } else {
      badge.hidden = true;
    }
  }

  function regionsFor(topic) {
    return Array.from(document.querySelectorAll("[data-live]")).filter(function (el) {
      return el.getAttribute("data-live").split(/\s+/).indexOf(topic) >= 0;
    });
  }

  let reloading = null;
  function reload(topic) {
    const regions = regionsFor(topic);
    if (!regions.length) return;
    if (reloading) return;
    reloading = fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (text === null) return;
        const fresh = new DOMParser().parseFromString(text, "text/html");
        const all = Array.from(document.querySelectorAll("[data-live]"));
        const next = Array.from(fresh.querySelectorAll("[data-live]"));
        all.forEach(function (region, i) {
          if (regions.indexOf(region) < 0 || !next[i]) return;
          if (region.contains(document.activeElement) && document.activeElement !== document.body) return;
          if (region.getAttribute("data-dirty")) return;  // the person typed in it: keep what they wrote
          region.replaceWith(document.importNode(next[i], true));
        });
        document.dispatchEvent(new CustomEvent("console:refreshed"));
      })
      .catch(function () {})
      .finally(function () { reloading = null; });
  }

  function listen() {
    if (!window.EventSource) return;
    const status = document.getElementById("live-status");
    const source = new EventSource("/events");
    source.addEventListener("open", function () {
      if (status) { status.classList.add("on"); status.title = "live updates: on"; }
    });
    source.addEventListener("error", function () {
      if (status) { status.classList.remove("on"); status.title = "live updates: reconnecting"; }
    });
    source.addEventListener("change", function (event) {
      let data;
      try { data = JSON.parse(event.data); } catch (e) { return; }
      if (data.topic === "approvals" && data.extra !== undefined) setBadge(data.extra);
      const before = seen[data.topic];
      seen[data.topic] = data.version;
      if (before !== undefined && before !== data.version) reload(data.topic);
    });
  }

  function filters() {
    document.querySelectorAll("input[data-filter]").forEach(function (input) {
      input.addEventListener("input", function () {
        const query = input.value.trim().toLowerCase();
        const table = document.querySelector(input.getAttribute("data-filter"));
        if (!table) return;
        table.querySelectorAll("tbody tr").forEach(function (row) {
          const text = (row.getAttribute("data-filter-text") || row.textContent).toLowerCase();
          row.hidden = query !== "" && text.indexOf(query) < 0;
        });
      });
    });
  }

  function explainCells() {
    const panel = document.getElementById("explain-panel");
    const text = document.getElementById("explain-text");
    if (!panel || !text) return;
    document.addEventListener("click", function (event) {
      const cell = event.target.closest ? event.target.closest(".cell-button") : null;
      if (!cell) return;
      text.textContent = cell.getAttribute("data-explain") || "";
      panel.hidden = false;
    });
    const close = document.getElementById("explain-close");
    if (close) close.addEventListener("click", function () { panel.hidden = true; });
  }

  // Forms the script sends itself carry the CSRF token as a header too.
  window.tooldeckConsole = { csrfToken: csrf ? csrf.getAttribute("content") : "" };

  // A part of the page the person typed in is not reloaded under them.
  function markDirty() {
    document.addEventListener("input", function (event) {
      const region = event.target.closest ? event.target.closest("[data-live]") : null;
      if (region) region.setAttribute("data-dirty", "1");
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    markDirty();
    filters();
    explainCells();
    listen();
  });
})();
