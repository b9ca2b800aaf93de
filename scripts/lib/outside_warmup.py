#!/usr/bin/env python3
"""Filters out lines stamped inside an apiserver's warm-up span (see identity.sh).

Usage: outside_warmup.py SPANS_FILE [FIELD] < lines
SPANS_FILE: "START_MS END_MS" per line (epoch milliseconds); missing or empty: nothing filtered.
FIELD: the lines are JSON objects and FIELD holds their time; otherwise the line's first word is,
or "timestamp" for a line that is a JSON object (a JSON log line).
A line whose time cannot be read is kept (never hidden by a parse failure).
"""

import json
import sys
from datetime import datetime


def spans(path):
    try:
        with open(path) as f:
            return [tuple(int(x) for x in line.split()[:2]) for line in f if line.strip()]
    except (FileNotFoundError, IsADirectoryError, ValueError):
        return []


def epoch_ms(text):
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except (TypeError, ValueError):
        return None


def main():
    windows = spans(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] else []
    field = sys.argv[2] if len(sys.argv) > 2 else ""
    hidden = 0
    for line in sys.stdin:
        if field:
            try:
                stamp = json.loads(line).get(field)
            except (ValueError, AttributeError):
                stamp = None
        elif line.startswith("{"):
            # A JSON log line (`serve --log-format json`): its time is under "timestamp".
            try:
                stamp = json.loads(line).get("timestamp")
            except (ValueError, AttributeError):
                stamp = None
        else:
            stamp = line.split(" ", 1)[0]
        at = epoch_ms(stamp)
        if at is not None and any(start <= at <= end for start, end in windows):
            hidden += 1
            continue
        sys.stdout.write(line)
    if hidden:
        print(f"     ({hidden} refusal(s) while the apiserver warmed up after a restart, not counted)", file=sys.stderr)


if __name__ == "__main__":
    main()
