"""Draw the Plugin Index thumbnail: docs/plugin-index/thumbnail.png (square, <= 20 KB).

    .venv/bin/python docs/plugin-index/make_thumbnail.py

A ranked list (three bars, the best one highlighted) with an arrow lifting a memory to
the top: what the plugin does to recall. Drawn at 4x and scaled down for smooth edges,
then reduced to a small palette (flat colours: no gradient to band) so the PNG stays far
under the index's 20 KB limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

SIZE = 256
SCALE = 4  # supersampling
OUT = Path(__file__).resolve().parent / "thumbnail.png"

BACKGROUND = (24, 33, 50)  # slate
BAR = (148, 163, 184)
BEST = (52, 211, 153)  # the memory that answers the question
ARROW = (251, 191, 36)


def draw() -> Image.Image:
    side = SIZE * SCALE
    u = side / 64  # one unit of a 64-unit grid
    image = Image.new("RGB", (side, side), BACKGROUND)
    pixels = ImageDraw.Draw(image)
    # the square's rounded corners: outside them, transparent
    mask = Image.new("L", (side, side), 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, side - 1, side - 1], radius=12 * u, fill=255)

    # three ranked bars, the first (best) one highlighted, each led by its rank dot
    for row, (length, colour) in enumerate([(27, BEST), (21, BAR), (15, BAR)]):
        top = (17 + row * 12) * u
        pixels.ellipse([8 * u, top, 14 * u, top + 6 * u], fill=colour)
        pixels.rounded_rectangle([17 * u, top, (17 + length) * u, top + 6 * u], radius=3 * u, fill=colour)

    # the arrow: from the bottom row up to the top one, on the right
    x = 53 * u
    pixels.line([(x, 47 * u), (x, 23 * u)], fill=ARROW, width=round(3.2 * u))
    pixels.polygon([(x - 5 * u, 25 * u), (x + 5 * u, 25 * u), (x, 15 * u)], fill=ARROW)

    rgba = image.convert("RGBA")
    rgba.putalpha(mask)
    return rgba.resize((SIZE, SIZE), Image.LANCZOS)


def main(out: Path = OUT) -> Path:
    small = draw().quantize(colors=64, method=Image.Quantize.FASTOCTREE)
    small.save(out, format="PNG", optimize=True)
    return out


if __name__ == "__main__":
    path = main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(f"{path}: {path.stat().st_size} bytes")
