/*
 * The website's quiz front-end: checks each answer against the released (hashed) quiz embedded
 * in the page, shows feedback or the explanation it unlocks, and keeps "k / n correct".
 *
 * The page is rendered by autograder/site/quiz_html.py; this file only adds behaviour to it.
 * The checking rules are those of autograder/quiz/checking.py, through quiz-hashing.js.
 * Code questions are checked on the student's machine (the page shows the command) and are
 * not scored here, like `tvm-course quiz check --skip-code`.
 *
 * What a student has typed or picked, and which questions they checked, is kept in the browser's
 * localStorage under the quiz and its release (STORE_PREFIX + quiz id + released integrity), so a
 * reload brings the answers back and checks them again; "Start again" forgets them. A
 * new release (a rebuilt site) starts afresh. The stored answers are only ever re-checked, never
 * trusted as verdicts. After each check the count ("k / n correct") is also kept under
 * PROGRESS_PREFIX + quiz id, with the release's integrity, for the map page to show (site.js);
 * it is a note of what the page last counted, not a verdict any check reads.
 */
(function () {
  "use strict";

  var H = window.TvmCourseQuizHashing;
  var STORE_PREFIX = "tvm-course-quiz:";
  var PROGRESS_PREFIX = "tvm-course-progress:";

  function escapeHtml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }

  /* The little Markdown quiz text uses: paragraphs and `code` spans (as the notebook widget). */
  function textToHtml(text) {
    return escapeHtml(text.trim()).split("\n\n").map(function (p) {
      return "<p>" + p.replace(/`([^`]+)`/g, "<code>$1</code>") + "</p>";
    }).join("");
  }

  function readAnswer(article, question) {
    var type = question.type;
    if (type === "single") {
      var picked = article.querySelector("input[type=radio]:checked");
      return picked ? { value: picked.value } : null;
    }
    if (type === "multiple") {
      var letters = Array.prototype.map.call(article.querySelectorAll("input[type=checkbox]:checked"),
        function (box) { return box.value; });
      return letters.length ? { value: letters } : null;
    }
    if (type === "ordering") {
      return { value: Array.prototype.map.call(article.querySelectorAll(".ordering > li"),
        function (item) { return item.getAttribute("data-letter"); }) };
    }
    var text = article.querySelector("input[type=text]").value;
    if (!H.pythonStrip(text)) return null;
    if (type === "numeric") {
      try {
        return { value: H.parseNumber(text, question.unit || null) };
      } catch (err) {
        return { error: err.message };
      }
    }
    return { value: H.pythonStrip(text) };
  }

  function canonicalAnswer(question, value) {
    if (question.type === "single") return value;
    if (question.type === "multiple" || question.type === "ordering") {
      return H.canonicalLetters(value, question.type === "ordering");
    }
    if (question.type === "numeric") {
      return H.canonicalNumber(value, "step" in question ? parseFloat(question.step) : null);
    }
    return H.normalizeText(value, !!question.case_sensitive);
  }

  /* checking.py canonical_answers: the answer's own form, then (text only) undecorated ones. */
  function canonicalAnswers(question, value) {
    var canonical = canonicalAnswer(question, value);
    if (question.type !== "text") return [canonical];
    var forms = [];
    [canonical].concat(H.undecoratedTexts(canonical)).forEach(function (form) {
      if (form && forms.indexOf(form) < 0) forms.push(form);
    });
    return forms;
  }

  /* The text of the first entry one of the forms opens (in order), or null. */
  function openFirst(entries, salt, questionId, purpose, forms) {
    function next(i) {
      if (i >= forms.length) return Promise.resolve(null);
      return H.openEntry(entries, salt, questionId, purpose, forms[i]).then(function (text) {
        return text !== null ? text : next(i + 1);
      });
    }
    return next(0);
  }

  /* The feedback of at most one picked wrong choice (checking.py picked_choice_feedback): of the
   * picked letters whose `choice` entry opens, the one with the smallest check. Showing every wrong
   * pick's feedback would let a student tick every box and read the key off the silent ones. */
  function pickedChoiceFeedback(question, salt, letters) {
    return Promise.all(letters.map(function (letter) {
      return H.deriveKey(salt, question.id, H.CHOICE, letter).then(H.checkOf).then(function (check) {
        return { check: check, letter: letter };
      });
    })).then(function (picks) {
      picks.sort(function (a, b) {
        return a.check < b.check ? -1 : a.check > b.check ? 1 : (a.letter < b.letter ? -1 : a.letter > b.letter ? 1 : 0);
      });
      function next(i) {
        if (i >= picks.length) return Promise.resolve([]);
        return H.openEntry(question.respond, salt, question.id, H.CHOICE, picks[i].letter).then(function (text) {
          return text ? ["(" + picks[i].letter + ") " + text] : next(i + 1);
        });
      }
      return next(0);
    });
  }

  /* Feedback unlocked by this particular wrong answer (checking.py _targeted_feedback). */
  function targetedFeedback(question, salt, value, forms) {
    if (question.type === "multiple") return pickedChoiceFeedback(question, salt, value);
    return openFirst(question.respond, salt, question.id, H.ANSWER, forms).then(function (text) {
      return text ? [text] : [];
    });
  }

  /* {status, explanation, feedback, message} for one answer, as check_question decides it. */
  function checkAnswer(question, salt, answer) {
    if (answer === null) return Promise.resolve({ status: "unanswered", feedback: [] });
    if (answer.error) return Promise.resolve({ status: "invalid", feedback: [], message: answer.error });
    var forms;
    try {
      forms = canonicalAnswers(question, answer.value);
    } catch (err) {
      // A number too far out to place on the tolerance grid is far from every accepted answer:
      // wrong, as check_question says, not unreadable.
      return Promise.resolve({ status: "wrong", feedback: question.feedback ? [question.feedback] : [],
        message: answer.value + " is far outside any accepted answer" });
    }
    return openFirst(question.accept, salt, question.id, H.ANSWER, forms).then(function (explanation) {
      if (explanation !== null) return { status: "correct", explanation: explanation, feedback: [] };
      return targetedFeedback(question, salt, answer.value, forms).then(function (feedback) {
        if (question.feedback) feedback.push(question.feedback);
        return { status: "wrong", feedback: feedback };
      });
    });
  }

  function renderResult(result) {
    if (result.status === "correct") {
      return '<p class="verdict"><span aria-hidden="true">\u2713</span> Correct.</p>' +
        (result.explanation ? textToHtml(result.explanation) : "");
    }
    if (result.status === "unanswered") {
      return '<p class="verdict">Answer first, then check.</p>';
    }
    if (result.status === "invalid") {
      return '<p class="verdict"><span aria-hidden="true">?</span> ' + escapeHtml(result.message) +
        "; try again.</p>";
    }
    return '<p class="verdict"><span aria-hidden="true">\u2717</span> Not yet.</p>' +
      (result.message ? "<p>" + escapeHtml(result.message) + ".</p>" : "") +
      result.feedback.map(function (text) { return '<div class="feedback-item">' + textToHtml(text) + "</div>"; })
        .join("");
  }

  // ---- ordering questions: move items with real buttons ----------------------------------------

  /* Each button's spoken name starts with its visible word (Up, Down) and adds the item and
   * its place, so that a voice command saying what is on screen finds the button. */
  function describePositions(list) {
    var items = list.querySelectorAll(":scope > li");
    Array.prototype.forEach.call(items, function (item, index) {
      var text = item.querySelector(".item-text").textContent;
      Array.prototype.forEach.call(item.querySelectorAll(".move-context"), function (context) {
        context.textContent = ": " + text + ", " + (index + 1) + " of " + items.length;
      });
    });
  }

  function wireOrdering(article, onMove) {
    var list = article.querySelector(".ordering");
    if (!list) return;
    var status = article.querySelector(".ordering-status");
    list.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-move]");
      if (!button) return;
      var item = button.closest("li");
      var up = button.getAttribute("data-move") === "up";
      var neighbour = up ? item.previousElementSibling : item.nextElementSibling;
      if (!neighbour) return;
      list.insertBefore(item, up ? neighbour : neighbour.nextElementSibling);
      button.focus();
      describePositions(list);
      var position = Array.prototype.indexOf.call(list.children, item) + 1;
      if (status) {
        status.textContent = item.querySelector(".item-text").textContent + ": now " + position +
          " of " + list.children.length + ".";
      }
      onMove();
    });
    describePositions(list);
  }

  function currentOrder(article) {
    return Array.prototype.map.call(article.querySelectorAll(".ordering > li"),
      function (item) { return item.getAttribute("data-letter"); });
  }

  function putInOrder(article, letters) {
    var list = article.querySelector(".ordering");
    var items = {};
    Array.prototype.forEach.call(list.children, function (item) { items[item.getAttribute("data-letter")] = item; });
    if (!Array.isArray(letters) || letters.length !== list.children.length ||
        !letters.every(function (letter) { return items[letter]; })) return;
    letters.forEach(function (letter) { list.appendChild(items[letter]); });
    describePositions(list);
  }

  // ---- what a student entered, as kept in localStorage -----------------------------------------

  /* The controls' state as plain JSON: a letter, letters, an order, or the typed text. */
  function readControls(article, type) {
    if (type === "single") {
      var picked = article.querySelector("input[type=radio]:checked");
      return picked ? picked.value : null;
    }
    if (type === "multiple") {
      return Array.prototype.map.call(article.querySelectorAll("input[type=checkbox]:checked"),
        function (box) { return box.value; });
    }
    if (type === "ordering") return currentOrder(article);
    return article.querySelector("input[type=text]").value;
  }

  function writeControls(article, type, value) {
    if (type === "single" || type === "multiple") {
      var chosen = type === "single" ? [value] : (Array.isArray(value) ? value : []);
      Array.prototype.forEach.call(article.querySelectorAll("input[type=radio], input[type=checkbox]"),
        function (input) { input.checked = chosen.indexOf(input.value) >= 0; });
    } else if (type === "ordering") {
      putInOrder(article, value);
    } else {
      article.querySelector("input[type=text]").value = typeof value === "string" ? value : "";
    }
  }

  function storage() {
    try {
      return window.localStorage || null;
    } catch (err) {  // storage switched off for this page
      return null;
    }
  }

  function loadState(key) {
    var store = storage();
    try {
      var state = store && JSON.parse(store.getItem(key) || "null");
      if (state && typeof state === "object" && state.answers && typeof state.answers === "object") {
        return { answers: state.answers, checked: Array.isArray(state.checked) ? state.checked : [] };
      }
    } catch (err) { /* unreadable: start afresh */ }
    return null;
  }

  function saveState(key, state) {
    var store = storage();
    try {
      if (store) store.setItem(key, JSON.stringify(state));
    } catch (err) { /* full or refused: the quiz still works, it just forgets */ }
  }

  function forgetState(key) {
    var store = storage();
    try {
      if (store) store.removeItem(key);
    } catch (err) { /* nothing kept */ }
  }

  // ---- one quiz ------------------------------------------------------------------------------

  function setupQuiz(section) {
    var dataElement = document.getElementById(section.getAttribute("data-quiz-json"));
    var data = JSON.parse(dataElement.textContent);
    var salt = data.released.salt;
    var storeKey = STORE_PREFIX + data.id + ":" + data.released.integrity;
    var scoreElement = section.querySelector("[data-score]");
    var notice = section.querySelector("[data-quiz-notice]");
    var resetButton = section.querySelector("[data-quiz-reset]");
    var results = {};
    var scored = {};
    var state = { answers: {}, checked: [] };
    var forms = {};  // question id -> {article, question, check(quiet), clear()}
    data.questions.forEach(function (q) { if (q.type !== "code") scored[q.id] = true; });

    function updateScore() {
      var ids = Object.keys(scored);
      var correct = ids.filter(function (id) { return results[id] === "correct"; }).length;
      scoreElement.textContent = correct + " / " + ids.length + " correct";
      return { correct: correct, scored: ids.length };
    }

    function noteProgress() {
      var count = updateScore();
      if (!state.checked.length) return;
      saveState(PROGRESS_PREFIX + data.id, { integrity: data.released.integrity, correct: count.correct,
        scored: count.scored, checked: state.checked.length });
    }

    function say(text, kind) {
      notice.textContent = text;
      notice.className = "notice" + (kind ? " " + kind : "");
    }

    if (!H || !window.TextEncoder) {
      say("The quiz cannot check answers in this browser: it is too old for the page's scripts. " +
        "Download the released quiz and run tvm-course quiz take on it instead.");
      Array.prototype.forEach.call(section.querySelectorAll("button"), function (b) { b.disabled = true; });
      return;
    }

    function remember(question, article) {
      state.answers[question.id] = readControls(article, question.type);
      saveState(storeKey, state);
    }

    data.questions.forEach(function (question, index) {
      var article = section.querySelector('article.question[data-question="' + (index + 1) + '"]');
      var form = article && article.querySelector("form.answer-form");
      if (!form) return;
      var initialOrder = currentOrder(article);
      var feedback = article.querySelector(".feedback");
      wireOrdering(article, function () { remember(question, article); });
      form.addEventListener("change", function () { remember(question, article); });
      form.addEventListener("input", function () { remember(question, article); });

      function check(quiet) {
        if (article.classList.contains("edited")) return Promise.resolve();
        feedback.textContent = "";  // emptied first, so that the same verdict twice is announced twice
        if (quiet) feedback.setAttribute("aria-live", "off");  // restored answers are not read out one by one
        return checkAnswer(question, salt, readAnswer(article, question)).then(function (result) {
          results[question.id] = result.status;
          article.setAttribute("data-status", result.status);
          feedback.innerHTML = renderResult(result);
          noteProgress();
        }, function (err) {
          feedback.innerHTML = '<p class="verdict">The check failed: ' + escapeHtml(String(err.message || err)) + "</p>";
        }).then(function () {
          if (quiet) setTimeout(function () { feedback.setAttribute("aria-live", "polite"); }, 0);
        });
      }

      function clear() {
        delete results[question.id];
        article.removeAttribute("data-status");
        feedback.textContent = "";
        writeControls(article, question.type, question.type === "ordering" ? initialOrder : null);
      }

      forms[question.id] = { article: article, question: question, check: check, clear: clear };
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        if (article.classList.contains("edited")) return;
        remember(question, article);
        if (state.checked.indexOf(question.id) < 0) {
          state.checked.push(question.id);
          saveState(storeKey, state);
        }
        check(false);
      });
    });

    resetButton.addEventListener("click", function () {
      forgetState(storeKey);
      forgetState(PROGRESS_PREFIX + data.id);
      state = { answers: {}, checked: [] };
      Object.keys(forms).forEach(function (id) { forms[id].clear(); });
      updateScore();
      say("Your answers are cleared: the quiz starts again.", "info");
    });

    /* Answers kept from an earlier visit: put back in their controls; those that were checked are
     * checked again (the verdicts are the page's own, never read from storage). */
    function restore() {
      var kept = loadState(storeKey);
      if (!kept) return Promise.resolve();
      state = kept;
      var rechecks = [];
      Object.keys(kept.answers).forEach(function (id) {
        var entry = forms[id];
        if (!entry || entry.article.classList.contains("edited")) return;
        writeControls(entry.article, entry.question.type, kept.answers[id]);
        if (kept.checked.indexOf(id) >= 0) rechecks.push(entry.check(true));
      });
      return Promise.all(rechecks).then(function () {
        if (!Object.keys(kept.answers).length || notice.textContent) return;
        say("Your answers from your last visit are back (" + scoreElement.textContent + "). " +
          "Start again to clear them.", "info");
      });
    }

    // Questions changed after release are shown but not scored, as in the other front-ends.
    Promise.all(data.questions.map(function (q) {
      return H.questionIntegrity(salt, q).then(function (digest) { return digest === q.integrity; });
    })).then(function (intact) {
      data.questions.forEach(function (q, i) {
        if (intact[i]) return;
        delete scored[q.id];
        var article = section.querySelector('article.question[data-question="' + (i + 1) + '"]');
        if (!article) return;
        article.classList.add("edited");
        var note = document.createElement("p");
        note.className = "edited-note";
        note.textContent = "This question was changed after the quiz was released; it is shown but not scored.";
        article.querySelector(".question-heading").after(note);
        var button = article.querySelector("button[type=submit]");
        if (button) button.disabled = true;
      });
      updateScore();
      return H.headerIntegrity(data).then(function (digest) {
        if (digest !== data.released.integrity) {
          say("This quiz was changed after it was released (title, salt or list of questions); " +
            "rebuild the site from the instructor copy.");
        }
        return restore();
      });
    }).then(function () {
      section.setAttribute("data-quiz-ready", "");
    });
    updateScore();
  }

  function setupAll() {
    Array.prototype.forEach.call(document.querySelectorAll("section.quiz[data-quiz-json]"), setupQuiz);
  }

  window.TvmCourseQuiz = { textToHtml: textToHtml, checkAnswer: checkAnswer, canonicalAnswer: canonicalAnswer,
    canonicalAnswers: canonicalAnswers, STORE_PREFIX: STORE_PREFIX, PROGRESS_PREFIX: PROGRESS_PREFIX };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setupAll);
  } else {
    setupAll();
  }
})();
