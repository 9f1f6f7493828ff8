#!/usr/bin/env python3
"""Builds datasets/deu-eng/{train,valid,test}.tsv: raw, cased German-English sentence pairs.

Standard library only, deterministic.  Usage (from anywhere):
    python3 prepare_data.py /path/to/eng-deu.txt      (prints statistics as JSON)

Input: manythings' deu-eng file (deu.txt, dated 2018-05-13, 169,813 lines, eng<TAB>deu).
Output: the pairs of the PyTorch tutorial's filter (English starts "i am", "he is", ...; both
sides under 10 words once normalised), split group-aware with seed 1234 exactly as the
normalised eng-deu.{train,valid,test}.tsv of ../shared/data/prepare_data.py are, but written as
the raw text: case, accents and punctuation kept; each side's runs of white space become one
space and its ends are trimmed (the only change).  Line i of each file is line i of the normalised split, so the two can be compared.
Columns: English, then German (configs read column 1, German, as the source).
"""
import collections
import hashlib
import json
import os
import random
import re
import sys
import unicodedata

MAX_LENGTH = 10
ENG_PREFIXES = ("i am ", "i m ", "he is", "he s ", "she is", "she s ", "you are", "you re ",
                "we are", "we re ", "they are", "they re ")
SEED = 1234


def normalize(s, extra_map=None):
    """The tutorial's normalizeString (used to filter and to group, never written)."""
    s = s.lower().strip()
    for a, b in (extra_map or {}).items():
        s = s.replace(a, b)
    s = ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')
    s = re.sub(r"([.!?])", r" \1", s)
    return re.sub(r"[^a-zA-Z.!?]+", r" ", s)


def components(keys):
    """Union-find: two pairs are linked when they share the normalised English or German."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e, f in keys:
        a, b = find(('E', e)), find(('F', f))
        if a != b:
            parent[a] = b
    groups = collections.defaultdict(list)
    for i, (e, _) in enumerate(keys):
        groups[find(('E', e))].append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def split(keys):
    groups = components(keys)
    rng = random.Random(SEED)
    rng.shuffle(groups)
    n = len(keys)
    n_test, n_valid = round(n * 0.05), round(n * 0.05)
    test, valid, train = [], [], []
    for g in groups:
        if len(test) < n_test:
            test.extend(g)
        elif len(valid) < n_valid:
            valid.extend(g)
        else:
            train.extend(g)
    out = {}
    for name, idx in (('train', train), ('valid', valid), ('test', test)):
        idx = sorted(idx)
        rng.shuffle(idx)
        out[name] = idx
    return out


def main():
    raw_path = sys.argv[1] if len(sys.argv) > 1 else 'eng-deu.txt'
    lines = open(raw_path, encoding='utf-8').read().strip().split('\n')
    keys, raw = [], []
    for ln in lines:
        cols = ln.split('\t')
        e, f = normalize(cols[0]), normalize(cols[1], {'\u00df': 'ss'})
        if len(e.split(' ')) < MAX_LENGTH and len(f.split(' ')) < MAX_LENGTH \
                and e.startswith(ENG_PREFIXES):
            keys.append((e.strip(), f.strip()))
            raw.append((' '.join(cols[0].split()), ' '.join(cols[1].split())))
    here = os.path.dirname(os.path.abspath(__file__))
    stats = {'raw_lines': len(lines), 'subset': len(keys)}
    for name, idx in split(keys).items():
        path = os.path.join(here, name + '.tsv')
        with open(path, 'w', encoding='utf-8', newline='\n') as fh:
            for i in idx:
                e, f = raw[i]
                assert e and f and '\t' not in e + f
                fh.write(e + '\t' + f + '\n')
        stats[name] = {'pairs': len(idx),
                       'sha256': hashlib.sha256(open(path, 'rb').read()).hexdigest()}
    json.dump(stats, sys.stdout, indent=1)
    print()


if __name__ == '__main__':
    main()
