//! What a typed conversion would drop, put back: fields the Rust types do not know (a pod
//! template field of a newer Kubernetes, a field of a newer OpenKruise), and the metadata the
//! apiserver requires a conversion to leave alone.

use serde_json::Value;

/// Copies into `converted` every field of `raw` that `known` (the typed reading of `raw`) lacks,
/// at the same path, where `converted` has that path's parent and not the field itself. Arrays
/// are followed element by element when all three have the same length (conversions never
/// reorder them). A field the conversion moved elsewhere is known, so it is not copied back.
pub fn carry(raw: &Value, known: &Value, converted: &mut Value) {
    match (raw, known, converted) {
        (Value::Object(raw), Value::Object(known), Value::Object(converted)) => {
            for (key, raw_value) in raw {
                if raw_value.is_null() {
                    continue;
                }
                match known.get(key) {
                    None => {
                        if !converted.contains_key(key) {
                            converted.insert(key.clone(), raw_value.clone());
                        }
                    }
                    Some(known_value) if known_value != raw_value => {
                        if let Some(converted_value) = converted.get_mut(key) {
                            carry(raw_value, known_value, converted_value);
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        (Value::Array(raw), Value::Array(known), Value::Array(converted))
            if raw.len() == known.len() && known.len() == converted.len() =>
        {
            for ((raw, known), converted) in raw.iter().zip(known).zip(converted) {
                carry(raw, known, converted);
            }
        }
        _ => {}
    }
}

/// Gives `converted` the metadata of `raw` except for its labels and annotations, which stay
/// as the conversion left them: the apiserver refuses a conversion that changes anything else
/// there, and the typed metadata would re-render timestamps and managed fields.
pub fn keep_metadata(raw: &Value, converted: &mut Value) {
    let Some(raw_metadata) = raw.get("metadata").and_then(Value::as_object) else {
        return;
    };
    let Some(converted) = converted.as_object_mut() else {
        return;
    };
    let mut metadata = raw_metadata.clone();
    let converted_metadata = converted.get("metadata").and_then(Value::as_object);
    for key in ["labels", "annotations"] {
        match converted_metadata.and_then(|m| m.get(key)) {
            Some(value) => metadata.insert(key.to_string(), value.clone()),
            None => metadata.remove(key),
        };
    }
    converted.insert("metadata".to_string(), Value::Object(metadata));
}
