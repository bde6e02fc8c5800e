/*
 * The website's page behaviour, for the map and the lesson pages (templates/base.html):
 *
 * - code gets a Copy button (the cell's source, or a command in the quiz), with a fallback where
 *   the Clipboard API is not offered (plain http);
 * - a block that is wider than the screen and scrolls sideways (code, a table) becomes focusable,
 *   so that it can be scrolled with the keyboard; blocks that fit stay out of the tab order;
 * - a figure opens enlarged in a dialog (its link opens the image file where scripts are off).
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

  var SCROLLERS = "main pre, main .table-wrap, .figure-dialog-body";

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
    // At least the size it was drawn at, else the screen's width, up to twice that size.
    var enlarged = Math.max(width, Math.min(window.innerWidth - 32, width * 2));
    dialogImage.src = image.getAttribute("src");
    dialogImage.alt = image.alt;
    dialogImage.style.width = Math.round(enlarged) + "px";
    dialogImage.style.height = height ? Math.round(height * enlarged / width) + "px" : "auto";
    var number = link.closest("figure").querySelector(".figure-number");
    dialogTitle.textContent = (number ? number.textContent : "Figure") + ", enlarged";
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

  function setup() {
    Array.prototype.forEach.call(document.querySelectorAll(COPY_TARGETS), addCopyButton);
    wireFigures();
    markScrollers();
    var pending;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(markScrollers, 100);
    });
    document.addEventListener("toggle", markScrollers, true);  // a <details> opened
    window.addEventListener("load", markScrollers);
  }

  window.TvmCourseSite = { markScrollers: markScrollers, copyText: copyText };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
