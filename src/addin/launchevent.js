/*
 * The sigsync Outlook add-in: event-based handlers that insert the sender's signature at compose time.
 *
 * One file, no imports: classic Outlook for Windows runs it in its JavaScript-only runtime, the other
 * clients load it from commands.html. The service prepends `var SIGSYNC_CONFIG = {...};` when it
 * serves this file (src/api/addin.ts): base (the service URL), sso (ask Office for an Entra token),
 * key (key-only mode), timeout_ms.
 *
 * Each event: the sending address (item.from, else the user profile), the compose type and the
 * recipients; then the address's signatures from the service (If-None-Match with the last copy's
 * ETag), at most `timeout_ms`; the variant: reply for replies and forwards, internal when every
 * recipient is in the workspace's own domains, else primary (falling back to primary when the variant
 * is not served); body.setSignatureAsync as HTML and disableClientSignatureAsync. The service down or
 * slow: the last good copy kept in storage, else nothing. event.completed() is called every time.
 *
 * Why a signature was not inserted as it should be is kept (the newest reason) and sent with the next
 * fetch (`problem`, `problem_at`); the service writes it to its log against the address. A console
 * inside Outlook is read by nobody, and Outlook's runtime logging does not capture it.
 */
/* global Office, OfficeRuntime, SIGSYNC_CONFIG */
(function () {
  'use strict';
  var MAX_SIGNATURE = 30000; // body.setSignatureAsync takes at most 30,000 characters
  var config = typeof SIGSYNC_CONFIG === 'object' && SIGSYNC_CONFIG ? SIGSYNC_CONFIG : {};
  var timeoutMs = typeof config.timeout_ms === 'number' ? config.timeout_ms : 3000;
  var memory = {};

  var PROBLEM_KEY = 'sigsync:problem';
  var MAX_PROBLEM = 300; // characters; the service refuses nothing longer, it cuts it

  /** Keeps why a signature was not inserted as it should be, for the next fetch to report. */
  function report(message) {
    storage.set(PROBLEM_KEY, JSON.stringify({ at: new Date().toISOString(), message: String(message).slice(0, MAX_PROBLEM) }));
  }

  /** The kept reason as query parameters of the next fetch, or ''. */
  function problemParams(raw) {
    var p = null;
    try {
      p = raw ? JSON.parse(raw) : null;
    } catch (e) {
      p = null;
    }
    return p && p.message ? '&problem=' + encodeURIComponent(p.message) + '&problem_at=' + encodeURIComponent(p.at || '') : '';
  }

  /** Office's callback APIs as promises; a missing API or a failed call answers `fallback`. */
  function call(target, method, args, fallback) {
    return new Promise(function (resolve) {
      if (!target || typeof target[method] !== 'function') return resolve(fallback);
      try {
        target[method].apply(target, (args || []).concat([
          function (result) {
            resolve(result && result.status === 'failed' ? fallback : result ? result.value : fallback);
          },
        ]));
      } catch (e) {
        resolve(fallback);
      }
    });
  }

  function withTimeout(promise, ms, what) {
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () {
        reject(new Error(what + ' took longer than ' + ms + ' ms'));
      }, ms);
      promise.then(
        function (v) {
          clearTimeout(timer);
          resolve(v);
        },
        function (e) {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  var storage = {
    get: function (key) {
      try {
        if (typeof OfficeRuntime !== 'undefined' && OfficeRuntime.storage) return Promise.resolve(OfficeRuntime.storage.getItem(key)).catch(function () { return memory[key] || null; });
        if (typeof localStorage !== 'undefined') return Promise.resolve(localStorage.getItem(key));
      } catch (e) {
        /* storage unavailable */
      }
      return Promise.resolve(memory[key] || null);
    },
    set: function (key, value) {
      memory[key] = value;
      try {
        if (typeof OfficeRuntime !== 'undefined' && OfficeRuntime.storage) return Promise.resolve(OfficeRuntime.storage.setItem(key, value)).catch(function () {});
        if (typeof localStorage !== 'undefined') localStorage.setItem(key, value);
      } catch (e) {
        /* storage unavailable: the copy lives as long as this runtime */
      }
      return Promise.resolve();
    },
  };

  function platform() {
    var d = Office.context && Office.context.diagnostics;
    var p = d && d.platform ? String(d.platform) : '';
    var map = { OfficeOnline: 'web', PC: 'windows', Mac: 'mac', iOS: 'ios', Android: 'android', Universal: 'windows' };
    return { name: map[p] || 'unknown', version: d && d.version ? String(d.version).slice(0, 64) : '' };
  }

  function credential() {
    if (config.sso && typeof OfficeRuntime !== 'undefined' && OfficeRuntime.auth && OfficeRuntime.auth.getAccessToken) {
      return Promise.resolve(OfficeRuntime.auth.getAccessToken({ allowSignInPrompt: false, allowConsentPrompt: false })).then(
        function (token) {
          return token;
        },
        function (e) {
          report('no Entra token (' + (e && (e.code || e.message)) + ')' + (config.key ? ', using the add-in key' : ''));
          return config.key || null;
        },
      );
    }
    return Promise.resolve(config.key || null);
  }

  /** The address's signatures: from the service (304 keeps the stored copy), else the stored copy. */
  function signaturesOf(address) {
    var key = 'sigsync:' + address.toLowerCase();
    return Promise.all([storage.get(key), storage.get(PROBLEM_KEY)]).then(function (kept) {
      var raw = kept[0];
      var problem = problemParams(kept[1]);
      var stored = null;
      try {
        stored = raw ? JSON.parse(raw) : null;
      } catch (e) {
        stored = null;
      }
      var client = platform();
      var url = String(config.base || '').replace(/\/$/, '') + '/v1/addin/signature?email=' + encodeURIComponent(address) +
        '&platform=' + encodeURIComponent(client.name) + '&client_version=' + encodeURIComponent(client.version) + problem;
      var fetched = credential().then(function (bearer) {
        if (!bearer) throw new Error('no credential: neither an Entra token nor an add-in key');
        var headers = { Authorization: 'Bearer ' + bearer };
        if (stored && stored.etag) headers['If-None-Match'] = stored.etag;
        return fetch(url, { headers: headers, credentials: 'omit' });
      }).then(function (res) {
        // The service has the reason now; a newer one (kept since) waits for the next fetch.
        if (problem && (res.status === 200 || res.status === 304)) {
          storage.get(PROBLEM_KEY).then(function (now) {
            if (now === kept[1]) storage.set(PROBLEM_KEY, '');
          });
        }
        if (res.status === 304 && stored) return stored.data;
        if (res.status !== 200) throw new Error('the service answered ' + res.status);
        return res.json().then(function (body) {
          var etag = res.headers.get('ETag');
          storage.set(key, JSON.stringify({ etag: etag, data: body.data }));
          return body.data;
        });
      });
      return withTimeout(fetched, timeoutMs, 'the signature service').catch(function (e) {
        if (stored) {
          report((e && e.message) + '; using the last good copy');
          return stored.data;
        }
        report((e && e.message) + '; no stored copy, no signature inserted');
        return null;
      });
    });
  }

  function domainOf(address) {
    var at = String(address || '').lastIndexOf('@');
    return at < 0 ? '' : String(address).slice(at + 1).toLowerCase();
  }

  /** reply for replies and forwards; internal when every recipient is inside; else primary. */
  function chooseKind(data, composeType, recipients) {
    var variants = data.variants || {};
    if ((composeType === 'reply' || composeType === 'forward') && variants.reply) return 'reply';
    var inside = (data.internal_domains || []).map(function (d) { return String(d).toLowerCase(); });
    if (variants.internal && recipients.length > 0 && recipients.every(function (r) { return inside.indexOf(domainOf(r)) >= 0; })) return 'internal';
    return 'primary';
  }

  function sendingAddress(item) {
    return call(item.from, 'getAsync', [], null).then(function (from) {
      if (from && from.emailAddress) return from.emailAddress;
      var profile = Office.context.mailbox.userProfile;
      return profile ? profile.emailAddress : '';
    });
  }

  function recipientsOf(item) {
    return Promise.all([call(item.to, 'getAsync', [], []), call(item.cc, 'getAsync', [], []), call(item.bcc, 'getAsync', [], [])]).then(function (lists) {
      var out = [];
      lists.forEach(function (list) {
        (list || []).forEach(function (r) {
          if (r && r.emailAddress) out.push(r.emailAddress);
        });
      });
      return out;
    });
  }

  function insert(item, html) {
    return call(item.body, 'setSignatureAsync', [html, { coercionType: Office.CoercionType.Html }], undefined).then(function () {
      return call(item, 'disableClientSignatureAsync', [], undefined);
    });
  }

  function handle(event, why) {
    var finished = false;
    function finish() {
      if (finished) return;
      finished = true;
      try {
        event.completed();
      } catch (e) {
        report('completed() failed: ' + (e && e.message));
      }
    }
    var item = Office.context.mailbox.item;
    Promise.all([sendingAddress(item), call(item, 'getComposeTypeAsync', [], null), recipientsOf(item)])
      .then(function (r) {
        var address = r[0];
        var composeType = r[1] && r[1].composeType ? r[1].composeType : 'newMail';
        var recipients = r[2];
        if (!address) {
          report(why + ': no sending address');
          return;
        }
        return signaturesOf(address).then(function (data) {
          if (!data) return;
          var kind = chooseKind(data, composeType, recipients);
          var chosen = (data.variants || {})[kind];
          var html = chosen ? chosen.html : '';
          if (html && html.length > MAX_SIGNATURE && kind !== 'primary' && data.variants.primary && data.variants.primary.html.length <= MAX_SIGNATURE) {
            report('the ' + kind + ' signature is ' + html.length + ' characters, over ' + MAX_SIGNATURE + '; inserting the primary one');
            kind = 'primary';
            html = data.variants.primary.html;
          }
          if (html && html.length > MAX_SIGNATURE) {
            report('the signature of ' + address + ' is ' + html.length + ' characters, over ' + MAX_SIGNATURE + '; not inserted');
            return;
          }
          if (!html && why !== 'from') return; // no signature for this address: leave the body alone
          return insert(item, html || '');
        });
      })
      .catch(function (e) {
        report(why + ': ' + (e && e.message));
      })
      .then(finish, finish);
  }

  function onNewMessageComposeHandler(event) {
    handle(event, 'compose');
  }
  function onMessageRecipientsChangedHandler(event) {
    handle(event, 'recipients');
  }
  function onMessageFromChangedHandler(event) {
    handle(event, 'from');
  }

  if (typeof Office !== 'undefined' && Office.actions && Office.actions.associate) {
    Office.actions.associate('onNewMessageComposeHandler', onNewMessageComposeHandler);
    Office.actions.associate('onMessageRecipientsChangedHandler', onMessageRecipientsChangedHandler);
    Office.actions.associate('onMessageFromChangedHandler', onMessageFromChangedHandler);
  }
})();
