#!/usr/bin/env bash
# Generates the next migration from the drizzle schema.
# drizzle-kit qualifies types and foreign-key targets with "public"; each service applies the migrations in
# its own schema through search_path, so the qualifier is removed from the generated SQL (the snapshots,
# which drizzle-kit diffs against, are left as they are).
set -euo pipefail
cd "$(dirname "$0")/.."
exec 9>/tmp/atrium-db-generate.lock
flock 9
npx drizzle-kit generate "$@"
for file in drizzle/*.sql; do sed -i 's/"public"\.//g' "$file"; done
