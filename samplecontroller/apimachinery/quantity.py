"""Kubernetes resource quantities (``500m``, ``1536Mi``, ``1e3``), as k8s.io/apimachinery's
``pkg/api/resource`` parses and writes them.

``parse_quantity`` reads a quantity as ``ParseQuantity`` does (the same scanner, the same
suffixes, the same errors); ``Quantity.string`` is its canonical form, the one kube-apiserver
writes back for every ``resource.Quantity`` field of a built-in kind (``String``/
``CanonicalizeBytes``):

- the value is exact; one with more than nine decimal places is rounded up (away from zero) to
  the nano scale (``0.1n`` is ``1n``), a binary one is capped at 2^63-1 (``9Ei``);
- it is written in the format of its suffix (``DecimalSI`` ``k``/``M``/``m``..., ``BinarySI``
  ``Ki``/``Mi``..., ``DecimalExponent`` ``e3``) with the largest exponent that keeps an integer
  mantissa: ``1.5Gi`` is ``1536Mi``, ``0.5`` is ``500m``, ``1000m`` is ``1``; a binary value
  below 1024 or not an integer is written as ``DecimalSI`` (``0.5Ki`` is ``512``);
- a text that already is canonical is kept as it was sent (Go keeps the parsed string when the
  int64 fast path finds no trailing zeros to move: ``+1`` stays ``+1``).

Values are kept as an integer mantissa and a base-10 exponent, never as floats.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from fractions import Fraction

__all__ = ["BINARY_SI", "DECIMAL_EXPONENT", "DECIMAL_SI", "ERR_FORMAT_WRONG", "ERR_NUMERIC", "ERR_SUFFIX",
           "Format", "Quantity", "QuantityError", "canonical", "parse_quantity"]

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """A text that is not a quantity; the message is apimachinery's error text."""


class Format(Enum):
    """The three ways a quantity is written (``resource.Format``); kept from the parsed suffix."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
    BINARY_SI = "BinarySI"  # 12Mi
    DECIMAL_SI = "DecimalSI"  # 12M


DECIMAL_EXPONENT, BINARY_SI, DECIMAL_SI = Format.DECIMAL_EXPONENT, Format.BINARY_SI, Format.DECIMAL_SI

_INT64_MAX = 2**63 - 1
_MAX_INT64_FACTORS = 18
_NANO = -9
_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NAMES = {exponent: name for name, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_NAMES = {exponent: name for name, exponent in _BINARY_SUFFIXES.items()}


_TEXT_LIMIT = 10**4000


def _text(value: int) -> str:
    """``str(value)`` without Python's limit on the digits of an int converted to text (Go has
    none: a quantity of 5,000 digits is valid)."""
    return str(value) if -_TEXT_LIMIT < value < _TEXT_LIMIT else str(Decimal(value))


def _integer(digits: str) -> int:
    """``int(digits)`` (decimal digits only) without Python's limit on the digits converted."""
    return int(digits) if len(digits) < 4000 else int(Decimal(digits))


def _int32(value: int) -> int:
    """``value`` wrapped as Go's int32 conversion wraps it."""
    return (value + 2**31) % 2**32 - 2**31


@dataclass(frozen=True)
class Quantity:
    """The exact value ``mantissa * 10**exponent`` in ``format``; ``text`` is the string Go keeps
    from the parse when it already was canonical (``q.s``), else None."""

    mantissa: int
    exponent: int
    format: Format
    text: str | None = None

    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self.mantissa > 0) - (self.mantissa < 0)

    def is_zero(self) -> bool:
        """Whether the value is zero (``0``, ``0Ki``, ``-0.0``)."""
        return self.mantissa == 0

    def value(self) -> Fraction:
        """The exact value (mind huge exponents: ``1e2000000000`` is a valid quantity)."""
        if self.exponent >= 0:
            return Fraction(self.mantissa * 10**self.exponent)
        return Fraction(self.mantissa, 10**-self.exponent)

    def compare(self, other: Quantity) -> int:
        """-1, 0 or 1 as ``Quantity.Cmp``."""
        if self.sign() != other.sign() or self.sign() == 0:
            return (self.sign() > other.sign()) - (self.sign() < other.sign())
        size = len(_text(abs(self.mantissa))) + self.exponent  # decimal magnitudes first: exponents
        other_size = len(_text(abs(other.mantissa))) + other.exponent  # may be huge (1e2000000000)
        if size != other_size:
            return self.sign() if size > other_size else -self.sign()
        low = min(self.exponent, other.exponent)
        a: int = self.mantissa * 10 ** (self.exponent - low)
        b: int = other.mantissa * 10 ** (other.exponent - low)
        return (a > b) - (a < b)

    def string(self) -> str:
        """The canonical form (``Quantity.String``): the kept text if any, else ``canonicalize``."""
        return self.text if self.text else self.canonicalize()

    def canonicalize(self) -> str:
        """``CanonicalizeBytes``: number and suffix in the largest exponent of the format."""
        if self.mantissa == 0:
            return "0"
        fmt = self.format
        rounded = 0
        if fmt is BINARY_SI:
            if self._within_1024():
                fmt = DECIMAL_SI  # avoids rounding, and confusion
            else:
                rounded, exact = self._round_to_integer()
                if not exact:
                    fmt = DECIMAL_SI  # don't lose precision
        if fmt is BINARY_SI:
            number, times = _remove_factors(rounded, 1024)
            return _text(number) + _BINARY_NAMES.get(times * 10, "")
        number, times = _remove_factors(self.mantissa, 10)
        exponent = self.exponent + times
        shift = exponent % 3  # down to a multiple of three (Go's switch on exponent % 3)
        number, exponent = number * 10**shift, exponent - shift
        if fmt is DECIMAL_SI:
            return _text(number) + _DECIMAL_NAMES.get(exponent, "")  # none past E: Go writes no suffix
        return _text(number) + (f"e{exponent}" if exponent else "")

    def _within_1024(self) -> bool:
        if self.exponent >= 4:
            return False
        return -1024 < self.value() < 1024

    def _round_to_integer(self) -> tuple[int, bool]:
        """``AsScale(0)``: rounded away from zero to an integer, and whether that was exact."""
        if self.exponent >= 0:
            return self.mantissa * 10**self.exponent, True
        whole, rest = divmod(abs(self.mantissa), 10**-self.exponent)
        if rest:
            whole += 1
        return (whole if self.mantissa > 0 else -whole), rest == 0

    def __str__(self) -> str:
        return self.string()


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    """``value`` without its factors of ``base``, and how many there were (sign kept)."""
    times = 0
    result = abs(value)
    while result >= base and result % base == 0:
        result //= base
        times += 1
    return (result if value >= 0 else -result), times


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: (positive, value, num, denom, suffix); QuantityError when the
    suffix is followed by something that is not an exponent."""
    positive = True
    pos, end = 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    if pos >= end:
        return positive, text, num or "0", "", ""
    num = num or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """``quantitySuffixer.interpret``: (base, exponent, format); QuantityError if unknown."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body and len(body) <= 19 and all(c in _DIGITS for c in body):
            parsed = int(digits)
            if -(2**63) <= parsed <= _INT64_MAX:  # strconv.ParseInt(..., 64), then int32()
                return 10, _int32(parsed), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def parse_quantity(text: str) -> Quantity:
    """``resource.ParseQuantity``; QuantityError (with apimachinery's message) if ``text`` is
    not a quantity. Whitespace is not trimmed (``UnmarshalJSON`` trims before calling it)."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, "0")
    positive, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)

    precision = 0
    scale = 0
    multiplier = 1
    if fmt is BINARY_SI:
        if exponent >= 0 and not denom:  # only positive binary numbers take the fast path
            multiplier = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale = _int32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            parsed = int(shifted)
            if parsed > _INT64_MAX:
                raise QuantityError(ERR_NUMERIC)
            result = parsed * multiplier
            if result <= _INT64_MAX:  # int64Multiply did not overflow
                if not positive:
                    result = -result
                keep = (exponent % 10 == 0 and parsed & 0x07 != 0) if fmt is BINARY_SI else (
                    scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0")
                return Quantity(result, scale, fmt, text if keep else None)

    # the inf.Dec path: exact decimal arithmetic, then rounding and capping
    digits = value.lstrip("+-")
    whole, _, fraction = digits.partition(".")
    if not (whole + fraction) or not all(c in _DIGITS for c in whole + fraction):
        raise QuantityError(ERR_NUMERIC)
    mantissa = _integer(whole + fraction)
    dec_exponent = -len(fraction)
    if base == 10:
        dec_exponent = -_int32(len(fraction) - exponent)  # inf.Dec's int32 scale
    else:
        mantissa <<= exponent
    if mantissa and dec_exponent < _NANO:  # round up (away from zero) to the nano scale
        drop = _NANO - dec_exponent
        if drop > len(_text(mantissa)):
            mantissa = 1
        else:
            whole_part, rest = divmod(mantissa, 10**drop)
            mantissa = whole_part + (1 if rest else 0)
        dec_exponent = _NANO
    if fmt is BINARY_SI:
        if Fraction(mantissa, 10**-dec_exponent) > _INT64_MAX:  # binary: dec_exponent <= 0
            mantissa, dec_exponent = _INT64_MAX, 0
        if mantissa and dec_exponent < 0 and mantissa < 10**-dec_exponent:
            fmt = DECIMAL_SI  # a binary value between 0 and 1: written in DecimalSI
    if not positive:
        mantissa = -mantissa
    return Quantity(mantissa, dec_exponent, fmt)


@functools.lru_cache(maxsize=4096)
def _canonical_text(text: str) -> str:
    """The canonical form of a JSON string's quantity, remembered: objects repeat a few values
    (``100m``, ``128Mi``), and the API server canonicalizes each on every write."""
    return parse_quantity(text.strip()).string()


def canonical(value: object) -> str:
    """The canonical text of a JSON value decoded as a Quantity (``UnmarshalJSON`` then
    ``MarshalJSON``): a string (trimmed of whitespace) or a number. QuantityError otherwise.

    A JSON number reaches us as a Python int or float, not as its text: an int is exact; a float
    is read from its shortest repr (``0.5``, ``1e+20``), so ``1e3`` sent as a number comes back
    as ``1k`` where Go, which sees the text ``1e3``, keeps the DecimalExponent ``1e3``."""
    if type(value) is str:
        return _canonical_text(value)
    if type(value) is int:
        return _canonical_text(_text(value))
    if type(value) is float and value == value and value not in (float("inf"), float("-inf")):
        return parse_quantity(repr(value)).string()
    raise QuantityError(ERR_FORMAT_WRONG)
