use super::*;
use proptest::prelude::*;

fn canon(input: &str) -> String {
    canonicalize(input).unwrap()
}

#[test]
fn examples_from_the_brief() {
    for (input, expected) in [
        ("0.1", "100m"),
        ("1000m", "1"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("1e3", "1e3"),
        ("0.5", "500m"),
    ] {
        assert_eq!(canon(input), expected, "input {input}");
    }
}

#[test]
fn decimal_si() {
    for (input, expected) in [
        ("0", "0"),
        ("0m", "0"),
        ("0Ki", "0"),
        ("-0", "0"),
        ("000", "0"),
        ("1", "1"),
        ("100m", "100m"),
        ("1500m", "1500m"),
        ("1.5", "1500m"),
        ("1.5m", "1500u"),
        ("0.1m", "100u"),
        ("0.0001", "100u"),
        ("0.001", "1m"),
        ("1000", "1k"),
        ("1200", "1200"),
        ("12000", "12k"),
        ("1.5k", "1500"),
        ("100k", "100k"),
        ("1000k", "1M"),
        ("1000000u", "1"),
        ("1001u", "1001u"),
        ("1.0001m", "1000100n"),
        ("-1.5", "-1500m"),
        ("-100m", "-100m"),
        ("5G", "5G"),
        ("2T", "2T"),
        ("3P", "3P"),
        ("1E", "1E"),
        ("1.5E", "1500P"),
        ("123456789012345678", "123456789012345678"),
        ("1234567890123456789", "1234567890123456789"),
        ("12345678901234567890000", "12345678901234567890k"),
        ("0.0000000001", "1n"),
        ("1n", "1n"),
    ] {
        assert_eq!(canon(input), expected, "input {input}");
    }
}

#[test]
fn binary_si() {
    for (input, expected) in [
        ("1Ki", "1Ki"),
        ("8Ki", "8Ki"),
        ("1024Ki", "1Mi"),
        ("1536Ki", "1536Ki"),
        ("2048Ki", "2Mi"),
        ("5Gi", "5Gi"),
        ("1000Mi", "1000Mi"),
        ("0.5Gi", "512Mi"),
        ("1.5Ki", "1536"),
        ("0.5Ki", "512"),
        ("0.0001Ki", "102400u"),
        ("-1Ki", "-1Ki"),
        ("-1024Mi", "-1Gi"),
        ("7Ei", "7Ei"),
        ("8Ei", "9223372036854775807"),
        ("1.3Ki", "1331200m"),
        ("1.1Ki", "1126400m"),
    ] {
        assert_eq!(canon(input), expected, "input {input}");
    }
}

#[test]
fn decimal_exponent() {
    for (input, expected) in [
        ("1e3", "1e3"),
        ("1e4", "10e3"),
        ("12e6", "12e6"),
        ("1e-3", "1e-3"),
        ("1e0", "1e0"),
        ("1e-10", "1e-9"),
        ("1e30", "1e30"),
        ("1000e3", "1e6"),
    ] {
        assert_eq!(canon(input), expected, "input {input}");
    }
}

#[test]
fn go_keeps_canonical_input_verbatim() {
    for input in ["1E3", "+1", "01", "007m", "1e+3", "1.m", "+1Ki", "1E-3"] {
        assert_eq!(canon(input), input);
    }
    assert_eq!(canon(" 100m "), "100m");
}

#[test]
fn go_drops_decimal_suffix_above_exa() {
    assert_eq!(canon("1000E"), "1");
    assert_eq!(canon("5000E"), "5");
}

#[test]
fn go_accepts_odd_but_numeric_forms() {
    assert_eq!(canon("."), "0");
    assert_eq!(canon("+"), "0");
    assert_eq!(canon("Ki"), "0");
    assert_eq!(canon(".5"), "500m");
}

#[test]
fn rejects_malformed_values_and_names_them() {
    for (input, reason) in [
        ("", QuantityErrorReason::Format),
        ("abc", QuantityErrorReason::Format),
        ("1KiB", QuantityErrorReason::Format),
        ("1.5.5", QuantityErrorReason::Format),
        ("1e", QuantityErrorReason::Suffix),
        ("1K", QuantityErrorReason::Suffix),
        ("1ee3", QuantityErrorReason::Suffix),
        ("1m3", QuantityErrorReason::Suffix),
        (".e-10", QuantityErrorReason::Numeric),
    ] {
        let err = canonicalize(input).unwrap_err();
        assert_eq!(err.reason, reason, "input {input:?}");
        assert_eq!(err.value, input);
        assert!(err.to_string().contains(&format!("{input:?}")));
    }
}

#[test]
fn rounds_up_to_milli() {
    for (input, expected) in [
        ("1.0001m", "2m"),
        ("100u", "1m"),
        ("1001u", "2m"),
        ("1n", "1m"),
        ("-1n", "-1m"),
        ("1000m", "1"),
        ("100m", "100m"),
        ("1.5", "1500m"),
        ("1Gi", "1Gi"),
        ("1E3", "1E3"),
        ("0", "0"),
        ("0.0001Ki", "103m"),
    ] {
        assert_eq!(
            round_up_milli_canonical(input).unwrap(),
            expected,
            "input {input}"
        );
    }
}

/// Quantity strings within the range where Go's output is value-preserving.
fn quantity_string() -> impl Strategy<Value = String> {
    let sign = prop::sample::select(vec!["", "-", "+"]);
    // At least one digit: Go refuses e.g. ".e-12" (no digits on its exact path).
    let integer = "[0-9]{1,6}";
    let fraction = prop::option::of("[0-9]{0,4}");
    let suffix = prop::sample::select(vec![
        "", "n", "u", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "e3", "e-3", "E6", "e0",
        "e-9", "e12", "e-12",
    ]);
    (sign, integer, fraction, suffix).prop_map(|(sign, integer, fraction, suffix)| {
        let number = match fraction {
            Some(f) => format!("{integer}.{f}"),
            None => integer,
        };
        format!("{sign}{number}{suffix}")
    })
}

proptest! {
    #[test]
    fn canonical_form_is_stable_and_keeps_the_value(input in quantity_string()) {
        let parsed = Quantity::parse(&input).unwrap();
        let canonical = parsed.canonical();
        let reparsed = Quantity::parse(&canonical).unwrap();
        prop_assert_eq!(reparsed.canonical(), canonical.clone());
        prop_assert!(reparsed.same_value(&parsed), "{} -> {}", input, canonical);
    }

    #[test]
    fn canonicalize_is_idempotent_on_any_string(input in "[-+0-9.eEinumkKMGTP]{1,12}") {
        if let Ok(canonical) = canonicalize(&input) {
            prop_assert_eq!(canonicalize(&canonical).unwrap(), canonical);
        }
    }

    #[test]
    fn milli_rounding_never_lowers_the_magnitude(input in quantity_string()) {
        let parsed = Quantity::parse(&input).unwrap();
        let rounded = Quantity::parse(&round_up_milli_canonical(&input).unwrap()).unwrap();
        let (a, b) = (parsed.amount.normalized(), rounded.amount.normalized());
        prop_assert_eq!(a.negative, b.negative);
        let scale = a.scale.min(b.scale);
        let widen = |x: Amount| x.mantissa * pow10(x.scale - scale).unwrap();
        prop_assert!(widen(b) >= widen(a));
        prop_assert!(rounded.amount.round_up_to_scale(MILLI).1);
    }
}

#[test]
fn quantities_compare_by_value() {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let cmp = |a: &str, b: &str| {
        Quantity::parse(a)
            .unwrap()
            .cmp_value(&Quantity::parse(b).unwrap())
    };
    assert_eq!(cmp("1Gi", "1073741824"), Equal);
    assert_eq!(cmp("1G", "1Gi"), Less);
    assert_eq!(cmp("2Gi", "1Gi"), Greater);
    assert_eq!(cmp("1500m", "1.5"), Equal);
    assert_eq!(cmp("1.5", "2"), Less);
    assert_eq!(cmp("0", "0Gi"), Equal);
    assert_eq!(cmp("-1", "0"), Less);
    assert_eq!(cmp("-2", "-1"), Less);
    assert_eq!(cmp("1e3", "999"), Greater);
    assert_eq!(cmp("100Mi", "1Gi"), Less);
    assert_eq!(cmp("10", "9.99"), Greater);
    assert_eq!(cmp("123", "1.24e2"), Less);
}

/// The comparison as it was first written, by the decimal digits of the normalised mantissas
/// (the place of the leading digit, then the digits padded to one width): the reference the
/// integer comparison is checked against.
fn cmp_by_digits(a: &Amount, b: &Amount) -> Ordering {
    let (a, b) = (a.normalized(), b.normalized());
    let sign = |x: &Amount| match (x.is_zero(), x.negative) {
        (true, _) => 0,
        (false, true) => -1,
        (false, false) => 1,
    };
    let by_sign = sign(&a).cmp(&sign(&b));
    if by_sign != Ordering::Equal || a.is_zero() {
        return by_sign;
    }
    let (digits_a, digits_b) = (a.mantissa.to_string(), b.mantissa.to_string());
    let lead = |digits: &str, scale: i64| digits.len() as i64 + scale;
    let magnitude = lead(&digits_a, a.scale)
        .cmp(&lead(&digits_b, b.scale))
        .then_with(|| {
            let width = digits_a.len().max(digits_b.len());
            format!("{digits_a:0<width$}").cmp(&format!("{digits_b:0<width$}"))
        });
    if a.negative {
        magnitude.reverse()
    } else {
        magnitude
    }
}

/// Amounts over the whole mantissa range: small ones, ones with many trailing zeros, any `u128`,
/// at scales from far below to far above the mantissa's digits (and at the ends of `i32`).
fn amount() -> impl Strategy<Value = Amount> {
    let mantissa = prop_oneof![
        0u128..2_000,
        (1u128..100_000, 0u32..39).prop_map(|(m, zeros)| m.saturating_mul(10u128.pow(zeros))),
        any::<u128>(),
        (0u128..1_000).prop_map(|below| u128::MAX - below),
    ];
    let scale = prop_oneof![
        -12i64..12,
        -80i64..80,
        prop::sample::select(vec![i64::from(i32::MIN), i64::from(i32::MAX)]),
    ];
    (any::<bool>(), mantissa, scale).prop_map(|(negative, m, s)| Amount::new(negative, m, s))
}

/// `amount` and the same value written with `shift` more zeros in the mantissa, when that fits.
fn same_value_pair() -> impl Strategy<Value = (Amount, Amount)> {
    (amount(), 0u32..39).prop_map(|(a, shift)| {
        let b = a.mantissa.checked_mul(10u128.pow(shift)).map_or(a, |m| {
            Amount::new(a.negative, m, a.scale - i64::from(shift))
        });
        (a, b)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn integer_comparison_agrees_with_the_digit_comparison(a in amount(), b in amount()) {
        prop_assert_eq!(a.cmp_value(&b), cmp_by_digits(&a, &b), "{:?} {:?}", a, b);
        prop_assert_eq!(b.cmp_value(&a), cmp_by_digits(&b, &a), "{:?} {:?}", b, a);
    }

    #[test]
    fn one_value_in_two_spellings_compares_equal((a, b) in same_value_pair()) {
        prop_assert_eq!(a.cmp_value(&b), Ordering::Equal, "{:?} {:?}", a, b);
        prop_assert_eq!(cmp_by_digits(&a, &b), Ordering::Equal);
    }

    #[test]
    fn parsed_quantities_compare_as_before(a in quantity_string(), b in quantity_string()) {
        let (a, b) = (Quantity::parse(&a).unwrap(), Quantity::parse(&b).unwrap());
        prop_assert_eq!(a.cmp_value(&b), cmp_by_digits(&a.amount, &b.amount));
    }
}

#[test]
fn zero_is_what_0_parses_to() {
    let parsed = Quantity::parse("0").unwrap();
    assert_eq!(Quantity::ZERO.amount, parsed.amount);
    assert_eq!(Quantity::ZERO.format(), parsed.format());
    assert_eq!(Quantity::ZERO.canonical(), parsed.canonical());
}

#[test]
fn arithmetic_as_go() {
    let q = |s: &str| Quantity::parse(s).unwrap();
    // MilliValue rounds away from zero.
    assert_eq!(q("1n").milli_value(), Some(1));
    assert_eq!(q("-1n").milli_value(), Some(-1));
    assert_eq!(q("1.5").milli_value(), Some(1500));
    assert_eq!(q("9E").milli_value(), None);
    // Add keeps the left format, or takes the right one onto a zero.
    let sum = |a: &str, b: &str| q(a).checked_add(&q(b)).unwrap().canonical();
    assert_eq!(sum("1Gi", "512Mi"), "1536Mi");
    assert_eq!(sum("0", "512Mi"), "512Mi");
    assert_eq!(sum("500m", "1Gi"), "1073741824500m");
    assert_eq!(sum("1Gi", "-1Gi"), "0");
    assert_eq!(q("100m").negated().canonical(), "-100m");
    assert_eq!(
        Quantity::from_milli(536_870_912_000, Format::BinarySI).canonical(),
        "512Mi"
    );
    assert_eq!(
        Quantity::from_milli(1500, Format::BinarySI).canonical(),
        "1500m"
    );
    assert_eq!(
        Quantity::from_int(1024, Format::DecimalSI).canonical(),
        "1024"
    );
}
