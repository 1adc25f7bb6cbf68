#!/usr/bin/env python3
"""Per-bin outcomes and median / p80 estimation error of `dart` and `dart+guard` from
`yard sim --jobs-csv` files.

usage: python3 sim/scripts/bin_errors.py CSV [CSV2]   (SEEDS=1,2 keeps those seeds)

Rows: per configuration (and `all`, pooled) and population: `every` job, `two-plus` (two or
more maps, k_max >= 1), `medium` / `large` (k_max >= 1), `k_max>=1` (pooled only). Missed /
empty / processed are over the population; errors over its answers from some input (k > 0,
processed > 0), pooled over the file's seeds, p80 nearest-rank as sim/src/report.rs has it:
the close's (`close_error`) and the one in force at the answer (`estimation_error`).
`refc`: jobs with a reforecast. CSV2 (the same runs after a change): its outcomes and close
error beside."""
import csv, sys, math
from collections import defaultdict
import os
SEEDS = os.environ.get('SEEDS', '').split(',') if os.environ.get('SEEDS') else None

def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    return rows

def pct(v, p):
    if not v: return float('nan')
    v = sorted(v); rank = max(1, math.ceil(p * len(v)))
    return v[min(rank, len(v)) - 1]

def f(x):
    return None if x in ('', None) else float(x)

def groups(rows):
    g = defaultdict(list)
    for r in rows:
        if r['policy'] not in ('dart', 'dart+guard'): continue
        if SEEDS and r['seed'] not in SEEDS: continue
        maps = int(r['maps'])
        for c in (r['config'], 'all'):
            g[(r['policy'], c, 'every')].append(r)
        if int(r['k_max']) < 1: continue
        pops = []
        if maps >= 2: pops.append('two-plus')
        if r['bin'] in ('medium', 'large'): pops.append(r['bin'])
        pops.append('k_max>=1')
        for c in (r['config'], 'all'):
            for p in pops:
                g[(r['policy'], c, p)].append(r)
    return g

def stats(rs, col):
    v = [f(r[col]) for r in rs if int(r['k']) > 0 and float(r['processed']) > 0 and f(r[col]) is not None]
    return len(v), pct(v, .5), pct(v, .8)

def outc(rs):
    n = len(rs)
    return (100*sum(r['outcome']=='missed' for r in rs)/n, 100*sum(r['outcome']=='empty' for r in rs)/n,
            100*sum(float(r['processed']) for r in rs)/n)

a = groups(load(sys.argv[1]))
b = groups(load(sys.argv[2])) if len(sys.argv) > 2 else None
print(f"{'policy':11} {'cfg':4} {'pop':9} {'jobs':>6} {'refc':>5} {'missed':>6} {'empty':>6} {'proc%':>6} | {'n_err':>6} close med/p80 | in-force med/p80" + (" | B: jobs missed empty proc% n  close med/p80" if b else ""))
for key in sorted(a):
    pol, c, p = key
    if p in ('k_max>=1',) and c != 'all': continue
    rs = a[key]
    refc = sum(1 for r in rs if r['reforecast_total'] not in ('', None)) if 'reforecast_total' in rs[0] else 0
    m, e, pr = outc(rs)
    n, cm, c8 = stats(rs, 'close_error' if 'close_error' in rs[0] else 'estimation_error')
    _, im, i8 = stats(rs, 'estimation_error')
    line = f"{pol:11} {c:4} {p:9} {len(rs):6} {refc:5} {m:6.1f} {e:6.1f} {pr:6.1f} | {n:6} {100*cm:5.1f} / {100*c8:5.1f} | {100*im:5.1f} / {100*i8:5.1f}"
    if b is not None and key in b:
        rb = b[key]; mb, eb, pb = outc(rb); nb, bm, b8 = stats(rb, 'close_error')
        line += f" | {len(rb):6} {mb:5.1f} {eb:5.1f} {pb:6.1f} {nb:6} {100*bm:5.1f} / {100*b8:5.1f}"
    print(line)
