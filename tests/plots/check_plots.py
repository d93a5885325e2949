#!/usr/bin/env python3
"""Renders every SVG plot phaze writes to PNG (rsvg-convert) and checks that nothing is drawn
outside its canvas: each SVG is rendered on a canvas enlarged by a transparent border, and every
pixel of that border must stay transparent. A plot whose label runs off its canvas (issue 24: the
winner's label and "tpuv4" ran off throughput-vs-area.svg, the schedule title was cut) fails.

The plots come from a small search whose model and preset names are long on purpose, plus
`phaze schedule --svg`. Usage: check_plots.py --phaze BUILD/phaze --source SRC [--keep DIR]."""
import argparse
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

BORDER = 40  # px of transparent border around the canvas


def decode_png(data):
    """(width, height, rows of RGBA bytes) of an 8-bit RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, colour, interlace) != (8, 6, 0):
                raise ValueError(f"expected 8-bit RGBA non-interlaced, got {depth=} {colour=}")
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride, bpp = width * 4, 4
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def check(svg_path, png_dir):
    """Problems of one SVG: content outside the canvas, a missing viewBox or legend."""
    text = svg_path.read_text()
    m = re.search(r'<svg[^>]*width="([\d.]+)" height="([\d.]+)" viewBox="([-\d.]+) ([-\d.]+) '
                  r'([\d.]+) ([\d.]+)"', text)
    if not m:
        return [f"{svg_path.name}: no sized root element with a viewBox"]
    w, h, x0, y0 = (float(m.group(i)) for i in (1, 2, 3, 4))
    padded = text.replace(
        m.group(0),
        m.group(0).replace(f'width="{m.group(1)}"', f'width="{w + 2 * BORDER:g}"')
        .replace(f'height="{m.group(2)}"', f'height="{h + 2 * BORDER:g}"')
        .replace(f'viewBox="{m.group(3)} {m.group(4)} {m.group(5)} {m.group(6)}"',
                 f'viewBox="{x0 - BORDER:g} {y0 - BORDER:g} {w + 2 * BORDER:g} {h + 2 * BORDER:g}"'),
        1)
    # The white background covers exactly the canvas; drop it so the border test sees content only
    # where it overflows, and render the canvas itself too for the eye.
    src = png_dir / (svg_path.stem + ".padded.svg")
    src.write_text(padded)
    png = png_dir / (svg_path.stem + ".padded.png")
    subprocess.run(["rsvg-convert", "-o", str(png), str(src)], check=True)
    subprocess.run(["rsvg-convert", "-o", str(png_dir / (svg_path.stem + ".png")), str(svg_path)],
                   check=True)
    width, height, rows = decode_png(png.read_bytes())
    inner = (BORDER - 1, BORDER - 1, width - BORDER + 1, height - BORDER + 1)  # ±1 px antialias
    outside = []
    for y, row in enumerate(rows):
        for x in range(width):
            if inner[0] <= x < inner[2] and inner[1] <= y < inner[3]:
                continue
            if row[4 * x + 3] != 0:
                outside.append((x - BORDER, y - BORDER))
    problems = []
    if outside:
        xs = [p[0] for p in outside]
        ys = [p[1] for p in outside]
        problems.append(f"{svg_path.name}: {len(outside)} pixels drawn outside the "
                        f"{w:g}×{h:g} canvas (x {min(xs)}..{max(xs)}, y {min(ys)}..{max(ys)})")
    if "fill=\"#" in text and "<rect" in text and text.count("<text") < 3:
        problems.append(f"{svg_path.name}: colours but hardly any labels")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phaze", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--keep", help="keep the SVGs and PNG renders in this directory")
    args = ap.parse_args()
    if shutil.which("rsvg-convert") is None:
        print("rsvg-convert not found: install librsvg2-bin (share/scripts/setup.sh does)")
        return 1
    src = pathlib.Path(args.source)
    work = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="phaze-plots-"))
    work.mkdir(parents=True, exist_ok=True)
    tiny = (src / "workloads/tiny-gpt.yaml").read_text()
    long_name = "tiny-gpt-with-a-deliberately-long-model-name-that-labels-must-fit"
    (work / "model.yaml").write_text(re.sub(r"^name: .*$", f"name: {long_name}", tiny, flags=re.M))
    (work / "space.yaml").write_text(
        "name: tiny\nnum_tc: [8, 4]\nnum_vc: [2, 1]\npe_x: [128, 64]\npe_y: [128, 64]\n"
        "glb_mib: [128, 64]\narea_budget: {preset: tpuv4}\nmin_area_fraction: 0.1\n"
        "min_area_fraction_single_core: 0.1\n")
    (work / "run.yaml").write_text(
        "models:\n  - file: model.yaml\n    expert: [2, 4, 1]\n"
        f"  - file: {src}/workloads/tiny-gpt.yaml\n"
        "arch: {space: space.yaml, presets: [tpuv4, spotlight-gpt2]}\n"
        "cluster: {num_accelerators: 16}\n"
        "training: {global_batch: 64, micro_batches: [1, 2], tensor_parallel_widths: [1, 2],\n"
        "           hbm_gib: [16, 32], recompute: [none, full]}\n"
        "search: {hysteresis_level: 2, bucket_width_mm2: 10}\n"
        "output: {directory: out}\n")
    run = subprocess.run([args.phaze, "search", "--config", str(work / "run.yaml")], cwd=work,
                         capture_output=True, text=True)
    if run.returncode != 0:
        print("phaze search failed:\n" + run.stderr)
        return 1
    out = work / "out"
    svgs = sorted(out.glob("*.svg"))
    expected = {"throughput-vs-area.svg", "pipeline.svg", "memory.svg", "schedule.svg"}
    problems = [f"missing {name}" for name in sorted(expected - {p.name for p in svgs})]
    png_dir = work / "png"
    png_dir.mkdir(exist_ok=True)
    for svg in svgs:
        problems += check(svg, png_dir)
    for p in problems:
        print("FAIL", p)
    kept = args.keep or problems
    print(f"{len(svgs)} plots rendered, {len(problems)} problems" +
          (f" (renders in {png_dir})" if kept else ""))
    if not kept:
        shutil.rmtree(work)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
