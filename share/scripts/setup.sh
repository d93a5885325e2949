#!/usr/bin/env bash
# Installs the Debian 12 packages Phaze needs to build and test. Idempotent: installs only what is
# missing, so a second run costs one dpkg query. Needs root (or sudo) when something is missing.
set -euo pipefail

packages=(
  cmake g++ pkg-config ninja-build ccache
  libboost-dev libboost-program-options-dev
  libyaml-cpp-dev libfmt-dev
  coinor-libcbc-dev liblpsolve55-dev libsuitesparse-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-cbc lp-solve
  python3 python3-yaml                # the validation scripts read YAML files (share/validation/yaml_files.py)
  dpkg-dev                         # dpkg-shlibdeps: cpack -G DEB (share/scripts/test-install.sh)
  librsvg2-bin fonts-dejavu-core   # the plot tests render every SVG to PNG
)
# Open MPI is optional (PHAZE_WITH_MPI); installed unless PHAZE_NO_MPI=1.
if [[ "${PHAZE_NO_MPI:-0}" != "1" ]]; then
  packages+=(libopenmpi-dev openmpi-bin)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present" >&2
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
