-- Up Migration
-- The list of a workspace's installations in one status, newest first (GET /v1/installations?status=,
-- `sigsync install list --status`, the console's "Needs attention"): a page is read from this index
-- in order and stops after it, instead of sorting every installation of the status. On 100,000
-- mailboxes a page of failed ones reads 25 index entries (docs/installs.md has the plan). It
-- replaces the index on (workspace_id, status), which it covers. created_at never changes, so an
-- install that rewrites a row without changing its status stays a HOT update.
create index installations_workspace_status_created on installations (workspace_id, status, created_at desc, id desc);
drop index if exists installations_workspace;

-- Down Migration
create index if not exists installations_workspace on installations (workspace_id, status);
drop index if exists installations_workspace_status_created;
