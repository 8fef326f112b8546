"""kmx_print's formatting: the printf subset docs/c-api.md gives, on raw 64-bit slots.

The thread passes the format's address and one 64-bit slot per conversion (RV64 passes
every variadic argument as one; ints arrive sign-extended). Supported: %d %i %u %x %X %p
%s %c %%, the l/ll/z (and h/hh) lengths, the flags '0' and '-', and a width.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

_SPEC = re.compile(r"%([-0]*)(\d*)(hh|h|ll|l|z|j|t)?([diuxXpsc%])")


MAX_WIDTH = 1000
SUPPORTED = "kmx_print knows %d %i %u %x %X %p %s %c %%, l/ll/z/h/hh, '0', '-' and a width"


class FormatError(ValueError):
    pass


def _as_signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def format_print(fmt: str, slots: Sequence[int], read_string: Callable[[int], str]) -> str:
    """FMT with its conversions filled from SLOTS; %s strings come from READ_STRING."""
    out = []
    position = 0
    next_slot = 0
    for match in _SPEC.finditer(fmt):
        if "%" in fmt[position : match.start()]:  # the thread took a slot for it too
            raise FormatError(f"unsupported conversion in {fmt!r}; {SUPPORTED}")
        out.append(fmt[position : match.start()])
        position = match.end()
        flags, width, length, conversion = match.groups()
        if conversion == "%":
            out.append("%")
            continue
        if next_slot >= len(slots):
            raise FormatError(f"the format has more conversions than its {len(slots)} arguments")
        raw = slots[next_slot]
        next_slot += 1
        bits = {"hh": 8, "h": 16, None: 32}.get(length, 64)
        if conversion in "di":
            text = str(_as_signed(raw, bits))
        elif conversion == "u":
            text = str(raw & ((1 << bits) - 1))
        elif conversion in "xX":
            text = format(raw & ((1 << bits) - 1), conversion)
        elif conversion == "p":
            text = f"{raw & 0xFFFF_FFFF_FFFF_FFFF:#x}"
        elif conversion == "c":
            text = chr(raw & 0xFF)
        else:  # s
            text = "(null)" if raw == 0 else read_string(raw)
        if width and int(width) > MAX_WIDTH:
            raise FormatError(f"width {width} in {fmt!r} is over {MAX_WIDTH}")
        if width:
            pad = "0" if "0" in flags and "-" not in flags and conversion not in "sc" else " "
            if "-" in flags:
                text = text.ljust(int(width))
            elif pad == "0" and text.startswith("-"):
                text = "-" + text[1:].rjust(int(width) - 1, "0")
            else:
                text = text.rjust(int(width), pad)
        out.append(text)
    if "%" in fmt[position:]:
        raise FormatError(f"unsupported conversion in {fmt!r}; {SUPPORTED}")
    out.append(fmt[position:])
    return "".join(out)
