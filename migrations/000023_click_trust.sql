-- Up Migration
-- A click id whose click is gone must not attribute, and rotating user agents must not mint people
-- (docs/analytics.md, "Trust" and "Repeats").
--
-- `clicker_address`: a keyed hash of the client address alone (the address itself is never
-- stored), beside `clicker` (address and user agent). The link-scanner rule groups clicks by it,
-- and the rollups count at most a few clients of one address on one link a day as people. Rows
-- written before it existed have none; their `clicker` stands for it.
alter table clicks add column clicker_address text;
--
-- `click_not_found`: the click id is genuine but its click is not stored (pruned by retention, or
-- never written) and it was not issued within the last minutes.
alter table recorded_events drop constraint recorded_events_unattributed_reason_check;
alter table recorded_events add constraint recorded_events_unattributed_reason_check
  check (unattributed_reason in ('attribution_window', 'conversions_per_click', 'click_not_found'));

-- Down Migration
update recorded_events set unattributed_reason = null where unattributed_reason = 'click_not_found';
alter table recorded_events drop constraint recorded_events_unattributed_reason_check;
alter table recorded_events add constraint recorded_events_unattributed_reason_check
  check (unattributed_reason in ('attribution_window', 'conversions_per_click'));
alter table clicks drop column if exists clicker_address;
