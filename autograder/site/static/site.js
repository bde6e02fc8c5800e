/*
 * The website's page behaviour, for the map and the lesson pages (templates/base.html):
 *
 * - code gets a Copy button (the cell's source, or a command in the quiz), with a fallback where
 *   the Clipboard API is not offered (plain http);
 * - a block that is wider than the screen and scrolls sideways (code, a table) becomes focusable,
 *   so that it can be scrolled with the keyboard; blocks that fit stay out of the tab order;
 * - a figure opens enlarged in a dialog (its link opens the image file where scripts are off);
 * - the phone's course-map menu closes with Escape (focus back on its button) or a tap outside;
 * - the search box searches the site's index (assets/search-index.js, loaded on first use);
 * - the contents list on the right of a wide screen marks the section being read;
 * - from file://, where a linked .ipynb opens as text, its download is made from a script copy;
 * - the map shows how far the reader got in each quiz (what quiz.js noted).
 *
 * Nothing here is needed to read a page; everything here works from file:// and offline.
 */
(function () {
  "use strict";

  // ---- copy buttons ----------------------------------------------------------------------------

  var COPY_TARGETS = ".notebook .input_area, .notebook .text_cell_render pre, .quiz pre.command, .quiz pre.code-block";
  var status;

  function announce(text) {
    if (!status) {
      status = document.createElement("p");
      status.className = "visually-hidden";
      status.setAttribute("role", "status");
      document.body.appendChild(status);
    }
    status.textContent = "";
    setTimeout(function () { status.textContent = text; }, 50);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      var focused = document.activeElement;
      document.body.appendChild(area);
      area.select();
      var done = false;
      try {
        done = document.execCommand("copy");
      } catch (err) { /* refused */ }
      document.body.removeChild(area);
      if (focused && focused.focus) focused.focus();
      if (done) resolve(); else reject(new Error("copying was refused"));
    });
  }

  function addCopyButton(block) {
    var pre = block.tagName === "PRE" ? block : block.querySelector("pre");
    if (!pre) return;
    var holder = block;
    if (block.tagName === "PRE") {  // a bare <pre>: the button goes beside it, not inside what scrolls
      holder = document.createElement("div");
      holder.className = "copy-holder";
      block.parentNode.insertBefore(holder, block);
      holder.appendChild(block);
    }
    holder.classList.add("has-copy");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.innerHTML = 'Copy<span class="visually-hidden"> the code</span>';
    button.addEventListener("click", function () {
      var text = pre.textContent.replace(/\n$/, "");
      copyText(text).then(function () {
        button.firstChild.textContent = "Copied";
        announce("Copied to the clipboard.");
        setTimeout(function () { button.firstChild.textContent = "Copy"; }, 2000);
      }, function () {
        announce("This browser did not allow copying; select the code and copy it yourself.");
      });
    });
    holder.insertBefore(button, holder.firstChild);
  }

  // ---- blocks that scroll sideways can be scrolled with the keyboard ---------------------------

  var SCROLLERS = "main pre, main .table-wrap, main .figure-frame, .figure-dialog-body";

  function markScrollers() {
    Array.prototype.forEach.call(document.querySelectorAll(SCROLLERS), function (element) {
      var scrolls = element.scrollWidth > element.clientWidth + 1 || element.scrollHeight > element.clientHeight + 1;
      if (scrolls && !element.hasAttribute("tabindex")) {
        element.setAttribute("tabindex", "0");
        element.setAttribute("data-scroll-focus", "");
      } else if (!scrolls && element.hasAttribute("data-scroll-focus")) {
        element.removeAttribute("tabindex");
        element.removeAttribute("data-scroll-focus");
      }
    });
  }

  // ---- figures open enlarged --------------------------------------------------------------------

  var dialog, dialogImage, dialogTitle;

  function figureDialog() {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "figure-dialog";
    dialog.setAttribute("aria-labelledby", "figure-dialog-title");
    dialog.innerHTML = '<div class="figure-dialog-bar"><p id="figure-dialog-title"></p>' +
      '<button type="button" class="figure-close">Close</button></div>' +
      '<div class="figure-dialog-body"><img alt=""></div>';
    document.body.appendChild(dialog);
    dialogImage = dialog.querySelector("img");
    dialogTitle = dialog.querySelector("#figure-dialog-title");
    dialog.querySelector(".figure-close").addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) dialog.close();  // a click on the backdrop
    });
    return dialog;
  }

  function openFigure(link) {
    var image = link.querySelector("img");
    var shown = figureDialog();
    var width = parseFloat(image.getAttribute("width")) || image.naturalWidth || image.width;
    var height = parseFloat(image.getAttribute("height")) || 0;
    // The screen's width, but at least half as large again as drawn (a phone shows figures at
    // their drawn size already) and at most twice as large (the file has two pixels per CSS pixel).
    var enlarged = Math.min(width * 2, Math.max(window.innerWidth - 32, width * 1.5));
    dialogImage.src = image.getAttribute("src");
    dialogImage.alt = image.alt;
    dialogImage.style.width = Math.round(enlarged) + "px";
    dialogImage.style.height = height ? Math.round(height * enlarged / width) + "px" : "auto";
    var number = link.closest("figure").querySelector(".figure-number");
    dialogTitle.textContent = (number ? number.textContent.replace(/\.$/, "") : "Figure") + ", enlarged";
    shown.showModal();
    shown.querySelector(".figure-dialog-body").scrollLeft = 0;
    markScrollers();
  }

  function wireFigures() {
    document.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a.figure-link");
      if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey ||
          event.shiftKey || event.altKey || typeof HTMLDialogElement === "undefined") return;
      event.preventDefault();
      openFigure(link);
    });
  }

  // ---- the menu closes with Escape, or a tap elsewhere ------------------------------------------

  function wireMenus() {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") return;
      Array.prototype.forEach.call(document.querySelectorAll("details.menu[open]"), function (menu) {
        menu.open = false;
        menu.querySelector("summary").focus();
      });
    });
    document.addEventListener("click", function (event) {
      Array.prototype.forEach.call(document.querySelectorAll("details.menu[open]"), function (menu) {
        if (!menu.contains(event.target)) menu.open = false;
      });
    });
  }

  // ---- search ------------------------------------------------------------------------------------

  var root = (document.body && document.body.getAttribute("data-root")) || "";
  var MAX_RESULTS = 12;

  function loadIndex() {
    if (window.TvmCourseSearchIndex) return Promise.resolve(window.TvmCourseSearchIndex);
    if (loadIndex.pending) return loadIndex.pending;
    loadIndex.pending = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = root + "assets/search-index.js";
      script.onload = function () { resolve(window.TvmCourseSearchIndex || []); };
      script.onerror = function () { loadIndex.pending = null; reject(new Error("the search index did not load")); };
      document.head.appendChild(script);
    });
    return loadIndex.pending;
  }

  function words(text) {
    return text.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(function (w) { return w; });
  }

  /* Entries with every word of the query in them (as the start of a word), best first: words
   * in the section's or lesson's title count more than words in the text. */
  function search(index, query) {
    var terms = words(query);
    if (!terms.length) return [];
    var found = [];
    index.forEach(function (entry) {
      var heading = (entry.title + " " + entry.section).toLowerCase();
      var text = entry.text.toLowerCase();
      var score = 0;
      for (var i = 0; i < terms.length; i++) {
        var pattern = new RegExp("(^|[^\\p{L}\\p{N}_])" + terms[i].replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "u");
        var inHeading = pattern.test(heading), inText = pattern.test(text);
        if (!inHeading && !inText) return;
        score += (inHeading ? 3 : 0) + (inText ? 1 : 0);
      }
      found.push({ entry: entry, score: score });
    });
    found.sort(function (a, b) { return b.score - a.score; });
    return found.slice(0, MAX_RESULTS).map(function (item) { return item.entry; });
  }

  function snippet(text, query) {
    var lower = text.toLowerCase();
    var at = -1;
    words(query).some(function (term) { at = lower.indexOf(term); return at >= 0; });
    var start = Math.max(0, at - 60);
    var piece = text.slice(start, start + 160);
    return (start > 0 ? "\u2026" : "") + piece + (start + 160 < text.length ? "\u2026" : "");
  }

  function wireSearch() {
    var box = document.querySelector(".site-search");
    if (!box) return;
    box.hidden = false;
    var form = box.querySelector("form");
    var input = box.querySelector("input");
    var panel = box.querySelector(".search-panel");
    var status = box.querySelector(".search-status");
    var list = box.querySelector(".search-results");
    var pending;

    function close() {
      panel.hidden = true;
    }

    function show(results, query) {
      list.textContent = "";
      results.forEach(function (entry) {
        var item = document.createElement("li");
        var link = document.createElement("a");
        link.href = root + entry.url;
        var title = document.createElement("span");
        title.className = "search-title";
        title.textContent = entry.section ? entry.title + ": " + entry.section : entry.title;
        var text = document.createElement("span");
        text.className = "search-snippet";
        text.textContent = snippet(entry.text, query);
        link.appendChild(title);
        link.appendChild(text);
        item.appendChild(link);
        list.appendChild(item);
      });
      status.textContent = results.length ? results.length + (results.length === MAX_RESULTS ? " or more" : "") +
        " result" + (results.length === 1 ? "" : "s") + " for \u201c" + query + "\u201d" : "Nothing found for \u201c" + query + "\u201d";
      panel.hidden = false;
    }

    function run() {
      var query = input.value.trim();
      if (!query) { close(); return; }
      loadIndex().then(function (index) { show(search(index, query), query); }, function (err) {
        status.textContent = "Search is not available: " + err.message + ".";
        panel.hidden = false;
      });
    }

    input.addEventListener("focus", function () { loadIndex().catch(function () {}); });
    input.addEventListener("input", function () {
      clearTimeout(pending);
      pending = setTimeout(run, 120);
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      run();
      var first = list.querySelector("a");
      if (first) first.focus();
    });
    box.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && !panel.hidden) {
        close();
        input.focus();
        event.stopPropagation();
      } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && !panel.hidden) {
        var links = Array.prototype.slice.call(list.querySelectorAll("a"));
        var at = links.indexOf(document.activeElement);
        var next = event.key === "ArrowDown" ? at + 1 : at - 1;
        if (next < -1) next = links.length - 1;
        if (next === -1) input.focus(); else if (links[next]) links[next].focus();
        event.preventDefault();
      }
    });
    document.addEventListener("click", function (event) {
      if (!box.contains(event.target)) close();
    });
  }

  // ---- the contents list follows the reader ------------------------------------------------------

  function wireContents() {
    var links = Array.prototype.slice.call(document.querySelectorAll(".page-toc .toc a[href^='#']"));
    if (!links.length) return;
    var targets = links.map(function (link) { return document.getElementById(link.getAttribute("href").slice(1)); });
    var container = document.querySelector(".page-toc");
    var current = null, scheduled = false;

    function update() {
      scheduled = false;
      var line = Math.min(window.innerHeight * 0.3, 200);  // a heading above this line has been reached
      var index = 0;
      for (var i = 0; i < targets.length; i++) {
        if (targets[i] && targets[i].getBoundingClientRect().top <= line) index = i;
      }
      if (window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 2) {
        for (var j = targets.length - 1; j >= 0; j--) {  // at the very end, the last section in view
          if (targets[j] && targets[j].getBoundingClientRect().top < window.innerHeight) { index = j; break; }
        }
      }
      if (links[index] === current) return;
      if (current) current.removeAttribute("aria-current");
      current = links[index];
      current.setAttribute("aria-current", "location");
      // Keep the marked entry in view where the list itself scrolls (never the page).
      var box = container.getBoundingClientRect(), item = current.getBoundingClientRect();
      if (item.top < box.top || item.bottom > box.bottom) container.scrollTop += item.top - box.top - box.height / 3;
    }

    window.addEventListener("scroll", function () {
      if (!scheduled) { scheduled = true; window.requestAnimationFrame(update); }
    }, { passive: true });
    window.addEventListener("resize", update);
    update();
  }

  // ---- notebooks from file:// ----------------------------------------------------------------------

  var notebookLink = null;

  /* Called by notebooks/<name>.ipynb.js with the notebook's text. */
  window.TvmCourseNotebook = function (name, text) {
    var url = URL.createObjectURL(new Blob([text], { type: "application/x-ipynb+json" }));
    var link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    setTimeout(function () { URL.revokeObjectURL(url); link.remove(); }, 1000);
    if (notebookLink) notebookLink.focus();
  };

  function wireDownloads() {
    if (location.protocol !== "file:") return;  // over http the download attribute does it
    document.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a.download-notebook");
      if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      notebookLink = link;
      var script = document.createElement("script");
      script.src = link.getAttribute("href") + ".js";
      script.onload = function () { script.remove(); };
      script.onerror = function () { script.remove(); location.href = link.href; };
      document.head.appendChild(script);
    });
  }

  // ---- the map shows quiz progress -----------------------------------------------------------------

  function showProgress() {
    var store;
    try { store = window.localStorage; } catch (err) { return; }
    if (!store) return;
    Array.prototype.forEach.call(document.querySelectorAll("[data-quiz-progress]"), function (element) {
      var noted;
      try { noted = JSON.parse(store.getItem("tvm-course-progress:" + element.getAttribute("data-quiz-progress")) || "null"); }
      catch (err) { noted = null; }
      if (!noted || noted.integrity !== element.getAttribute("data-quiz-integrity") ||
          typeof noted.correct !== "number" || typeof noted.scored !== "number") return;
      element.textContent = "Your progress: " + noted.correct + " of " + noted.scored + " correct";
      element.hidden = false;
    });
  }

  function setup() {
    Array.prototype.forEach.call(document.querySelectorAll(COPY_TARGETS), addCopyButton);
    wireFigures();
    wireMenus();
    wireSearch();
    wireContents();
    wireDownloads();
    showProgress();
    markScrollers();
    var pending;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(markScrollers, 100);
    });
    document.addEventListener("toggle", markScrollers, true);  // a <details> opened
    window.addEventListener("load", markScrollers);
  }

  window.TvmCourseSite = { markScrollers: markScrollers, copyText: copyText, search: search, loadIndex: loadIndex };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
