#!/usr/bin/env bash
# The Kubernetes control planes the e2e runs against, one bin dir per line: the ones shipped
# beside the checkout (../shared/kube-1.30 and ../shared/kube-1.36, or KUBE_SHARED), unpacked
# once into ~/.cache/zonekeeper; etcd, openssl and kubectl come from Debian.
# KUBE_BIN_DIR: check binaries the user already has instead, and print that dir.
set -euo pipefail
log() { echo "[kube-binaries] $*" >&2; }
here=$(cd "$(dirname "$0")" && pwd)

need_apt=()
command -v etcd >/dev/null || need_apt+=(etcd-server)
command -v openssl >/dev/null || need_apt+=(openssl)
command -v kubectl >/dev/null || need_apt+=(kubernetes-client)
command -v xz >/dev/null || need_apt+=(xz-utils)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
fi

if [ -n "${KUBE_BIN_DIR:-}" ]; then
  for b in kube-apiserver kube-scheduler kube-controller-manager; do
    [ -x "$KUBE_BIN_DIR/$b" ] || { log "KUBE_BIN_DIR=$KUBE_BIN_DIR has no $b"; exit 1; }
  done
  echo "$KUBE_BIN_DIR"
  exit 0
fi

shared=${KUBE_SHARED:-$here/../../../shared}
found=0
for v in 1.30 1.36; do
  if [ -x "$shared/kube-$v/unpack.sh" ]; then
    bash "$shared/kube-$v/unpack.sh"
    found=$((found + 1))
  else
    log "no $shared/kube-$v/unpack.sh: Kubernetes $v is not tested"
  fi
done
[ "$found" -gt 0 ] || { log "no control plane found under $shared (set KUBE_SHARED or KUBE_BIN_DIR)"; exit 1; }
