//! OpenKruise's resource calculator (`pkg/util/calculator`, v1.9.0): the expression language of a
//! SidecarSet's `resourcesPolicy`, e.g. `max(cpu*50%, 50m)`.
//!
//! `+ - * /`, parentheses, unary minus, `max(a, b)` and `min(a, b)` over two kinds of values:
//! numbers (`2`, `0.5`, `50%` = 0.5) and quantities (`50m`, `200Mi`, or a variable). The rules are
//! OpenKruise's, quirks included, so the same expression gives the same sidecar resources:
//!
//! * numbers are Go `float64`s; a quantity times or divided by a number goes through
//!   `float64(milli) * n`, truncated to an `int64` of thousandths, as upstream does. Everything
//!   between quantities (sums, differences, comparisons) is exact;
//! * a number meeting a quantity (`+ - max min`) becomes `n*1000` thousandths;
//! * a result keeps the format of its left quantity (`1Gi * 50%` prints `512Mi`);
//! * the lexer reads bytes: a NUL ends the input, a token that reads as a number but does not
//!   parse (`5x`, `1e`, `.`) is the number 0, as Go's ignored `ParseFloat` error leaves it;
//! * a semantic error (division by zero, an unknown variable…) is remembered and the last one
//!   wins, as upstream's single error slot; a syntax error reports it if there is one.
//!
//! Where Go would go on with a wrapped or undefined integer, this module refuses instead: a
//! quantity beyond `int64` thousandths or a sum beyond 38 digits is an error.

use std::collections::BTreeMap;

use super::{Format, Quantity};

/// A calculator value: a Go `float64` or a quantity.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Quantity(Quantity),
}

impl Value {
    fn quantity(&self) -> Quantity {
        match self {
            Value::Quantity(q) => q.clone(),
            Value::Number(n) => number_quantity(*n),
        }
    }
}

/// Why an expression has no value; the message is upstream's where upstream has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CalculatorError(pub String);

/// Evaluates `expr` with `variables` (names in lower case), as upstream's `Calculator.Parse`:
/// a negative result is an error.
pub fn evaluate(expr: &str, variables: &BTreeMap<String, Value>) -> Result<Value, CalculatorError> {
    let mut parser = Parser::new(expr.as_bytes(), variables);
    let parsed = parser.input();
    if let Some(error) = parser.last_error {
        return Err(CalculatorError(error));
    }
    let value = match parsed {
        Err(Syntax { line, col }) => {
            return Err(CalculatorError(format!(
                "parse error: syntax error at line {line}, col {col}"
            )));
        }
        Ok(Some(value)) => value,
        Ok(None) => return Err(CalculatorError("no result from parser".into())),
    };
    let negative = match &value {
        Value::Quantity(q) if q.is_negative() => Some(q.canonical()),
        Value::Number(n) if *n < 0.0 => Some(go_float(*n)),
        _ => None,
    };
    match negative {
        Some(shown) => Err(CalculatorError(format!(
            "calculation result is negative: {shown}"
        ))),
        None => Ok(value),
    }
}

/// Go's `int64(x)` on amd64: truncation, and the "integer indefinite" value out of range.
pub fn go_int64(x: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// `resource.NewMilliQuantity(int64(n*1000), DecimalSI)`: a number taken as a quantity.
pub fn number_quantity(n: f64) -> Quantity {
    Quantity::from_milli(go_int64(n * 1000.0), Format::DecimalSI)
}

/// Go's `%g` for a `float64`, for messages.
pub fn go_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return format!("{x}");
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

// ---------------------------------------------------------------------------------------------
// Lexer: upstream's, byte by byte.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Number(&'a [u8]),
    Quantity(&'a [u8]),
    Ident(&'a [u8]),
    Punct(u8),
    End,
}

/// Go's `unicode.IsSpace` on a byte taken as a rune.
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' | 0x85 | 0xA0)
}

/// Go's `unicode.IsLetter` on a byte taken as a rune (Latin-1).
fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic()
        || matches!(b, 0xAA | 0xB5 | 0xBA)
        || (b >= 0xC0 && b != 0xD7 && b != 0xF7)
}

fn is_identifier_byte(b: u8) -> bool {
    is_letter(b) || b.is_ascii_digit() || b == b'_'
}

struct Lexer<'a> {
    input: &'a [u8],
    pos: usize,
    line: usize,
    col: usize,
}

impl<'a> Lexer<'a> {
    /// Go's `next`: 0 at the end (and for a NUL byte, which therefore ends the input).
    fn next(&mut self) -> u8 {
        let Some(&b) = self.input.get(self.pos) else {
            return 0;
        };
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        b
    }

    fn peek(&self) -> u8 {
        self.input.get(self.pos).copied().unwrap_or(0)
    }

    fn back(&mut self) {
        self.pos -= 1;
        self.col -= 1;
    }

    fn read_number(&mut self) -> &'a [u8] {
        let start = self.pos;
        let (mut seen_dot, mut seen_e, mut seen_percent, mut expect_exponent_digit) =
            (false, false, false, false);
        loop {
            let b = self.peek();
            match b {
                0 => break,
                b'0'..=b'9' => expect_exponent_digit = false,
                b'.' if seen_dot || seen_e || seen_percent => break,
                b'.' => seen_dot = true,
                b'e' | b'E' if seen_e || seen_percent => break,
                b'e' | b'E' => {
                    seen_e = true;
                    expect_exponent_digit = true;
                }
                b'+' | b'-' if !expect_exponent_digit => break,
                b'+' | b'-' => expect_exponent_digit = false,
                b'%' if seen_percent => break,
                b'%' => seen_percent = true,
                _ if is_letter(b) && !expect_exponent_digit => {
                    while is_letter(self.peek()) {
                        self.next();
                    }
                    break;
                }
                _ => break,
            }
            self.next();
        }
        &self.input[start..self.pos]
    }

    fn read_identifier(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.peek() != 0 && is_identifier_byte(self.peek()) {
            self.next();
        }
        &self.input[start..self.pos]
    }

    fn lex(&mut self) -> Token<'a> {
        while self.peek() != 0 && is_space(self.peek()) {
            self.next();
        }
        let b = self.next();
        match b {
            0 => Token::End,
            b'+' | b'-' | b'*' | b'/' | b'(' | b')' | b',' => Token::Punct(b),
            b'.' | b'0'..=b'9' => {
                self.back();
                let text = self.read_number();
                if is_quantity(text) {
                    Token::Quantity(text)
                } else {
                    Token::Number(text)
                }
            }
            _ if is_letter(b) => {
                self.back();
                Token::Ident(self.read_identifier())
            }
            _ => Token::Punct(b),
        }
    }
}

/// Upstream's `isQuantity`: a numeric part followed by exactly one of the units it knows.
fn is_quantity(text: &[u8]) -> bool {
    let numeric = |b: &u8| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-');
    let Some(end) = text.iter().position(|b| !numeric(b)) else {
        return false;
    };
    const UNITS: [&[u8]; 11] = [
        b"m", b"k", b"M", b"G", b"T", b"P", b"Ki", b"Mi", b"Gi", b"Ti", b"Pi",
    ];
    end > 0 && UNITS.contains(&&text[end..])
}

/// Upstream's `parseNumber` with its error ignored: text that is no float is 0.
fn parse_number(text: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(text);
    match text.strip_suffix('%') {
        Some(percent) => percent.parse::<f64>().map_or(0.0, |n| n / 100.0),
        None => text.parse().unwrap_or(0.0),
    }
}

// ---------------------------------------------------------------------------------------------
// Parser: upstream's yacc grammar by recursive descent, its actions run in the same order.

/// A syntax error, where the lexer stood when it was found.
#[derive(Debug)]
struct Syntax {
    line: usize,
    col: usize,
}

/// A value, or `None` once an error made it undefined (the error is in `last_error`).
type Slot = Option<Value>;

struct Parser<'a, 'v> {
    lexer: Lexer<'a>,
    lookahead: Token<'a>,
    variables: &'v BTreeMap<String, Value>,
    /// Upstream's `lastError`: set by a failing action, overwritten by the next.
    last_error: Option<String>,
}

impl<'a, 'v> Parser<'a, 'v> {
    fn new(input: &'a [u8], variables: &'v BTreeMap<String, Value>) -> Self {
        let mut lexer = Lexer {
            input,
            pos: 0,
            line: 1,
            col: 1,
        };
        let lookahead = lexer.lex();
        Parser {
            lexer,
            lookahead,
            variables,
            last_error: None,
        }
    }

    fn advance(&mut self) {
        self.lookahead = self.lexer.lex();
    }

    fn syntax_error<T>(&self) -> Result<T, Syntax> {
        Err(Syntax {
            line: self.lexer.line,
            col: self.lexer.col,
        })
    }

    fn expect(&mut self, punct: u8) -> Result<(), Syntax> {
        if self.lookahead != Token::Punct(punct) {
            return self.syntax_error();
        }
        self.advance();
        Ok(())
    }

    fn fail(&mut self, message: impl Into<String>) -> Slot {
        self.last_error = Some(message.into());
        None
    }

    fn input(&mut self) -> Result<Slot, Syntax> {
        let value = self.expr()?;
        if self.lookahead != Token::End {
            return self.syntax_error();
        }
        Ok(value)
    }

    fn expr(&mut self) -> Result<Slot, Syntax> {
        self.left_associative(b"+-", Self::term)
    }

    fn term(&mut self) -> Result<Slot, Syntax> {
        self.left_associative(b"*/", Self::factor)
    }

    /// `operand (op operand)*` with `ops`, applied left to right.
    fn left_associative(
        &mut self,
        ops: &[u8],
        operand: fn(&mut Self) -> Result<Slot, Syntax>,
    ) -> Result<Slot, Syntax> {
        let mut left = operand(self)?;
        loop {
            let op = match self.lookahead {
                Token::Punct(op) if ops.contains(&op) => op,
                _ => return Ok(left),
            };
            self.advance();
            let right = operand(self)?;
            left = self.binary(op, left, right);
        }
    }

    fn factor(&mut self) -> Result<Slot, Syntax> {
        match self.lookahead {
            Token::Number(text) => {
                self.advance();
                Ok(Some(Value::Number(parse_number(text))))
            }
            Token::Quantity(text) => {
                self.advance();
                let text = String::from_utf8_lossy(text);
                Ok(match Quantity::parse(&text) {
                    Ok(q) => Some(Value::Quantity(q)),
                    Err(error) => self.fail(error.reason.to_string()),
                })
            }
            Token::Ident(name) => {
                self.advance();
                let name = String::from_utf8_lossy(name).into_owned();
                if self.lookahead == Token::Punct(b'(') {
                    return self.call(&name);
                }
                // Upstream looks the lowered name up and reports it lowered.
                let name = name.to_lowercase();
                Ok(match self.variables.get(&name) {
                    Some(value) => Some(value.clone()),
                    None => self.fail(format!("undefined variable: {name}")),
                })
            }
            Token::Punct(b'(') => {
                self.advance();
                let value = self.expr()?;
                self.expect(b')')?;
                Ok(value)
            }
            Token::Punct(b'-') => {
                self.advance();
                Ok(self.factor()?.map(|value| match value {
                    Value::Number(n) => Value::Number(-n),
                    Value::Quantity(q) => Value::Quantity(q.negated()),
                }))
            }
            _ => self.syntax_error(),
        }
    }

    /// `name(a)` or `name(a, b)`, the `(` being the lookahead.
    fn call(&mut self, name: &str) -> Result<Slot, Syntax> {
        self.advance();
        let first = self.expr()?;
        let mut args = vec![first];
        if self.lookahead == Token::Punct(b',') {
            self.advance();
            args.push(self.expr()?);
        }
        self.expect(b')')?;
        let lower = name.to_lowercase();
        let result = match lower.as_str() {
            "max" | "min" if args.len() != 2 => self.fail(format!(
                "{lower} function requires exactly 2 arguments, got {}",
                args.len()
            )),
            "max" | "min" => match (args.remove(0), args.remove(0)) {
                (Some(left), Some(right)) => Some(extreme(lower == "max", left, right)),
                _ => None,
            },
            _ => self.fail(format!("unknown function: {name}")),
        };
        if result.is_none() && self.last_error.is_none() {
            return Ok(self.fail("function call failed"));
        }
        Ok(result)
    }

    fn binary(&mut self, op: u8, left: Slot, right: Slot) -> Slot {
        let (Some(left), Some(right)) = (left, right) else {
            return None;
        };
        match arithmetic(op, left, right) {
            Ok(value) => Some(value),
            Err(message) => self.fail(message),
        }
    }
}

/// `+ - * /` as upstream computes them.
fn arithmetic(op: u8, left: Value, right: Value) -> Result<Value, String> {
    use Value::{Number, Quantity as Q};
    let milli = |q: &Quantity| {
        q.milli_value()
            .ok_or_else(|| format!("quantity {q} is too large to compute with"))
    };
    let overflow = || "quantity overflow: more than 38 digits".to_string();
    match (op, left, right) {
        (b'+', Number(a), Number(b)) => Ok(Number(a + b)),
        (b'-', Number(a), Number(b)) => Ok(Number(a - b)),
        (b'+', a, b) => a
            .quantity()
            .checked_add(&b.quantity())
            .map(Q)
            .ok_or_else(overflow),
        (b'-', a, b) => a
            .quantity()
            .checked_add(&b.quantity().negated())
            .map(Q)
            .ok_or_else(overflow),
        (b'*', Q(_), Q(_)) => Err("multiplication of two quantities".into()),
        (b'*', Q(q), Number(n)) | (b'*', Number(n), Q(q)) => Ok(Q(Quantity::from_milli(
            go_int64(milli(&q)? as f64 * n),
            q.format(),
        ))),
        (b'*', Number(a), Number(b)) => Ok(Number(a * b)),
        (_, _, Q(_)) => Err("division by quantity".into()),
        // The pattern matches -0 too, as Go's `== 0` does.
        (_, _, Number(0.0)) => Err("division by zero".into()),
        (_, Q(q), Number(b)) => Ok(Q(Quantity::from_milli(
            go_int64(milli(&q)? as f64 / b),
            q.format(),
        ))),
        (_, Number(a), Number(b)) => Ok(Number(a / b)),
    }
}

/// Upstream's `max`/`min`: ties keep the left value; a number meeting a quantity becomes one.
fn extreme(max: bool, left: Value, right: Value) -> Value {
    use std::cmp::Ordering::{Greater, Less};
    if let (Value::Number(a), Value::Number(b)) = (&left, &right) {
        let keep_left = if max { a >= b } else { a <= b };
        return if keep_left { left } else { right };
    }
    let (left, right) = (left.quantity(), right.quantity());
    let keep_left = left.cmp_value(&right) != if max { Less } else { Greater };
    Value::Quantity(if keep_left { left } else { right })
}

#[cfg(test)]
mod tests;
