// robojudge annotation pages: the synchronised frame-accurate player, keyboard shortcuts, draft
// autosave and the pause-and-prompt segment checks. Loaded as a file (the CSP forbids inline script).
"use strict";

(function () {
  const csrf = () => {
    const m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute("content") : "";
  };
  // The session's current token, after a save was refused for a stale one: the session had ended
  // (expiry, a restart with a new secret, a logout in another tab) and the rater logged in again. Every
  // copy on the page (the meta tag, the forms' hidden fields) takes it. Resolves to false when there is
  // no session (not logged in again yet) or no answer.
  let refreshing = null;
  const refreshCsrf = () => {
    if (!refreshing) {
      refreshing = fetch("/api/csrf", { credentials: "same-origin", cache: "no-store" })
        .then((r) => (r.ok ? r.json() : null))
        .then((data) => {
          if (!data || typeof data.csrf !== "string" || !data.csrf) return false;
          const m = document.querySelector('meta[name="csrf-token"]');
          if (m) m.setAttribute("content", data.csrf);
          document.querySelectorAll('input[name="csrf_token"]').forEach((i) => { i.value = data.csrf; });
          return true;
        })
        .catch(() => false)
        .finally(() => { refreshing = null; });
    }
    return refreshing;
  };

  // ---- player: one set of controls drives every <video> of a .rj-player (multi-view in lockstep)
  function setupPlayer(root) {
    const videos = Array.from(root.querySelectorAll("video"));
    if (videos.length === 0) return null;
    const lead = videos[0];
    const fps = parseFloat(root.dataset.fps || "0") || 25;
    const segment = parseFloat(root.dataset.segment || "0");
    const slider = root.querySelector(".rj-seek");
    const frameLabel = root.querySelector(".rj-frame");
    const playButton = root.querySelector(".rj-play");
    let stopAt = null; // end of the segment being played while pause-and-prompt is on
    let stopSegment = null;
    let watching = false; // an animation-frame check of stopAt is scheduled

    const frameOf = (t) => Math.floor(t * fps + 1e-6);
    const frameCount = () => (isFinite(lead.duration) ? Math.max(1, Math.round(lead.duration * fps)) : 1);
    // Seek to the middle of the frame: a time on a frame boundary may show either neighbour.
    // A view already there is left alone: setting the same time starts another seek.
    const seekFrame = (f) => {
      const n = frameCount();
      f = Math.max(0, Math.min(n - 1, f));
      const t = (f + 0.5) / fps;
      videos.forEach((v) => { if (v.currentTime !== t) v.currentTime = t; });
      root.dataset.frame = String(f);
      // moved while playing (the slider): the next stop is the end of the segment landed in, not of
      // the one left (which would pull the player back there and prompt it)
      if (!lead.paused) arm(t);
      update();
    };
    const update = () => {
      const f = frameOf(lead.currentTime);
      if (frameLabel) frameLabel.textContent = "frame " + f + " / " + (frameCount() - 1);
      if (slider) { slider.max = String(frameCount() - 1); slider.value = String(f); }
      root.dataset.frame = String(f);
      if (playButton) playButton.textContent = lead.paused ? "Play" : "Pause";
      if (segment > 0) markSegment(Math.floor(lead.currentTime / segment));
    };
    // Pause-and-prompt: stop at the segment's last frame (checked every animation frame, since
    // timeupdate comes only every quarter second), show that frame and ask for the verdict.
    const checkStop = () => {
      if (stopAt === null) return;
      if (lead.currentTime >= stopAt - 0.5 / fps) {
        const index = stopSegment;
        stopAt = null;
        pause();
        seekFrame(Math.ceil(Math.min(lead.duration, (index + 1) * segment) * fps - 1e-6) - 1);
        promptSegment(index);
      } else if (!lead.paused) {
        watch();
      }
    };
    const watch = () => {
      if (watching) return;
      watching = true;
      requestAnimationFrame(() => { watching = false; checkStop(); });
    };
    // The stop point for playing on from time t: the end of t's segment. Resting on a segment's last
    // frame (after a prompt) counts as the next segment's start.
    const arm = (t) => {
      if (segment <= 0) return;
      stopSegment = Math.floor((t + 0.5 / fps) / segment + 1e-6);
      stopAt = Math.min(lead.duration || Infinity, (stopSegment + 1) * segment);
      if (stopAt >= lead.duration) stopAt = null; // the last segment ends with the video
      else watch();
    };
    const play = () => {
      const note = document.querySelector(".rj-prompt-note");
      if (note) note.textContent = "";
      arm(lead.currentTime);
      Promise.all(videos.map((v) => v.play().catch(() => {}))).then(watch);
    };
    const pause = () => { videos.forEach((v) => v.pause()); };
    const toggle = () => (lead.paused ? play() : pause());
    // The followers chase the lead: a drift of more than half a frame is corrected.
    lead.addEventListener("timeupdate", () => {
      videos.slice(1).forEach((v) => {
        if (Math.abs(v.currentTime - lead.currentTime) > 0.5 / fps) v.currentTime = lead.currentTime;
      });
      checkStop();
      update();
    });
    lead.addEventListener("ended", () => {
      if (segment > 0) promptSegment(Math.floor((lead.duration - 0.5 / fps) / segment));
    });
    // Paused, every view shows the lead's frame: the drift allowed while playing (up to half a frame)
    // could leave the views one frame apart. Not at the end, which a seek would undo.
    lead.addEventListener("pause", () => {
      videos.forEach((v) => v.pause());
      if (videos.length > 1 && !lead.ended) seekFrame(frameOf(lead.currentTime));
      else update();
    });
    lead.addEventListener("loadedmetadata", update);
    // A view that cannot play (a damaged or missing file): say so, and rate nothing on a blank player.
    videos.forEach((v) => {
      v.addEventListener("error", () => cannotPlay(root));
      if (v.error) cannotPlay(root);
    });
    if (slider) slider.addEventListener("input", () => seekFrame(parseInt(slider.value, 10)));
    if (playButton) playButton.addEventListener("click", toggle);
    root.querySelectorAll(".rj-step").forEach((b) =>
      b.addEventListener("click", () => { pause(); seekFrame(frameOf(lead.currentTime) + parseInt(b.dataset.step, 10)); }));
    return { toggle, pause, step: (d) => { pause(); seekFrame(frameOf(lead.currentTime) + d); }, seekFrame, lead };
  }

  // The player's video cannot be played (its file truncated, damaged or gone): the alert in the player
  // says so and offers to report it; the player's controls and the label form are switched off, and the
  // form is no longer saved (its switched-off fields would go as empty), so no label rests on a blank
  // player. The task stays open.
  function cannotPlay(root) {
    const box = root.querySelector(".rj-media-error");
    if (!box || !box.hidden) return;
    box.hidden = false;
    const frame = root.querySelector(".rj-frame");
    if (frame) frame.textContent = "cannot be played";
    root.querySelectorAll(".rj-controls button, .rj-controls input").forEach((el) => { el.disabled = true; });
    const form = document.querySelector("form.rj-label-form");
    if (!form) return;
    form.dataset.unplayable = "1";
    form.querySelectorAll("fieldset, textarea, button[type=submit]").forEach((el) => { el.disabled = true; });
  }

  function markSegment(index) {
    document.querySelectorAll(".rj-segment").forEach((el) => {
      el.classList.toggle("rj-current", parseInt(el.dataset.index, 10) === index);
    });
  }
  // The prompt always marks the segment and says so in its live region, which is all a rater hears when
  // the focus stays where it is. It moves the focus to the segment's group (its radiogroup, named
  // "segment 0-3 s") only where the focus rests on no control: on the page itself, or on the segment an
  // earlier prompt put it on. A control the rater is using keeps it: taken from a text box, the rest of
  // the typing would land on the shortcuts and change scores; taken from Play or a frame button, the
  // Space or Enter that was to press it again would go elsewhere, and a screen reader would jump to the
  // form. The group, not one of its radios: on a radio, the Space a rater presses to go on would check
  // it (and the arrows change it), while the group does nothing with those keys and leaves them to the
  // player. Tab goes on to its choices. The b / m / g keys rate the prompted segment from anywhere.
  function promptSegment(index) {
    const el = document.querySelector('.rj-segment[data-index="' + index + '"]');
    if (!el) return;
    markSegment(index);
    el.classList.add("rj-prompt");
    const note = document.querySelector(".rj-prompt-note");
    const span = el.querySelector(".rj-span");
    if (note) note.textContent = "segment " + (span ? span.textContent : index + 1) + " ended: rate it";
    const active = document.activeElement;
    const free = !active || active === document.body || active === document.documentElement ||
      active.classList.contains("rj-segment");
    if (!free) return;
    el.tabIndex = -1; // focusable by script only: the Tab order stays the radios'
    el.focus();
  }

  // ---- unsaved work kept in this browser: the form's state per task (localStorage), written at every
  // change with the server version it builds on, the form's stage and editable fields, the states this
  // page sent to the server (the last SENT_KEPT) and the time, and removed once a save has stored exactly
  // that state or the task is submitted. It covers what a save cannot: a closing save that is refused or
  // fails, a session that ended. Reopened, the task offers it back (offerUnsaved) only where it still
  // builds on what the server holds; it is never put back unasked. Logging out forgets every copy.
  // Where localStorage is missing or refuses (private mode, full), the page works as before.
  const UNSAVED_PREFIX = "robojudge.unsaved.";
  const SENT_KEPT = 20;
  const unsaved = {
    read(id) {
      try {
        const entry = JSON.parse(window.localStorage.getItem(UNSAVED_PREFIX + id) || "null");
        return entry && entry.values && typeof entry.values === "object" ? entry : null;
      } catch (e) { return null; }
    },
    write(id, entry) {
      try { window.localStorage.setItem(UNSAVED_PREFIX + id, JSON.stringify(entry)); } catch (e) { /* the server's draft only */ }
    },
    drop(id) {
      try { window.localStorage.removeItem(UNSAVED_PREFIX + id); } catch (e) { /* nothing kept */ }
    },
    // every task's copy: a logout leaves no one's text behind on a shared browser
    dropAll() {
      try {
        const keys = [];
        for (let i = 0; i < window.localStorage.length; i += 1) {
          const key = window.localStorage.key(i);
          if (key && key.startsWith(UNSAVED_PREFIX)) keys.push(key);
        }
        keys.forEach((key) => window.localStorage.removeItem(key));
      } catch (e) { /* nothing kept */ }
    },
  };
  // A form state as one string: the same fields with the same values give the same text, whatever their
  // order.
  const canon = (v) => JSON.stringify(Object.keys(v).sort().map((k) => [k, v[k]]));
  const sameValues = (a, b) => canon(a) === canon(b);
  // The queue lists submitted tasks: what this browser kept of them is done with (a submit lands here).
  function forgetSubmitted() {
    document.querySelectorAll('tr.rj-entry[data-status="submitted"] a.rj-open').forEach((a) => {
      unsaved.drop((a.getAttribute("href") || "").split("/").pop());
    });
  }

  // ---- draft autosave: on change (debounced), every few seconds while dirty, and when the tab hides
  function formState(form) {
    const out = {};
    new FormData(form).forEach((value, key) => {
      if (key !== "csrf_token" && key !== "base_version") out[key] = value;
    });
    return out;
  }
  // The names of the controls the rater can change (not the fixed, hidden ones), sorted.
  function editableFields(form) {
    const names = new Set();
    form.querySelectorAll("input, textarea, select").forEach((el) => {
      if (el.name && !el.disabled && el.type !== "hidden") names.add(el.name);
    });
    return Array.from(names).sort();
  }
  // Put kept values back into the form's controls. Only the fields the kept form had a control for
  // (``fields``; a copy from before they were recorded: the fields it holds) are set, a radio group with
  // none checked there emptied; every other control keeps the page's value, and so do fixed fields
  // (hidden inputs: PA once the instruction is shown).
  function fillForm(form, values, fields) {
    const own = new Set(Array.isArray(fields) ? fields : Object.keys(values));
    form.querySelectorAll("input, textarea, select").forEach((el) => {
      if (!el.name || el.disabled || el.type === "hidden" || !own.has(el.name)) return;
      const value = Object.prototype.hasOwnProperty.call(values, el.name) ? String(values[el.name]) : "";
      if (el.type === "radio" || el.type === "checkbox") el.checked = el.value === value;
      else el.value = value;
    });
  }
  function setupDraft(form) {
    const url = form.dataset.draftUrl;
    const task = form.dataset.assignment || "";
    if (!url) { unsaved.drop(task); return; } // submitted
    const status = form.querySelector(".rj-save-status");
    const when = form.querySelector(".rj-save-time");
    const alarm = form.querySelector(".rj-save-error");
    const base = form.querySelector('input[name="base_version"]');
    let dirty = false, timer = null, lastSent = JSON.stringify(formState(form)), inFlight = false;
    let pending = 0, lastKept = null; // saves sent and not answered; the body of the last closing save
    let submitWhenSaved = null; // the button of a submit that waits for the save in flight
    const stage = form.dataset.stage || "";
    const fields = editableFields(form);
    const sent = []; // the states this page sent (canon), oldest first, at most SENT_KEPT
    const keepHere = () => unsaved.write(task, { version: parseInt(base.value, 10) || 0, stage, fields,
                                                 values: formState(form), sent: sent.slice(), at: Date.now() });
    // Written before the request goes (a closing save's reply may never come): reopened, a server state
    // this page sent is its own save that landed, not a change made elsewhere.
    const noteSent = (values) => {
      const state = canon(values);
      if (sent[sent.length - 1] !== state) sent.push(state);
      if (sent.length > SENT_KEPT) sent.splice(0, sent.length - SENT_KEPT);
      const kept = unsaved.read(task);
      if (kept) { kept.sent = sent.slice(); unsaved.write(task, kept); }
    };
    let said = null; // what the live regions say now: "saved", or the text of the error
    // Three spans in task.html. "draft saved" is a polite live region (role=status), written only when
    // the state changes: the first save, and the first save after an error. An autosave like the one
    // before leaves it alone, so a screen reader is not told every few seconds while someone types; the
    // time of the last save, beside it, is plain text. An error goes to an assertive one (role=alert),
    // once per error: a retry that fails the same way (offline, every 3 s) says nothing new. Each side
    // is emptied when the other speaks, so the next change there is read out again.
    const show = (text, error) => {
      const now = error ? text : "saved";
      if (when) when.textContent = error ? "" : new Date().toLocaleTimeString();
      if (now === said) return;
      said = now;
      if (status) status.textContent = error ? "" : "draft saved";
      if (alarm) alarm.textContent = error ? text : "";
    };
    // One save at a time: each carries the version it builds on, and the reply's version is the
    // base of the next, so a slow reply never makes the following save look stale.
    // A closing save (keepalive, the page is going away) cannot wait for the one in flight: it builds on
    // the version that save will make (each accepted save adds one). That is a guess: when the earlier
    // save arrives after it, changes nothing or fails, the closing save is refused as stale, and what is
    // left of the last edit is the copy kept in this browser (offered back when the task opens again).
    // A save refused for a stale token (logged in again since the page loaded) fetches the new token and
    // goes once more (retried).
    const save = (keepalive, retried) => {
      if (form.dataset.unplayable === "1") return; // the fields are off (cannotPlay): nothing to save
      const values = formState(form);
      const body = JSON.stringify(values);
      if (body === lastSent) { dirty = false; return; }
      if (inFlight && !keepalive) { dirty = true; return; }
      if (keepalive && body === lastKept) return; // visibilitychange, then pagehide: sent once
      if (keepalive) lastKept = body;
      inFlight = true;
      dirty = false;
      const overlapped = pending > 0; // sent while one of this page's own saves was on its way
      const builds = (parseInt(base.value, 10) || 0) + pending;
      pending += 1;
      noteSent(values);
      // a submit waiting for this save will not go: say so, rather than sending it at some later save
      const dropSubmit = (why) => {
        if (!submitWhenSaved) return false;
        submitWhenSaved = null;
        show("not submitted: " + why + "; press Submit again", true);
        return true;
      };
      fetch(url, {
        method: "POST", credentials: "same-origin", keepalive: !!keepalive,
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
        body: JSON.stringify({ base_version: builds, values }),
      }).then((r) => r.json().catch(() => ({})).then((data) => {
        pending = Math.max(0, pending - 1);
        inFlight = pending > 0;
        if (!r.ok && keepalive) lastKept = null; // not kept: the next closing save goes again
        if (r.ok) {
          lastSent = body;
          // the later of two replies may come first: keep the newest version seen
          base.value = String(Math.max(parseInt(base.value, 10) || 0, data.version));
          const kept = unsaved.read(task);
          if (kept && sameValues(kept.values, values)) unsaved.drop(task);
          if (JSON.stringify(formState(form)) === body) {
            form.dataset.saved = "1";
            show("draft saved " + new Date().toLocaleTimeString());
          } else if (!submitWhenSaved) {
            // edited while this save was on its way: not saved yet, and the newer state goes now
            // rather than at the next 3-second check
            dirty = true;
            form.dataset.saved = "0";
            if (!inFlight) { clearTimeout(timer); timer = setTimeout(() => save(false), 0); }
          }
        } else if (r.status === 409 && (overlapped || inFlight)) {
          // refused because of this page's own save on its way (a closing save built on the version
          // that save was to make), not because of another tab: it goes again on the version the
          // other's reply brings
          dirty = true;
          form.dataset.saved = "0";
          show("draft not saved: the save was refused while another was on its way; your changes are kept " +
               "in this browser", true);
          if (!inFlight) { clearTimeout(timer); timer = setTimeout(() => save(false), 0); }
        } else if (r.status === 409) {
          // Another tab or browser saved the task since. Reloaded, the page shows that save, and what this
          // page holds is older than it: it is not offered back (setupDraft), so say so now, while the
          // text can still be copied.
          form.dataset.saved = "0";
          show("changed elsewhere (saved in another tab or browser): this page's changes cannot be saved " +
               "and will not be offered back after a reload; copy any text you want to keep, then reload " +
               "the page", true);
        } else if (r.status === 403 && data.field === "csrf_token" && !retried) {
          form.dataset.saved = "0";
          refreshCsrf().then((fresh) => {
            if (fresh) { save(keepalive, true); return; }
            dirty = true;
            if (!dropSubmit("not logged in: log in again (in another tab)")) {
              show("draft not saved: log in again (in another tab); your changes are kept in this browser", true);
            }
          });
          return; // the retry's reply goes on with a waiting submit
        } else if (r.status >= 500) {
          // the server could not save (its disk full, its database gone): a submit waiting for this save
          // would fail the same way, and leave the page; it stays here, with the work kept in this browser
          dirty = true;
          form.dataset.saved = "0";
          // (the app's 503 says why in its first sentence; a proxy's 502 has no JSON: its status)
          const why = (data.detail ? String(data.detail).split(". ")[0] : String(r.status)) +
            "; your changes are kept in this browser";
          if (!dropSubmit(why)) show("draft not saved: " + why, true);
        } else {
          dirty = true;
          form.dataset.saved = "0";
          const why = r.status === 401 ? "log in again (in another tab); your changes are kept in this browser"
            : (data.detail || r.status);
          show("draft not saved: " + why, true);
        }
        if (submitWhenSaved) { const b = submitWhenSaved; submitWhenSaved = null; lastSent = JSON.stringify(formState(form)); form.requestSubmit(b); }
      })).catch(() => {
        pending = Math.max(0, pending - 1);
        inFlight = pending > 0;
        dirty = true;
        if (keepalive) lastKept = null;
        if (!dropSubmit("the draft could not be saved (offline)")) show("draft not saved (offline)", true);
      });
    };
    const changed = () => {
      dirty = true;
      keepHere();
      lastKept = null; // an edit since the last closing save: the next one is sent whatever it holds
      form.dataset.saved = "0";
      clearTimeout(timer);
      timer = setTimeout(() => save(false), 600);
    };
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    setInterval(() => { if (dirty) save(false); }, 3000);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") save(true); });
    window.addEventListener("pagehide", () => save(true));
    // A second press while the first post is on its way (a double click, Ctrl+Enter pressed again on a
    // slow network) is not sent: the browser would show the reply to the second, a refusal, though the
    // first went through. After a few seconds (a post that failed, a stopped page) a press goes again.
    let postedAt = 0;
    form.addEventListener("submit", (ev) => {
      clearTimeout(timer);
      if (Date.now() - postedAt < 5000) { ev.preventDefault(); return; }
      if (inFlight) { ev.preventDefault(); submitWhenSaved = ev.submitter || null; return; }
      postedAt = Date.now();
      lastSent = JSON.stringify(formState(form));
    });
    // The copy kept at an earlier visit, against the server's state as this page shows it: dropped when
    // the server has it; offered when the server still holds the state it was built on (same version)
    // or one this page's own saves sent (a save that landed, its reply lost with the page), at the same
    // stage (a PA-stage copy put into the IA form would not be what was typed). Otherwise the task was
    // changed elsewhere since: the copy is older than the server's state and goes, and the page says so
    // (whether the copy's own last save had landed before, this browser cannot tell).
    const kept = unsaved.read(task);
    const server = formState(form);
    const builtOn = kept && (kept.version === (parseInt(base.value, 10) || 0) ||
                             (Array.isArray(kept.sent) && kept.sent.includes(canon(server))));
    const sameStage = kept && (kept.stage === undefined || kept.stage === stage);
    if (kept && sameValues(kept.values, server)) unsaved.drop(task);
    else if (kept && builtOn && sameStage) {
      offerUnsaved(form, kept, () => { fillForm(form, kept.values, kept.fields); changed(); clearTimeout(timer); save(false); },
                   () => { const now = unsaved.read(task); if (now && now.at === kept.at) unsaved.drop(task); });
    } else if (kept) {
      unsaved.drop(task);
      sayDiscarded(form, kept);
    }
  }

  const clock = (ms) => {
    const pad = (n) => (n < 10 ? "0" : "") + n;
    const at = new Date(ms);
    const today = at.toDateString() === new Date().toDateString();
    return (today ? "" : at.toLocaleDateString() + " ") + pad(at.getHours()) + ":" + pad(at.getMinutes());
  };
  // A copy that is not offered because the task changed elsewhere after it (saved, or its instruction
  // shown): a plain note (a status, not an alert), nothing to press.
  function sayDiscarded(form, kept) {
    const note = document.createElement("p");
    note.className = "rj-unsaved-dropped";
    note.setAttribute("role", "status");
    note.textContent = "A copy of this form kept in this browser at " + clock(kept.at) + " was older than the " +
      "task's saved state (changed elsewhere since) and was discarded.";
    const heading = document.querySelector("main h1") || document.querySelector("h1");
    if (heading) heading.after(note); else form.before(note);
  }

  // The banner that offers back what this browser kept and the server does not have. An alert, read out
  // when it appears; its buttons are ordinary buttons (Tab, Enter, Space). Restore puts the values in the
  // form (the fields the copy had a control for) and saves them as any edit (on the version the page
  // shows, so the server's checks apply and a refusal shows beside the submit button); Discard forgets
  // them. Until one is pressed, edits are kept
  // as usual and the offer stays.
  function offerUnsaved(form, kept, restore, discard) {
    const when = clock(kept.at);
    const box = document.createElement("div");
    box.className = "rj-unsaved";
    box.setAttribute("role", "alert");
    const text = document.createElement("p");
    text.textContent = "Changes made in this browser at " + when + " were not saved:";
    const button = (label, act) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.addEventListener("click", () => { box.remove(); act(); });
      return b;
    };
    text.append(" ", button("Restore", restore), " ", button("Discard", discard));
    box.append(text);
    const heading = document.querySelector("main h1") || document.querySelector("h1");
    if (heading) heading.after(box); else form.before(box);
  }

  // ---- keyboard: 1-5 score; q/w/e, a/s/d, z/x/c set checklist rows to 0/1/2; b/m/g segment verdict;
  // space play/pause; arrows (or , .) step one frame; Ctrl+Enter submits.
  // No shortcut acts while the focus is in a field that takes text (a text box, a select, anything
  // editable): a key typed there is text. Space and the arrows are left to a focused control that has a
  // use for them (see ownsKey). The single-key shortcuts (all but the arrows and Ctrl+Enter) can be
  // switched off; the choice is kept per browser (localStorage).
  const SHORTCUTS_KEY = "robojudge.shortcuts";
  const NOT_TEXT = ["radio", "checkbox", "range", "button", "submit", "reset", "image", "file", "color"];
  function editable(el) {
    if (!el || !el.tagName) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && !NOT_TEXT.includes(el.type);
  }
  const SPACE_OWNERS = "button, a[href], input, select, summary, video[controls], audio[controls]," +
    " [role=button], [role=link], [role=radio], [role=checkbox]";
  const ARROW_OWNERS = "input[type=radio], input[type=range], select, video[controls], audio[controls]," +
    " [role=radio], [role=radiogroup], [role=slider]";
  // Does the focused element use this key itself? Space activates a button or checks a radio; the
  // arrows move within a radio group. The player's own frame slider leaves both to the player, and so
  // does a segment's group, which has the focus only because a prompt put it there (promptSegment).
  function ownsKey(el, code) {
    if (!el || !el.closest || el === document.body || el === document.documentElement) return false;
    if (el.matches('input[type="range"]') && el.closest(".rj-player")) return false;
    if (el.matches(".rj-segment")) return false;
    return !!el.closest(code === "Space" ? SPACE_OWNERS : ARROW_OWNERS);
  }
  function readShortcutsOn() {
    try { return window.localStorage.getItem(SHORTCUTS_KEY) !== "off"; } catch (e) { return true; }
  }
  // The box comes unticked from the server (without this script there are no shortcuts): its state is
  // the browser's, set here.
  function setupShortcutToggle() {
    const box = document.querySelector("#rj-shortcuts");
    let on = readShortcutsOn();
    if (box) {
      box.checked = on;
      box.addEventListener("change", () => {
        on = box.checked;
        try { window.localStorage.setItem(SHORTCUTS_KEY, on ? "on" : "off"); } catch (e) { /* this page only */ }
      });
    }
    // another tab of the same browser switched them
    window.addEventListener("storage", (ev) => {
      if (ev.key !== SHORTCUTS_KEY) return;
      on = readShortcutsOn();
      if (box) box.checked = on;
    });
    return () => on;
  }
  const CHECK_KEYS = { q: [0, 0], w: [0, 1], e: [0, 2], a: [1, 0], s: [1, 1], d: [1, 2], z: [2, 0], x: [2, 1], c: [2, 2] };
  const VERDICT_KEYS = { b: "bad", m: "medium", g: "good" };
  function pick(input) {
    if (!input) return;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }
  function setupKeys(form, player) {
    const shortcutsOn = setupShortcutToggle();
    document.addEventListener("keydown", (ev) => {
      // Ctrl+Enter submits from anywhere, the evidence box included; other keys type there as usual.
      if (ev.ctrlKey || ev.metaKey) {
        if (ev.key === "Enter" && form && !form.querySelector("fieldset[disabled]")) {
          ev.preventDefault();
          const button = form.querySelector('button[type="submit"]');
          form.requestSubmit(button || undefined);
        }
        return;
      }
      if (ev.altKey || editable(ev.target)) return;
      // ev.code, not ev.key: Shift+1 is "!" on one keyboard and "+" on another.
      const code = ev.code || "";
      const arrow = code === "ArrowRight" || code === "ArrowLeft";
      if ((code === "Space" || arrow) && ownsKey(ev.target, code)) return;
      if (!arrow && !shortcutsOn()) return;
      const digit = /^(Digit|Numpad)([1-5])$/.exec(code);
      const letter = /^Key([A-Z])$/.exec(code);
      const k = letter ? letter[1].toLowerCase() : ev.key.toLowerCase();
      const live = form && !form.querySelector("fieldset[disabled]");
      if (live && digit) {
        const axes = form.querySelectorAll("fieldset.rj-score");
        const axis = axes[ev.shiftKey ? 1 : 0];
        if (axis) pick(axis.querySelector('input[value="' + digit[2] + '"]'));
      } else if (live && k in CHECK_KEYS) {
        const [row, value] = CHECK_KEYS[k];
        const rows = form.querySelectorAll(".rj-check");
        const target = rows[row + (ev.shiftKey ? 3 : 0)];
        if (target) pick(target.querySelector('input[value="' + value + '"]'));
      } else if (live && k in VERDICT_KEYS) {
        const cur = document.querySelector(".rj-segment.rj-prompt") || document.querySelector(".rj-segment.rj-current") ||
          document.querySelector(".rj-segment");
        if (cur) { pick(cur.querySelector('input[value="' + VERDICT_KEYS[k] + '"]')); cur.classList.remove("rj-prompt"); }
      } else if (player && (code === "Space" || k === "k")) {
        ev.preventDefault(); player.toggle();
      } else if (player && (code === "ArrowRight" || code === "Period")) {
        ev.preventDefault(); player.step(1);
      } else if (player && (code === "ArrowLeft" || code === "Comma")) {
        ev.preventDefault(); player.step(-1);
      } else {
        return;
      }
      if (digit || k in CHECK_KEYS || k in VERDICT_KEYS) ev.preventDefault();
    });
  }

  // A page restored from the back-forward cache (Back, Forward) is the page as it was left, with the
  // version it was built on: read it again from the server, which knows whether the session still holds
  // and what the task's state is now.
  window.addEventListener("pageshow", (ev) => { if (ev.persisted) window.location.reload(); });

  document.addEventListener("DOMContentLoaded", () => {
    let player = null;
    document.querySelectorAll(".rj-player").forEach((root) => { const p = setupPlayer(root); if (!player) player = p; });
    const form = document.querySelector("form.rj-label-form");
    if (form) setupDraft(form);
    forgetSubmitted();
    // logging out through the header's button forgets every copy kept in this browser
    document.querySelectorAll("form.rj-logout").forEach((f) => f.addEventListener("submit", () => unsaved.dropAll()));
    setupKeys(form, player);
    window.rjPlayer = player; // for the browser tests and the curious
  });
})();
