#!/bin/bash
# Copies sample files made by gen-samples.sh/gen-edge.sh into a testdata
# directory with their golden cuobjdump results:
#   NAME.list    the ELF/PTX lines of `cuobjdump -lelf -lptx NAME`
#   NAME.sha256  "file size sha256" of each file `cuobjdump -xelf all -xptx all NAME` wrote
# Usage: golden.sh SAMPLEDIR DESTDIR FILE...
set -eu
src=$1 dst=$2; shift 2
mkdir -p "$dst"
for f in "$@"; do
  cp "$src/$f" "$dst/$f"
  grep -E '^(ELF|PTX) file ' "$src/$f.list" >"$dst/$f.list" || true
  (cd "$src/x_$f" && for x in $(ls -A); do
     [ -f "$x" ] && echo "$x $(stat -c %s "$x") $(sha256sum "$x" | cut -d' ' -f1)"
   done) | LC_ALL=C sort >"$dst/$f.sha256"
done
