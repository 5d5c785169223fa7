/* pfgen_fast site: tabs, sortable and filterable leaderboards, column chooser, CSV and JSON
   downloads, and run pages loaded as scripts from runs/ when a run is opened (fetch() of local
   files does not work from file://), with the items they share with other run pages loaded
   once. Data is only ever set as text, never as HTML. */
"use strict";

(function () {
  const $ = (selector, root) => (root || document).querySelector(selector);
  const $$ = (selector, root) => Array.from((root || document).querySelectorAll(selector));

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function numberText(value) {
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value)) return String(value);
    return Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(4);
  }

  /* Tabs: one benchmark's leaderboards at a time. */
  let shownBench = null; // the leaderboard last shown, where a missing run's note leads back to
  let boardsScroll = 0; // how far the leaderboards were scrolled when a run was opened

  /* Back from a run page, its benchmark's leaderboards are scrolled as they were when the run
     was opened; another benchmark's start at the top. */
  function show(bench) {
    let scroll = null;
    if (!$("#run").hidden) scroll = bench === shownBench ? boardsScroll : 0;
    else if (shownBench !== null && bench !== shownBench) scroll = 0;
    shownBench = bench;
    highlight(bench);
    $$("section.bench").forEach((s) => { s.hidden = s.dataset.bench !== bench; });
    $("#boards").hidden = false;
    $("#run").hidden = true;
    if (scroll !== null) window.scrollTo(0, scroll);
  }

  /* The tab of `bench` marked as the one shown (none: null). */
  function highlight(bench) {
    $$("[data-show]").forEach((b) => b.classList.toggle("active", b.dataset.show === bench));
  }

  /* Sorting: a header click sorts by that column, a second click reverses; empty cells last. */
  function cellKey(row, column) {
    const cell = row.querySelector(`td[data-column="${CSS.escape(column)}"]`);
    if (!cell || cell.textContent === "") return null;
    if (cell.dataset.value !== undefined) return Number(cell.dataset.value);
    return cell.textContent.toLowerCase();
  }

  function sortTable(table, th) {
    const column = th.dataset.column;
    const direction = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    $$("th", table).forEach((h) => h.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", direction);
    const sign = direction === "ascending" ? 1 : -1;
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).map((row) => [cellKey(row, column), row]);
    rows.sort((a, b) => {
      if (a[0] === null || b[0] === null) return (a[0] === null) - (b[0] === null);
      if (a[0] < b[0]) return -sign;
      if (a[0] > b[0]) return sign;
      return 0;
    });
    rows.forEach(([, row]) => body.appendChild(row));
  }

  function filterTable(table, query) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of table.tBodies[0].rows) {
      const names = (row.dataset.run + " " + row.textContent).toLowerCase();
      row.hidden = !words.every((w) => names.includes(w));
    }
  }

  function toggleColumn(table, column, visible) {
    $$(`[data-column="${CSS.escape(column)}"]`, table).forEach((c) => {
      c.classList.toggle("hidden-column", !visible);
    });
  }

  /* The table as shown (visible rows in their order, chosen columns) as records: a cell's
     exact value, and its spread as extra columns (NAME_std, NAME_low and NAME_high, or
     NAME_total). */
  function tableRecords(table) {
    const columns = $$("thead th[data-column]", table).filter((th) => !th.classList.contains("hidden-column"));
    const records = [];
    for (const row of table.tBodies[0].rows) {
      if (row.hidden) continue;
      const record = { run: row.dataset.run };
      for (const th of columns) {
        const name = th.dataset.column;
        const cell = row.querySelector(`td[data-column="${CSS.escape(name)}"]`);
        if (cell && cell.dataset.value !== undefined) record[name] = Number(cell.dataset.value);
        else record[name] = cell && cell.textContent !== "" ? cell.textContent : null;
        if (th.dataset.spread === "±") record[name + "_std"] = cell && cell.dataset.std !== undefined ? Number(cell.dataset.std) : null;
        if (th.dataset.spread === "CI") {
          record[name + "_low"] = cell && cell.dataset.low !== undefined ? Number(cell.dataset.low) : null;
          record[name + "_high"] = cell && cell.dataset.high !== undefined ? Number(cell.dataset.high) : null;
        }
        if (th.dataset.spread === "of") record[name + "_total"] = cell && cell.dataset.total !== undefined ? Number(cell.dataset.total) : null;
      }
      records.push(record);
    }
    return records;
  }

  function csvField(value) {
    if (value === null || value === undefined) return "";
    const text = String(value);
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function download(table, format) {
    const records = tableRecords(table);
    let text, type;
    if (format === "json") {
      text = JSON.stringify(records, null, 1);
      type = "application/json";
    } else {
      const header = records.length ? Object.keys(records[0]) : ["run"];
      text = [header, ...records.map((r) => header.map((h) => r[h]))]
        .map((fields) => fields.map(csvField).join(",")).join("\r\n") + "\r\n";
      type = "text/csv";
    }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: type + ";charset=utf-8" }));
    link.download = `${table.dataset.leaderboard}.${format}`;
    document.body.appendChild(link);
    link.click();
    link.remove();
  }

  function setUpBoard(board) {
    const table = $("table[data-leaderboard]", board);
    $$("th[data-column]", table).forEach((th) => th.addEventListener("click", () => sortTable(table, th)));
    $(".filter", board).addEventListener("input", (e) => filterTable(table, e.target.value));
    $$("[data-toggle]", board).forEach((box) => {
      box.addEventListener("change", () => toggleColumn(table, box.dataset.toggle, box.checked));
    });
    $$("[data-download]", board).forEach((b) => b.addEventListener("click", () => download(table, b.dataset.download)));
  }

  /* Run pages: a run's script (runs/ID.DIGEST.js, named in the body's data-scripts) calls
     siteRunLoaded(data). A page that names shared items (an llm-jp-eval-mm task's items with
     every model's answers) has them from their own script, which calls siteSharedLoaded(data)
     and is loaded once for all the pages that name it. */
  const loaded = {};
  const shared = {}; // id -> the shared items, null while their script loads
  const scripts = JSON.parse(document.body.dataset.scripts || "{}"); // id -> its file

  function loadScript(id, failed) {
    if (!Object.prototype.hasOwnProperty.call(scripts, id)) { failed(); return; }
    const script = document.createElement("script");
    script.src = scripts[id];
    script.onerror = failed;
    document.body.appendChild(script);
  }

  function openedId() {
    const hash = decodeURIComponent(location.hash.slice(1));
    return hash.startsWith("run/") ? hash.slice(4) : undefined;
  }

  function openedPage() {
    const id = openedId();
    return id === undefined ? undefined : loaded[id];
  }

  function showMissing() {
    const back = element("a", "back", "← leaderboards");
    back.href = "#" + (shownBench ?? "");
    $("#run").replaceChildren(back, element("p", "note", "this run's data is missing"));
  }

  window.siteRunLoaded = function (page) {
    loaded[page.id] = page;
    if (openedPage() === page) showRun(page);
  };

  window.siteSharedLoaded = function (data) {
    shared[data.id] = data;
    const page = openedPage();
    if (page && page.shared === data.id) showRun(page);
  };

  function openRun(id) {
    if (!$("#boards").hidden) boardsScroll = window.scrollY;
    $("#boards").hidden = true;
    const view = $("#run");
    view.hidden = false;
    highlight(null); // the run's own benchmark once its page is loaded
    view.replaceChildren(element("p", "note", "loading…"));
    if (loaded[id]) showRun(loaded[id]);
    // a script that fails after another run was opened leaves that run's view alone
    else loadScript(id, () => { if (openedId() === id) showMissing(); });
  }

  function showRun(page) {
    if (page.shared === null) renderRun(page);
    else if (shared[page.shared]) renderRun(sharedRun(page, shared[page.shared]));
    else if (!(page.shared in shared)) {
      shared[page.shared] = null;
      // forgotten when the script fails, so that the next opening loads it again
      loadScript(page.shared, () => {
        delete shared[page.shared];
        const opened = openedPage();
        if (opened && opened.shared === page.shared) showMissing();
      });
    }
  }

  /* A page's items from the shared ones: those its run answered, its answer first and the
     other runs' after in their order, the item's score that of its run's answer. */
  function sharedRun(page, data) {
    const others = data.labels.map((_, n) => n).filter((n) => n !== page.opened);
    const order = [page.opened, ...others];
    const items = [];
    for (const item of data.items) {
      const own = item.answers[page.opened];
      if (!own) continue;
      const answers = order.filter((n) => item.answers[n]).map((n) => ({
        label: data.labels[n], text: item.answers[n].text, scores: item.answers[n].scores,
        notes: [], reasoning: item.answers[n].reasoning, failure: item.answers[n].failure,
      }));
      items.push({
        id: item.id, category: item.category, score: own.score, score_label: own.score_label,
        fields: item.fields, answers, images: item.images,
      });
    }
    return { ...page, items };
  }

  function scoreText(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value === "boolean") return value ? "✓" : "✗";
    if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${k} ${numberText(v)}`).join(", ");
    return numberText(value);
  }

  function renderItem(item) {
    const node = element("article", "item");
    node.dataset.item = item.id;
    node.dataset.category = item.category || "";
    if (item.score !== null) node.dataset.score = item.score;
    const head = element("header");
    head.append(element("span", "id", item.id));
    if (item.category) head.append(element("span", "category", item.category));
    head.append(element("span", "score", `${item.score_label} ${scoreText(item.score)}`));
    node.append(head);
    for (const [label, text] of item.fields) {
      const field = element("div", "field");
      field.append(element("b", null, label), element("span", null, text));
      node.append(field);
    }
    if (item.images.length) {
      const images = element("div", "images");
      item.images.forEach((src, n) => {
        const img = element("img", "thumb zoomable");
        img.loading = "lazy";
        img.src = src;
        img.alt = `${item.id}: image ${n + 1} of ${item.images.length}`;
        img.title = "click to enlarge";
        images.append(img);
      });
      node.append(images);
    }
    const answers = element("div", "answers");
    for (const answer of item.answers) {
      const box = element("div", "answer");
      box.dataset.answer = answer.label;
      box.append(element("div", "label", answer.label));
      if (answer.failure) box.append(element("div", "failure", "failed: " + answer.failure));
      if (answer.text || !answer.failure) box.append(element("div", "text", answer.text));
      const scores = element("div", "scores");
      for (const [name, value] of Object.entries(answer.scores)) {
        scores.append(element("span", null, `${name} ${scoreText(value)}`));
      }
      box.append(scores);
      if (answer.reasoning) {
        const folded = element("details", "reasoning");
        folded.append(element("summary", null, "reasoning"), element("div", "text", answer.reasoning));
        box.append(folded);
      }
      if (answer.notes.length) box.append(element("div", "notes", answer.notes.join("\n")));
      answers.append(box);
    }
    node.append(answers);
    return node;
  }

  function renderRun(page) {
    highlight(page.bench);
    const view = $("#run");
    const back = element("a", "back", "← leaderboards");
    back.href = "#" + page.bench;
    const settings = element("dl", "settings");
    for (const [key, value] of Object.entries(page.settings)) {
      if (value === null || value === undefined) continue;
      const pair = element("div");
      const shown = Array.isArray(value) ? value.join(", ") : typeof value === "object" ? JSON.stringify(value) : value;
      pair.append(element("dt", null, key), element("dd", null, shown));
      settings.append(pair);
    }
    const toolbar = element("div", "toolbar");
    const filter = element("input", "item-filter");
    filter.type = "search";
    filter.placeholder = "filter by question or category";
    const category = element("select", "item-category");
    category.append(new Option("all categories", ""));
    const categories = [...new Set(page.items.map((i) => i.category).filter(Boolean))].sort();
    categories.forEach((c) => category.append(new Option(c, c)));
    const order = element("select", "item-order");
    [["", "in order"], ["ascending", "score ▲"], ["descending", "score ▼"]].forEach(([v, t]) => order.append(new Option(t, v)));
    const count = element("span", "count");
    toolbar.append(filter, category, order, count);
    const list = element("div", "items");
    const nodes = page.items.map(renderItem);
    function update() {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      nodes.forEach((node, n) => {
        const item = page.items[n];
        const text = (item.id + " " + item.category + " " + item.fields.map((f) => f[1]).join(" ")).toLowerCase();
        node.hidden = !(words.every((w) => text.includes(w)) && (!category.value || item.category === category.value));
        if (!node.hidden) shown += 1;
      });
      count.textContent = `${shown} of ${nodes.length} items`;
      const sorted = nodes.slice();
      if (order.value) {
        const sign = order.value === "ascending" ? 1 : -1;
        const key = (node) => (node.dataset.score === undefined ? null : Number(node.dataset.score));
        sorted.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === null || y === null) return (x === null) - (y === null);
          return sign * (x - y);
        });
      }
      list.replaceChildren(...sorted);
    }
    [filter, category, order].forEach((c) => c.addEventListener("input", update));
    update();
    const notes = (page.notes || []).map((text) => element("p", "note run-note", text));
    view.replaceChildren(back, element("h2", null, page.title), settings, ...notes, toolbar, list);
    window.scrollTo(0, 0);
  }

  function route() {
    const hash = decodeURIComponent(location.hash.slice(1));
    if (hash.startsWith("run/")) { openRun(hash.slice(4)); return; }
    const first = $("[data-show]");
    const bench = $(`[data-show="${CSS.escape(hash)}"]`) ? hash : first && first.dataset.show;
    if (bench) show(bench);
  }

  document.addEventListener("click", (event) => {
    const target = event.target;
    if (!(target instanceof Element)) return;
    const tab = target.closest("[data-show]");
    if (tab) { location.hash = tab.dataset.show; return; }
    const drill = target.closest("[data-drill]");
    if (drill) { location.hash = "run/" + drill.dataset.drill; return; }
    if (target.classList.contains("zoomable")) {
      const box = $("#lightbox");
      $("img", box).src = target.src;
      box.hidden = false;
      return;
    }
    if (target.closest("#lightbox")) $("#lightbox").hidden = true;
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") $("#lightbox").hidden = true; });
  window.addEventListener("hashchange", route);
  $$(".board").forEach(setUpBoard);
  route();
})();
