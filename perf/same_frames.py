#!/usr/bin/env python3
"""Whether FITS files (frames, model images, preprocs; .gz or plain) hold the same HDUs bit for
bit: the same extensions in the same order, each one's data bytes identical and its header
cards identical except those that name the build (DEPVERnn of kspecter) and the CHECKSUM that
covers them. For checks that a change leaves the output alone, between two builds:

    perf/same_frames.py before/frame.fits.gz after/frame.fits.gz [more pairs...]

Prints one line a pair and exits 1 if any pair differs."""
import sys

from astropy.io import fits

SKIP = ("CHECKSUM",)


def cards(hdu):
    # DEPNAMnn = 'kspecter' names the build's DEPVERnn; other packages' versions must match.
    h = hdu.header
    ours = {k.replace("DEPNAM", "DEPVER") for k in h if k.startswith("DEPNAM") and h[k] == "kspecter"}
    return [(c.keyword, str(c.value)) for c in h.cards if c.keyword not in SKIP and c.keyword not in ours]


def raw(hdu):
    """The data unit's bytes as stored (big-endian, before any scaling)."""
    if not hdu._data_size:
        return b""
    return hdu._get_raw_data(hdu._data_size, "ubyte", hdu._data_offset).tobytes()


def same(a, b):
    with fits.open(a, disable_image_compression=True) as fa, \
         fits.open(b, disable_image_compression=True) as fb:
        if len(fa) != len(fb):
            return f"{len(fa)} HDUs against {len(fb)}"
        for k, (ha, hb) in enumerate(zip(fa, fb)):
            name = ha.name or str(k)
            if cards(ha) != cards(hb):
                diff = [x for x, y in zip(cards(ha), cards(hb)) if x != y][:2]
                return f"HDU {name}: header differs {diff}"
            if raw(ha) != raw(hb):
                return f"HDU {name}: data differ"
    return None


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    bad = 0
    for a, b in zip(argv[0::2], argv[1::2]):
        why = same(a, b)
        print(f"{'SAME' if why is None else 'DIFFER'}  {a}  {b}" + ("" if why is None else f": {why}"))
        bad += why is not None
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
