//! Kubernetes `resource.Quantity`: parsing, and the exact string Go writes back.
//!
//! The SidecarSet hash covers container resources, and Go re-encodes every quantity when it
//! marshals a container, so a quantity must come out as the same bytes Go's
//! `Quantity.MarshalJSON` produces (k8s.io/apimachinery as vendored with k8s.io/api v0.32):
//!
//! * Go keeps the *input* string when it is already in canonical form (its fast path caches it),
//!   so `"1E3"`, `"+1"` or `"01"` come back unchanged;
//! * otherwise the value is printed in the input's format (binary SI, decimal SI or decimal
//!   exponent) with the largest suffix that keeps an integer mantissa: `"0.1"` → `"100m"`,
//!   `"1024Mi"` → `"1Gi"`, `"1.5Gi"` → `"1536Mi"`;
//! * values are rounded up (away from zero) to nano precision, binary values are capped at
//!   2^63-1, and a binary value that is not a whole number, or is below 1024, prints as decimal SI.
//!
//! One Go quirk is reproduced on purpose: a decimal SI value whose canonical exponent is above 18
//! (more than `E`) loses its suffix, `"1000E"` → `"1"` (fixed upstream in kubernetes#140459, after
//! the apimachinery OpenKruise vendors). Hash compatibility needs the old bytes.
//!
//! Limits: mantissas are held in a `u128`, so more than 38 significant digits are refused with
//! [`QuantityErrorReason::Range`] where Go would still parse them.

use std::cmp::Ordering;
use std::fmt;

/// Why a string is not a quantity. The messages are Go's where Go has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuantityErrorReason {
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    #[error("unable to parse quantity's suffix")]
    Suffix,
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    #[error("more than 38 significant digits or an exponent out of range")]
    Range,
}

/// A string that does not parse as a Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {value:?}: {reason}")]
pub struct QuantityError {
    pub value: String,
    pub reason: QuantityErrorReason,
}

/// The notation a quantity is written back in (Go's `resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `12e6`
    DecimalExponent,
    /// `12Mi` (powers of 1024)
    BinarySI,
    /// `12M` (powers of 1000)
    DecimalSI,
}

/// `±mantissa × 10^scale`; not normalised, because Go's decisions depend on the scale as parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Amount {
    negative: bool,
    mantissa: u128,
    scale: i64,
}

impl Amount {
    fn new(negative: bool, mantissa: u128, scale: i64) -> Self {
        Amount {
            negative: negative && mantissa != 0,
            mantissa,
            scale,
        }
    }

    fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Rounds to `scale` (a coarser one), away from zero; `true` when nothing was lost.
    fn round_up_to_scale(self, scale: i64) -> (Amount, bool) {
        if self.scale >= scale {
            return (self, true);
        }
        let shift = scale - self.scale;
        let (quotient, lost) = match pow10(shift) {
            Some(divisor) => (
                self.mantissa / divisor,
                !self.mantissa.is_multiple_of(divisor),
            ),
            // The divisor exceeds any mantissa: everything is fraction.
            None => (0, self.mantissa != 0),
        };
        let mantissa = if lost { quotient + 1 } else { quotient };
        (Amount::new(self.negative, mantissa, scale), !lost)
    }

    /// Compares `|self|` with the integer `n`.
    fn abs_cmp(&self, n: u128) -> Ordering {
        if self.scale >= 0 {
            match pow10(self.scale).and_then(|p| self.mantissa.checked_mul(p)) {
                Some(value) => value.cmp(&n),
                None => Ordering::Greater,
            }
        } else {
            match pow10(-self.scale).and_then(|p| n.checked_mul(p)) {
                Some(scaled) => self.mantissa.cmp(&scaled),
                None => Ordering::Less,
            }
        }
    }

    /// The value as an integer, when it is one and fits.
    fn as_integer(&self) -> Option<u128> {
        if self.scale >= 0 {
            pow10(self.scale).and_then(|p| self.mantissa.checked_mul(p))
        } else {
            let divisor = pow10(-self.scale)?;
            self.mantissa
                .is_multiple_of(divisor)
                .then_some(self.mantissa / divisor)
        }
    }

    /// Same value written with the fewest digits, for value comparisons.
    fn normalized(&self) -> Amount {
        if self.mantissa == 0 {
            return Amount::new(false, 0, 0);
        }
        let (mut mantissa, mut scale) = (self.mantissa, self.scale);
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            scale += 1;
        }
        Amount::new(self.negative, mantissa, scale)
    }

    fn cmp_value(&self, other: &Amount) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let (a, b) = (self, other);
        let sign = |x: &Amount| match (x.is_zero(), x.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        let by_sign = sign(a).cmp(&sign(b));
        if by_sign != Ordering::Equal || a.is_zero() {
            return by_sign;
        }
        // Same sign, both non-zero: bring both mantissas to the smaller scale, in integers (no
        // normalising needed). A side whose widened mantissa overflows `u128` is the larger: the
        // other mantissa fits.
        let magnitude = match a.scale.cmp(&b.scale) {
            Ordering::Equal => a.mantissa.cmp(&b.mantissa),
            Ordering::Greater => a
                .scale
                .checked_sub(b.scale)
                .and_then(|shift| widened(a.mantissa, shift))
                .map_or(Ordering::Greater, |widened| widened.cmp(&b.mantissa)),
            Ordering::Less => b
                .scale
                .checked_sub(a.scale)
                .and_then(|shift| widened(b.mantissa, shift))
                .map_or(Ordering::Less, |widened| a.mantissa.cmp(&widened)),
        };
        if a.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// Go's `AsCanonicalBytes`: digits with all factors of ten moved into an exponent that is
    /// then lowered to a multiple of three.
    fn canonical_base10(&self) -> (String, i64) {
        let normalized = self.normalized();
        let padding = normalized.scale.rem_euclid(3);
        // Appending zeros as text cannot overflow, unlike multiplying the mantissa.
        let zeros = "0".repeat(usize::try_from(padding).unwrap_or(0));
        (
            format!("{}{}{}", sign(self.negative), normalized.mantissa, zeros),
            normalized.scale - padding,
        )
    }
}

fn sign(negative: bool) -> &'static str {
    if negative { "-" } else { "" }
}

/// `mantissa × 10^shift`, unless it overflows.
fn widened(mantissa: u128, shift: i64) -> Option<u128> {
    pow10(shift).and_then(|p| mantissa.checked_mul(p))
}

fn pow10(exponent: i64) -> Option<u128> {
    u32::try_from(exponent)
        .ok()
        .and_then(|e| 10u128.checked_pow(e))
}

/// Scale Go rounds every parsed quantity up to (nano).
const NANO: i64 = -9;
/// Scale Kubernetes defaulting rounds resource lists up to (milli).
const MILLI: i64 = -3;
/// Go caps binary quantities here (`maxAllowed`).
const MAX_BINARY: u128 = i64::MAX as u128;
/// Go's `maxInt64Factors`: decimal digits an int64 always holds.
const MAX_INT64_FACTORS: i64 = 18;

/// A parsed Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    amount: Amount,
    format: Format,
    /// Go's fast path caches the input when it is already canonical, and marshals that string.
    cached: Option<String>,
}

impl Quantity {
    /// Zero, as `"0"` parses (what a missing quantity counts as).
    pub const ZERO: Quantity = Quantity {
        amount: Amount {
            negative: false,
            mantissa: 0,
            scale: 0,
        },
        format: Format::DecimalSI,
        cached: None,
    };

    /// Go's `resource.ParseQuantity` (no whitespace trimming; see [`canonicalize`] for that).
    pub fn parse(input: &str) -> Result<Quantity, QuantityError> {
        parse_quantity(input).map_err(|reason| QuantityError {
            value: input.to_string(),
            reason,
        })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn is_zero(&self) -> bool {
        self.amount.is_zero()
    }

    /// Whether both quantities denote the same number (formats and spelling aside).
    pub fn same_value(&self, other: &Quantity) -> bool {
        self.amount.normalized() == other.amount.normalized()
    }

    /// Orders by the numbers denoted, as Go's `Quantity.Cmp`.
    pub fn cmp_value(&self, other: &Quantity) -> std::cmp::Ordering {
        self.amount.cmp_value(&other.amount)
    }

    /// Go's `RoundUp(resource.Milli)`: rounds away from zero to three decimals, as Kubernetes
    /// defaulting does for container resources. A value already that coarse keeps its string.
    pub fn round_up_milli(&mut self) {
        if self.amount.scale >= MILLI {
            return;
        }
        self.amount = self.amount.round_up_to_scale(MILLI).0;
        self.cached = None;
    }

    /// Go's `NewMilliQuantity` (and `SetMilli` on a quantity of `format`): `milli` thousandths.
    pub fn from_milli(milli: i64, format: Format) -> Quantity {
        Quantity {
            amount: Amount::new(milli < 0, milli.unsigned_abs().into(), MILLI),
            format,
            cached: None,
        }
    }

    /// Go's `NewQuantity`: a whole number.
    pub fn from_int(value: i64, format: Format) -> Quantity {
        Quantity {
            amount: Amount::new(value < 0, value.unsigned_abs().into(), 0),
            format,
            cached: None,
        }
    }

    pub fn is_negative(&self) -> bool {
        self.amount.negative && !self.amount.is_zero()
    }

    /// Go's `Add`, exactly: the sum keeps this quantity's format, or takes `other`'s when this one
    /// is zero. `None` only when the sum needs more than 38 digits.
    pub fn checked_add(&self, other: &Quantity) -> Option<Quantity> {
        let (a, b) = (self.amount, other.amount);
        let scale = a.scale.min(b.scale);
        let widen = |x: Amount| widened(x.mantissa, x.scale.checked_sub(scale)?);
        let (ma, mb) = (widen(a)?, widen(b)?);
        let amount = if a.negative == b.negative {
            Amount::new(a.negative, ma.checked_add(mb)?, scale)
        } else if ma >= mb {
            Amount::new(a.negative, ma - mb, scale)
        } else {
            Amount::new(b.negative, mb - ma, scale)
        };
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        Some(Quantity {
            amount,
            format,
            cached: None,
        })
    }

    /// Go's `Neg`: the same format, the opposite sign.
    pub fn negated(&self) -> Quantity {
        let a = self.amount;
        Quantity {
            amount: Amount::new(!a.negative, a.mantissa, a.scale),
            format: self.format,
            cached: None,
        }
    }

    /// Go's `MilliValue`: thousandths, rounded away from zero; `None` beyond `int64`.
    pub fn milli_value(&self) -> Option<i64> {
        let (rounded, _) = self.amount.round_up_to_scale(MILLI);
        let magnitude = widened(rounded.mantissa, rounded.scale - MILLI)?;
        let magnitude = i128::try_from(magnitude).ok()?;
        let signed = if rounded.negative {
            -magnitude
        } else {
            magnitude
        };
        i64::try_from(signed).ok()
    }

    /// The string Go's `MarshalJSON` writes (without the quotes).
    pub fn canonical(&self) -> String {
        match &self.cached {
            Some(input) => input.clone(),
            None => self.computed_canonical(),
        }
    }

    /// Go's `CanonicalizeBytes`.
    fn computed_canonical(&self) -> String {
        if self.amount.is_zero() {
            return "0".to_string();
        }
        // Binary SI only from 1024 up: smaller magnitudes read better (and exactly) as decimal.
        if self.format == Format::BinarySI && self.amount.abs_cmp(1024) != Ordering::Less {
            let (rounded, exact) = self.amount.round_up_to_scale(0);
            if let (true, Some(mut value)) = (exact, rounded.as_integer()) {
                let mut power = 0;
                while value >= 1024 && value.is_multiple_of(1024) {
                    value /= 1024;
                    power += 1;
                }
                return format!(
                    "{}{}{}",
                    sign(self.amount.negative),
                    value,
                    binary_suffix(power)
                );
            }
            // Not a whole number: Go shows it as decimal SI rather than lose precision.
        }
        let format = match self.format {
            Format::BinarySI => Format::DecimalSI,
            other => other,
        };
        let (digits, exponent) = self.amount.canonical_base10();
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            _ => decimal_suffix(exponent).to_string(),
        };
        digits + &suffix
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

/// Decimal SI suffix for a power of ten. Go finds none above `E` and then writes no suffix at
/// all (the `"1000E"` → `"1"` quirk described in the module docs).
fn decimal_suffix(exponent: i64) -> &'static str {
    match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => "",
    }
}

/// Binary SI suffix for a power of 1024.
fn binary_suffix(power: u32) -> &'static str {
    match power {
        1 => "Ki",
        2 => "Mi",
        3 => "Gi",
        4 => "Ti",
        5 => "Pi",
        6 => "Ei",
        _ => "",
    }
}

/// The pieces Go's `parseQuantityString` scans out of a quantity.
struct Scanned<'a> {
    positive: bool,
    /// Sign and number, e.g. `-01.5`.
    value: &'a str,
    /// Integer digits without leading zeros; `"0"` when there are none.
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

/// Go's `parseQuantityString`, step for step (it accepts `"."`, `"+"` and `"1.m"`, for instance).
fn scan(input: &str) -> Result<Scanned<'_>, QuantityErrorReason> {
    let bytes = input.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned {
            positive,
            value: "0",
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok(Scanned {
            positive,
            value: input,
            num: &input[num_start..],
            denom: "",
            suffix: "",
        });
    }
    let num = match &input[num_start..pos] {
        "" => "0",
        digits => digits,
    };
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos >= end {
            return Ok(Scanned {
                positive,
                value: input,
                num,
                denom: &input[denom_start..],
                suffix: "",
            });
        }
        denom = &input[denom_start..pos];
    }
    let value = &input[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityErrorReason::Format);
    }
    Ok(Scanned {
        positive,
        value,
        num,
        denom,
        suffix: &input[suffix_start..],
    })
}

/// Base (10 or 2), exponent and format a suffix stands for.
fn interpret_suffix(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |exponent| Some((10, exponent, Format::DecimalSI));
    let binary = |exponent| Some((2, exponent, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ if suffix.len() > 1 && (suffix.starts_with('e') || suffix.starts_with('E')) => {
            let exponent: i64 = suffix[1..].parse().ok()?;
            // Go narrows with int32(...), wrapping; keep that.
            Some((10, exponent as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

fn parse_quantity(input: &str) -> Result<Quantity, QuantityErrorReason> {
    if input.is_empty() {
        return Err(QuantityErrorReason::Format);
    }
    if input == "0" {
        return Ok(Quantity {
            amount: Amount::new(false, 0, 0),
            format: Format::DecimalSI,
            cached: Some(input.to_string()),
        });
    }
    let scanned = scan(input)?;
    let (base, exponent, format) =
        interpret_suffix(scanned.suffix).ok_or(QuantityErrorReason::Suffix)?;
    if let Some(quantity) = parse_fast(input, &scanned, exponent, format) {
        return Ok(quantity);
    }
    parse_exact(&scanned, base, exponent, format)
}

/// Go's int64 fast path. `None` when Go would fall back to its arbitrary-precision path.
fn parse_fast(input: &str, scanned: &Scanned, exponent: i32, format: Format) -> Option<Quantity> {
    let (num, denom) = (scanned.num, scanned.denom);
    let digits = (num.len() + denom.len()) as i64;
    let (precision, mut scale, multiplier) = match format {
        Format::DecimalExponent | Format::DecimalSI => {
            (MAX_INT64_FACTORS - digits, i64::from(exponent), 1i64)
        }
        Format::BinarySI if exponent >= 0 && denom.is_empty() => {
            let exponent = i64::from(exponent);
            // Go's rough "decimal digits left" estimate for binary suffixes.
            let precision = 15 - num.len() as i64 - exponent * 3 / 10 - 1;
            (
                precision,
                0,
                1i64.checked_shl(u32::try_from(exponent).ok()?)?,
            )
        }
        Format::BinarySI => return None,
    };
    if precision < 0 {
        return None;
    }
    scale -= denom.len() as i64;
    if scale < NANO {
        return None;
    }
    let shifted = format!("{num}{denom}");
    let value: i64 = shifted.parse().ok()?;
    let result = value.checked_mul(multiplier)?;
    let canonical_already = match format {
        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    Some(Quantity {
        amount: Amount::new(!scanned.positive, result.unsigned_abs().into(), scale),
        format,
        cached: canonical_already.then(|| input.to_string()),
    })
}

/// Go's arbitrary-precision path (inf.Dec), within 38 significant digits.
fn parse_exact(
    scanned: &Scanned,
    base: u32,
    exponent: i32,
    mut format: Format,
) -> Result<Quantity, QuantityErrorReason> {
    // inf.Dec refuses a number without any digit (".e-10").
    if !scanned.value.bytes().any(|b| b.is_ascii_digit()) {
        return Err(QuantityErrorReason::Numeric);
    }
    let digits = format!("{}{}", scanned.num, scanned.denom);
    let significant = digits.trim_start_matches('0');
    if significant.len() > 38 {
        return Err(QuantityErrorReason::Range);
    }
    let mut mantissa: u128 = if significant.is_empty() {
        0
    } else {
        significant
            .parse()
            .map_err(|_| QuantityErrorReason::Numeric)?
    };
    let fraction_digits = scanned.denom.len() as i64;
    let mut amount = if base == 10 {
        Amount::new(
            !scanned.positive,
            mantissa,
            i64::from(exponent) - fraction_digits,
        )
    } else {
        let factor = 1u128 << u32::try_from(exponent).map_err(|_| QuantityErrorReason::Range)?;
        match mantissa.checked_mul(factor) {
            Some(product) => mantissa = product,
            // Over 3.4e38 with at most 19 fraction digits is far above the binary cap.
            None if fraction_digits <= 19 => mantissa = MAX_BINARY + 1,
            None => return Err(QuantityErrorReason::Range),
        }
        Amount::new(!scanned.positive, mantissa, -fraction_digits)
    };
    if !amount.is_zero() && amount.scale < NANO {
        // Go rounds tiny values up so that asking for some resource never yields none.
        amount = amount.round_up_to_scale(NANO).0;
    }
    if format == Format::BinarySI {
        if amount.abs_cmp(MAX_BINARY) == Ordering::Greater {
            amount = Amount::new(amount.negative, MAX_BINARY, 0);
        }
        if !amount.is_zero() && amount.abs_cmp(1) == Ordering::Less {
            format = Format::DecimalSI;
        }
    }
    if i32::try_from(amount.scale).is_err() {
        return Err(QuantityErrorReason::Range);
    }
    Ok(Quantity {
        amount,
        format,
        cached: None,
    })
}

/// The string Go writes for a quantity decoded from JSON string `input` (surrounding whitespace
/// is trimmed, as Go's `UnmarshalJSON` does).
pub fn canonicalize(input: &str) -> Result<String, QuantityError> {
    Quantity::parse(input.trim()).map(|q| q.canonical())
}

/// [`canonicalize`] after Kubernetes' resource-list defaulting (round up to milli precision):
/// `"100u"` → `"1m"`, `"1.0001m"` → `"2m"`, `"1000m"` → `"1"`.
pub fn round_up_milli_canonical(input: &str) -> Result<String, QuantityError> {
    let mut quantity = Quantity::parse(input.trim())?;
    quantity.round_up_milli();
    Ok(quantity.canonical())
}

pub mod calculator;

#[cfg(test)]
mod tests;
