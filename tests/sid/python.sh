#!/bin/sh
# python.sh - runs an interpreter of a root made by make_root.sh as a container would run it:
# in a mount namespace of its own (unshare -m) whose / is the root, with the host's /tmp, /proc,
# this repository and the current folder mounted at the same paths, so a program's paths mean
# the same inside and out.  Every step execs: the interpreter keeps this script's pid, and its
# signals.
#
# usage: sh tests/sid/python.sh ROOT INTERPRETER [ARGS...]
set -eu
if [ / -ef "$1" ]; then   # already inside the root (a program there starting another)
    shift
    exec "$@"
fi
if [ -z "${SONDE_SID_INSIDE:-}" ]; then
    SONDE_SID_INSIDE=1 exec unshare -m sh "$0" "$@"
fi
root=$1
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
for dir in /tmp /proc "$repo" "$PWD"; do
    mkdir -p "$root$dir"
    mount --rbind "$dir" "$root$dir"
done
unset SONDE_SID_INSIDE
exec chroot "$root" sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@"
