#!/usr/bin/env bash
# plot.sh NAME — draws OUT/NAME.png from OUT/NAME-<backend>.tsv with gnuplot (the scenario
# scripts call it last). NAME: curve | maxtput | coldstart | mixed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/docs/benchmarks/load}
[[ $OUT = /* ]] || OUT=$ROOT/$OUT
name=${1:?usage: plot.sh curve|maxtput|coldstart|mixed}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox)" >&2; exit 2; }
shopt -s nullglob
files=("$OUT/$name"-*.tsv)
((${#files[@]})) || { echo "plot.sh: no $OUT/$name-*.tsv (run scripts/load/$name.sh first)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# series FILTER-COLUMN VALUE: the rows of every tsv (no header/comment) whose column matches
sel() { cat "${files[@]}" | awk -F'\t' -v c="$1" -v v="$2" '$0 !~ /^#/ && $1 != "backend" && $c == v'; }
title=$(head -1 "${files[0]}" | sed 's/^# //; s/;.*//')
case $name in
  curve)
    plots=() eplots=()
    for b in kernel dpdk; do for fn in echo cpu-burn; do
      sel 1 "$b" | awk -F'\t' -v fn="$fn" '$2 == fn' >"$tmp/$b-$fn"
      [[ -s $tmp/$b-$fn ]] || continue
      lt=$([[ $b == kernel ]] && echo 1 || echo 2); [[ $fn == cpu-burn ]] && lt=$((lt + 2))
      plots+=("'$tmp/$b-$fn' u 3:7 w lp lt $lt pt 7 t '$b $fn p99', '$tmp/$b-$fn' u 3:5 w lp lt $lt dt 2 pt 6 t '$b $fn p50', '$tmp/$b-$fn' u 3:8 w lp lt $lt dt 3 pt 4 t '$b $fn p99.9'")
      eplots+=("'$tmp/$b-$fn' u 3:12 w lp lt $lt pt 7 t '$b $fn'")
    done; done
    gnuplot <<GP
set terminal pngcairo size 1100,450 background rgb 'white' font ',10'
set output '$OUT/curve.png'
set multiplot layout 1,2 title 'Latency vs offered load (open loop, coordinated-omission corrected) — $title'
set logscale y; set grid; set key top left font ',9'
set xlabel 'offered load (requests/s)'; set ylabel 'latency (µs)'
plot $(IFS=,; echo "${plots[*]}")
unset logscale y; set logscale y
set ylabel 'J/request (all-in, from the ledger)'
plot $(IFS=,; echo "${eplots[*]}")
unset multiplot
GP
    ;;
  maxtput)
    cat "${files[@]}" | awk -F'\t' '$0 !~ /^#/ && $1 != "backend" {print $1 " " $2 " / " $3 "\t" $7 "\t" $5}' >"$tmp/d"
    gnuplot <<GP
set terminal pngcairo size 1100,450 background rgb 'white' font ',10'
set output '$OUT/maxtput.png'
set multiplot layout 1,2 title 'Max throughput, closed loop, server on one core — $title'
set style data histograms; set style fill solid 0.7; set boxwidth 0.8
set xtics rotate by -35 font ',9'; set bmargin 9; set grid y; set datafile separator '\t'
set logscale y
set ylabel 'requests per server CPU-second'
plot '$tmp/d' u 2:xtic(1) t '' lc 1
set ylabel 'requests/s'
plot '$tmp/d' u 3:xtic(1) t '' lc 2
unset multiplot
GP
    ;;
  coldstart)
    cat "${files[@]}" | awk -F'\t' '$0 !~ /^#/ && $1 != "backend" && $2 != "all" {print $1 "#" $2 "\t" $5 "\t" $6 "\t" $7}' >"$tmp/d"
    gnuplot <<GP
set terminal pngcairo size 900,420 background rgb 'white' font ',10'
set output '$OUT/coldstart.png'
set title 'Cold-start burst: 100 new connections at once on a function scaled to zero — $title' font ',10'
set style data histograms; set style histogram clustered; set style fill solid 0.7
set datafile separator '\t'; set grid y; set logscale y; set ylabel 'latency (µs)'
set xtics rotate by -35 font ',9'; set bmargin 6
set arrow from graph 0, first 5000 to graph 1, first 5000 nohead dt 2 lc rgb 'red'
set label 'target p99 5 ms' at graph 0.02, first 5600 tc rgb 'red' font ',9'
plot '$tmp/d' u 2:xtic(1) t 'p50', '' u 3 t 'p99', '' u 4 t 'max'
GP
    ;;
  mixed)
    plots=() eplots=()
    for b in kernel dpdk; do
      sel 1 "$b" | awk -F'\t' '$2 == "open"' >"$tmp/$b"
      [[ -s $tmp/$b ]] || continue
      lt=$([[ $b == kernel ]] && echo 1 || echo 2)
      plots+=("'$tmp/$b' u 3:7 w lp lt $lt pt 7 t '$b p99', '$tmp/$b' u 3:5 w lp lt $lt dt 2 pt 6 t '$b p50'")
      eplots+=("'$tmp/$b' u 3:11 w lp lt $lt pt 7 t '$b'")
    done
    gnuplot <<GP
set terminal pngcairo size 1100,450 background rgb 'white' font ',10'
set output '$OUT/mixed.png'
set multiplot layout 1,2 title 'Mixed functions (configs/load/mix.txt), open loop — $title'
set datafile separator '\t'; set grid; set key top left font ',9'; set logscale y
set xlabel 'offered load (requests/s)'; set ylabel 'latency (µs)'
plot $(IFS=,; echo "${plots[*]}")
set ylabel 'J/request (all-in)'
plot $(IFS=,; echo "${eplots[*]}")
unset multiplot
GP
    ;;
  *) echo "plot.sh: unknown scenario '$name' (curve, maxtput, coldstart, mixed)" >&2; exit 2 ;;
esac
echo "plot.sh: wrote $OUT/$name.png" >&2
