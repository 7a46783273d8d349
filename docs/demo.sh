#!/usr/bin/env bash
# docs/demo.sh BIN — the `make demo` tour of recfs.
#
# Writes sample record files in all three formats (leveldb log, grailbio
# recordio, legacy recordio) into a temporary directory, inspects them with
# the FUSE-free commands, then mounts each one, looks around with ls, cat and
# grep, and unmounts. Every command is echoed before it runs. A trap unmounts
# whatever is still mounted and removes the directory, however the script ends.
# Needs FUSE: run as root (or with fusermount3 installed) on Linux.
set -eu  # no pipefail: `ls | head` closing the pipe early is fine

BIN=${1:-bin/recfs}
if [[ ! -x $BIN ]]; then
  echo "demo: $BIN is not an executable; run 'make build' first (or 'make demo')" >&2
  exit 2
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

work=$(mktemp -d "${TMPDIR:-/tmp}/recfs-demo.XXXXXX")
mounted=()

cleanup() {
  local m
  cd /
  for m in "${mounted[@]}"; do
    if grep -qs " $m " /proc/self/mounts; then
      "$BIN" unmount "$m" >/dev/null 2>&1 || fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# recfs runs the binary under its plain name, so the echoed commands read as
# a user would type them.
recfs() { "$BIN" "$@"; }

# Bold and blue on a terminal, plain text otherwise.
if [[ -t 1 ]]; then b=$'\033[1m' blue=$'\033[1;34m' off=$'\033[0m'; else b='' blue='' off=''; fi

# step echoes a shell command line, then runs it.
step() {
  printf '\n%s$ %s%s\n' "$b" "$1" "$off"
  eval "$1"
}

# mnt creates a mountpoint and remembers it for the trap.
mnt() {
  mkdir -p "$work/$1"
  mounted+=("$work/$1")
}

section() { printf '\n%s== %s%s\n' "$blue" "$1" "$off"; }

cd "$work"
echo "demo directory: $work"

section "Sample record files, one per format"
step 'recfs sample .'
step 'ls -l'

section "Inspecting without FUSE"
step 'recfs info events.log'
step 'recfs ls events.log 498-502'
step "recfs cat events.log 13 110 --sep '\\n'"
step 'recfs verify catalog.rio'

if [[ ! -e /dev/fuse ]]; then
  echo "demo: /dev/fuse is missing, so the mounting half of the demo cannot run (modprobe fuse?)" >&2
  exit 1
fi

section "A leveldb log mounted as a directory"
mnt ev
step 'recfs mount --daemon events.log ev'
step 'ls -l ev | head -5'
step 'ls ev | wc -l'
step 'cat ev/000013; echo'
step 'wc -c ev/000500'
step 'grep -rl quota ev | head -3'
step 'grep -rh quota ev | wc -l'
step 'cat ev/.recfs'
step 'recfs unmount ev'

section "Appending: cp into a --rw mount, and a live log with --follow"
mnt rw
step 'recfs mount --daemon --rw events.log rw'
step "printf '{\"seq\":\"new\",\"msg\":\"hello from cp\"}' > payload.json && cp payload.json rw/"
step 'ls rw | tail -2'
step 'cat "rw/$(ls rw | tail -1)"; echo'
step 'recfs unmount rw'
mnt live
step 'recfs mount --daemon --follow --follow-interval 100ms events.log live'
step "echo 'appended by another process' | recfs append events.log"
step 'sleep 0.5; cat "live/$(ls live | tail -1)"'
step 'recfs unmount live'
step 'recfs verify events.log | tail -2'

section "A grailbio recordio file (flate-compressed, with header and trailer)"
mnt cat
step 'recfs mount --daemon catalog.rio cat'
step 'ls -l cat | head -5'
step 'cat cat/000007; echo'
step 'grep -r Kernighan cat'
step 'ls cat/trailer'
step 'head -c 120 cat/trailer/*; echo'
step 'cat cat/.recfs'
step 'recfs unmount cat'

section "A legacy packed recordio file"
mnt notes
step 'recfs mount --daemon notes.grail-rpk notes'
step 'ls -l notes'
step 'grep -r checksummed notes'
step 'cat notes/.recfs'
step 'recfs unmount notes'

section "Recipes from the README (mounted at ev instead of /mnt/ev)"
mnt ev
step 'recfs mount --daemon events.log ev'
step 'grep -rl quota ev'
step 'recfs cat --number events.log | grep quota'
step "recfs cat events.log last:10 --sep '\\n'"
step 'recfs unmount ev'
if command -v jq >/dev/null; then
  step "recfs cat --json --data text events.log | jq -r 'select(.data | test(\"quota\")) | .n'"
  step 'pid=$(recfs mount --daemon --json events.log ev | jq .pid)'
  step 'echo "daemon pid $pid"'
  step 'recfs unmount --json ev | jq -r .status'
  step 'recfs info --json missing.log 2>&1 >/dev/null | jq -r .error'
else
  echo "(jq is not installed: the JSON recipes are skipped)"
fi

section "A damaged copy"
step 'cp events.log broken.log'
step 'printf "\xff" | dd of=broken.log bs=1 seek=5000 conv=notrunc status=none'
step 'recfs verify broken.log || echo "verify exit status: $?"'

section "Done"
echo "all mounts are gone; $work is removed on exit"
