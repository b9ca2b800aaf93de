use super::*;

fn text(value: &str) -> IntOrString {
    IntOrString::String(value.to_string())
}

#[test]
fn scaled_value_reads_ints_as_they_are_and_integer_percents_against_the_total() {
    let int = IntOrString::Int(3);
    assert_eq!(scaled_value(Some(&int), 100, true), Ok(3));
    assert_eq!(
        scaled_value(Some(&IntOrString::Int(-2)), 100, false),
        Ok(-2)
    );
    // 30% of 4 = 1.2: up for maxUnavailable/maxSurge, down for partition/burstReplicas.
    assert_eq!(scaled_value(Some(&text("30%")), 4, true), Ok(2));
    assert_eq!(scaled_value(Some(&text("30%")), 4, false), Ok(1));
    assert_eq!(scaled_value(Some(&text("50%")), 3, false), Ok(1));
    assert_eq!(scaled_value(Some(&text("100%")), 0, true), Ok(0));
    assert_eq!(scaled_value(Some(&text("0%")), 7, true), Ok(0));
    assert_eq!(scaled_value(Some(&text("-10%")), 15, true), Ok(-1));
    assert_eq!(scaled_value(Some(&text("-10%")), 15, false), Ok(-2));
    assert_eq!(scaled_value(Some(&text("+20%")), 10, false), Ok(2));
}

#[test]
fn scaled_value_refuses_what_go_refuses_with_its_words() {
    assert_eq!(
        scaled_value(None, 1, true),
        Err("nil value for IntOrString".to_string())
    );
    assert_eq!(
        scaled_value(Some(&text("5")), 10, true),
        Err("invalid value for IntOrString: invalid type: string is not a percentage".to_string())
    );
    assert_eq!(
        scaled_value(Some(&text("12.5%")), 10, true),
        Err(
            "invalid value for IntOrString: invalid value \"12.5%\": strconv.Atoi: parsing \"12.5\": invalid syntax"
                .to_string()
        )
    );
    // Only one `%` is trimmed.
    assert_eq!(
        scaled_value(Some(&text("5%%")), 10, true),
        Err(
            "invalid value for IntOrString: invalid value \"5%%\": strconv.Atoi: parsing \"5%\": invalid syntax"
                .to_string()
        )
    );
    assert!(scaled_value(Some(&text("%")), 10, true).is_err());
    assert_eq!(
        scaled_value(Some(&text("99999999999999999999%")), 10, true),
        Err(
            "invalid value for IntOrString: invalid value \"99999999999999999999%\": strconv.Atoi: parsing \"99999999999999999999\": value out of range"
                .to_string()
        )
    );
}

#[test]
fn scaled_value_differs_from_the_kruise_scaler_on_fractions_and_from_the_legacy_one_on_bare_numbers()
 {
    assert!(kruise_scaled_value(Some(&text("12.5%")), 8, true).is_ok());
    assert!(scaled_value(Some(&text("12.5%")), 8, true).is_err());
    assert_eq!(legacy_scaled_value(&text("50"), 4, true), Ok(2));
    assert!(scaled_value(Some(&text("50")), 4, true).is_err());
}
