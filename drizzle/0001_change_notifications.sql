-- Notifications the org service listens for (src/org/operations/watch.ts), sent by the database itself so
-- that no write can forget them and none costs a round trip of its own. Both go out on commit only.
-- * An operation whose status changed: `<operation id> <status>` (callers waiting with wait_seconds wake).
-- * A job that is due and unclaimed was queued: `*` (every process's job worker looks for work).
CREATE FUNCTION atrium_operation_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.status = NEW.status THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify(left('atrium_operations_' || TG_TABLE_SCHEMA, 63), NEW.id || ' ' || NEW.status);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER operations_changed AFTER INSERT OR UPDATE OF status ON operations
  FOR EACH ROW EXECUTE FUNCTION atrium_operation_changed();
--> statement-breakpoint
CREATE FUNCTION atrium_job_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(left('atrium_operations_' || TG_TABLE_SCHEMA, 63), '*');
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER jobs_queued AFTER INSERT OR UPDATE ON jobs
  FOR EACH ROW WHEN (NEW.locked_until IS NULL AND NEW.failed_at IS NULL AND NEW.run_at <= now())
  EXECUTE FUNCTION atrium_job_queued();
