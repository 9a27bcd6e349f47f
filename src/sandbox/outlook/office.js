/*
 * A stand-in for Outlook's Office.js runtime, loaded in place of
 * https://appsforoffice.microsoft.com/lib/1/hosted/office.js by the sandbox's compose-window demo
 * (/sandbox/outlook, served in sandbox mode only) and by the add-in's browser test. Never shipped to
 * Outlook: the real runtime is Microsoft's.
 *
 * It plays one compose window for the add-in's handlers (src/addin/launchevent.js):
 * - window.__compose: From, the compose type (newMail, reply, forward) and the To and Cc recipients;
 *   item.from, item.to, item.cc, item.getComposeTypeAsync read it; the user profile's address is
 *   `user` (set with window.__configure({ user })).
 * - body.setSignatureAsync writes the HTML into the element #compose-body (made at the end of the
 *   page when it has none), as Outlook puts the signature in the body; body.getAsync reads it back,
 *   body.getTypeAsync answers html. The item's sessionData (Mailbox 1.11) and Outlook's own signature
 *   setting (isClientSignatureEnabledAsync, disableClientSignatureAsync) are kept as Outlook keeps
 *   them; OnNewMessageCompose opens a new compose window: an empty body and no session data.
 * - window.__fire(name, change): applies the change to the compose window, runs the handler the
 *   add-in associated with that name (Office.actions.associate), and answers when the handler calls
 *   event.completed(): {html (inserted, null when none), completions, ms (event to body), bodyHtml,
 *   images}. Fires are run one after another.
 * - window.__handlers(): the names associated so far; window.__lastSignature(): the HTML the body
 *   holds as the add-in set it; window.__token: what
 *   OfficeRuntime.auth.getAccessToken answers (none: error 13003, as without single sign-on).
 */
(function () {
  var handlers = {};
  var compose = { user: '', from: '', composeType: 'newMail', to: [], cc: [] };
  var client = { platform: 'OfficeOnline', version: '20260101001.01' };
  var inserted = null;
  var lastSignature = null;
  var insertedAt = 0;
  var session = {};
  var clientSignature = true;
  var queue = Promise.resolve();

  function body() {
    var el = document.getElementById('compose-body');
    if (!el) {
      el = document.createElement('div');
      el.id = 'compose-body';
      document.body.appendChild(el);
    }
    return el;
  }
  function ok(value) {
    return { status: 'succeeded', value: value };
  }
  function recipients(field) {
    return {
      getAsync: function (cb) {
        cb(
          ok(
            compose[field].map(function (a) {
              return { emailAddress: a, displayName: a };
            }),
          ),
        );
      },
    };
  }
  window.Office = {
    CoercionType: { Html: 'html', Text: 'text' },
    actions: {
      associate: function (name, fn) {
        handlers[name] = fn;
      },
    },
    context: {
      diagnostics: {
        get platform() {
          return client.platform;
        },
        get version() {
          return client.version;
        },
      },
      mailbox: {
        userProfile: {
          get emailAddress() {
            return compose.user;
          },
        },
        item: {
          from: {
            getAsync: function (cb) {
              cb(ok({ emailAddress: compose.from, displayName: compose.from }));
            },
          },
          to: recipients('to'),
          cc: recipients('cc'),
          bcc: {
            getAsync: function (cb) {
              cb(ok([]));
            },
          },
          getComposeTypeAsync: function (cb) {
            cb(ok({ composeType: compose.composeType, coercionType: 'html' }));
          },
          sessionData: {
            getAsync: function (name, cb) {
              if (Object.prototype.hasOwnProperty.call(session, name)) cb(ok(session[name]));
              else cb({ status: 'failed', error: { name: 'InvalidSessionDataKey', message: 'No session data under ' + name } });
            },
            setAsync: function (name, value, cb) {
              session[name] = String(value);
              cb(ok());
            },
          },
          isClientSignatureEnabledAsync: function (cb) {
            cb(ok(clientSignature));
          },
          body: {
            getTypeAsync: function (cb) {
              cb(ok('html'));
            },
            getAsync: function (type, cb) {
              cb(ok(type === 'text' ? body().innerText : body().innerHTML));
            },
            setSignatureAsync: function (html, options, cb) {
              inserted = html;
              lastSignature = html;
              insertedAt = performance.now();
              body().innerHTML = html;
              cb(ok());
            },
          },
          disableClientSignatureAsync: function (cb) {
            clientSignature = false;
            cb(ok());
          },
        },
      },
    },
  };
  window.OfficeRuntime = {
    storage: {
      getItem: function (k) {
        return Promise.resolve(localStorage.getItem(k));
      },
      setItem: function (k, v) {
        localStorage.setItem(k, v);
        return Promise.resolve();
      },
    },
    auth: {
      getAccessToken: function () {
        return window.__token ? Promise.resolve(window.__token) : Promise.reject({ code: 13003 });
      },
    },
  };
  window.__compose = compose;
  window.__configure = function (settings) {
    if (settings.user !== undefined) compose.user = settings.user;
    if (settings.platform !== undefined) client.platform = settings.platform;
    if (settings.version !== undefined) client.version = settings.version;
  };
  window.__handlers = function () {
    return Object.keys(handlers).sort();
  };
  window.__lastSignature = function () {
    return lastSignature;
  };

  function run(name, change) {
    Object.keys(change || {}).forEach(function (k) {
      compose[k] = change[k];
    });
    var el = body();
    if (name === 'onNewMessageComposeHandler') {
      el.innerHTML = '';
      session = {};
      lastSignature = null;
    }
    inserted = null;
    var firedAt = performance.now();
    return new Promise(function (resolve, reject) {
      if (typeof handlers[name] !== 'function') return reject(new Error('no handler is associated with ' + name));
      var completions = 0;
      handlers[name]({
        completed: function () {
          completions++;
          setTimeout(function () {
            resolve({
              html: inserted,
              completions: completions,
              ms: inserted === null ? null : insertedAt - firedAt,
              bodyHtml: el.innerHTML,
              images: el.querySelectorAll('img').length,
            });
          }, 0);
        },
      });
    });
  }
  window.__fire = function (name, change) {
    var result = queue.then(function () {
      return run(name, change);
    });
    queue = result.catch(function () {});
    return result;
  };
})();
