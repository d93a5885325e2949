"""Reading the validation sets' CSV files: a header row and data rows, with `#` lines anywhere
(the file's source and notes) kept apart."""

import csv


def read(path):
    """(comments, rows): the `#` lines without their `#` and surrounding spaces, in file order,
    and every other line read by csv.DictReader (a dict per row, by the header's names)."""
    comments, lines = [], []
    with open(path) as f:
        for line in f:
            (comments if line.startswith("#") else lines).append(line)
    return [c[1:].strip() for c in comments], list(csv.DictReader(lines))
