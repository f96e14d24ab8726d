// Live updates. A run page follows its run's journal (server-sent
// events); on each line it fetches the server-rendered fragment again,
// keeping a form the person is working in (focus, typed text or a
// choice made) as it is. Every page follows /events: the nav's counts
// are set as text, and a list page fetches itself again and swaps its
// [data-live] parts, unless the person is working in one. Nothing from a
// stream is ever inserted as HTML.
(function () {
  "use strict";
  function debounce(fn) {
    var pending = null;
    return function () {
      if (pending === null) {
        pending = setTimeout(function () { pending = null; fn(); }, 150);
      }
    };
  }
  function get(url) {
    return fetch(url, {credentials: "same-origin"}).then(function (r) {
      return r.ok ? r.text() : null;
    });
  }

  // A running node's output: each log follows its end unless the person
  // unticks "follow" or scrolls up in it; "jump to end" goes there. The
  // choice and the place survive the live fragment's refresh.
  var unfollowed = {}, scrolled = {};
  function atEnd(pre) { return pre.scrollHeight - pre.scrollTop - pre.clientHeight < 4; }
  function showEnd(pre) { pre.scrollTop = pre.scrollHeight; }
  function settleLogs(root) {
    root.querySelectorAll("pre.output").forEach(function (pre) {
      var box = root.querySelector('input.follow[data-log="' + pre.id + '"]');
      if (box) { box.checked = !unfollowed[pre.id]; }
      if (unfollowed[pre.id]) {
        pre.scrollTop = scrolled[pre.id] || 0;
      } else {
        showEnd(pre);
      }
    });
  }
  function setFollow(id, on) {
    unfollowed[id] = !on;
    var pre = document.getElementById(id), box = document.querySelector('input.follow[data-log="' + id + '"]');
    if (box) { box.checked = on; }
    if (pre && on) { showEnd(pre); }
  }
  document.addEventListener("change", function (ev) {
    if (ev.target.matches && ev.target.matches("input.follow")) { setFollow(ev.target.dataset.log, ev.target.checked); }
  });
  document.addEventListener("click", function (ev) {
    if (ev.target.matches && ev.target.matches("button.jump")) { setFollow(ev.target.dataset.log, true); }
  });
  document.addEventListener("scroll", function (ev) {
    var pre = ev.target;
    if (pre.matches && pre.matches("pre.output")) {
      scrolled[pre.id] = pre.scrollTop;
      if (!atEnd(pre) && !unfollowed[pre.id]) { setFollow(pre.id, false); }
    }
  }, true);
  settleLogs(document);

  // busy: the person is working in el: the focus is in it, or a field
  // in it no longer holds what the page drew (typed text, a choice).
  function busy(el) {
    if (el.contains(document.activeElement) && document.activeElement !== document.body) {
      return true;
    }
    return Array.prototype.some.call(el.querySelectorAll("textarea, input, select"), function (f) {
      if (f.tagName === "SELECT") { // drawn with no option selected, it shows its first
        var drawn = Array.prototype.find.call(f.options, function (o) { return o.defaultSelected; }) || f.options[0];
        return drawn !== undefined && f.value !== drawn.value;
      }
      if (f.type === "checkbox" || f.type === "radio") {
        return f.checked !== f.defaultChecked;
      }
      return f.value !== f.defaultValue;
    });
  }
  // redraw puts html in el, except that a form the person is working in
  // stays: the element itself moves into the new content in place of
  // the form drawn there (same action), with its text, choices, focus
  // and caret. A form the new content no longer has goes.
  function redraw(el, html) {
    var kept = Array.prototype.filter.call(el.querySelectorAll("form[action]"), busy);
    if (kept.length === 0) {
      el.innerHTML = html;
      return;
    }
    var active = document.activeElement, from = null, to = null;
    if (active && "selectionStart" in active) {
      try { from = active.selectionStart; to = active.selectionEnd; } catch (e) { from = null; }
    }
    var next = document.createElement("div");
    next.innerHTML = html;
    kept.forEach(function (form) {
      var drawn = Array.prototype.find.call(next.querySelectorAll("form[action]"), function (f) {
        return f.getAttribute("action") === form.getAttribute("action");
      });
      if (drawn) {
        drawn.replaceWith(form);
      }
    });
    el.replaceChildren.apply(el, Array.prototype.slice.call(next.childNodes));
    if (active && active !== document.activeElement && el.contains(active)) {
      active.focus({preventScroll: true});
      if (from !== null) {
        try { active.setSelectionRange(from, to); } catch (e) { /* not a text field */ }
      }
    }
  }

  var live = document.getElementById("live");
  if (live && live.dataset.events) {
    // Fragments can come back out of order on a loaded machine: one
    // asked for before the last output was written must not replace one
    // asked for after it, or that output stays hidden until more comes.
    var asked = 0, shown = 0;
    var refreshRun = debounce(function () {
      var n = ++asked;
      get(live.dataset.src).then(function (html) {
        if (html !== null && n > shown) {
          shown = n;
          redraw(live, html);
          settleLogs(live);
        }
      });
    });
    var es = new EventSource(live.dataset.events);
    es.addEventListener("journal", refreshRun);
    es.addEventListener("output", refreshRun);
    es.addEventListener("closed", function () { es.close(); refreshRun(); });
  }

  var refreshList = debounce(function () {
    get(location.href).then(function (html) {
      if (html === null) {
        return;
      }
      var doc = new DOMParser().parseFromString(html, "text/html");
      document.querySelectorAll("[data-live]").forEach(function (el) {
        var now = doc.getElementById(el.id);
        if (now && !busy(el)) {
          el.innerHTML = now.innerHTML;
        }
      });
      document.dispatchEvent(new Event("inbox:updated"));
    });
  });
  var main = document.getElementById("main");
  if (main && main.dataset.changes) {
    var changes = new EventSource(main.dataset.changes);
    changes.addEventListener("change", function (ev) {
      var n = JSON.parse(ev.data);
      var h = document.getElementById("nav-handoffs"), r = document.getElementById("nav-reviews");
      if (h) { h.textContent = String(n.handoffs); }
      if (r) { r.textContent = String(n.reviews); }
      if (document.querySelector("[data-live]")) {
        refreshList();
      }
    });
  }

  // A graph node links to its last attempt: open that attempt's details.
  function openHash() {
    var el = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (el && el.tagName === "DETAILS") {
      el.open = true;
      el.scrollIntoView({block: "center"});
    }
  }
  window.addEventListener("hashchange", openHash);
  openHash();

  // Keyboard: j/k move through a list's rows, enter opens one.
  var rows = function () { return document.querySelectorAll("tr[data-href]"); };
  var at = -1;
  function mark(i) {
    var rs = rows();
    if (rs.length === 0) {
      return;
    }
    at = Math.max(0, Math.min(i, rs.length - 1));
    rs.forEach(function (r, k) { r.classList.toggle("current", k === at); });
    rs[at].querySelector("a").focus();
  }
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) {
      return;
    }
    if (ev.key === "j") { mark(at + 1); ev.preventDefault(); }
    if (ev.key === "k") { mark(at - 1); ev.preventDefault(); }
    if (ev.key === "Enter" && at >= 0 && t.tagName !== "A" && t.tagName !== "BUTTON") {
      location.href = rows()[at].dataset.href;
    }
  });
}());
