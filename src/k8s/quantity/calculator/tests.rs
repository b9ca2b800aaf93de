use super::*;
use proptest::prelude::*;

fn q(text: &str) -> Value {
    Value::Quantity(Quantity::parse(text).unwrap())
}

fn vars(entries: &[(&str, Value)]) -> BTreeMap<String, Value> {
    entries
        .iter()
        .map(|(name, value)| (name.to_string(), value.clone()))
        .collect()
}

/// The result as upstream's `Value.String()` prints it.
fn shown(value: &Value) -> String {
    match value {
        Value::Quantity(q) => q.canonical(),
        Value::Number(n) => go_float(*n),
    }
}

fn eval(expr: &str, variables: &[(&str, Value)]) -> Result<String, String> {
    evaluate(expr, &vars(variables))
        .map(|v| shown(&v))
        .map_err(|e| e.0)
}

#[test]
fn numbers_and_percentages() {
    for (expr, expected) in [
        ("2 + 3", "5"),
        ("10 - 4", "6"),
        ("3 * 4", "12"),
        ("15 / 3", "5"),
        ("(2 + 3) * 4", "20"),
        ("2 + 3 * 4", "14"),
        ("2 - 3 + 4", "3"),
        ("-2 * 3 + 10", "4"),
        ("- -2", "2"),
        ("50%", "0.5"),
        ("100% * 2", "2"),
        ("max(10, 20)", "20"),
        ("MIN(10, 20)", "10"),
        ("1e2", "100"),
        ("1E2", "100"),
        ("1e6", "1e+06"),
        ("0.00001", "1e-05"),
        ("min(max(max(max(0.5,0.5*0.5),0.5-1.0),0.5-1.0),3.0)", "0.5"),
        // Text that reads as a number but is none is 0, as Go's ignored ParseFloat error.
        ("5x + 1", "1"),
        (". + 1", "1"),
        // A NUL byte ends the input.
        ("1 + 2\0 garbage", "3"),
    ] {
        assert_eq!(eval(expr, &[]), Ok(expected.to_string()), "{expr}");
    }
}

#[test]
fn quantities_keep_their_format_and_round_as_upstream() {
    let cpu = || ("cpu", q("200m"));
    for (expr, variables, expected) in [
        ("cpu", vec![cpu()], "200m"),
        ("cpu * 50%", vec![cpu()], "100m"),
        ("max(cpu * 50%, 50m)", vec![cpu()], "100m"),
        ("max(cpu*10%, 50m)", vec![cpu()], "50m"),
        ("max(cpu, 200m)", vec![("cpu", q("100m"))], "200m"),
        ("max(0.25, cpu)", vec![("cpu", q("100m"))], "250m"),
        ("min(cpu, 1.5)", vec![("cpu", q("2"))], "1500m"),
        (
            "min(max(max(max(0.5,0.5*cpu),cpu-1.0),cpu-1.0),3.0)",
            vec![("cpu", q("1"))],
            "500m",
        ),
        (
            "max(min(2*cpu,-cpu+3.0),2*cpu-3.0)",
            vec![("cpu", q("1500m"))],
            "1500m",
        ),
        ("memory + 100Mi", vec![("memory", q("200Mi"))], "300Mi"),
        (
            "0.5 * memory + max(0, memory-2Gi)",
            vec![("memory", q("8Gi"))],
            "10Gi",
        ),
        ("memory * 50%", vec![("memory", q("1Gi"))], "512Mi"),
        // Not a whole number of bytes: decimal, as Go prints it.
        ("memory / 3", vec![("memory", q("1Ki"))], "341333m"),
        // float64(milli) * n, truncated: 0.29 * 100 is 28.999…
        ("cpu * 0.29", vec![("cpu", q("100m"))], "28m"),
        (
            "(cpu1 + cpu2) * 50%",
            vec![("cpu1", q("200m")), ("cpu2", q("400m"))],
            "300m",
        ),
        ("CPU + 1", vec![cpu()], "1200m"),
        ("1.5Gi + 0", vec![], "1536Mi"),
    ] {
        assert_eq!(eval(expr, &variables), Ok(expected.to_string()), "{expr}");
    }
}

#[test]
fn errors_say_what_upstream_says() {
    let cpu = || ("cpu", q("200m"));
    for (expr, variables, expected) in [
        ("10 / 0", vec![], "division by zero"),
        ("cpu / 0", vec![cpu()], "division by zero"),
        ("cpu * cpu", vec![cpu()], "multiplication of two quantities"),
        ("1 / cpu", vec![cpu()], "division by quantity"),
        ("unknown(1, 2)", vec![], "unknown function: unknown"),
        (
            "max(1)",
            vec![],
            "max function requires exactly 2 arguments, got 1",
        ),
        ("Undefined_Var", vec![], "undefined variable: undefined_var"),
        ("memory * 2", vec![cpu()], "undefined variable: memory"),
        ("-10", vec![], "calculation result is negative: -10"),
        ("-100m", vec![], "calculation result is negative: -100m"),
        (
            "cpu - 300m",
            vec![cpu()],
            "calculation result is negative: -100m",
        ),
        ("", vec![], "parse error: syntax error at line 1, col 1"),
        ("   ", vec![], "parse error: syntax error at line 1, col 4"),
        (
            "2 + @",
            vec![],
            "parse error: syntax error at line 1, col 6",
        ),
        (
            "(2 + 3",
            vec![],
            "parse error: syntax error at line 1, col 7",
        ),
        ("()", vec![], "parse error: syntax error at line 1, col 3"),
        ("5..5", vec![], "parse error: syntax error at line 1, col 5"),
        ("5%%", vec![], "parse error: syntax error at line 1, col 4"),
        ("1,2", vec![], "parse error: syntax error at line 1, col 3"),
        (
            "1\n+ )",
            vec![],
            "parse error: syntax error at line 2, col 4",
        ),
        // A semantic error found before the syntax error is the one reported.
        ("1/0 )", vec![], "division by zero"),
        // The last semantic error wins.
        ("x + 1m*1m", vec![], "multiplication of two quantities"),
        (
            "1e3m",
            vec![],
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ] {
        assert_eq!(eval(expr, &variables), Err(expected.to_string()), "{expr}");
    }
}

#[test]
fn go_float_formatting() {
    for (x, expected) in [
        (0.5, "0.5"),
        (-1.0, "-1"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1e100, "1e+100"),
        (f64::INFINITY, "+Inf"),
    ] {
        assert_eq!(go_float(x), expected);
    }
}

#[test]
fn go_int64_is_amd64_conversion() {
    assert_eq!(go_int64(2.9), 2);
    assert_eq!(go_int64(-2.9), -2);
    assert_eq!(go_int64(f64::NAN), i64::MIN);
    assert_eq!(go_int64(1e19), i64::MIN);
    assert_eq!(go_int64(-1e19), i64::MIN);
}

fn quantity_text() -> impl Strategy<Value = String> {
    (
        0u64..10_000_000,
        prop::sample::select(vec!["", "m", "k", "M", "G", "Ki", "Mi", "Gi"]),
    )
        .prop_map(|(n, unit)| format!("{n}{unit}"))
}

proptest! {
    /// Whatever the text, evaluation answers: a value or an error, never a panic.
    #[test]
    fn arbitrary_input_never_panics(expr in "\\PC{0,40}", raw in prop::collection::vec(any::<u8>(), 0..40)) {
        let variables = vars(&[("cpu", q("1500m")), ("memory", q("1Gi"))]);
        let _ = evaluate(&expr, &variables);
        let _ = evaluate(&String::from_utf8_lossy(&raw), &variables);
    }

    /// Expressions made of the language's own pieces never panic either.
    #[test]
    fn grammar_shaped_input_never_panics(
        pieces in prop::collection::vec(prop::sample::select(vec![
            "cpu", "memory", "max(", "min(", "(", ")", ",", "+", "-", "*", "/", "50%", "1e30",
            "0", "1.5", "100m", "1Gi", "9999999P", "0.001", "x",
        ]), 0..16),
    ) {
        let variables = vars(&[("cpu", q("1500m")), ("memory", q("1Gi"))]);
        let _ = evaluate(&pieces.join(" "), &variables);
    }

    /// Sums of quantities are exact: a + b - b is a, and a + b is b + a.
    #[test]
    fn quantity_sums_are_exact(a in quantity_text(), b in quantity_text()) {
        let variables = vars(&[("a", q(&a)), ("b", q(&b))]);
        let Value::Quantity(left) = evaluate("a + b - b", &variables).unwrap() else { panic!() };
        prop_assert!(left.same_value(&Quantity::parse(&a).unwrap()));
        let ab = evaluate("a + b", &variables).unwrap();
        let ba = evaluate("b + a", &variables).unwrap();
        let (Value::Quantity(ab), Value::Quantity(ba)) = (ab, ba) else { panic!() };
        prop_assert!(ab.same_value(&ba));
    }

    /// `max` is at least each argument and `min` at most; both return one of them.
    #[test]
    fn max_and_min_bound_their_arguments(a in quantity_text(), b in quantity_text()) {
        let variables = vars(&[("a", q(&a)), ("b", q(&b))]);
        let value = |expr| match evaluate(expr, &variables).unwrap() {
            Value::Quantity(q) => q,
            Value::Number(_) => panic!("a quantity was expected"),
        };
        let (qa, qb) = (Quantity::parse(&a).unwrap(), Quantity::parse(&b).unwrap());
        let (max, min) = (value("max(a, b)"), value("min(a, b)"));
        prop_assert!(max.cmp_value(&qa).is_ge() && max.cmp_value(&qb).is_ge());
        prop_assert!(min.cmp_value(&qa).is_le() && min.cmp_value(&qb).is_le());
        prop_assert!(max.same_value(&qa) || max.same_value(&qb));
    }

    /// A percentage of a quantity is monotonic in the quantity.
    #[test]
    fn percentage_is_monotonic(a in 0i64..1_000_000_000, b in 0i64..1_000_000_000, pct in 0u32..500) {
        let (small, large) = (a.min(b), a.max(b));
        let expr = format!("x * {pct}%");
        let at = |milli| {
            let variables = vars(&[("x", Value::Quantity(Quantity::from_milli(milli, Format::DecimalSI)))]);
            match evaluate(&expr, &variables).unwrap() {
                Value::Quantity(q) => q,
                Value::Number(_) => panic!("a quantity was expected"),
            }
        };
        prop_assert!(at(small).cmp_value(&at(large)).is_le());
    }
}
