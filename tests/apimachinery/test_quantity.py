"""samplecontroller.apimachinery.quantity against k8s.io/apimachinery's own cases
(pkg/api/resource/quantity_test.go at kubernetes/apimachinery eed236ce, July 2026: TestQuantityParse,
TestQuantityString, TestQuantityParseEmit, TestParseQuantity, TestJSONWhitespace), as data."""

from __future__ import annotations

import pytest

from samplecontroller.apimachinery.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    canonical,
    parse_quantity,
)

PARSE = [  # TestQuantityParse: text, mantissa, exponent, format
    ('0', 0, 0, DECIMAL_SI),
    ('0n', 0, 0, DECIMAL_SI),
    ('0u', 0, 0, DECIMAL_SI),
    ('0m', 0, 0, DECIMAL_SI),
    ('0Ki', 0, 0, BINARY_SI),
    ('0k', 0, 0, DECIMAL_SI),
    ('0Mi', 0, 0, BINARY_SI),
    ('0M', 0, 0, DECIMAL_SI),
    ('0Gi', 0, 0, BINARY_SI),
    ('0G', 0, 0, DECIMAL_SI),
    ('0Ti', 0, 0, BINARY_SI),
    ('0T', 0, 0, DECIMAL_SI),
    ('1', 1, 0, DECIMAL_SI),
    ('1Ki', 1024, 0, BINARY_SI),
    ('8Ki', 8192, 0, BINARY_SI),
    ('7Mi', 7340032, 0, BINARY_SI),
    ('6Gi', 6442450944, 0, BINARY_SI),
    ('5Ti', 5497558138880, 0, BINARY_SI),
    ('4Pi', 4503599627370496, 0, BINARY_SI),
    ('3Ei', 3458764513820540928, 0, BINARY_SI),
    ('10Ti', 10995116277760, 0, BINARY_SI),
    ('100Ti', 109951162777600, 0, BINARY_SI),
    ('5n', 5, -9, DECIMAL_SI),
    ('4u', 4, -6, DECIMAL_SI),
    ('3m', 3, -3, DECIMAL_SI),
    ('9', 9, 0, DECIMAL_SI),
    ('8k', 8, 3, DECIMAL_SI),
    ('50k', 5, 4, DECIMAL_SI),
    ('7M', 7, 6, DECIMAL_SI),
    ('6G', 6, 9, DECIMAL_SI),
    ('5T', 5, 12, DECIMAL_SI),
    ('40T', 4, 13, DECIMAL_SI),
    ('300T', 3, 14, DECIMAL_SI),
    ('2P', 2, 15, DECIMAL_SI),
    ('1E', 1, 18, DECIMAL_SI),
    ('1E-3', 1, -3, DECIMAL_EXPONENT),
    ('1e3', 1, 3, DECIMAL_EXPONENT),
    ('1E6', 1, 6, DECIMAL_EXPONENT),
    ('1e9', 1, 9, DECIMAL_EXPONENT),
    ('1E12', 1, 12, DECIMAL_EXPONENT),
    ('1e15', 1, 15, DECIMAL_EXPONENT),
    ('1E18', 1, 18, DECIMAL_EXPONENT),
    ('1e14', 1, 14, DECIMAL_EXPONENT),
    ('1e13', 1, 13, DECIMAL_EXPONENT),
    ('1e3', 1, 3, DECIMAL_EXPONENT),
    ('100.035k', 100035, 0, DECIMAL_SI),
    ('0.001', 1, -3, DECIMAL_SI),
    ('0.0005k', 5, -1, DECIMAL_SI),
    ('0.005', 5, -3, DECIMAL_SI),
    ('0.05', 5, -2, DECIMAL_SI),
    ('0.5', 5, -1, DECIMAL_SI),
    ('0.00050k', 5, -1, DECIMAL_SI),
    ('0.00500', 5, -3, DECIMAL_SI),
    ('0.05000', 5, -2, DECIMAL_SI),
    ('0.50000', 5, -1, DECIMAL_SI),
    ('0.5e0', 5, -1, DECIMAL_EXPONENT),
    ('0.5e-1', 5, -2, DECIMAL_EXPONENT),
    ('0.5e-2', 5, -3, DECIMAL_EXPONENT),
    ('0.5e0', 5, -1, DECIMAL_EXPONENT),
    ('10.035M', 10035, 3, DECIMAL_SI),
    ('1.2e3', 12, 2, DECIMAL_EXPONENT),
    ('1.3E+6', 13, 5, DECIMAL_EXPONENT),
    ('1.40e9', 14, 8, DECIMAL_EXPONENT),
    ('1.53E12', 153, 10, DECIMAL_EXPONENT),
    ('1.6e15', 16, 14, DECIMAL_EXPONENT),
    ('1.7E18', 17, 17, DECIMAL_EXPONENT),
    ('9.01', 901, -2, DECIMAL_SI),
    ('8.1k', 81, 2, DECIMAL_SI),
    ('7.123456M', 7123456, 0, DECIMAL_SI),
    ('6.987654321G', 6987654321, 0, DECIMAL_SI),
    ('5.444T', 5444, 9, DECIMAL_SI),
    ('40.1T', 401, 11, DECIMAL_SI),
    ('300.2T', 3002, 11, DECIMAL_SI),
    ('2.5P', 25, 14, DECIMAL_SI),
    ('1.01E', 101, 16, DECIMAL_SI),
    ('3.001n', 4, -9, DECIMAL_SI),
    ('1.1E-9', 2, -9, DECIMAL_EXPONENT),
    ('0.0000000001', 1, -9, DECIMAL_SI),
    ('0.0000000005', 1, -9, DECIMAL_SI),
    ('0.00000000050', 1, -9, DECIMAL_SI),
    ('0.5e-9', 1, -9, DECIMAL_EXPONENT),
    ('0.9n', 1, -9, DECIMAL_SI),
    ('0.00000012345', 124, -9, DECIMAL_SI),
    ('0.00000012354', 124, -9, DECIMAL_SI),
    ('12E', 12, 18, DECIMAL_SI),
    ('100.035Ki', 10243584, -2, BINARY_SI),
    ('0.5Mi', 524288, 0, BINARY_SI),
    ('0.05Gi', 536870912, -1, BINARY_SI),
    ('0.025Ti', 274877906944, -1, BINARY_SI),
    ('0.000000000001Ki', 2, -9, DECIMAL_SI),
    ('.001', 1, -3, DECIMAL_SI),
    ('.0001k', 100, -3, DECIMAL_SI),
    ('1.', 1, 0, DECIMAL_SI),
    ('1.G', 1, 9, DECIMAL_SI),
    ('9Ei', 2**63 - 1, 0, BINARY_SI),
    ('9223372036854775807Ki', 2**63 - 1, 0, BINARY_SI),
]

STRING = [  # TestQuantityString: mantissa, exponent, format, canonical, an alternate text
    (1073741824, 0, BINARY_SI, '1Gi', '1024Mi'),
    (314572800, 0, BINARY_SI, '300Mi', '307200Ki'),
    (6144, 0, BINARY_SI, '6Ki', ''),
    (1074815565824, 0, BINARY_SI, '1001Gi', '1025024Mi'),
    (1099511627776, 0, BINARY_SI, '1Ti', '1024Gi'),
    (5, 0, BINARY_SI, '5', '5000m'),
    (500, -3, BINARY_SI, '500m', '0.5'),
    (1, 9, DECIMAL_SI, '1G', '1000M'),
    (1000, 6, DECIMAL_SI, '1G', '0.001T'),
    (1000000, 3, DECIMAL_SI, '1G', ''),
    (1000000000, 0, DECIMAL_SI, '1G', ''),
    (1, -3, DECIMAL_SI, '1m', '1000u'),
    (80, -3, DECIMAL_SI, '80m', ''),
    (1080, -3, DECIMAL_SI, '1080m', '1.08'),
    (108, -2, DECIMAL_SI, '1080m', '1080000000n'),
    (10800, -4, DECIMAL_SI, '1080m', ''),
    (300, 6, DECIMAL_SI, '300M', ''),
    (1, 12, DECIMAL_SI, '1T', ''),
    (1234567, 6, DECIMAL_SI, '1234567M', ''),
    (1234567, -3, BINARY_SI, '1234567m', ''),
    (3, 3, DECIMAL_SI, '3k', ''),
    (1025, 0, BINARY_SI, '1025', ''),
    (0, 0, DECIMAL_SI, '0', ''),
    (0, 0, BINARY_SI, '0', ''),
    (1, 9, DECIMAL_EXPONENT, '1e9', '.001e12'),
    (1, -3, DECIMAL_EXPONENT, '1e-3', '0.001e0'),
    (1, -9, DECIMAL_EXPONENT, '1e-9', '1000e-12'),
    (80, -3, DECIMAL_EXPONENT, '80e-3', ''),
    (300, 6, DECIMAL_EXPONENT, '300e6', ''),
    (1, 12, DECIMAL_EXPONENT, '1e12', ''),
    (1, 3, DECIMAL_EXPONENT, '1e3', ''),
    (3, 3, DECIMAL_EXPONENT, '3e3', ''),
    (3, 3, DECIMAL_SI, '3k', ''),
    (0, 0, DECIMAL_EXPONENT, '0', '00'),
    (1, -9, DECIMAL_SI, '1n', ''),
    (80, -9, DECIMAL_SI, '80n', ''),
    (1080, -9, DECIMAL_SI, '1080n', ''),
    (108, -8, DECIMAL_SI, '1080n', ''),
    (10800, -10, DECIMAL_SI, '1080n', ''),
    (1, -6, DECIMAL_SI, '1u', ''),
    (80, -6, DECIMAL_SI, '80u', ''),
    (1080, -6, DECIMAL_SI, '1080u', ''),
]

EMIT = [  # TestQuantityParseEmit
    ('1Ki', '1Ki'),
    ('1Mi', '1Mi'),
    ('1Gi', '1Gi'),
    ('1024Mi', '1Gi'),
    ('1000M', '1G'),
    ('.001Ki', '1024m'),
    ('.000001Ki', '1024u'),
    ('.000000001Ki', '1024n'),
    ('.000000000001Ki', '2n'),
]

LARGE = [  # TestParseQuantity: text, canonical
    ('-999999999999999999', '-999999999999999999'),
    ('999999999999999999', '999999999999999999'),
    ('-999999999999999999.0', '-999999999999999999'),
    ('999999999999999999.0', '999999999999999999'),
    ('-999999999999999999.1', '-999999999999999999100m'),
    ('999999999999999999.1', '999999999999999999100m'),
    ('-9999999999999999999', '-9999999999999999999'),
    ('9999999999999999999', '9999999999999999999'),
    ('-1E', '-1E'),
    ('1E', '1E'),
    ('-1000000000000000000', '-1E'),
    ('1000000000000000000', '1E'),
    ('-9999999999999999999.0', '-9999999999999999999'),
    ('9999999999999999999.0', '9999999999999999999'),
    ('-1.0E', '-1E'),
    ('1.0E', '1E'),
    ('-1000000000000000000.0', '-1E'),
    ('1000000000000000000.0', '1E'),
    ('-9999999999999999999000m', '-9999999999999999999'),
    ('9999999999999999999000m', '9999999999999999999'),
    ('-9999999999999999999.1', '-9999999999999999999100m'),
    ('9999999999999999999.1', '9999999999999999999100m'),
    ('-1.0000000000000000001E', '-1000000000000000000100m'),
    ('1.0000000000000000001E', '1000000000000000000100m'),
    ('-1000000000000000000.1', '-1000000000000000000100m'),
    ('1000000000000000000.1', '1000000000000000000100m'),
    ('-1.000000000000000001E', '-1000000000000000001'),
    ('1.000000000000000001E', '1000000000000000001'),
    ('-1000000000000000001', '-1000000000000000001'),
    ('1000000000000000001', '1000000000000000001'),
    ('-10E', '-10E'),
    ('10E', '10E'),
    ('-10000000000000000000', '-10E'),
    ('10000000000000000000', '10E'),
    ('-10.0E', '-10E'),
    ('10.0E', '10E'),
    ('-10000000000000000000.0', '-10E'),
    ('10000000000000000000.0', '10E'),
    ('-10000000000000000000000m', '-10E'),
    ('10000000000000000000000m', '10E'),
    ('-10.0000000000000000001E', '-10000000000000000000100m'),
    ('10.0000000000000000001E', '10000000000000000000100m'),
    ('-10000000000000000000.1', '-10000000000000000000100m'),
    ('10000000000000000000.1', '10000000000000000000100m'),
    ('-10.000000000000000001E', '-10000000000000000001'),
    ('10.000000000000000001E', '10000000000000000001'),
    ('-10000000000000000001', '-10000000000000000001'),
    ('10000000000000000001', '10000000000000000001'),
    ('-9223372036854775809', '-9223372036854775809'),
    ('9223372036854775806', '9223372036854775806'),
    ('-9223372036854775809.0', '-9223372036854775809'),
    ('9223372036854775806.0', '9223372036854775806'),
    ('-9223372036854775809000m', '-9223372036854775809'),
    ('9223372036854775806000m', '9223372036854775806'),
    ('-9223372036854775809.1', '-9223372036854775809100m'),
    ('9223372036854775806.1', '9223372036854775806100m'),
    ('-9223372036854775808', '-9223372036854775808'),
    ('9223372036854775807', '9223372036854775807'),
    ('-9223372036854775808.0', '-9223372036854775808'),
    ('9223372036854775807.0', '9223372036854775807'),
    ('-9223372036854775808000m', '-9223372036854775808'),
    ('9223372036854775807000m', '9223372036854775807'),
    ('-9223372036854775808.1', '-9223372036854775808100m'),
    ('9223372036854775807.1', '9223372036854775807100m'),
    ('-9223372036854775807', '-9223372036854775807'),
    ('9223372036854775808', '9223372036854775808'),
    ('-9223372036854775807.0', '-9223372036854775807'),
    ('9223372036854775808.0', '9223372036854775808'),
    ('-9223372036854775807000m', '-9223372036854775807'),
    ('9223372036854775808000m', '9223372036854775808'),
    ('-9223372036854775807.1', '-9223372036854775807100m'),
    ('9223372036854775808.1', '9223372036854775808100m'),
]

INVALID = ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 ", ""]


def test_parse_table() -> None:
    for text, mantissa, exponent, fmt in PARSE:
        want = Quantity(mantissa, exponent, fmt)
        for sign, factor in (("", 1), ("+", 1), ("-", -1)):
            got = parse_quantity(sign + text)
            assert got.compare(Quantity(factor * mantissa, exponent, fmt)) == 0, (sign + text, got)
            assert got.format is want.format, sign + text


def test_invalid() -> None:
    for text in INVALID:
        with pytest.raises(QuantityError):
            parse_quantity(text)
    with pytest.raises(QuantityError, match="quantity's suffix"):
        parse_quantity("1ki")
    assert str(QuantityError(ERR_FORMAT_WRONG)) == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert ERR_SUFFIX == "unable to parse quantity's suffix"


def test_string_table() -> None:
    for mantissa, exponent, fmt, expect, alternate in STRING:
        assert Quantity(mantissa, exponent, fmt).string() == expect
        kept = parse_quantity(expect)
        assert kept.text == expect, f"did not keep the canonical text {expect}"
        if alternate:
            again = parse_quantity(alternate)
            assert again.text is None, alternate
            assert again.string() == expect, alternate
        if mantissa:
            assert Quantity(-mantissa, exponent, fmt).string() == "-" + expect


def test_parse_emit() -> None:
    for text, expect in EMIT:
        assert parse_quantity(text).string() == expect, text
        assert parse_quantity("-" + text).string() == "-" + expect, text


def test_large_values() -> None:
    for text, expect in LARGE:
        assert parse_quantity(text).string() == expect, text


def test_zero_forms_and_kept_text() -> None:
    for text in ("0", "0m", "00", "-0", "0Ki", "0.0", "0e3", ".", "-."):
        assert parse_quantity(text).string() == "0", text
    assert parse_quantity("0").text == "0"
    assert parse_quantity("+1").string() == "+1"  # canonical digits: Go keeps the text as sent
    assert parse_quantity("1E3").string() == "1E3"
    assert parse_quantity("1000E").string() == "1"  # 1e21: no DecimalSI suffix, Go writes none


def test_json_values() -> None:
    """UnmarshalJSON: strings are trimmed, numbers read from their text (TestJSONWhitespace)."""
    for value, expect in ((" 1", "1"), ("1 ", "1"), (1, "1"), (10, "10"), (-1, "-1"), (" -1", "-1"),
                          (0.5, "500m"), ("1.5Gi", "1536Mi"), ("1000m", "1"), (1.5, "1500m")):
        assert canonical(value) == expect, value
    bad: object
    for bad in (True, None, {}, [], "", "1 Gi", float("nan")):
        with pytest.raises(QuantityError):
            canonical(bad)


def test_compare_huge_exponents() -> None:
    big, small = parse_quantity("1e2000000000"), parse_quantity("1e-2000000000")
    assert big.compare(small) == 1 and small.compare(big) == -1
    assert small.string() == "1e-9"
    assert parse_quantity("1Gi").compare(parse_quantity("1024Mi")) == 0
    assert parse_quantity("-1").compare(parse_quantity("-2")) == 1


def test_thousands_of_digits() -> None:
    """Go's inf.Dec has no limit on digits; Python's int/str conversion has one (4300)."""
    assert canonical("1" * 5000) == "1" * 5000
    assert canonical("-" + "1" * 5000 + "m") == "-" + "1" * 5000 + "m"
    assert canonical("0." + "1" * 5000) == "111111112n"
    with pytest.raises(QuantityError, match="suffix"):
        canonical("1e" + "1" * 5000)
