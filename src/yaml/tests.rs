use super::*;
use serde_json::{Value, json};

#[test]
fn only_core_booleans_are_booleans() {
    let value: Value = from_str("a: n\nb: yes\nc: on\nd: true\ne: False\n").unwrap();
    assert_eq!(
        value,
        json!({"a": "n", "b": "yes", "c": "on", "d": true, "e": false})
    );
}

#[test]
fn numbers_that_are_not_plain_decimals_stay_strings() {
    let value: Value = from_str("mode: 0755\ncount: 1_000\nport: 8080\nratio: 0.5\n").unwrap();
    assert_eq!(
        value,
        json!({"mode": "0755", "count": "1_000", "port": 8080, "ratio": 0.5})
    );
}

#[test]
fn streams_keep_document_order() {
    let values: Vec<Value> = from_multiple("a: 1\n---\nb: 2\n").unwrap();
    assert_eq!(values, vec![json!({"a": 1}), json!({"b": 2})]);
}

#[test]
fn round_trips_through_text() {
    let value = json!({"name": "n", "items": [1, "yes", {"k": null}]});
    let text = to_string(&value).unwrap();
    assert_eq!(from_str::<Value>(&text).unwrap(), value);
}

#[test]
fn syntax_errors_name_the_line() {
    let error = from_str::<Value>("a: [1, 2\nb: 3\n")
        .unwrap_err()
        .to_string();
    assert!(error.contains("line"), "{error}");
}
