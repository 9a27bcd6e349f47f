-- Up Migration
-- UTM parameters a campaign adds to the web links of its banner (src/render/utm.ts):
-- {"source": "...", "medium": "...", "campaign": "...", "term": "...", "content": "..."}, each optional.
alter table marketing_campaigns add column utm jsonb;
