#!/usr/bin/env bash
# Makes the certificates for a TLS fleet with the openssl command:
#   OUTDIR/ca.pem, ca.key          a CA (keep ca.key offline)
#   OUTDIR/server.pem, server.key  tunefleet-server (--tls-cert, --tls-key),
#                                  valid for the given names, localhost,
#                                  127.0.0.1 and ::1
#   OUTDIR/agent.pem, agent.key    a client certificate per agent name in
#                                  $AGENTS (default "agent")
#   OUTDIR/client.pem, client.key  a client certificate for the CLI
# Agents and the CLI verify the server with --ca OUTDIR/ca.pem; a server
# started with --client-ca OUTDIR/ca.pem also requires their certificates.
# A CA already in OUTDIR is reused and existing certificates are kept, so a
# second run only issues the missing ones under the same CA
# (AGENTS="rk3588-1 rk3588-2" deploy/make-certs.sh DIR); delete NAME.pem to
# issue it again (e.g. server.pem for new server names).
#
# Usage: deploy/make-certs.sh OUTDIR [SERVER-HOSTNAME-OR-IP...]
# Keys are ECDSA P-256, mode 0600. Validity: CA 10 years, others $DAYS
# (default 825) days.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: $0 OUTDIR [SERVER-HOSTNAME-OR-IP...]" >&2
  exit 2
fi
out="$1"
shift
days="${DAYS:-825}"
agents="${AGENTS:-agent}"
command -v openssl >/dev/null || {
  echo "$0: openssl not found (apt-get install openssl)" >&2
  exit 1
}

umask 077
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

newkey() {  # newkey FILE: an ECDSA P-256 private key
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -out "$1" 2>/dev/null
  chmod 600 "$1"
}

if [[ -f "$out/ca.pem" && -f "$out/ca.key" ]]; then
  echo "make-certs: reusing the CA in $out" >&2
else
  newkey "$out/ca.key"
  openssl req -x509 -new -key "$out/ca.key" -sha256 -days 3650 \
    -subj "/O=tunefleet/CN=tunefleet CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out "$out/ca.pem"
fi

# issue NAME CN USAGE [SAN]: NAME.key and NAME.pem signed by the CA.
issue() {
  local name="$1" cn="$2" usage="$3" san="${4:-}"
  if [[ -f "$out/$name.pem" && -f "$out/$name.key" ]]; then
    echo "make-certs: keeping $out/$name.pem" >&2
    return
  fi
  newkey "$out/$name.key"
  openssl req -new -key "$out/$name.key" -subj "/O=tunefleet/CN=$cn" \
    -out "$work/$name.csr"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    echo "authorityKeyIdentifier=keyid"
    if [[ -n "$san" ]]; then echo "subjectAltName=$san"; fi
  } >"$work/$name.ext"
  openssl x509 -req -in "$work/$name.csr" -CA "$out/ca.pem" \
    -CAkey "$out/ca.key" -CAcreateserial -CAserial "$work/ca.srl" \
    -days "$days" -sha256 -extfile "$work/$name.ext" \
    -out "$out/$name.pem" 2>/dev/null
  chmod 644 "$out/$name.pem"
}

# The server's names: the arguments, localhost, 127.0.0.1 and ::1.
san="DNS:localhost,IP:127.0.0.1,IP:::1"
# Each name once: a name given that is already there is not added again.
for host in "$@"; do
  if [[ "$host" =~ ^[0-9.]+$ || "$host" == *:* ]]; then
    entry="IP:$host"
  else
    entry="DNS:$host"
  fi
  [[ ",$san," == *",$entry,"* ]] || san="$san,$entry"
done
issue server "${1:-localhost}" serverAuth "$san"
for agent in $agents; do
  if [[ "$agent" == "agent" ]]; then
    issue agent "agent" clientAuth
  else
    issue "agent-$agent" "$agent" clientAuth
  fi
done
issue client "tunefleet client" clientAuth
chmod 644 "$out/ca.pem"

echo "make-certs: $out holds ca.pem (the CA), server.pem/.key (for $san" \
  "unless kept from an earlier run), agent and client certificates" >&2
