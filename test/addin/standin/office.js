/*
 * A stand-in for Outlook's Office.js runtime, for the browser test only (never shipped): served in
 * place of https://appsforoffice.microsoft.com/lib/1/hosted/office.js. It plays one compose window:
 * window.__compose holds From, the compose type and the recipients; a signature set by the add-in is
 * written into a body element; window.__fire(name, compose) runs the associated handler and answers
 * when event.completed() is called, with the HTML inserted and the time from the event to the body.
 */
(function () {
  var handlers = {};
  var compose = { from: '', composeType: 'newMail', to: [], cc: [] };
  var body = document.createElement('div');
  body.id = 'compose-body';
  var inserted = null;
  var insertedAt = 0;
  function ok(value) {
    return { status: 'succeeded', value: value };
  }
  function recipients(field) {
    return { getAsync: function (cb) { cb(ok(compose[field].map(function (a) { return { emailAddress: a, displayName: a }; }))); } };
  }
  window.Office = {
    CoercionType: { Html: 'html', Text: 'text' },
    actions: { associate: function (name, fn) { handlers[name] = fn; } },
    context: {
      diagnostics: { platform: 'OfficeOnline', version: '20260101001.01' },
      mailbox: {
        userProfile: { emailAddress: 'ann@acme.test' },
        item: {
          from: { getAsync: function (cb) { cb(ok({ emailAddress: compose.from, displayName: compose.from })); } },
          to: recipients('to'),
          cc: recipients('cc'),
          bcc: { getAsync: function (cb) { cb(ok([])); } },
          getComposeTypeAsync: function (cb) { cb(ok({ composeType: compose.composeType, coercionType: 'html' })); },
          body: {
            setSignatureAsync: function (html, options, cb) {
              inserted = html;
              insertedAt = performance.now();
              body.innerHTML = html;
              cb(ok());
            },
          },
          disableClientSignatureAsync: function (cb) { cb(ok()); },
        },
      },
    },
  };
  window.OfficeRuntime = {
    storage: {
      getItem: function (k) { return Promise.resolve(localStorage.getItem(k)); },
      setItem: function (k, v) { localStorage.setItem(k, v); return Promise.resolve(); },
    },
    auth: { getAccessToken: function () { return window.__token ? Promise.resolve(window.__token) : Promise.reject({ code: 13003 }); } },
  };
  window.__handlers = function () { return Object.keys(handlers).sort(); };
  window.__fire = function (name, change) {
    Object.keys(change || {}).forEach(function (k) { compose[k] = change[k]; });
    if (!body.parentNode) document.body.appendChild(body);
    inserted = null;
    var firedAt = performance.now();
    return new Promise(function (resolve) {
      var completions = 0;
      handlers[name]({
        completed: function () {
          completions++;
          setTimeout(function () {
            resolve({ html: inserted, completions: completions, ms: inserted === null ? null : insertedAt - firedAt, bodyHtml: body.innerHTML, images: body.querySelectorAll('img').length });
          }, 0);
        },
      });
    });
  };
})();
