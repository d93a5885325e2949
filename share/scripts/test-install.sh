#!/usr/bin/env bash
# CI's install check (issue 42), after the README's test command built ./build:
#  1. `cmake --install` into a temporary prefix; the installed phaze lists its bundled plugins and
#     predicts from its own data (the tree is relocatable: moved before use);
#  2. share/examples/estimator-plugin configured out of tree with -DCMAKE_PREFIX_PATH, built, its
#     conformance test run, and its plugin loaded by the installed phaze;
#  3. `cpack -G DEB`: the two packages are unpacked (dpkg-deb -x, no root needed) and the packaged
#     phaze runs a search of the packaged share/phaze/runs/default.yaml (two configs).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${PHAZE_BUILD_DIR:-$root/build}
jobs=${PHAZE_JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== install into a temporary prefix"
cmake --install "$build" --prefix "$tmp/staged" >/dev/null
mv "$tmp/staged" "$tmp/phaze"  # relocated: nothing may point back into the staging path
P=$tmp/phaze
"$P/bin/phaze" plugins | grep -q "strategy   megatron"
"$P/bin/phaze" predict --model "$P/share/phaze/workloads/tiny-gpt.yaml" --arch a100-sxm-80gb \
  --plan 1,2,1 --micro-batch 1 --global-batch 8 | grep -q "iteration"

echo "== the standalone plugin example against the installed SDK"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S "$root/share/examples/estimator-plugin" -B "$tmp/example" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$P" >/dev/null
cmake --build "$tmp/example" -j "$jobs" >/dev/null
ctest --test-dir "$tmp/example" --output-on-failure
"$P/bin/phaze" --plugin "$tmp/example/examples/roofline-example.so" plugins | grep "roofline"

echo "== Debian packages"
(cd "$build" && cpack -G DEB -B "$tmp/deb" >/dev/null)
for deb in "$tmp"/deb/*.deb; do
  echo "$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
  dpkg-deb -x "$deb" "$tmp/root"
done
"$tmp/root/usr/bin/phaze" search --config "$tmp/root/usr/share/phaze/runs/default.yaml" \
  --max-configs 2 --threads "$jobs" --output-dir "$tmp/out" | tail -n 2
test -s "$tmp/out/results.json"
echo "install check passed"
