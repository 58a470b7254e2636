"""MathParser: the allow-list, the size estimates and the bounds, without sympy."""

from __future__ import annotations

import json

import pytest

from tools.builtin.math import MathParser, ParseLimits
from tools.builtin.math.parser import allowed_syntax, to_text
from tools.errors import InvalidArgumentsError


@pytest.fixture
def parser() -> MathParser:
    return MathParser()


def test_builds_the_ir_for_allowed_syntax(parser: MathParser) -> None:
    assert parser.expression("12*(3+4)") == [
        "mul",
        ["int", "12"],
        ["add", ["int", "3"], ["int", "4"]],
    ]
    assert parser.expression("-x^2 % 3") == [
        "mod",
        ["neg", ["pow", ["sym", "x"], ["int", "2"]]],
        ["int", "3"],
    ]
    assert parser.expression("log(x, 2) + pi*e - 1.5") == [
        "sub",
        [
            "add",
            ["call", "log", [["sym", "x"], ["int", "2"]]],
            ["mul", ["const", "pi"], ["const", "e"]],
        ],
        ["float", "1.5"],
    ]


def test_the_ir_is_plain_json(parser: MathParser) -> None:
    ir = parser.expression("sin(theta_2)**2 + oo")
    assert json.loads(json.dumps(ir)) == ir


def test_equations_and_systems(parser: MathParser) -> None:
    assert parser.equations("x^2 = 4") == [["eq", ["pow", ["sym", "x"], ["int", "2"]], ["int", "4"]]]
    assert parser.equations("x == 1") == [["eq", ["sym", "x"], ["int", "1"]]]
    assert parser.equations("x + y = 3; x - y = 1;") == [
        ["eq", ["add", ["sym", "x"], ["sym", "y"]], ["int", "3"]],
        ["eq", ["sub", ["sym", "x"], ["sym", "y"]], ["int", "1"]],
    ]
    assert parser.equations("x - 2") == [["sub", ["sym", "x"], ["int", "2"]]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('id')", "Calling \"__import__('os').system\" is not allowed"),
        ("__import__('os')", "Calling '__import__' is not allowed"),
        ("().__class__.__bases__[0].__subclasses__()", "is not allowed"),
        ("x.real", "Attribute syntax is not allowed"),
        ("_secret + 1", "'_secret' is not a valid variable name"),
        ("'abc'", "The literal 'abc' is not a number"),
        ("True", "The literal 'True' is not a number"),
        ("[1, 2]", "List syntax is not allowed"),
        ("lambda: 1", "Lambda syntax is not allowed"),
        ("x < 2", "Compare syntax is not allowed"),
        ("2x", "Could not parse '2x'"),
        ("sin", "'sin' is a function; call it like sin(x)"),
        ("sin(x, y)", "sin() takes 1 argument(s), got 2"),
        ("log(x, base=2)", "An '=' is not allowed here"),
        ("x = 1", "An '=' is not allowed here"),
        ("", "The expression is empty"),
        ("   ", "The expression is empty"),
        ("a" * 33, "is not a valid variable name"),
        ("1e400", "Floating-point literals must be finite"),
    ],
)
def test_rejects_everything_else_with_what_is_allowed(parser: MathParser, text: str, message: str) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        parser.expression(text)
    assert message in caught.value.message
    assert allowed_syntax() in caught.value.message
    assert caught.value.error_type == "validation_error"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x < 2", "Inequalities are not supported"),
        ("x = 1 = 2", "Use one '=' per equation"),
        ("= 2", "One side of an equation is empty"),
        (";".join(["x = 1"] * 11), "Give between 1 and 10 equations"),
    ],
)
def test_rejects_bad_equations(parser: MathParser, text: str, message: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        parser.equations(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("9**9**9**9", "That power would have about 369,693,"),
        ("10**10**10", "That power would have about 10,000,000,000 digits"),
        ("factorial(10**9)", "factorial() of that size would have about 8,565,705,52"),
        ("gamma(10**6)", "gamma() of that size would have about 5,565,70"),
        ("binomial(10**6, 5)", "binomial() of that size"),
        ("2**100000", "That power would have about 30,102 digits"),
        ("2**-100000", "That power would have about 30,102 digits"),
        ("(9**9999) * (9**9999)", "That product would have about"),
        ("2**(10**400)", "astronomically large number of digits"),
    ],
)
def test_refuses_integer_work_that_is_too_big(parser: MathParser, text: str, message: str) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        parser.expression(text)
    assert message in caught.value.message
    assert "more than the 10000 this tool computes exactly" in caught.value.message


@pytest.mark.parametrize(
    "text",
    [
        "2**33000",
        "factorial(3000)",
        "9**9999",
        "x**(10**100)",  # symbolic: stays unevaluated
        "1**(10**100)",
        "(-1)**(10**100)",
        "0**(10**100)",
        "exp(10**9)",
        "2.5**300",
        "binomial(30000, 15000)",
    ],
)
def test_accepts_big_but_bounded_work(parser: MathParser, text: str) -> None:
    parser.expression(text)


def test_deep_nesting_is_a_clear_error_not_a_crash(parser: MathParser) -> None:
    with pytest.raises(InvalidArgumentsError, match="longer than 2000 characters"):
        parser.expression("(" * 10_000 + "1" + ")" * 10_000)
    roomy = MathParser(ParseLimits(max_length=100_000, max_nesting=100_000, max_depth=100_000))
    with pytest.raises(InvalidArgumentsError, match="Could not parse"):
        roomy.expression("(" * 10_000 + "1" + ")" * 10_000)  # Python's own limit, no crash
    with pytest.raises(InvalidArgumentsError, match="nested deeper than 50 levels"):
        parser.expression("(" * 51 + "1" + ")" * 51)
    parser.expression("(" * 50 + "1" + ")" * 50)


def test_long_operator_chains_are_bounded_by_depth() -> None:
    parser = MathParser(ParseLimits(max_length=10_000, max_depth=200))
    with pytest.raises(InvalidArgumentsError, match="nested deeper than 200"):
        parser.expression("+".join(["x"] * 300))
    assert parser.expression("+".join(["x"] * 150))[0] == "add"


def test_configurable_digit_limit() -> None:
    small = MathParser(ParseLimits(max_digits=100))
    with pytest.raises(InvalidArgumentsError, match="more than the 100"):
        small.expression("factorial(100)")
    small.expression("factorial(60)")


def test_variable_names(parser: MathParser) -> None:
    assert parser.variable(" theta_2 ") == "theta_2"
    for bad in ("2x", "_x", "sin", "pi", "x y", "", "a" * 33, "x;y"):
        with pytest.raises(InvalidArgumentsError, match="not a valid variable name"):
            parser.variable(bad)


def test_to_text_round_trips_readably(parser: MathParser) -> None:
    assert to_text(parser.expression("12*(3+4)")) == "12 * (3 + 4)"
    assert to_text(parser.equations("x^2 = -4")[0]) == "x ** 2 = -4"
    assert to_text(parser.expression("sqrt(x + 1)/2")) == "sqrt(x + 1) / 2"
