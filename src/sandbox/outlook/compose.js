/*
 * The sandbox's compose-window demo page (/sandbox/outlook): turns what the visitor does into the
 * events Outlook raises, for the add-in's handlers under the stand-in runtime (office.js):
 *   the page opens, New message, Reply, Forward   -> OnNewMessageCompose
 *   a recipient added or removed                  -> OnMessageRecipientsChanged
 *   From switched                                 -> OnMessageFromChanged
 * After each event it names the variant that reached the body (primary, reply or internal), from the
 * copy the add-in keeps of what the service sent, and lists the event with the time from the event
 * to the body.
 */
(function () {
  'use strict';
  var root = document.getElementById('outlook');
  var setup = root.dataset;
  var state = { from: setup.user, composeType: 'newMail', to: [] };

  window.__configure({ user: setup.user });

  function $(id) {
    return document.getElementById(id);
  }

  /**
   * The variants the add-in last received for the address (the copy it keeps in its storage, under
   * `sigsync:<address>`): kind by HTML.
   */
  function variantsOf(address) {
    return Promise.resolve(window.OfficeRuntime.storage.getItem('sigsync:' + address.toLowerCase())).then(function (raw) {
      var byHtml = {};
      try {
        var variants = JSON.parse(raw).data.variants || {};
        // As the add-in inserts it: marked as its own (launchevent.ts, contentOf).
        ['internal', 'reply', 'primary'].forEach(function (kind) {
          if (variants[kind]) byHtml['<div id="sigsync-signature">' + variants[kind].html + '</div>'] = kind;
        });
      } catch (e) {
        /* nothing received yet */
      }
      return byHtml;
    });
  }

  function renderRecipients() {
    var list = $('recipients');
    list.textContent = '';
    state.to.forEach(function (address) {
      var item = document.createElement('li');
      item.textContent = address + ' ';
      var remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = '×';
      remove.setAttribute('aria-label', 'Remove ' + address);
      remove.addEventListener('click', function () {
        state.to = state.to.filter(function (a) {
          return a !== address;
        });
        renderRecipients();
        fire('onMessageRecipientsChangedHandler', 'recipients changed');
      });
      item.appendChild(remove);
      list.appendChild(item);
    });
  }

  function show(result, what) {
    return variantsOf(state.from).then(function (byHtml) {
      var kind = result.html === null ? null : byHtml[result.html] || 'unknown';
      // Nothing inserted: the variant did not change, the body keeps the one it has.
      var label = kind === null ? (result.bodyHtml ? 'unchanged' : 'none') : kind === 'primary' ? 'primary signature' : kind + ' variant';
      var timing = result.ms === null ? '' : ' in ' + Math.round(result.ms) + ' ms';
      $('inserted-kind').textContent = label;
      $('inserted-kind').dataset.kind = kind || '';
      $('inserted-detail').textContent = kind === null ? '' : 'of ' + state.from + timing;
      var line = document.createElement('li');
      line.textContent = what + ': ' + label + (kind === null ? '' : ' of ' + state.from) + timing;
      $('events').insertBefore(line, $('events').firstChild);
      root.dataset.events = String(Number(root.dataset.events || 0) + 1);
    });
  }

  function fire(handler, what) {
    var change = { from: state.from, composeType: state.composeType, to: state.to.slice(), cc: [] };
    return window.__fire(handler, change).then(function (result) {
      return show(result, what);
    });
  }

  function compose(type, to, what) {
    state.composeType = type;
    state.to = to;
    renderRecipients();
    fire('onNewMessageComposeHandler', what);
  }

  function addRecipient(address) {
    var a = String(address || '').trim();
    if (!/^[^@\s]+@[^@\s]+$/.test(a) || state.to.indexOf(a) >= 0) return;
    state.to.push(a);
    renderRecipients();
    fire('onMessageRecipientsChangedHandler', 'recipients changed');
  }

  $('to').addEventListener('keydown', function (e) {
    if (e.key !== 'Enter' && e.key !== ',' && e.key !== ';') return;
    e.preventDefault();
    addRecipient(e.target.value);
    e.target.value = '';
  });
  $('to').addEventListener('change', function (e) {
    addRecipient(e.target.value);
    e.target.value = '';
  });
  Array.prototype.forEach.call(document.querySelectorAll('.suggest'), function (b) {
    b.addEventListener('click', function () {
      addRecipient(b.dataset.address);
    });
  });
  $('from').addEventListener('change', function (e) {
    state.from = e.target.value;
    fire('onMessageFromChangedHandler', 'From switched to ' + state.from);
  });
  $('new-mail').addEventListener('click', function () {
    compose('newMail', [], 'new message');
  });
  $('reply').addEventListener('click', function () {
    compose('reply', [setup.external], 'reply');
  });
  $('forward').addEventListener('click', function () {
    compose('forward', [], 'forward');
  });

  // Outlook raises OnNewMessageCompose when the window opens.
  compose('newMail', [], 'new message');
})();
