/*
 * The website's quiz front-end: checks each answer against the released (hashed) quiz embedded
 * in the page, shows feedback or the explanation it unlocks, and keeps "k / n correct".
 *
 * The page is rendered by autograder/site/quiz_html.py; this file only adds behaviour to it.
 * The checking rules are those of autograder/quiz/checking.py, through quiz-hashing.js.
 * Code questions are checked on the student's machine (the page shows the command) and are
 * not scored here, like `tvm-course quiz check --skip-code`.
 */
(function () {
  "use strict";

  var H = window.TvmCourseQuizHashing;

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
  function targetedFeedback(question, salt, value, canonical) {
    if (question.type === "multiple") return pickedChoiceFeedback(question, salt, value);
    return H.openEntry(question.respond, salt, question.id, H.ANSWER, canonical).then(function (text) {
      return text ? [text] : [];
    });
  }

  /* {status, explanation, feedback, message} for one answer, as check_question decides it. */
  function checkAnswer(question, salt, answer) {
    if (answer === null) return Promise.resolve({ status: "unanswered", feedback: [] });
    if (answer.error) return Promise.resolve({ status: "invalid", feedback: [], message: answer.error });
    var canonical;
    try {
      canonical = canonicalAnswer(question, answer.value);
    } catch (err) {
      // A number too far out to place on the tolerance grid is far from every accepted answer:
      // wrong, as check_question says, not unreadable.
      return Promise.resolve({ status: "wrong", feedback: question.feedback ? [question.feedback] : [],
        message: answer.value + " is far outside any accepted answer" });
    }
    return H.openEntry(question.accept, salt, question.id, H.ANSWER, canonical).then(function (explanation) {
      if (explanation !== null) return { status: "correct", explanation: explanation, feedback: [] };
      return targetedFeedback(question, salt, answer.value, canonical).then(function (feedback) {
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

  function describePositions(list) {
    var items = list.querySelectorAll(":scope > li");
    Array.prototype.forEach.call(items, function (item, index) {
      var text = item.querySelector(".item-text").textContent;
      item.querySelector("[data-move=up]").setAttribute("aria-label",
        "Move up: " + text + " (now " + (index + 1) + " of " + items.length + ")");
      item.querySelector("[data-move=down]").setAttribute("aria-label",
        "Move down: " + text + " (now " + (index + 1) + " of " + items.length + ")");
    });
  }

  function wireOrdering(article) {
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
    });
    describePositions(list);
  }

  // ---- one quiz ------------------------------------------------------------------------------

  function setupQuiz(section) {
    var dataElement = document.getElementById(section.getAttribute("data-quiz-json"));
    var data = JSON.parse(dataElement.textContent);
    var salt = data.released.salt;
    var scoreElement = section.querySelector("[data-score]");
    var notice = section.querySelector("[data-quiz-notice]");
    var results = {};
    var scored = {};
    data.questions.forEach(function (q) { if (q.type !== "code") scored[q.id] = true; });

    function updateScore() {
      var ids = Object.keys(scored);
      var correct = ids.filter(function (id) { return results[id] === "correct"; }).length;
      scoreElement.textContent = correct + " / " + ids.length + " correct";
    }

    function say(text) {
      notice.textContent = text;
    }

    var articles = section.querySelectorAll("article.question[data-question-id]");
    if (!H.available()) {
      say("The quiz cannot check answers here: this browser offers no WebCrypto on this page. Open it from " +
        "the built folder (file://), with `tvm-course site serve` (localhost), or over https.");
      Array.prototype.forEach.call(section.querySelectorAll("button"), function (b) { b.disabled = true; });
      return;
    }

    var byId = {};
    data.questions.forEach(function (q) { byId[q.id] = q; });

    Array.prototype.forEach.call(articles, function (article) {
      var question = byId[article.getAttribute("data-question-id")];
      var form = article.querySelector("form.answer-form");
      if (!question || !form) return;
      wireOrdering(article);
      var feedback = article.querySelector(".feedback");
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        if (article.classList.contains("edited")) return;
        feedback.textContent = "";  // emptied first, so that the same verdict twice is announced twice
        checkAnswer(question, salt, readAnswer(article, question)).then(function (result) {
          results[question.id] = result.status;
          article.setAttribute("data-status", result.status);
          feedback.innerHTML = renderResult(result);
          updateScore();
        }, function (err) {
          feedback.innerHTML = '<p class="verdict">The check failed: ' + escapeHtml(String(err.message || err)) + "</p>";
        });
      });
    });

    // Questions changed after release are shown but not scored, as in the other front-ends.
    Promise.all(data.questions.map(function (q) {
      return H.questionIntegrity(salt, q).then(function (digest) { return digest === q.integrity; });
    })).then(function (intact) {
      data.questions.forEach(function (q, i) {
        if (intact[i]) return;
        delete scored[q.id];
        var article = section.querySelector('article.question[data-question-id="' + CSS.escape(q.id) + '"]');
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
      });
    });
    updateScore();
  }

  function setupAll() {
    Array.prototype.forEach.call(document.querySelectorAll("section.quiz[data-quiz-json]"), setupQuiz);
  }

  window.TvmCourseQuiz = { textToHtml: textToHtml, checkAnswer: checkAnswer, canonicalAnswer: canonicalAnswer };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setupAll);
  } else {
    setupAll();
  }
})();
