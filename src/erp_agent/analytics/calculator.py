"""A safe arithmetic evaluator with exact decimal money arithmetic.

The expression is parsed with ``ast`` (mode ``eval``) and walked against a whitelist: numbers,
``+ - * / // % **``, unary ``+ -``, parentheses, and calls to the functions in ``FUNCTIONS`` by
bare name. Nothing else — no names, attributes, subscripts, lambdas, comprehensions,
strings or keywords — is evaluated; Python's ``eval`` is never used.

Numbers are ``Decimal``: 0.1 + 0.2 is exactly 0.3, and money adds up to the cent. Decisions:

- Thousands separators and currency symbols are REJECTED, not cleaned: ``1,234`` could be a
  number or two arguments, and guessing would put a wrong figure in front of a finance user. The
  error says how to write the number instead.
- ``%`` is the remainder (its sign follows the dividend, as in ``Decimal``), not a percentage:
  write 15% of 200 as ``200 * 15 / 100``.
- ``round(x, n)`` rounds half away from zero (commercial rounding: 2.5 → 3), not Python's
  half-to-even.
- Bounds keep every call fast: expression length, node count, exponent size, result size and
  significant digits are all capped; exceeding one is a ``ToolInputError`` saying which.
"""

from __future__ import annotations

import ast
import decimal
import re
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal

from erp_agent.errors import ToolInputError

MAX_LENGTH = 500
MAX_NODES = 200
MAX_EXPONENT = 1000  # |y| in x ** y
MAX_MAGNITUDE = Decimal("1e30")  # |result| and |any intermediate value|
MAX_ARGS = 100
PRECISION = 34  # IEEE decimal128: every money figure up to 10^30 keeps its cents

_CONTEXT = decimal.Context(
    prec=PRECISION,
    rounding=ROUND_HALF_UP,
    Emax=999,
    Emin=-999,
    traps=[decimal.InvalidOperation, decimal.DivisionByZero, decimal.Overflow],
)
_CURRENCY = re.compile(r"[$€£¥₹₦₵₱₩₪₫฿]|\b(?:KES|USD|EUR|GBP|UGX|TZS|ZAR|NGN)\b", re.IGNORECASE)
_GROUPED = re.compile(r"\d,\d{3}(?!\d)")


class CalculatorError(ToolInputError):
    """The expression cannot be evaluated; the message says what to change."""


Number = Decimal
Func = Callable[..., Decimal]


def _round(x: Decimal, places: Decimal = Decimal(0)) -> Decimal:
    n = _int_arg(places, "round's places")
    if not -20 <= n <= 20:
        raise CalculatorError("round's places must be between -20 and 20")
    return x.quantize(Decimal(1).scaleb(-n), rounding=ROUND_HALF_UP)


def _int_arg(value: Decimal, what: str) -> int:
    if value != value.to_integral_value():
        raise CalculatorError(f"{what} must be a whole number, not {value}")
    return int(value)


def _sqrt(x: Decimal) -> Decimal:
    if x < 0:
        raise CalculatorError(f"sqrt of a negative number ({x}) is not a real number")
    return x.sqrt(_CONTEXT)


def _need(args: tuple[Decimal, ...], name: str) -> tuple[Decimal, ...]:
    if not args:
        raise CalculatorError(f"{name}() needs at least one number")
    return args


def _avg(*args: Decimal) -> Decimal:
    values = _need(args, "avg")
    return _CONTEXT.divide(sum(values, start=Decimal(0)), Decimal(len(values)))


FUNCTIONS: dict[str, tuple[Func, int, int]] = {
    # name: (function, min args, max args)
    "round": (_round, 1, 2),
    "abs": (lambda x: abs(x), 1, 1),
    "min": (lambda *a: min(_need(a, "min")), 1, MAX_ARGS),
    "max": (lambda *a: max(_need(a, "max")), 1, MAX_ARGS),
    "sum": (lambda *a: sum(a, start=Decimal(0)), 0, MAX_ARGS),
    "avg": (_avg, 1, MAX_ARGS),
    "sqrt": (_sqrt, 1, 1),
    "floor": (lambda x: x.to_integral_value(rounding=ROUND_FLOOR), 1, 1),
    "ceil": (lambda x: x.to_integral_value(rounding=ROUND_CEILING), 1, 1),
    "pow": (lambda x, y: _power(x, y), 2, 2),
}


def _power(base: Decimal, exponent: Decimal) -> Decimal:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculatorError(f"exponents are limited to ±{MAX_EXPONENT}")
    if base == 0 and exponent < 0:
        raise CalculatorError("zero cannot be raised to a negative power")
    if base < 0 and exponent != exponent.to_integral_value():
        raise CalculatorError("a negative number cannot be raised to a fractional power")
    return _CONTEXT.power(base, exponent)


def _check_size(value: Decimal) -> Decimal:
    if abs(value) > MAX_MAGNITUDE:
        raise CalculatorError(f"the result is too large (limit {MAX_MAGNITUDE:,.0f})")
    return value


_BINARY: dict[type[ast.operator], Callable[[Decimal, Decimal], Decimal]] = {
    ast.Add: _CONTEXT.add,
    ast.Sub: _CONTEXT.subtract,
    ast.Mult: _CONTEXT.multiply,
    ast.Div: _CONTEXT.divide,
    ast.FloorDiv: lambda a, b: _CONTEXT.divide_int(a, b),
    ast.Mod: _CONTEXT.remainder,
    ast.Pow: _power,
}


class _Evaluator:
    def eval(self, node: ast.AST) -> Decimal:
        if isinstance(node, ast.Expression):
            return self.eval(node.body)
        if isinstance(node, ast.Constant):
            return self._constant(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.eval(node.operand)
            return _CONTEXT.minus(value) if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.eval(node.left), self.eval(node.right)
            if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
                raise CalculatorError("division by zero")
            return _check_size(_BINARY[type(node.op)](left, right))
        if isinstance(node, ast.Call):
            return self._call(node)
        raise CalculatorError(_refusal(node))

    def _constant(self, value: object) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CalculatorError(f"only numbers are allowed, not {value!r}")
        # The literal's own digits, not its binary float: 0.1 stays exactly 0.1.
        return _check_size(Decimal(str(value)) if isinstance(value, float) else Decimal(value))

    def _call(self, node: ast.Call) -> Decimal:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise CalculatorError(
                "only these functions can be called: " + ", ".join(sorted(FUNCTIONS))
            )
        if node.keywords:
            raise CalculatorError(f"{node.func.id}() takes numbers only, no keyword arguments")
        func, low, high = FUNCTIONS[node.func.id]
        if not low <= len(node.args) <= high:
            raise CalculatorError(
                f"{node.func.id}() takes {low}"
                + (f" to {high}" if high != low else "")
                + f" argument(s), {len(node.args)} given"
            )
        args = [self.eval(arg) for arg in node.args]
        return _check_size(func(*args))


def _refusal(node: ast.AST) -> str:
    if isinstance(node, ast.Tuple):
        return (
            "commas are not allowed in numbers: write 1234.50, not 1,234.50 "
            "(commas only separate function arguments)"
        )
    if isinstance(node, ast.Name):
        return f"names such as {node.id!r} are not allowed: use numbers and " + ", ".join(
            sorted(FUNCTIONS)
        )
    if isinstance(node, ast.Attribute):
        return "attribute access (a.b) is not allowed"
    if isinstance(node, ast.Compare | ast.BoolOp):
        return "comparisons and logic are not allowed: this is a calculator"
    if isinstance(node, ast.BinOp):
        return "only + - * / // % ** are allowed"
    return f"{type(node).__name__} is not allowed: use numbers, + - * / // % ** and parentheses"


def _parse(expression: str) -> ast.Expression:
    if len(expression) > MAX_LENGTH:
        raise CalculatorError(f"the expression is longer than {MAX_LENGTH} characters")
    if not expression.strip():
        raise CalculatorError("the expression is empty")
    if _CURRENCY.search(expression):
        raise CalculatorError("remove currency symbols and codes: write 1200.50, not $1,200.50")
    if _GROUPED.search(expression):
        raise CalculatorError(
            "thousands separators are not allowed: write 1234567.89, not 1,234,567.89 "
            "(for two arguments put a space after the comma: max(1, 234))"
        )
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as error:
        raise CalculatorError(f"not a valid expression: {error.msg}") from None
    except (ValueError, MemoryError, RecursionError):
        raise CalculatorError("not a valid expression") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise CalculatorError(f"the expression is too complex ({nodes} parts; limit {MAX_NODES})")
    return tree


def evaluate(expression: str) -> Decimal:
    """The exact value of ``expression``; ``CalculatorError`` (a ToolInputError) if refused."""
    tree = _parse(expression)
    try:
        value = _Evaluator().eval(tree)
        return Decimal(0) if value == 0 else value.normalize(_CONTEXT)  # no "-0"
    except CalculatorError:
        raise
    except decimal.DivisionByZero:
        raise CalculatorError("division by zero") from None
    except decimal.Overflow:
        raise CalculatorError(f"the result is too large (limit {MAX_MAGNITUDE:,.0f})") from None
    except (decimal.InvalidOperation, ArithmeticError, RecursionError):
        raise CalculatorError("the expression has no numeric value") from None


def format_decimal(value: Decimal) -> str:
    """Plain notation (no exponent) — ``1E+3`` reads as ``1000``."""
    return f"{value:f}"
