#!/usr/bin/env bash
# `erp-agent doctor` against the demo ERP, as a deployer would run it before the first start
# (CI runs this): production mode, the service credential, the sync user, a sample user; the
# public address is not serving yet (a warning). tests/erp_agent/test_cli_doctor.py checks every
# other part (Redis, the broker, a worker, the proxy) and breaks each one.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
port=$(uv run python -c "from demo_erp.server import free_port; print(free_port())")
uv run erp-agent demo-erp seed --path "$work/demo.sqlite" --scale 0.05 >/dev/null
uv run erp-agent demo-erp serve --path "$work/demo.sqlite" --port "$port" >"$work/erp.log" 2>&1 &
erp=$!
trap 'kill "$erp" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/api/method/ping" >/dev/null 2>&1 && break
  sleep 0.2
done
read -r key secret < <(uv run erp-agent demo-erp users --path "$work/demo.sqlite" --json |
  uv run python -c "import json,sys; u=json.load(sys.stdin)[0]; print(u['api_key'], u['api_secret'])")
user=$(uv run erp-agent demo-erp users --path "$work/demo.sqlite" --json |
  uv run python -c "import json,sys; print(json.load(sys.stdin)[0]['email'])")
ERP_AGENT_ERP_URL="http://127.0.0.1:$port" \
ERP_AGENT_DATA_DIR="$work/agent" \
ERP_AGENT_EMBEDDINGS=none \
ERP_AGENT_MODE=production \
ERP_AGENT_PUBLIC_URL="https://127.0.0.1:$(uv run python -c "from demo_erp.server import free_port; print(free_port())")/agent" \
ERP_AGENT_SYNC_USER=admin@demo.local ERP_AGENT_SYNC_PASSWORD=demo ERP_AGENT_PASSWORD=demo \
ERP_AGENT_SESSION_KEY=$(uv run python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())") \
ERP_AGENT_SERVICE_USER="$user" ERP_AGENT_SERVICE_API_KEY="$key" ERP_AGENT_SERVICE_API_SECRET="$secret" \
  uv run erp-agent doctor --as sales@demo.local
