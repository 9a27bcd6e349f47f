-- Up Migration
-- Two reads that went through every row of a workspace, found by the console's benchmark
-- (npm run bench -- console) on 10,000 teammates and 20,000 webhook deliveries per endpoint.
--
-- The compatibility check renders a signature with each smart field's longest value in the
-- workspace (src/render/compatibilityLoad.ts): with this index that is one index entry per field,
-- where finding it sorted every value of the workspace (0.7 s for 10,000 teammates, on every draft
-- save and every signature the console shows). Ties go to the lowest teammate id. It replaces the
-- index on smart_field_id alone, which it covers.
create index smart_field_values_longest on smart_field_values (smart_field_id, length(value) desc, teammate_id);
drop index if exists smart_field_values_field;

-- An endpoint's newest delivery attempts (src/events/deliveries.ts listDeliveryAttempts): read from
-- the deliveries updated last, instead of joining every delivery the endpoint ever had.
create index webhook_deliveries_endpoint_updated on webhook_deliveries (endpoint_id, updated_at desc, id desc);

-- Down Migration
drop index if exists webhook_deliveries_endpoint_updated;
create index if not exists smart_field_values_field on smart_field_values (smart_field_id);
drop index if exists smart_field_values_longest;
