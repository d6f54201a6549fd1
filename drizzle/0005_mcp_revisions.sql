ALTER TABLE "mcp_sessions" ADD COLUMN "client_capabilities" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "organization" ADD COLUMN "decide_in_browser" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "organization" ADD COLUMN "in_app_decisions" boolean DEFAULT false NOT NULL;