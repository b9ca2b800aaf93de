//! What a typed conversion would drop or re-render, put back: fields the Rust types do not know
//! (a pod template field of a newer Kubernetes, a field of a newer OpenKruise), the exact JSON of
//! what the conversion does not touch, and the metadata the apiserver requires a conversion to
//! leave alone.

use serde_json::Value;

/// Puts back into `converted` what the typed reading (`known`) of `raw` changed or left out,
/// wherever the conversion itself did not touch it: a subtree the conversion left as the typed
/// reading had it is `raw`'s own again (so a pod template keeps its exact JSON, fields the
/// types do not know included), a field the types do not know is copied where its parent is (the
/// parent made again if the conversion left it out as empty), and a field the typed reading
/// added (an empty default) goes. Arrays are followed element by
/// element when all three have the same length (conversions never reorder them). A field the
/// conversion moved or renamed is known, so it is not copied back.
pub fn restore(raw: &Value, known: &Value, converted: &mut Value) {
    if converted == known {
        *converted = raw.clone();
        return;
    }
    match (raw, known, converted) {
        (Value::Object(raw), Value::Object(known), Value::Object(converted)) => {
            // What the raw object did not have and the conversion did not make: a field the
            // typed reading added (an empty default).
            converted.retain(|key, value| {
                raw.contains_key(key) || known.get(key).is_none_or(|known| known != value)
            });
            for (key, raw_value) in raw {
                match (known.get(key), converted.get_mut(key)) {
                    (Some(known_value), Some(converted_value)) => {
                        restore(raw_value, known_value, converted_value)
                    }
                    // An object the typed reading left out as empty, which the conversion
                    // filled: what the types do not know of it stays too.
                    (None, Some(converted_value @ Value::Object(_))) if raw_value.is_object() => {
                        restore(
                            raw_value,
                            &Value::Object(Default::default()),
                            converted_value,
                        )
                    }
                    (None, None) if !raw_value.is_null() => {
                        converted.insert(key.clone(), raw_value.clone());
                    }
                    // An object the conversion left empty, and so out: what it held that the
                    // types do not know still goes.
                    (Some(known_value @ Value::Object(_)), None) if raw_value.is_object() => {
                        let mut unknown = Value::Object(Default::default());
                        restore(raw_value, known_value, &mut unknown);
                        if unknown.as_object().is_some_and(|o| !o.is_empty()) {
                            converted.insert(key.clone(), unknown);
                        }
                    }
                    _ => {}
                }
            }
        }
        (Value::Array(raw), Value::Array(known), Value::Array(converted))
            if raw.len() == known.len() && known.len() == converted.len() =>
        {
            for ((raw, known), converted) in raw.iter().zip(known).zip(converted) {
                restore(raw, known, converted);
            }
        }
        _ => {}
    }
}

/// Takes the metadata of `raw` but for its labels and annotations, which stay behind for the
/// typed conversion (which may move fields to and from them).
pub fn take_metadata(raw: &mut Value) -> Option<serde_json::Map<String, Value>> {
    let metadata = raw.get_mut("metadata")?.as_object_mut()?;
    let mut kept = std::mem::take(metadata);
    for key in ["labels", "annotations"] {
        if let Some(value) = kept.remove(key) {
            metadata.insert(key.to_string(), value);
        }
    }
    Some(kept)
}

/// Gives `converted` the `metadata` [`take_metadata`] took, but for the labels and annotations,
/// which stay as the conversion left them: the apiserver refuses a conversion that changes
/// anything else there, and the typed metadata would re-render timestamps and managed fields.
pub fn put_metadata(metadata: Option<serde_json::Map<String, Value>>, converted: &mut Value) {
    let (Some(mut metadata), Some(converted)) = (metadata, converted.as_object_mut()) else {
        return;
    };
    let converted_metadata = converted.get("metadata").and_then(Value::as_object);
    for key in ["labels", "annotations"] {
        match converted_metadata.and_then(|m| m.get(key)) {
            Some(value) => metadata.insert(key.to_string(), value.clone()),
            None => metadata.remove(key),
        };
    }
    converted.insert("metadata".to_string(), Value::Object(metadata));
}
