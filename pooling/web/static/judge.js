// The judging page: grade buttons and keyboard shortcuts, "can't judge" (x), undo, time on
// the document.
// Every submission carries the id the server generated for this view, so a retry (or a
// double press) is stored once; on success the page moves on to the URL the server names.
(function () {
  "use strict";
  const root = document.getElementById("judge");
  if (!root) return;
  const data = root.dataset;
  const status = document.getElementById("status");
  const note = document.getElementById("note");
  const undoButton = document.getElementById("undo");
  let busy = false;

  // Time on the document counts only while the page is visible.
  let visibleMs = 0;
  let since = document.visibilityState === "visible" ? performance.now() : null;
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      since = performance.now();
    } else if (since !== null) {
      visibleMs += performance.now() - since;
      since = null;
    }
  });
  function secondsSpent() {
    const ms = visibleMs + (since === null ? 0 : performance.now() - since);
    return Math.round(ms / 100) / 10;
  }

  function say(text, isError) {
    status.textContent = text;  // text only: never parsed as HTML
    status.classList.toggle("error", Boolean(isError));
  }

  class Refused extends Error {}

  async function post(url, body) {
    // Retries reuse the same submission id, so the server stores the judgment once.
    for (let attempt = 0; attempt < 4; attempt += 1) {
      let response;
      try {
        response = await fetch(url, {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": data.csrf },
          body: JSON.stringify(body),
        });
      } catch (err) {
        await new Promise(function (resolve) { setTimeout(resolve, 400 * (attempt + 1)); });
        continue;
      }
      if (response.ok) return response.json();
      if (response.status === 401 || response.status === 403) {
        throw new Refused("You are logged out: follow your login link again, then come back.");
      }
      if (response.status < 500) {
        let message = "The server refused this (" + response.status + ").";
        try { message = (await response.json()).error || message; } catch (err) { /* not JSON */ }
        throw new Refused(message);
      }
      await new Promise(function (resolve) { setTimeout(resolve, 400 * (attempt + 1)); });
    }
    throw new Error("The server did not answer. Nothing is lost: press the key again.");
  }

  async function judge(button) {
    if (busy) return;
    busy = true;
    button.classList.add("sending");
    say("Saving…");
    try {
      const body = {
        doc_id: data.docId,
        seconds: secondsSpent(),
        note: note.value,
        submission_id: data.submissionId,
      };
      // A crowd round's page proves that it handed this document out.
      if (data.handout) body.handout = data.handout;
      // "Broken link / can't judge" is an answer of its own, not a grade.
      if (button.dataset.unjudgeable) body.unjudgeable = true;
      else body.grade = Number(button.dataset.grade);
      const result = await post(data.judgeUrl, body);
      say("Saved.");
      window.location.assign(result.next);
    } catch (err) {
      busy = false;
      button.classList.remove("sending");
      say(err.message, true);
    }
  }

  async function undo() {
    if (busy || !undoButton || undoButton.disabled) return;
    busy = true;
    say("Undoing the last judgment…");
    try {
      const result = await post(data.undoUrl, { submission_id: data.undoId });
      say("Undone.");
      window.location.assign(result.next);
    } catch (err) {
      busy = false;
      say(err.message, true);
    }
  }

  // A subtopic round: a grade per subtopic, chosen by keyboard or click, saved together.
  const subtopicList = document.getElementById("subtopics");
  const rows = subtopicList ? Array.from(subtopicList.querySelectorAll("li[data-subtopic]")) : [];
  let active = 0;

  function activate(i) {
    if (!rows.length) return;
    active = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach(function (row, n) { row.classList.toggle("active", n === active); });
    rows[active].scrollIntoView({ block: "nearest" });
  }

  function choose(row, button) {
    row.dataset.chosen = button.dataset.subGrade;
    row.querySelectorAll("button[data-sub-grade]").forEach(function (b) {
      b.classList.toggle("current", b === button);
    });
  }

  async function saveGrades() {
    if (busy) return;
    const missing = rows.filter(function (row) { return row.dataset.chosen === ""; });
    if (missing.length) {
      activate(rows.indexOf(missing[0]));
      const part = subtopicList.dataset.part || "subtopic";
      say("Grade every " + part + " first: " + part + " " + missing[0].dataset.subtopic + " has no grade.", true);
      return;
    }
    const grades = {};
    rows.forEach(function (row) { grades[row.dataset.subtopic] = Number(row.dataset.chosen); });
    busy = true;
    say("Saving…");
    try {
      const result = await post(data.judgeUrl, {
        doc_id: data.docId,
        grades: grades,
        seconds: secondsSpent(),
        note: note.value,
        submission_id: data.submissionId,
      });
      say("Saved.");
      window.location.assign(result.next);
    } catch (err) {
      busy = false;
      say(err.message, true);
    }
  }

  rows.forEach(function (row, n) {
    row.querySelectorAll("button[data-sub-grade]").forEach(function (button) {
      button.addEventListener("click", function () { choose(row, button); activate(n); });
    });
  });
  const saveButton = document.getElementById("save-grades");
  if (saveButton) saveButton.addEventListener("click", saveGrades);

  // The keys of a subtopic round; true when the key was one of them.
  function subtopicKey(event) {
    if (!rows.length) return false;
    const button = rows[active].querySelector('button[data-sub-key="' + CSS.escape(event.key) + '"]');
    if (button) {
      choose(rows[active], button);
      activate(active + 1);
      return true;
    }
    switch (event.key) {
      case "ArrowDown": case "j": activate(active + 1); return true;
      case "ArrowUp": case "k": activate(active - 1); return true;
      case "Enter": saveGrades(); return true;
      default: return false;
    }
  }

  function follow(id) {
    const link = document.getElementById(id);
    if (link && !busy) window.location.assign(link.href);
  }

  root.querySelectorAll("button[data-grade], button[data-unjudgeable]").forEach(function (button) {
    button.addEventListener("click", function () { judge(button); });
  });
  if (undoButton) undoButton.addEventListener("click", undo);

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.isContentEditable)) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (subtopicKey(event)) { event.preventDefault(); return; }
    const grade = root.querySelector('button[data-key="' + CSS.escape(event.key) + '"]');
    if (grade) { event.preventDefault(); judge(grade); return; }
    switch (event.key) {
      case "n": case "ArrowRight": event.preventDefault(); follow("next"); break;
      case "p": case "ArrowLeft": event.preventDefault(); follow("prev"); break;
      case "s": event.preventDefault(); follow("skip"); break;
      case "u": event.preventDefault(); undo(); break;
      default: break;
    }
  });
})();
