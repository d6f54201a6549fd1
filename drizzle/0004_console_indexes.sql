CREATE INDEX "gate_verdicts_capability_idx" ON "gate_verdicts" USING btree ("capability_id","created_at");--> statement-breakpoint
CREATE INDEX "operations_created_idx" ON "operations" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "operations_status_idx" ON "operations" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "operations_space_idx" ON "operations" USING btree ("space_id","created_at");--> statement-breakpoint
CREATE INDEX "operations_agent_idx" ON "operations" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE INDEX "org_activity_trace_idx" ON "org_activity" USING btree (substr("traceparent", 4, 32),"seq");