# memsim-analyze's findings: planted spike, drift, fragmentation and heap
# growth each yield exactly their finding; a calm trace yields none.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ
MB=1048576
GB=1073741824

# trace NAME: a trace whose samples come from the function samples_NAME,
# which prints "rss reserved in_use heap_live" per line.
trace() {
    f=$TMP/$1.jsonl
    echo '{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":7,"ppid":1,"exe":"/bin/'"$1"'","argv":[],"start_unix_ns":0,"page_size":4096,"strategy":"none","device_size":1073741824,"stack_depth":0,"mmap":false,"memsim_version":"0.1.0","parent_trace":null}' >"$f"
    i=0
    "samples_$1" | while read -r rss res use heap; do
        i=$((i + 1))
        t=$((i * 100000000))
        [ "$i" = 10 ] && echo '{"ev":"phase","t":'$((t - 1))',"tid":1,"op":"begin","name":"load"}' >>"$f"
        echo '{"ev":"sample","t":'$t',"tid":2,"rss":'$rss',"hwm":'$rss',"vm_size":0,"vm_peak":0,"maxrss_self":0,"maxrss_children":0,"heap_live":'$heap',"heap_blocks":1,"malloc_reserved":'$res',"malloc_in_use":'$use',"mmap_live":0,"sim_live":null,"sim_reserved":null,"sim_largest_free":null,"device_total":'$GB',"tree_rss":'$rss',"children":[]}' >>"$f"
        [ "$i" = 10 ] && echo '{"ev":"phase","t":'$((t + 1))',"tid":1,"op":"end"}' >>"$f"
    done
    echo '{"ev":"end","t":9000000000,"tid":1,"reason":"exit","status":0,"signal":null,"records":0,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":0,"live_bytes":0,"stacks":0}' >>"$f"
}

samples_calm() { for i in $(seq 20); do echo $((120 * MB)) $((100 * MB)) $((100 * MB)) $((50 * MB)); done; }
samples_spike() {
    for i in $(seq 20); do
        g=$((20 * MB)); [ "$i" = 10 ] && g=$((400 * MB))
        echo $((100 * MB + g)) $((100 * MB)) $((100 * MB)) $((50 * MB))
    done
}
samples_drift() { for i in $(seq 20); do echo $((100 * MB + i * 10 * MB)) $((100 * MB)) $((100 * MB)) $((50 * MB)); done; }
samples_frag() { for i in $(seq 20); do echo $((120 * MB)) $((100 * MB)) $((30 * MB)) $((30 * MB)); done; }
samples_leak() { for i in $(seq 20); do echo $((120 * MB)) $((100 * MB)) $((100 * MB)) $((50 * MB + i * MB)); done; }

# tiny: a process of 3 MiB whose gap spikes by 512 KiB: below the floor.
samples_tiny() {
    for i in $(seq 20); do
        g=$((64 * 1024)); [ "$i" = 10 ] && g=$((512 * 1024))
        echo $((2 * MB + g)) $((2 * MB)) $((2 * MB)) $((1 * MB))
    done
}

for k in calm spike drift frag leak tiny; do trace $k; done
# The same drift on a 1 TiB machine: the machine's size does not decide.
sed "s/\"device_total\":$GB/\"device_total\":1099511627776/" "$TMP/drift.jsonl" >"$TMP/drift-tb.jsonl"
sed "s/\"device_total\":$GB/\"device_total\":25769803776/" "$TMP/drift.jsonl" >"$TMP/drift-24g.jsonl"

expect_status "calm" 0 "$A" --json --no-replay "$TMP/calm.jsonl"
expect_eq "a calm trace has no findings" "$("$J" findings.# <"$TMP/out")" 0

expect_status "spike" 0 "$A" --json --no-replay "$TMP/spike.jsonl"
expect_eq "spike: one finding" "$("$J" findings.# <"$TMP/out")" 1
expect_eq "spike: transient_spike" "$("$J" findings.0.classification <"$TMP/out")" transient_spike
expect_eq "spike: on the gap" "$("$J" findings.0.series <"$TMP/out")" gap
expect_eq "spike: its baseline, the median gap" "$("$J" findings.0.evidence.baseline_bytes <"$TMP/out")" $((20 * MB)).0
# The flat baseline has no spread: its floor is 0.5% of its level.
expect_eq "spike: robust z of 380 MiB over a spread of 0.5% of 20 MiB" \
    "$("$J" findings.0.evidence.robust_z <"$TMP/out")" 3800.0
# Severity follows the bytes at stake and their share of the peak RSS:
# the spike's 400 MiB over a baseline gap of 20 MiB is 380 MiB of 500 MiB.
expect_eq "spike: its bytes, the height above the baseline" "$("$J" findings.0.bytes <"$TMP/out")" $((380 * MB))
expect_eq "spike: critical (76% of peak RSS)" "$("$J" findings.0.severity <"$TMP/out")" critical
expect_eq "spike: in the marked phase" "$("$J" findings.0.phase <"$TMP/out")" load
expect_eq "spike: at its sample (1.0 s)" "$("$J" findings.0.evidence_at_s <"$TMP/out")" 1.0
expect_eq "spike: from its sample" "$("$J" findings.0.start_s <"$TMP/out")" 1.0
expect_eq "spike: to its sample" "$("$J" findings.0.end_s <"$TMP/out")" 1.0

expect_status "drift" 0 "$A" --json --no-replay "$TMP/drift.jsonl"
expect_eq "drift: one finding" "$("$J" findings.# <"$TMP/out")" 1
expect_eq "drift: persistent_drift" "$("$J" findings.0.classification <"$TMP/out")" persistent_drift
expect_eq "drift: 10 MiB per 0.1 s" "$("$J" findings.0.evidence.slope_bytes_per_sec <"$TMP/out")" 104857600.0
expect_eq "drift: R² 1" "$("$J" findings.0.evidence.r_squared <"$TMP/out")" 1.0
# Severity is the lower of the share's level and the bytes' own: 190 MiB
# is 66% of the peak RSS but under --critical-bytes (256 MiB).
expect_eq "drift: a warning (190 MiB)" "$("$J" findings.0.severity <"$TMP/out")" warning
expect_status "drift, --critical-bytes 128M" 0 "$A" --json --no-replay --critical-bytes 128M "$TMP/drift.jsonl"
expect_eq "drift: critical then" "$("$J" findings.0.severity <"$TMP/out")" critical
expect_grep "drift: human units" "grows at 100 MiB/s from 0.100 s to 2.000 s" "$TMP/out"

expect_status "fragmentation" 0 "$A" --json --no-replay "$TMP/frag.jsonl"
expect_eq "frag: one finding" "$("$J" findings.# <"$TMP/out")" 1
expect_eq "frag: fragmentation_like" "$("$J" findings.0.classification <"$TMP/out")" fragmentation_like
expect_eq "frag: (100 - 30) / 100" \
    "$("$J" findings.0.evidence.held_ratio <"$TMP/out" | awk '{printf "%.4f", $1}')" 0.7000
expect_eq "frag: the allocator's" "$("$J" findings.0.series <"$TMP/out")" heap_live
expect_eq "frag: 70 MiB held" "$("$J" findings.0.bytes <"$TMP/out")" $((70 * MB))
expect_eq "frag: a warning (70 MiB of 120 MiB: under 256 MiB)" "$("$J" findings.0.severity <"$TMP/out")" warning
expect_eq "frag: confidence min(1, 0.7 / 0.6)" "$("$J" findings.0.confidence <"$TMP/out")" 1.0

expect_status "heap growth" 0 "$A" --json --no-replay "$TMP/leak.jsonl"
expect_eq "leak: one finding" "$("$J" findings.# <"$TMP/out")" 1
expect_eq "leak: drift of the live heap" "$("$J" findings.0.series <"$TMP/out")" heap_live
expect_eq "leak: persistent_drift" "$("$J" findings.0.classification <"$TMP/out")" persistent_drift
expect_eq "leak: a warning (19 MiB of growth, 16% of peak RSS)" "$("$J" findings.0.severity <"$TMP/out")" warning

for m in 24g tb; do
    expect_status "drift on a $m machine" 0 "$A" --json --no-replay "$TMP/drift-$m.jsonl"
    expect_eq "$m: the drift counts" "$("$J" findings.0.classification <"$TMP/out")" persistent_drift
    expect_eq "$m: a warning (190 MiB of 290 MiB)" "$("$J" findings.0.severity <"$TMP/out")" warning
done
expect_status "tiny" 0 "$A" --json --no-replay "$TMP/tiny.jsonl"
expect_eq "a gap spike under 1 MiB is no finding" "$("$J" findings.# <"$TMP/out")" 0

# --fail-on, thresholds, remediation override.
expect_status "--fail-on warning with a warning" 1 "$A" --no-replay --fail-on warning "$TMP/leak.jsonl"
expect_status "--fail-on critical with a warning" 0 "$A" --no-replay --fail-on critical "$TMP/leak.jsonl"
expect_status "--warn-share raised: info" 0 "$A" --json --no-replay --warn-share 0.2 "$TMP/leak.jsonl"
expect_eq "the leak is info then" "$("$J" findings.0.severity <"$TMP/out")" info
expect_status "--min-share above it: no finding" 0 "$A" --json --no-replay --min-share 0.2 "$TMP/leak.jsonl"
expect_eq "none then" "$("$J" findings.# <"$TMP/out")" 0
expect_status "a bad --min-bytes" 2 "$A" --min-bytes lots "$TMP/leak.jsonl"
expect_one_line "one line for it" "$TMP/err"
expect_status "--fail-on info on a calm trace" 0 "$A" --no-replay --fail-on info "$TMP/calm.jsonl"
expect_status "a --spike-z above its robust z hides the spike" 0 "$A" --json --no-replay --spike-z 5000 "$TMP/spike.jsonl"
expect_eq "no finding then" "$("$J" findings.# <"$TMP/out")" 0
echo '{"transient_spike": ["look at the batch size"]}' >"$TMP/rem.json"
expect_status "--remediation" 0 "$A" --json --no-replay --remediation "$TMP/rem.json" "$TMP/spike.jsonl"
expect_eq "its text replaces the default" "$("$J" findings.0.remediation.0 <"$TMP/out")" "look at the batch size"
echo 'not json' >"$TMP/bad-rem.json"
expect_status "a bad remediation file" 2 "$A" --remediation "$TMP/bad-rem.json" "$TMP/spike.jsonl"
expect_one_line "one line for it" "$TMP/err"
expect_status "a bad --drift-r2" 2 "$A" --drift-r2 2 "$TMP/spike.jsonl"
expect_status "text output lists the finding" 0 "$A" --no-replay "$TMP/drift.jsonl"
expect_grep "with its remediation" "unbounded\\|grows steadily" "$TMP/out"

# Real programs (not under SANITIZE=1: no libmemsim.so).
if [ "${SANITIZE:-}" != 1 ]; then
# Calm and tiny real programs: no finding at all (20 MiB held for a
# second; a shell sleeping, then ls).
mkdir -p "$TMP/calm1" "$TMP/calm2"
env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/calm1" "$BUILD/programs/touch_mb" 20 1000
env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/calm2" sh -c 'sleep 1; ls / >/dev/null'
for f in "$TMP"/calm1/memsim.* "$TMP"/calm2/memsim.*; do
    expect_status "calm: $(basename "$f") analyzed" 0 "$A" --json --no-replay "$f"
    expect_eq "calm: no finding in $(basename "$f")" "$("$J" findings.# <"$TMP/out")" 0
done

# A real program whose memory is all mappings (tests/programs/map_drift.c:
# 60 anonymous regions of 2 MiB, touched, one of them half unmapped at the
# end): the mappings are reported, and the gap's drift is explained by them.
mkdir -p "$TMP/md"
expect_status "map_drift under memsim" 0 env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/md" \
    "$BUILD/programs/map_drift"
expect_status "its trace analyzed" 0 "$A" --json --no-replay "$TMP"/md/memsim.map_drift.*.jsonl
cp "$TMP/out" "$TMP/md.json"
m() { "$J" "$1" <"$TMP/md.json"; }
expect_eq "map_drift: 60 mmap calls" "$(m summary.mapped_calls)" 60
expect_eq "map_drift: peak mapped 60 x 2 MiB" "$(m summary.mapped_peak_bytes)" $((120 * MB))
expect_eq "map_drift: all anonymous" "$(m summary.mapped_peak_anon_bytes)" $((120 * MB))
expect_eq "map_drift: half a region unmapped at the end" "$(m summary.mapped_end_bytes)" $((119 * MB))
expect_eq "map_drift: one munmap" "$(m summary.munmap_calls)" 1
expect_eq "map_drift: one mapping site" "$(m mapping_sites.#)" 1
expect_eq "map_drift: its calls" "$(m mapping_sites.0.calls)" 60
expect_grep "map_drift: the site is main" '"function": "main"' "$TMP/md.json"
# The gap drifts as the mappings do: one finding, the mappings'.
expect_eq "map_drift: one finding" "$(m findings.#)" 1
expect_eq "map_drift: the mappings' drift is found" "$(m findings.0.classification)/$(m findings.0.series)" \
    persistent_drift/mapped
expect_eq "map_drift: a warning (120 MiB: under --critical-bytes)" "$(m findings.0.severity)" warning
expect_eq "map_drift: explained by a mapping" "$(m findings.0.attribution.0.kind)" mapping
expect_eq "map_drift: by most of the gap" \
    "$(m findings.0.attribution.0.share | awk '{print ($1 > 0.9) ? "yes" : "no " $1}')" yes
expect_grep "map_drift: at main" '"label": "main (map_drift.c:' "$TMP/md.json"
expect_grep "map_drift: mapping advice" "munmap the regions it no longer uses" "$TMP/md.json"
expect_grep "map_drift: the description names the site" "Most were made at main (map_drift.c:" "$TMP/md.json"
expect_eq "map_drift: no heap finding for a 4 KiB heap" \
    "$(grep -c '"series": "heap_live"' "$TMP/md.json")" 0
expect_eq "map_drift: the timeline holds mapped live" \
    "$(m timeline.mapped_live_bytes.# | awk '{print ($1 >= 20) ? "yes" : "no " $1}')" yes
expect_eq "map_drift: the RSS at its top is mostly the mappings" \
    "$(m summary.rss_at_top.mapped_bytes | awk -v r="$(m summary.rss_at_top.rss_bytes)" '{print ($1 >= 0.9 * r) ? "yes" : "no " $1 " of " r}')" yes
expect_status "its text report" 0 "$A" --no-replay "$TMP"/md/memsim.map_drift.*.jsonl
# (The newest region may be mapped and not yet touched at the top: then
# "(of N mapped)" follows the mappings' part.)
expect_grep "text: what the RSS is made of" \
    "RSS at its top: .* the program's mappings\( (of [^)]* mapped)\)\{0,1\}, .* file pages" "$TMP/out"
expect_grep "text: the mapped line" "mapped: *60 mmap calls; peak 120 MiB" "$TMP/out"
expect_grep "text: the gap explained" "anonymous mappings made at main (map_drift.c:" "$TMP/out"
expect_grep "text: the mapping sites" "top mapping sites by mapped at peak" "$TMP/out"

fi

summary
