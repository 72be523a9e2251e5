#!/usr/bin/env bash
# Gives cuFile the udev record it needs, on a GPU machine without udev (the GPU VMs). Test
# harness only: the library never writes it.
#
# cuFile registers a file only after reading, from the udev database, the record of the block
# device under the file's file system: /run/udev/data/b<major>:<minor> (decimal numbers), and in
# it E:ID_FS_USAGE and E:ID_FS_TYPE. Without udev there is no such record, and cuFile registers no
# file, even in compatibility mode ("udev property not found: ID_FS_USAGE vda" in cufile.log).
# For each folder, this script finds the block device under its file system (from the folder's
# device number, so device-mapper and partitions come out right) and, if the record is absent,
# writes the two lines udev would, with the file system's type from /proc/self/mountinfo. A
# record that is there is never changed.
#
#   bash scripts/gpu/gds-udev.sh [FOLDER...]      as root, before the gds tests
#
# Default folders: $CUDAGO_GDS_DIR (if set), the temporary folder (${TMPDIR:-/tmp}) and this
# repository: where the gds tests, benchmarks and example put their files (the tests take the
# first of these where cuFile reads a file back). A folder on tmpfs, overlay, NFS or btrfs has no
# block device behind its device number: the script says so and lists folders that have one
# (point CUDAGO_GDS_DIR there). It exits 0 when at least one folder has its record (written now
# or there before), 1 otherwise. UDEV_DATA_DIR (default /run/udev/data) lets it be tried elsewhere.
set -euo pipefail

data=${UDEV_DATA_DIR:-/run/udev/data}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ $# -gt 0 ]; then
  dirs=("$@")
else
  dirs=()
  [ -n "${CUDAGO_GDS_DIR:-}" ] && dirs+=("$CUDAGO_GDS_DIR")
  dirs+=("${TMPDIR:-/tmp}" "$repo")
fi

# mount_of DEV PATH prints "fstype source mountpoint" of the mount of device DEV (major:minor)
# that holds PATH: the deepest such mount point above PATH (bind mounts share a device).
mount_of() {
  awk -v dev="$1" -v path="$2" '
    $3 == dev {
      for (i = 7; i <= NF && $i != "-"; i++) {}
      mp = $5; gsub(/\\040/, " ", mp)
      under = (path == mp || mp == "/" || index(path, mp "/") == 1)
      if (!found || (under && (!bu || length(mp) > length(bmp)))) {
        bf = $(i + 1); bs = $(i + 2); bmp = mp; bu = under; found = 1
      }
    }
    END { if (found) print bf, bs, bmp }' /proc/self/mountinfo
}

# block_mounts lists mounted ext4 and xfs file systems on block devices, one per device.
block_mounts() {
  awk '{
      for (i = 7; i <= NF && $i != "-"; i++) {}
      split($3, d, ":"); mp = $5; gsub(/\\040/, " ", mp)
      if (d[1] != 0 && ($(i + 1) == "ext4" || $(i + 1) == "xfs") && !seen[$3]++)
        printf "  %s (%s on %s, device %s)\n", mp, $(i + 1), $(i + 2), $3
    }' /proc/self/mountinfo
}

ready=()
declare -A done_dev=()
for dir in "${dirs[@]}"; do
  if [ ! -e "$dir" ]; then
    echo "gds-udev: $dir: does not exist, skipped"
    continue
  fi
  abs=$(readlink -f "$dir")
  dev=$(stat -L -c %d "$abs")
  # glibc's gnu_dev_major and gnu_dev_minor of st_dev
  maj=$(( (dev >> 8 & 0xfff) | (dev >> 32 & 0xfffff000) ))
  min=$(( (dev & 0xff) | (dev >> 12 & 0xffffff00) ))
  read -r fstype source mp < <(mount_of "$maj:$min" "$abs" || true) || true
  if [ -z "${fstype:-}" ]; then
    # Not in mountinfo: stat -f names the type, but one name covers ext2, ext3 and ext4.
    fstype=$(stat -f -L -c %T "$abs")
    [ "$fstype" = ext2/ext3 ] && fstype=ext4
    source=unknown mp=unknown
    echo "gds-udev: $dir: device $maj:$min is not in /proc/self/mountinfo; file system type from stat -f: $fstype"
  fi
  if [ "$maj" = 0 ]; then
    echo "gds-udev: $dir is on $fstype ($source, mounted at $mp), which has no block device (device $maj:$min):"
    echo "  no udev record can describe it, and cuFile registers no file there. Put the files on one of:"
    block_mounts
    echo "  e.g. mkdir -p <mount point>/gds-tmp, then CUDAGO_GDS_DIR=<that folder> and run this script on it."
    continue
  fi
  if [ -n "${done_dev[$maj:$min]:-}" ]; then
    echo "gds-udev: $dir: same device ($maj:$min) as ${done_dev[$maj:$min]}"
    ready+=("$dir")
    continue
  fi
  done_dev[$maj:$min]=$dir
  sys=/sys/dev/block/$maj:$min
  name=$(sed -n 's/^DEVNAME=//p' "$sys/uevent" 2>/dev/null || true)
  [ -r "$sys/dm/name" ] && name="$name, device-mapper $(cat "$sys/dm/name")"
  what="$dir: $fstype on $source (block device ${name:-?}, $maj:$min)"
  [ -e "$sys" ] || echo "gds-udev: warning: $sys is missing; cuFile (libudev) looks the device up there"
  record=$data/b$maj:$min
  if [ -e "$record" ]; then
    if grep -q '^E:ID_FS_USAGE=' "$record" && grep -q '^E:ID_FS_TYPE=' "$record"; then
      echo "gds-udev: $what: $record is there already, unchanged:"
      grep '^E:ID_FS_\(USAGE\|TYPE\)=' "$record" | sed 's/^/  /'
      ready+=("$dir")
    else
      echo "gds-udev: $what: $record is there but lacks E:ID_FS_USAGE or E:ID_FS_TYPE; left alone (udev's own):"
      echo "  udevadm trigger --action=change $sys   (or add E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=$fstype to it)"
    fi
    continue
  fi
  if ! mkdir -p "$data" 2>/dev/null || [ ! -w "$data" ]; then
    echo "gds-udev: $what: cannot write $record: run as root" >&2
    continue
  fi
  tmp=$(mktemp "$data/.gds-udev.XXXXXX")
  printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=%s\n' "$fstype" > "$tmp"
  chmod 644 "$tmp"
  if ln "$tmp" "$record" 2>/dev/null; then # only if absent, even against a racing writer
    echo "gds-udev: $what: wrote $record:"
    sed 's/^/  /' "$record"
    ready+=("$dir")
  else
    echo "gds-udev: $what: $record appeared meanwhile; left alone"
  fi
  rm -f "$tmp"
done

if [ ${#ready[@]} -eq 0 ]; then
  echo "gds-udev: no folder has the udev record cuFile needs: the gds tests will skip" >&2
  exit 1
fi
echo "gds-udev: ready for cuFile: ${ready[*]}"
