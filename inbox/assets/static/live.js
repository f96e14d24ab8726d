// Live updates for a running run: the server streams new journal lines
// (server-sent events); on each, the page fetches the server-rendered
// fragment again. Nothing from the stream is ever inserted as HTML.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !live.dataset.events) {
    return;
  }
  var pending = null;
  function refresh() {
    pending = null;
    fetch(live.dataset.src, {credentials: "same-origin"}).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html !== null) {
        live.innerHTML = html;
      }
    });
  }
  function soon() {
    if (pending === null) {
      pending = setTimeout(refresh, 150);
    }
  }
  var es = new EventSource(live.dataset.events);
  es.addEventListener("journal", soon);
  es.addEventListener("closed", function () {
    es.close();
    soon();
  });
}());
