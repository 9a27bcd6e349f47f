-- Up Migration
-- Keys for the Outlook add-in: they can only fetch a mailbox's rendered signature
-- (GET /v1/addin/signature), never call the rest of the API.
alter table api_keys add column scope text not null default 'api' check (scope in ('api', 'addin'));

-- Down Migration
alter table api_keys drop column if exists scope;
