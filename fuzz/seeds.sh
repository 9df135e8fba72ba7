#!/usr/bin/env bash
# Writes the fuzz targets' seed inputs (corpus/<target>/seed-*): what the project's own writers
# and the InfiniBand tools print for one small fabric — a two-level fat tree with parallel
# cables, run in ibsim under OpenSM with the plugin (LMC 1, QoS) — and that fabric's
# ibnetdiscover dump (harness/fabric.topo), the fabric the table readers are fuzzed against.
#
# Needs the packages .ci/setup installs (ibsim-utils, opensm, infiniband-diags). Run from
# anywhere: bash fuzz/seeds.sh
set -euo pipefail
fuzz=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz")
corpus=$fuzz/corpus
cd "$root"
cargo build --quiet --release -p ibfabric -p cabling -p opensm-layered -p mcast-join
bin=$root/target/release
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

spec=(fattree --leaves 4 --spines 2 --links-per-pair 2 --hosts-per-leaf 2)
seed() { mkdir -p "$corpus/$1" && cat > "$corpus/$1/seed-$2"; }

"$bin/ibfabric" topo "${spec[@]}" --format yaml | seed fabric_document yaml
"$bin/ibfabric" topo "${spec[@]}" --format json | seed fabric_document json
"$bin/ibfabric" topo "${spec[@]}" --format node-name-map | seed node_name_map map
"$bin/ibfabric" topo "${spec[@]}" --format ibsim > "$work/fabric.net"
"$bin/cabling" plan "${spec[@]}" --format yaml | seed plan yaml
"$bin/cabling" plan "${spec[@]}" --format csv | seed plan csv
printf 'slimfly:q=5\nmlfm:d=3\nfattree:leaves=4,spines=2,links-per-pair=2,hosts-per-leaf=2\n' |
    while read -r s; do echo "$s" | seed topology_spec "${s%%:*}"; done
seed plugin_config yaml < "$root/opensm-plugin/layered.yaml"

umad=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
[ -e "$umad" ] || umad=$(find /usr/lib -name libumad2sim.so | head -1)
export IBSIM_SOCKNAME="ibfuzz$$" OSM_TMP_DIR="$work" OSM_CACHE_DIR="$work"
(cd "$work" && exec timeout 300 ibsim -s fabric.net > ibsim.log 2>&1) &
pids+=($!)
until grep -q "Network simulator ready" "$work/ibsim.log" 2>/dev/null; do sleep 0.2; done
cat > "$work/layered.yaml" <<CONF
sweep_log: $work/sweeps.jsonl
CONF
cat > "$work/opensm.conf" <<CONF
event_plugin_name osmlayered
event_plugin_options $work/layered.yaml
routing_engine layered,minhop
lmc 1
qos TRUE
force_log_flush TRUE
CONF
(cd "$work" && LD_PRELOAD=$umad LD_LIBRARY_PATH=$bin exec timeout 300 \
    opensm -F opensm.conf -f opensm.log -D 0x43 > opensm.out 2>&1) &
pids+=($!)
until grep -q "SUBNET UP" "$work/opensm.log" 2>/dev/null; do sleep 0.2; done
sleep 2
tool() { (cd "$work" && LD_PRELOAD=$umad timeout 60 "$@"); }

tool ibnetdiscover > "$fuzz/harness/fabric.topo"
seed ibnetdiscover dump < "$fuzz/harness/fabric.topo"
tool iblinkinfo | seed iblinkinfo default
tool iblinkinfo -l | seed iblinkinfo lines
seed lfts opensm-dump < "$work/opensm-lfts.dump"
tool ibroute 1 | seed lfts ibroute
# A multicast group of four hosts (SL 1), so that the MFTs have entries.
awk '/^\[1\]\(/ && prev ~ /^Ca/ {sub(/^\[1\]\(/, "0x"); sub(/\).*/, ""); print} {prev = $0}' \
    "$fuzz/harness/fabric.topo" | head -4 > "$work/members"
tool "$bin/mcast-join" join --mgid ff12:e001::1 --create --sl 1 --guids-from "$work/members" \
    > /dev/null
sleep 3
for lid in $(awk '/^Switch/ {for (i = 1; i < NF; i++) if ($i == "lid") {print $(i + 1); break}}' \
    "$fuzz/harness/fabric.topo" | head -2); do tool ibroute -M "$lid"; done | seed mfts ibroute
[ -e "$work/opensm.mcfdbs" ] && seed mfts opensm < "$work/opensm.mcfdbs"
seed sl2vl opensm-dump < "$work/opensm-sl2vl.dump"
tool saquery -g | seed group_sls saquery-g
printf '# mlid sl\n0xc000 0\n0xc001 1\n' | seed group_sls plain
tool saquery -p --slid 1 --dlid 2 | seed path_sl saquery
printf '# slid dlid sl\n1 2 0\n0x3 0x4 1\n' | seed path_sl plain
awk '/^Ca/ {print $NF}' "$fuzz/harness/fabric.topo" | head -4 | seed hostfile names
printf '# hosts\n\n%s\n' "$(awk -F'"' '/^Ca/ {print $2}' "$fuzz/harness/fabric.topo" | head -3)" |
    seed hostfile guids

printf 'ibfabric-bench pattern=alltoall ranks=8 bytes=65536 iterations=2 simulated_seconds=0.0012\n' |
    seed simgrid_result line
[ -e "$work/sweeps.jsonl" ] && seed sweep_log plugin < "$work/sweeps.jsonl"
[ -e "$work/layered-session.json" ] && seed saved_session plugin < "$work/layered-session.json"

echo "seeds written under $corpus; the fabric in $fuzz/harness/fabric.topo"
