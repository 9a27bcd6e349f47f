-- Up Migration
-- Who made each click and view (docs/analytics.md, "Who clicked: people and machines"): its class
-- (`human`, `scanner`, `proxy`, `unknown`), the reasons found, and the network's ASN and owner
-- name from the offline IP-to-ASN data set. The client address itself is never stored.
-- Rows recorded before: bots' clicks are a scanner's (an image proxy's user agent a proxy's),
-- proxied views a proxy's, bots' views a scanner's, the rest a person's, as they were counted.
alter table clicks add column traffic_class text not null default 'human' check (traffic_class in ('human', 'scanner', 'proxy', 'unknown')),
  add column class_reasons text[] not null default '{}', add column network_asn integer, add column network_org text;
update clicks set traffic_class = case when bot_reason = 'image_proxy' then 'proxy' else 'scanner' end, class_reasons = array[bot_reason] where is_bot;
alter table views add column traffic_class text not null default 'human' check (traffic_class in ('human', 'scanner', 'proxy', 'unknown')),
  add column class_reasons text[] not null default '{}', add column network_asn integer, add column network_org text;
update views set traffic_class = 'proxy', class_reasons = array['proxy_user_agent:' || proxy] where is_proxied;
update views set traffic_class = 'scanner', class_reasons = array[bot_reason] where is_bot and not is_proxied;
-- The rollups count each class beside the human figures.
alter table analytics_rollups add column scanner_clicks integer not null default 0, add column proxy_clicks integer not null default 0,
  add column unknown_clicks integer not null default 0, add column human_views integer not null default 0,
  add column scanner_views integer not null default 0, add column proxy_views integer not null default 0,
  add column unknown_views integer not null default 0, add column unique_human_views integer not null default 0;
update analytics_rollups set scanner_clicks = bot_clicks, human_views = views - proxied_views - bot_views, scanner_views = bot_views,
  proxy_views = proxied_views, unique_human_views = unique_direct_views;

-- Down Migration
alter table analytics_rollups drop column scanner_clicks, drop column proxy_clicks, drop column unknown_clicks, drop column human_views,
  drop column scanner_views, drop column proxy_views, drop column unknown_views, drop column unique_human_views;
alter table views drop column traffic_class, drop column class_reasons, drop column network_asn, drop column network_org;
alter table clicks drop column traffic_class, drop column class_reasons, drop column network_asn, drop column network_org;
