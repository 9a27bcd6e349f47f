/**
 * The browser script a customer puts on their website (`<script src=".../t/{tracking_id}/script.js" async>`).
 *
 * It keeps an anonymous id in a first-party cookie (`sgs_aid`, one year), picks `click_id` from the
 * page's URL (the tracked link's redirect adds it) and keeps it in `sgs_cid` so that later pages stay
 * attributed, sends a `page_view` on load, and offers:
 *
 *   sigsync.identify(userId, traits)                    an `identify` event with the user id
 *   sigsync.track(name, {value, currency, event_id, properties})   any event; with a value, a conversion
 *
 * Events go to `POST /t/{tracking_id}/events` as text/plain JSON through `navigator.sendBeacon`
 * (no CORS preflight, survives page unloads), or `fetch` with `keepalive` where that is missing.
 *
 * A browser with Global Privacy Control (`navigator.globalPrivacyControl`) or Do Not Track on gets
 * no cookie and sends no identifier: no anonymous id, no click id, no user id or traits; its events
 * still count (docs/privacy.md). The endpoint drops identifiers of such browsers as well (ingest.ts).
 */
export function browserScript(endpoint: string): string {
  return `/* sigsync event tracking */
(function (w, d) {
  'use strict';
  var E = ${JSON.stringify(endpoint)};
  function get(n) { var m = d.cookie.match(new RegExp('(?:^|; )' + n + '=([^;]*)')); return m ? decodeURIComponent(m[1]) : null; }
  function set(n, v) { d.cookie = n + '=' + encodeURIComponent(v) + '; path=/; max-age=31536000; SameSite=Lax' + (location.protocol === 'https:' ? '; Secure' : ''); }
  var off = navigator.globalPrivacyControl === true || navigator.doNotTrack === '1' || w.doNotTrack === '1';
  var aid = null, cid = null;
  if (!off) {
    aid = get('sgs_aid');
    if (!aid) { aid = w.crypto && w.crypto.randomUUID ? w.crypto.randomUUID() : Date.now().toString(36) + Math.random().toString(36).slice(2); set('sgs_aid', aid); }
    cid = new URLSearchParams(location.search).get('click_id');
    if (cid) set('sgs_cid', cid); else cid = get('sgs_cid');
  }
  function send(ev) {
    if (off) { delete ev.user_id; delete ev.traits; } else ev.anonymous_id = aid;
    if (cid && !ev.click_id) ev.click_id = cid;
    var body = JSON.stringify({ event: ev });
    if (!(navigator.sendBeacon && navigator.sendBeacon(E, body))) w.fetch(E, { method: 'POST', body: body, keepalive: true, mode: 'cors', credentials: 'omit' });
  }
  w.sigsync = {
    identify: function (userId, traits) { send({ name: 'identify', user_id: String(userId), traits: traits || {} }); },
    track: function (name, o) {
      o = o || {};
      var ev = { name: String(name), properties: o.properties || {} };
      if (o.value !== undefined) { ev.value = o.value; ev.currency = o.currency; }
      if (o.event_id) ev.event_id = String(o.event_id);
      if (o.user_id) ev.user_id = String(o.user_id);
      send(ev);
    }
  };
  send({ name: 'page_view', properties: { path: location.pathname, title: d.title } });
})(window, document);
`;
}
