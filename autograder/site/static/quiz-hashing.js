/*
 * The released-quiz scheme of autograder/quiz/hashing.py, in the browser (WebCrypto SHA-256).
 *
 *   key(q, purpose, canonical) = SHA-256(UTF-8(SCHEME "\n" salt "\n" q "\n" purpose "\n" canonical))
 *   check                      = hex(SHA-256(key))
 *   keystream(key)             = SHA-256(key || be32(0)) || SHA-256(key || be32(1)) || ...
 *   sealed text                = base64(UTF-8(text) XOR keystream(key))
 *
 * An answer is correct when its check is among the question's `accept` checks; that entry's
 * sealed text (the explanation) opens with the same key. Every function here mirrors the one of
 * the same name in hashing.py (and answers.py for reading what a student typed); the site's
 * tests run both on the same inputs and compare. Exposed as window.TvmCourseQuizHashing.
 */
(function (global) {
  "use strict";

  var SCHEME = "tvm-course-quiz/v1";
  var ANSWER = "answer";
  var CHOICE = "choice";
  var MAX_CELL_INDEX = Math.pow(2, 53);
  var ASCII_WHITESPACE = /[ \t\n\r\f\v]/;
  // What Python's str.strip() removes (str.isspace), so that typed answers are trimmed alike.
  var PYTHON_SPACE = "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  var PYTHON_STRIP = new RegExp("^" + PYTHON_SPACE + "+|" + PYTHON_SPACE + "+$", "g");
  var NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
  var THOUSANDS = /^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$/;
  var encoder = new TextEncoder();

  function available() {
    return !!(global.crypto && global.crypto.subtle && global.crypto.subtle.digest);
  }

  function sha256(bytes) {
    if (!available()) {
      return Promise.reject(new Error("this browser offers no WebCrypto here; open the page from a file, " +
        "from localhost (tvm-course site serve) or over https"));
    }
    return global.crypto.subtle.digest("SHA-256", bytes).then(function (buffer) {
      return new Uint8Array(buffer);
    });
  }

  function hex(bytes) {
    var out = "";
    for (var i = 0; i < bytes.length; i++) out += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
    return out;
  }

  function concat(a, b) {
    var out = new Uint8Array(a.length + b.length);
    out.set(a, 0);
    out.set(b, a.length);
    return out;
  }

  function deriveKey(salt, questionId, purpose, canonical) {
    return sha256(encoder.encode([SCHEME, salt, questionId, purpose, canonical].join("\n")));
  }

  function checkOf(key) {
    return sha256(key).then(hex);
  }

  function keystream(key, length) {
    var blocks = [];
    for (var counter = 0; counter < Math.ceil(length / 32); counter++) {
      var be32 = new Uint8Array(4);
      new DataView(be32.buffer).setUint32(0, counter, false);
      blocks.push(sha256(concat(key, be32)));
    }
    return Promise.all(blocks).then(function (parts) {
      var out = new Uint8Array(parts.length * 32);
      parts.forEach(function (part, i) { out.set(part, i * 32); });
      return out.subarray(0, length);
    });
  }

  function base64Bytes(text) {
    var binary = global.atob(text);
    var out = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  }

  function unseal(key, sealed) {
    var data = base64Bytes(sealed);
    return keystream(key, data.length).then(function (stream) {
      var plain = new Uint8Array(data.length);
      for (var i = 0; i < data.length; i++) plain[i] = data[i] ^ stream[i];
      return new TextDecoder("utf-8").decode(plain);
    });
  }

  /* The text of the entry this answer matches, or null when it matches none. */
  function openEntry(entries, salt, questionId, purpose, canonical) {
    return deriveKey(salt, questionId, purpose, canonical).then(function (key) {
      return checkOf(key).then(function (check) {
        for (var i = 0; i < (entries || []).length; i++) {
          if (entries[i].check === check) return unseal(key, entries[i].text);
        }
        return null;
      });
    });
  }

  // ---- canonical answers --------------------------------------------------------------------

  /* Python's str.lower(): full Unicode lower-casing, with the final-sigma rule, as toLowerCase(). */
  function pythonLower(text) {
    return text.toLowerCase();
  }

  function normalizeText(text, caseSensitive) {
    var words = text.normalize("NFC").split(ASCII_WHITESPACE).filter(function (w) { return w; });
    var joined = words.join(" ");
    return caseSensitive ? joined : pythonLower(joined);
  }

  function canonicalLetters(letters, keepOrder) {
    return (keepOrder ? letters.slice() : letters.slice().sort()).join(",");
  }

  function canonicalExact(value) {
    var bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value === 0 ? 0 : value, false);
    return "exact:" + hex(bytes);
  }

  function cellIndex(value, step) {
    var index = Math.floor(value / step);
    if (!(Math.abs(index) <= MAX_CELL_INDEX)) {
      throw new RangeError(value + " is too far from zero for a grid step of " + step);
    }
    return index === 0 ? 0 : index;
  }

  function canonicalNumber(value, step) {
    return step === null || step === undefined ? canonicalExact(value) : "cell:" + String(cellIndex(value, step));
  }

  // ---- reading what a student typed (answers.py parse_answer_text) ----------------------------

  function pythonStrip(text) {
    return text.replace(PYTHON_STRIP, "");
  }

  /* A typed number -> a finite float; throws Error with what to type instead. */
  function parseNumber(text, unit) {
    var number = pythonStrip(text);
    if (unit && pythonLower(number).endsWith(pythonLower(unit))) {
      var points = Array.from(number);  // Python slices code points, not UTF-16 units
      number = pythonStrip(points.slice(0, points.length - Array.from(unit).length).join(""));
    }
    if (THOUSANDS.test(number)) number = number.replace(/,/g, "");
    if (!NUMBER.test(number)) {
      throw new Error("type a number" + (unit ? " (in " + unit + ")" : "") + ", e.g. 42 or 0.5");
    }
    var value = parseFloat(number);
    if (!isFinite(value)) throw new Error("expected a finite number");
    return value;
  }

  // ---- integrity ------------------------------------------------------------------------------

  /* json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for JSON data. */
  function canonicalJson(data) {
    if (Array.isArray(data)) return "[" + data.map(canonicalJson).join(",") + "]";
    if (data !== null && typeof data === "object") {
      return "{" + Object.keys(data).sort().map(function (k) {
        return JSON.stringify(k) + ":" + canonicalJson(data[k]);
      }).join(",") + "}";
    }
    return JSON.stringify(data);
  }

  function sha256Json(data) {
    return sha256(encoder.encode(canonicalJson(data))).then(hex);
  }

  function withoutKey(object, key) {
    var out = {};
    Object.keys(object).forEach(function (k) { if (k !== key) out[k] = object[k]; });
    return out;
  }

  function questionIntegrity(salt, question) {
    return sha256Json([salt, withoutKey(question, "integrity")]);
  }

  function headerIntegrity(documentData) {
    var copy = withoutKey(documentData, "released");
    copy.released = withoutKey(documentData.released, "integrity");
    copy.questions = (documentData.questions || []).map(function (q) {
      return q !== null && typeof q === "object" && "integrity" in q ? q.integrity : null;
    });
    return sha256Json(copy);
  }

  global.TvmCourseQuizHashing = {
    SCHEME: SCHEME, ANSWER: ANSWER, CHOICE: CHOICE,
    available: available, deriveKey: deriveKey, checkOf: checkOf, unseal: unseal, openEntry: openEntry,
    normalizeText: normalizeText, canonicalLetters: canonicalLetters, canonicalExact: canonicalExact,
    cellIndex: cellIndex, canonicalNumber: canonicalNumber, pythonStrip: pythonStrip, parseNumber: parseNumber,
    canonicalJson: canonicalJson, questionIntegrity: questionIntegrity, headerIntegrity: headerIntegrity,
    hex: hex
  };
})(window);
