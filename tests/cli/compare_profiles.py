#!/usr/bin/env python3
"""Compare two zoo-profile directories with measured times masked.

    compare_profiles.py DIR_A DIR_B

Every file must be in both directories. accuracy.csv, the accuracy estimators
and the output marker must be byte-identical; profile.csv and node_profile.csv
must be equal but for their time columns; latency_model.json (made of times)
must have the same structure and entries; report.json must be equal but for
times, what is computed from them (the latency model's errors, the calibrated
overheads) and the hashes of the files holding times. Exits 1 naming the first
difference, else prints what it compared.
"""
import csv
import io
import json
import os
import sys

TIME_COLUMNS = {"profile.csv": {"median_ms", "p90_ms"}, "node_profile.csv": {"ms", "ms_odd", "ms_even"}}
FILES_WITH_TIMES = {"profile.csv", "node_profile.csv", "latency_model.json"}
# report.json keys whose values are times or computed from them (at any depth).
REPORT_TIME_KEYS = {"seconds", "run_overhead_ms", "run_overhead_ms_calibrated_on_originals", "mae_ms", "mape",
                    "mape_plain_sum"}
MASK = "<time>"


def fail(message):
    print("compare_profiles: " + message, file=sys.stderr)
    sys.exit(1)


def masked_csv(path, columns):
    rows = list(csv.DictReader(io.StringIO(open(path).read())))
    for r in rows:
        for c in columns:
            if c in r and r[c] != "":
                r[c] = MASK
    return rows


def mask_numbers(value):
    if isinstance(value, dict):
        return {k: mask_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_numbers(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return MASK
    return value


def mask_report(value):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in REPORT_TIME_KEYS:
                out[k] = mask_numbers(v)
            elif k == "files_sha256":
                out[k] = {f: (MASK if f in FILES_WITH_TIMES else h) for f, h in v.items()}
            else:
                out[k] = mask_report(v)
        return out
    if isinstance(value, list):
        return [mask_report(v) for v in value]
    return value


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return path + "." + k
            d = first_difference(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return path + ".length"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else path


def main():
    if len(sys.argv) != 3:
        fail("usage: compare_profiles.py DIR_A DIR_B")
    a_dir, b_dir = sys.argv[1], sys.argv[2]
    names = sorted(os.listdir(a_dir))
    if names != sorted(os.listdir(b_dir)):
        fail("different files: %s vs %s" % (names, sorted(os.listdir(b_dir))))
    for name in names:
        a, b = os.path.join(a_dir, name), os.path.join(b_dir, name)
        if name in TIME_COLUMNS:
            x, y = masked_csv(a, TIME_COLUMNS[name]), masked_csv(b, TIME_COLUMNS[name])
            if len(x) != len(y):
                fail("%s: %d rows vs %d" % (name, len(x), len(y)))
            for i, (r, s) in enumerate(zip(x, y)):
                if r != s:
                    fail("%s: row %d differs beyond times: %s vs %s" % (name, i + 2, r, s))
        elif name == "latency_model.json":
            d = first_difference(mask_numbers(json.load(open(a))), mask_numbers(json.load(open(b))))
            if d:
                fail("%s: %s differs" % (name, d))
        elif name == "report.json":
            d = first_difference(mask_report(json.load(open(a))), mask_report(json.load(open(b))))
            if d:
                fail("%s: %s differs beyond times" % (name, d))
        elif open(a, "rb").read() != open(b, "rb").read():
            fail("%s differs" % name)
    print("compare_profiles: %d files equal with times masked: %s" % (len(names), ", ".join(names)))


if __name__ == "__main__":
    main()
