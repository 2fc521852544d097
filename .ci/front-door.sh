#!/usr/bin/env bash
# The README's quick start, run as a new user would on this machine (Debian 12, its own Python):
# an unprivileged user, a clean checkout, no uv on the PATH, nothing but the two commands the
# README's "Quick start" block shows. The second (the demo) must start, answer, and stop on
# Ctrl-C. It gets --port/--erp-port (never a fixed port), a small data set and no background
# indexing, to keep this quick (about 40 s: uv fetches the packages from the index, as on a
# fresh machine). Needs root (it creates the user); CI runs it from .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
if [ "$(id -u)" != 0 ]; then
  echo "front door: needs root to create its unprivileged user; skipped" >&2
  exit 0
fi

# The two commands, read from the README as they are written there.
mapfile -t commands < <(python3 - <<'EOF'
import re
text = open("README.md", encoding="utf-8").read()
block = re.search(r"## Quick start.*?```bash\n(.*?)```", text, re.S).group(1)
for line in block.splitlines():
    line = line.split("#", 1)[0].strip()
    if line:
        print(line)
EOF
)
[ "${#commands[@]}" = 2 ] || { echo "front door: the README's quick start is not two commands" >&2; exit 1; }

user=erp-agent-newcomer
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
work=$(mktemp -d)
chmod 755 "$work"
demo=""
cleanup() {
  [ -n "$demo" ] && kill -INT -- "-$demo" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A clean checkout: the repository's files as committed (or about to be), nothing generated.
checkout="$work/erp-agent"
mkdir "$checkout"
git ls-files -z --cached --others --exclude-standard |
  tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$checkout"
# A new user's uv has no cache: every package comes from the index, as on a fresh machine.
rm -rf "$home/.local/bin/uv" "$home/.local/bin/uvx" "$home/.cache/uv"
chown -R "$user:" "$checkout"
echo "front door: a clean checkout for $user ($(($(date +%s) - started)) s)"

# The PATH of a fresh login, without any folder that holds a uv; of this machine's environment
# only how it reaches the network (its proxy, the certificate authorities it trusts, a package
# mirror), as any user of the machine would have it.
path=""
for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  [ -x "$dir/uv" ] || path="${path:+$path:}$dir"
done
network=()
for name in SSL_CERT_FILE SSL_CERT_DIR HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy \
  no_proxy UV_INDEX_URL PIP_INDEX_URL; do
  [ -n "${!name:-}" ] && network+=("$name=${!name}")
done
fresh=(env -i HOME="$home" USER="$user" LANG=C.UTF-8 PATH="$path" "${network[@]}")
as_user() {
  runuser -u "$user" -- "${fresh[@]}" bash -c "cd '$checkout' && $1"
}
as_user '! command -v uv' || { echo "front door: uv is already on the new user's PATH" >&2; exit 1; }

echo "front door: ${commands[0]}"
as_user "${commands[0]}"

port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
echo "front door: ${commands[1]} (on port $port)"
log="$work/demo.log"
setsid runuser -u "$user" -- "${fresh[@]}" bash -c "cd '$checkout' && exec ${commands[1]} --port $port --erp-port 0 --scale 0.05 --no-index" \
  >"$log" 2>&1 &
demo=$!
for _ in $(seq 1 600); do
  grep -q "is ready" "$log" 2>/dev/null && break
  kill -0 "$demo" 2>/dev/null || { cat "$log" >&2; echo "front door: the demo stopped" >&2; exit 1; }
  sleep 1
done
grep -q "is ready" "$log" || { cat "$log" >&2; echo "front door: the demo did not start" >&2; exit 1; }
echo "front door: the demo is ready ($(($(date +%s) - started)) s)"
curl -fsS "http://127.0.0.1:$port/healthz" | grep -q '"status":"ok"'
curl -fsS "http://127.0.0.1:$port/" | grep -q "<title>erp-agent</title>"
# uv made the environment with the system's own Python (nothing downloaded in its place).
grep -Eq "^home = /usr/bin" "$checkout/.venv/pyvenv.cfg"

kill -INT -- "-$demo"
for _ in $(seq 1 30); do kill -0 "$demo" 2>/dev/null || break; sleep 1; done
if kill -0 "$demo" 2>/dev/null; then
  cat "$log" >&2
  echo "front door: the demo did not stop on Ctrl-C" >&2
  exit 1
fi
demo=""
echo "front door: the README's commands work as $user with the system Python ($(($(date +%s) - started)) s)"
