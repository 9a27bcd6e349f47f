-- Up Migration
-- A click id whose click is gone must not attribute (docs/analytics.md, "Trust").
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
