#!/usr/bin/env bash
# Builds (once) kube-apiserver, kube-scheduler and kube-controller-manager 1.20.2 from
# Debian's `kubernetes` source package and installs etcd from Debian. Prints the bin dir.
# KUBE_BIN_DIR: use binaries the user already has instead of building.
set -euo pipefail
log() { echo "[kube-binaries] $*" >&2; }

need_apt=()
command -v etcd >/dev/null || need_apt+=(etcd-server)
command -v openssl >/dev/null || need_apt+=(openssl)
command -v kubectl >/dev/null || need_apt+=(kubernetes-client)

if [ -n "${KUBE_BIN_DIR:-}" ]; then
  for b in kube-apiserver kube-scheduler kube-controller-manager; do
    [ -x "$KUBE_BIN_DIR/$b" ] || { log "KUBE_BIN_DIR=$KUBE_BIN_DIR has no $b"; exit 1; }
  done
  bin="$KUBE_BIN_DIR"
else
  version="1.20.2"
  # -r2: built with Debian's reflect2 1.0.2 in place of the vendored 1.0.1, which crashes
  # under Go >= 1.18 (kube-apiserver faults on its first custom resource).
  cache="${ZONEKEEPER_CACHE:-$HOME/.cache/zonekeeper}/kube-$version-r2"
  bin="$cache/bin"
  if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-scheduler" ] || [ ! -x "$bin/kube-controller-manager" ]; then
    [ -x /usr/lib/go-1.19/bin/go ] || need_apt+=(golang-1.19-go)
    [ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || need_apt+=(golang-github-modern-go-reflect2-dev)
    command -v rsync >/dev/null || need_apt+=(rsync)
    command -v make >/dev/null || need_apt+=(make)
  fi
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
fi

if [ -z "${KUBE_BIN_DIR:-}" ] && [ ! -x "$bin/kube-controller-manager" -o ! -x "$bin/kube-apiserver" -o ! -x "$bin/kube-scheduler" ]; then
  mkdir -p "$cache"
  src="$cache/src"
  if [ ! -d "$src/kubernetes/cmd/kube-apiserver" ]; then
    srclist=/etc/apt/sources.list.d/zonekeeper-deb-src.sources
    if [ ! -f "$srclist" ]; then
      log "adding deb-src for bookworm main"
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > "$srclist"
      apt-get update -qq >&2
    fi
    rm -rf "$src" && mkdir -p "$src/dl"
    (cd "$src/dl" && apt-get source --download-only kubernetes >&2)
    orig=$(ls "$src"/dl/kubernetes_*.orig.tar.* | head -n1)
    mkdir -p "$src/kubernetes"
    tar -xf "$orig" -C "$src/kubernetes" --strip-components=1
  fi
  reflect2="$src/kubernetes/vendor/github.com/modern-go/reflect2"
  if [ ! -f "$src/.reflect2-1.0.2" ]; then
    log "replacing vendored reflect2 1.0.1 with Debian's 1.0.2 (Go 1.18+ map iteration)"
    rm -f "$reflect2"/*.go "$reflect2"/*.s
    cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go /usr/share/gocode/src/github.com/modern-go/reflect2/*.s "$reflect2"/
    rm -f "$reflect2"/*_test.go
    touch "$src/.reflect2-1.0.2"
  fi
  gopath="$cache/gopath"
  mkdir -p "$gopath/src/k8s.io"
  ln -sfn "$src/kubernetes" "$gopath/src/k8s.io/kubernetes"
  log "building kube-apiserver, kube-scheduler, kube-controller-manager (about 4 minutes)"
  (
    cd "$gopath/src/k8s.io/kubernetes"
    export GOPATH="$gopath" GO111MODULE=off CGO_ENABLED=0 PATH="/usr/lib/go-1.19/bin:$PATH" GOFLAGS=
    make WHAT="cmd/kube-apiserver cmd/kube-scheduler cmd/kube-controller-manager" >&2
  )
  out="$src/kubernetes/_output/local/bin/linux/amd64"
  [ -d "$out" ] || out=$(dirname "$(find "$src/kubernetes/_output" -name kube-apiserver -type f | head -n1)")
  mkdir -p "$bin"
  cp "$out/kube-apiserver" "$out/kube-scheduler" "$out/kube-controller-manager" "$bin/"
fi
echo "$bin"
