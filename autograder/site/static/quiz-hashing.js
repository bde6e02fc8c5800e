/*
 * The released-quiz scheme of autograder/quiz/hashing.py, in the browser.
 *
 *   key(q, purpose, canonical) = PBKDF2-HMAC-SHA256(UTF-8(canonical),
 *                                    UTF-8(SCHEME "\n" salt "\n" q "\n" purpose), ITERATIONS, 32 bytes)
 *   check                      = hex(SHA-256(key))
 *   keystream(key)             = SHA-256(key || be32(0)) || SHA-256(key || be32(1)) || ...
 *   sealed text                = base64(UTF-8(text) XOR keystream(key))
 *
 * An answer is correct when its check is among the question's `accept` checks; that entry's
 * sealed text (the explanation) opens with the same key. Every function here mirrors the one of
 * the same name in hashing.py (and answers.py for reading what a student typed, checking.py for
 * the forms of a text answer that are tried); the site's tests run both on the same inputs and
 * compare. PBKDF2 and SHA-256 are WebCrypto's where the page has it (file://, localhost, https),
 * else the plain JavaScript ones below, so that the quiz also works on a site served over plain
 * http. The key is slow on purpose (hashing.py says why): one check costs ITERATIONS rounds.
 * Exposed as window.TvmCourseQuizHashing.
 */
(function (global) {
  "use strict";

  var SCHEME = "tvm-course-quiz/v2";
  var ITERATIONS = 100000;
  var ANSWER = "answer";
  var CHOICE = "choice";
  var MAX_CELL_INDEX = Math.pow(2, 53);
  var ASCII_WHITESPACE = /[ \t\n\r\f\v]/;
  // What Python's str.strip() removes (str.isspace), so that typed answers are trimmed alike.
  var PYTHON_SPACE = "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  var PYTHON_STRIP = new RegExp("^" + PYTHON_SPACE + "+|" + PYTHON_SPACE + "+$", "g");
  var NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
  var THOUSANDS = /^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$/;
  // checking.py _BACKTICKS and _BACKTICKS_AND_PUNCTUATION, applied to a normalised text answer.
  var BACKTICKS = /^[` ]+|[` ]+$/g;
  var BACKTICKS_AND_PUNCTUATION = /^[` ]+|[`.,;:!? ]+$/g;
  var encoder = new TextEncoder();

  function webCrypto() {
    return !!(global.crypto && global.crypto.subtle && global.crypto.subtle.digest);
  }

  /* Whether answers can be checked here: always, with WebCrypto or with the plain version. */
  function available() {
    return true;
  }

  // ---- SHA-256 (FIPS 180-4) in plain JavaScript, for pages without WebCrypto -------------------

  var K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  var H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

  function rotr(x, n) {
    return (x >>> n) | (x << (32 - n));
  }

  /* One SHA-256 compression of the 16 words in w[0..15] into the state h (w is 64 words long). */
  function compress(h, w) {
    var t;
    for (t = 16; t < 64; t++) {
      var s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >>> 3);
      var s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >>> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (t = 0; t < 64; t++) {
      var t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t]) | 0;
      var t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
  }

  /* SHA-256 of `bytes`, continuing from state h0 after `before` bytes (a multiple of 64) were hashed. */
  function sha256Continue(h0, before, bytes) {
    var length = bytes.length;
    var blocks = new Uint8Array(((length + 9 + 63) >> 6) << 6);  // the message, 0x80, zeros, 64-bit length
    blocks.set(bytes);
    blocks[length] = 0x80;
    var view = new DataView(blocks.buffer);
    var bits = (before + length) * 8;
    view.setUint32(blocks.length - 8, Math.floor(bits / 0x100000000));
    view.setUint32(blocks.length - 4, bits >>> 0);
    var h = new Uint32Array(h0);
    var w = new Uint32Array(64);
    for (var offset = 0; offset < blocks.length; offset += 64) {
      for (var t = 0; t < 16; t++) w[t] = view.getUint32(offset + 4 * t);
      compress(h, w);
    }
    return h;
  }

  function wordsToBytes(words) {
    var out = new Uint8Array(words.length * 4);
    var view = new DataView(out.buffer);
    for (var i = 0; i < words.length; i++) view.setUint32(4 * i, words[i]);
    return out;
  }

  function sha256Plain(bytes) {
    return wordsToBytes(sha256Continue(H0, 0, bytes));
  }

  /* PBKDF2-HMAC-SHA256 (RFC 8018) with the HMAC pads' states computed once, so that each of
   * the iterations costs two compressions and no allocation. */
  function pbkdf2Plain(password, salt, iterations, length) {
    var key = password.length > 64 ? sha256Plain(password) : password;
    var pad = new Uint8Array(64);
    var w = new Uint32Array(64);
    function padState(byte) {
      for (var i = 0; i < 64; i++) pad[i] = (key[i] || 0) ^ byte;
      var h = new Uint32Array(H0);
      var view = new DataView(pad.buffer);
      for (var t = 0; t < 16; t++) w[t] = view.getUint32(4 * t);
      compress(h, w);
      return h;
    }
    var inner = padState(0x36), outer = padState(0x5c);
    var out = new Uint8Array(Math.ceil(length / 32) * 32);
    var h = new Uint32Array(8);
    for (var block = 1; block * 32 - 32 < length; block++) {
      var message = new Uint8Array(salt.length + 4);
      message.set(salt);
      new DataView(message.buffer).setUint32(salt.length, block);
      var u = sha256Continue(outer, 64, wordsToBytes(sha256Continue(inner, 64, message)));
      var sum = new Uint32Array(u);
      for (var round = 1; round < iterations; round++) {
        // HMAC of the 32-byte u: one block (u, 0x80, zeros, 96 bytes in bits) after each pad.
        for (var pass = 0; pass < 2; pass++) {
          h.set(pass === 0 ? inner : outer);
          for (var i = 0; i < 8; i++) w[i] = u[i];
          w[8] = 0x80000000; w[9] = w[10] = w[11] = w[12] = w[13] = w[14] = 0; w[15] = 768;
          compress(h, w);
          u.set(h);
        }
        for (var j = 0; j < 8; j++) sum[j] ^= u[j];
      }
      out.set(wordsToBytes(sum), (block - 1) * 32);
    }
    return out.subarray(0, length);
  }

  function pbkdf2(password, salt) {
    if (!webCrypto() || !global.crypto.subtle.importKey) {
      try {
        return Promise.resolve(pbkdf2Plain(password, salt, ITERATIONS, 32));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    var subtle = global.crypto.subtle;
    return subtle.importKey("raw", password, "PBKDF2", false, ["deriveBits"]).then(function (key) {
      return subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: salt, iterations: ITERATIONS }, key, 256);
    }).then(function (bits) {
      return new Uint8Array(bits);
    });
  }

  function sha256(bytes) {
    if (!webCrypto()) {
      try {
        return Promise.resolve(sha256Plain(bytes));
      } catch (err) {
        return Promise.reject(err);
      }
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
    return pbkdf2(encoder.encode(canonical), encoder.encode([SCHEME, salt, questionId, purpose].join("\n")));
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

  /* checking.py undecorated_texts: without surrounding backticks; and also without trailing .,;:!? */
  function undecoratedTexts(normalised) {
    return [normalised.replace(BACKTICKS, ""), normalised.replace(BACKTICKS_AND_PUNCTUATION, "")];
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
    SCHEME: SCHEME, ITERATIONS: ITERATIONS, ANSWER: ANSWER, CHOICE: CHOICE,
    available: available, webCrypto: webCrypto, sha256: sha256, sha256Plain: sha256Plain, pbkdf2Plain: pbkdf2Plain, deriveKey: deriveKey, checkOf: checkOf, unseal: unseal, openEntry: openEntry,
    normalizeText: normalizeText, undecoratedTexts: undecoratedTexts, canonicalLetters: canonicalLetters, canonicalExact: canonicalExact,
    cellIndex: cellIndex, canonicalNumber: canonicalNumber, pythonStrip: pythonStrip, parseNumber: parseNumber,
    canonicalJson: canonicalJson, questionIntegrity: questionIntegrity, headerIntegrity: headerIntegrity,
    hex: hex
  };
})(window);
