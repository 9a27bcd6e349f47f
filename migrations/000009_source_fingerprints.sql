-- Up Migration
-- A fingerprint of everything a directory user contributes (names, addresses, mapped values,
-- groups, photo), so that a sync skips users whose fingerprint has not changed.
alter table teammate_sources add column fingerprint text;

-- Down Migration
alter table teammate_sources drop column if exists fingerprint;
