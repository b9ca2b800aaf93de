//! Schemas the CRDs share, for fields the apiserver must keep as sent.

use schemars::{Schema, SchemaGenerator, json_schema};

/// Schema of an object the apiserver must keep as sent (`x-kubernetes-preserve-unknown-fields`),
/// as OpenKruise declares pod templates.
pub(crate) fn schemaless_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// A list of schemaless objects (volume claim templates).
pub(crate) fn schemaless_array(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true
        }
    })
}
