#!/usr/bin/env bash
# Installs the layered routing plugin for the OpenSM on this machine:
#   - builds libosmlayered.so (release) against the installed OpenSM headers,
#   - installs it where OpenSM's dlopen finds it (the multiarch library directory, then
#     ldconfig), or under $DESTDIR for packaging,
#   - writes a commented /etc/opensm/layered.yaml unless one exists,
#   - prints the opensm.conf lines that load it.
# Usage: opensm-plugin/install.sh [--no-build | --library PATH]   (DESTDIR=/staging to stage)
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
library=
while (($#)); do
    case $1 in
        --no-build) build=0 ;;
        --library) library=${2:?--library needs a path}; build=0; shift ;;
        -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (expected --no-build or --library PATH)" >&2; exit 2 ;;
    esac
    shift
done

destdir=${DESTDIR:-}
libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
confdir=/etc/opensm
target=${CARGO_TARGET_DIR:-$PWD/target}

if ((build)); then
    cargo build --release --quiet -p opensm-layered
fi
library=${library:-$target/release/libosmlayered.so}
[[ -f $library ]] || { echo "install.sh: $library not built (run without --no-build)" >&2; exit 1; }

install -d "$destdir$libdir" "$destdir$confdir"
install -m 644 "$library" "$destdir$libdir/libosmlayered.so"
if [[ -z $destdir ]]; then
    ldconfig
fi

config=$destdir$confdir/layered.yaml
if [[ ! -e $config ]]; then
    tmp=$(mktemp "$config.XXXXXX")
    cat opensm-plugin/layered.yaml > "$tmp"
    chmod 644 "$tmp"
    mv "$tmp" "$config"
    echo "wrote $config"
else
    echo "kept $config"
fi

echo "installed $destdir$libdir/libosmlayered.so"
echo
echo "Add to opensm.conf (event_plugin_name is read only from the config file, opensm -F):"
echo
echo "event_plugin_name osmlayered"
echo "event_plugin_options $confdir/layered.yaml"
echo "routing_engine layered,minhop"
echo "lmc 2"
echo "qos TRUE"
