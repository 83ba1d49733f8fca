#!/usr/bin/env bash
# Installs the Debian packages a make target needs, only when they are missing.
#   test : PostgreSQL server binaries (the store tests start a throwaway cluster on 127.0.0.1)
#          and Mesa's EGL (MuJoCo renders the simulator suite offscreen on the CPU)
#          and Chromium with a font (tests/report opens the HTML report headless via Playwright)
#   demo : Mesa's EGL
#   bench: ffmpeg (the decode baseline of benchmarks/bench_sample_frames.py)
set -euo pipefail
want=()
need_egl() { ldconfig -p | grep -q 'libEGL_mesa.so.0' || want+=(libegl1 libegl-mesa0 libgl1-mesa-dri); }
need_chromium() {
  command -v chromium >/dev/null || want+=(chromium)
  fc-list 2>/dev/null | grep -qi 'dejavu' || want+=(fonts-dejavu-core fontconfig)
}
case "${1:-test}" in
  test)  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || want+=(postgresql); need_egl; need_chromium ;;
  demo)  need_egl ;;
  bench) command -v ffmpeg >/dev/null || want+=(ffmpeg) ;;
  *) echo "usage: $0 test|demo|bench" >&2; exit 2 ;;
esac
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
  echo "need root to install Debian packages: ${want[*]}" >&2; exit 1
fi
echo "installing Debian packages: ${want[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
