CREATE TABLE "org_activity" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"summary" text NOT NULL,
	"space_id" text,
	"person_id" text,
	"client_id" text,
	"agent_id" text,
	"capability_id" text,
	"operation_id" text,
	"subject" text,
	"details" jsonb NOT NULL,
	"traceparent" text,
	"position" bigint,
	"prev_hash" text,
	"hash" text
);
--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "traceparent" text;--> statement-breakpoint
CREATE UNIQUE INDEX "org_activity_position_idx" ON "org_activity" USING btree ("position");--> statement-breakpoint
CREATE INDEX "org_activity_unsealed_idx" ON "org_activity" USING btree ("seq") WHERE hash IS NULL;--> statement-breakpoint
CREATE INDEX "org_activity_space_idx" ON "org_activity" USING btree ("space_id","seq");--> statement-breakpoint
CREATE INDEX "org_activity_person_idx" ON "org_activity" USING btree ("person_id","seq");--> statement-breakpoint
CREATE INDEX "org_activity_agent_idx" ON "org_activity" USING btree ("agent_id","seq");--> statement-breakpoint
CREATE INDEX "org_activity_kind_idx" ON "org_activity" USING btree ("kind","seq");--> statement-breakpoint
CREATE INDEX "org_activity_capability_idx" ON "org_activity" USING btree ("capability_id","seq");--> statement-breakpoint
CREATE INDEX "org_activity_operation_idx" ON "org_activity" USING btree ("operation_id","seq");--> statement-breakpoint
CREATE INDEX "org_activity_at_idx" ON "org_activity" USING btree ("at");--> statement-breakpoint
CREATE INDEX "org_activity_trace_idx" ON "org_activity" USING btree (substr("traceparent", 4, 32),"seq");--> statement-breakpoint
CREATE INDEX "gate_verdicts_capability_idx" ON "gate_verdicts" USING btree ("capability_id","created_at");--> statement-breakpoint
CREATE INDEX "operations_created_idx" ON "operations" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "operations_status_idx" ON "operations" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "operations_space_idx" ON "operations" USING btree ("space_id","created_at","id");--> statement-breakpoint
CREATE INDEX "operations_agent_idx" ON "operations" USING btree ("agent_id","created_at","id");--> statement-breakpoint
CREATE INDEX "operations_capability_idx" ON "operations" USING btree (("input" ->> 'capability_id'),"created_at","id") WHERE kind = 'capability';--> statement-breakpoint
CREATE INDEX "tasks_status_created_idx" ON "tasks" USING btree ("status","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "tasks_space_status_created_idx" ON "tasks" USING btree ("space_id","status","created_at" DESC NULLS LAST);