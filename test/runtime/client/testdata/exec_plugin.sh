#!/bin/sh
# A kubeconfig exec credential plugin for tests.
#   $1  a directory for state: count (runs so far), info (KUBERNETES_EXEC_INFO)
#   $2  ok | cert | pem | fail | garbage | wrong-version
#       (pem: the client certificate and key in $1/cert.pem and $1/key.pem)
# EXEC_EXPIRY, when set, becomes status.expirationTimestamp; EXEC_API_VERSION
# the apiVersion answered (default client.authentication.k8s.io/v1).
state="$1"
count=$(cat "$state/count" 2>/dev/null || echo 0)
count=$((count + 1))
echo "$count" > "$state/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$state/info"
printf '%s' "$EXTRA_VAR" > "$state/extra"
version=${EXEC_API_VERSION:-client.authentication.k8s.io/v1}
expiry=""
if [ -n "$EXEC_EXPIRY" ]; then expiry=",\"expirationTimestamp\":\"$EXEC_EXPIRY\""; fi
case "$2" in
  fail) echo "plugin failed" >&2; exit 3 ;;
  garbage) echo "not json"; exit 0 ;;
  wrong-version) version="client.authentication.k8s.io/v1alpha1" ;;
  cert)
    printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"%s}}\n' "$version" "$expiry"
    exit 0 ;;
  pem)
    cert=$(awk '{printf "%s\\n", $0}' "$state/cert.pem")
    key=$(awk '{printf "%s\\n", $0}' "$state/key.pem")
    printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"%s}}\n' "$version" "$cert" "$key" "$expiry"
    exit 0 ;;
esac
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"exec-token-%s"%s}}\n' "$version" "$count" "$expiry"
