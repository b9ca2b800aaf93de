//! Byte-exact Go `encoding/json` output for SidecarSet containers.
//!
//! OpenKruise hashes `json.Marshal` of the SidecarSet containers, so matching its hashes needs the
//! very same bytes: Go struct field order (not alphabetical), Go's `omitempty` rules, Go's string
//! escaping and canonical resource quantities.
//!
//! How: serde turns the typed container into a `serde_json::Value` (k8s-openapi leaves out absent
//! fields), then [`write_struct`] walks a static table per Go type, one `const` per type below, in
//! the declaration order of k8s.io/api v0.32 and of OpenKruise's `SidecarContainer`.
//!
//! Keys a table does not know (a field of a newer Kubernetes, or a Go type the table misses) are
//! not dropped: they are written after the known ones, sorted, as plain JSON. Go would have dropped
//! them when decoding, but silently hashing two different containers alike is the worse failure,
//! and this keeps the gap visible in the output.

use serde_json::{Map, Number, Value};

use crate::api::SidecarContainer;
use k8s_openapi::api::core::v1::Container;

use super::quantity;

/// Encodes one sidecar container as Go's `json.Marshal` does.
pub fn encode_sidecar_container(container: &SidecarContainer) -> String {
    let mut out = String::new();
    write_typed(&mut out, container, SIDECAR_CONTAINER);
    out
}

/// Encodes a list of sidecar containers; `None` is Go's nil slice, `null`.
pub fn encode_sidecar_containers(containers: Option<&[SidecarContainer]>) -> String {
    let mut out = String::new();
    write_sidecar_containers(&mut out, containers);
    out
}

/// Appends the encoding of a list of sidecar containers to `out`.
pub fn write_sidecar_containers(out: &mut String, containers: Option<&[SidecarContainer]>) {
    let Some(containers) = containers else {
        out.push_str("null");
        return;
    };
    out.push('[');
    for (i, container) in containers.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_typed(out, container, SIDECAR_CONTAINER);
    }
    out.push(']');
}

/// Encodes a core/v1 container as Go's `json.Marshal` does.
pub fn encode_container(container: &Container) -> String {
    let mut out = String::new();
    write_typed(&mut out, container, CONTAINER);
    out
}

/// Encodes an untyped value the way Go encodes `map[string]interface{}` data: object keys sorted
/// bytewise, Go string escaping, no whitespace.
pub fn encode_value(value: &Value) -> String {
    let mut out = String::new();
    write_plain(&mut out, value);
    out
}

/// Appends `s` as a JSON string escaped exactly like Go (`HTML`-safe: `<`, `>`, `&` become
/// `\u003c`, `\u003e`, `\u0026`; U+2028/U+2029 are escaped; `\b` and `\f` use the short forms of
/// Go ≥ 1.22; other control characters are `\u00xx`).
pub fn write_go_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if c < ' ' || c == '<' || c == '>' || c == '&' => {
                let b = c as u8;
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xf)]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// How `encoding/json` treats a struct field whose value is empty.
#[derive(Clone, Copy)]
enum Presence {
    /// `omitempty` on a value type: left out when absent, `""`, `0`, `false` or an empty list/map.
    OmitEmpty,
    /// `omitempty` on a pointer: left out only when nil; a zero value it points to is written.
    OmitNil,
    /// No `omitempty`, or a struct value (which `omitempty` never drops): always written, as
    /// this Go zero value when absent.
    Always(&'static str),
}

/// What a field holds, so the writer knows how to format it.
#[derive(Clone, Copy)]
enum Kind {
    /// string, number, bool or IntOrString: written as is.
    Scalar,
    /// `resource.Quantity`: written in canonical form.
    Quantity,
    /// A nested Go struct.
    Struct(&'static [Field]),
    /// `[]string`
    ScalarList,
    /// `[]SomeStruct`
    StructList(&'static [Field]),
    /// `ResourceList`, a map of quantities (keys sorted, as Go sorts map keys).
    QuantityMap,
}

/// One entry of a Go struct's field table.
enum Field {
    Named {
        name: &'static str,
        presence: Presence,
        kind: Kind,
    },
    /// An embedded struct (`json:",inline"`): its fields are promoted into the outer object.
    Inline(&'static [Field]),
}

// Table builders, named after the Go declaration they stand for.

/// `T json:"name,omitempty"` with T a string, number or bool.
const fn omitempty(name: &'static str) -> Field {
    Field::Named {
        name,
        presence: Presence::OmitEmpty,
        kind: Kind::Scalar,
    }
}

/// `*T json:"name,omitempty"` with T a string, number or bool.
const fn pointer(name: &'static str) -> Field {
    Field::Named {
        name,
        presence: Presence::OmitNil,
        kind: Kind::Scalar,
    }
}

/// `T json:"name"` (no omitempty): written even when zero; `zero` is Go's zero value of T.
const fn required(name: &'static str, zero: &'static str) -> Field {
    Field::Named {
        name,
        presence: Presence::Always(zero),
        kind: Kind::Scalar,
    }
}

/// `*S json:"name,omitempty"`
const fn struct_pointer(name: &'static str, fields: &'static [Field]) -> Field {
    Field::Named {
        name,
        presence: Presence::OmitNil,
        kind: Kind::Struct(fields),
    }
}

/// `S json:"name,omitempty"` or `S json:"name"`: a struct value is always written.
const fn struct_value(name: &'static str, fields: &'static [Field]) -> Field {
    Field::Named {
        name,
        presence: Presence::Always("{}"),
        kind: Kind::Struct(fields),
    }
}

/// `[]string json:"name,omitempty"`
const fn string_list(name: &'static str) -> Field {
    Field::Named {
        name,
        presence: Presence::OmitEmpty,
        kind: Kind::ScalarList,
    }
}

/// `[]S json:"name,omitempty"`
const fn struct_list(name: &'static str, fields: &'static [Field]) -> Field {
    Field::Named {
        name,
        presence: Presence::OmitEmpty,
        kind: Kind::StructList(fields),
    }
}

/// `ResourceList json:"name,omitempty"`
const fn resource_list(name: &'static str) -> Field {
    Field::Named {
        name,
        presence: Presence::OmitEmpty,
        kind: Kind::QuantityMap,
    }
}

/// `resource.Quantity json:"name,omitempty"`: a struct, so always written; zero is `"0"`.
const fn quantity_value(name: &'static str) -> Field {
    Field::Named {
        name,
        presence: Presence::Always("\"0\""),
        kind: Kind::Quantity,
    }
}

/// Embedded struct.
const fn inline(fields: &'static [Field]) -> Field {
    Field::Inline(fields)
}

// ---- OpenKruise apps/v1beta1 ----------------------------------------------------------------

/// `SidecarContainer`: the core container inlined, then the Kruise fields.
const SIDECAR_CONTAINER: &[Field] = &[
    inline(CONTAINER),
    omitempty("podInjectPolicy"),
    struct_value("upgradeStrategy", SIDECAR_CONTAINER_UPGRADE_STRATEGY),
    struct_value("shareVolumePolicy", SHARE_VOLUME_POLICY),
    struct_pointer("shareVolumeDevicePolicy", SHARE_VOLUME_POLICY),
    struct_list("transferEnv", TRANSFER_ENV_VAR),
    struct_pointer("resourcesPolicy", RESOURCES_POLICY),
];

const SIDECAR_CONTAINER_UPGRADE_STRATEGY: &[Field] =
    &[omitempty("upgradeType"), omitempty("hotUpgradeEmptyImage")];

const SHARE_VOLUME_POLICY: &[Field] = &[omitempty("type")];

const TRANSFER_ENV_VAR: &[Field] = &[
    omitempty("sourceContainerName"),
    struct_pointer("sourceContainerNameFrom", SOURCE_CONTAINER_NAME_SOURCE),
    omitempty("envName"),
    string_list("envNames"),
];

const SOURCE_CONTAINER_NAME_SOURCE: &[Field] = &[struct_pointer("fieldRef", OBJECT_FIELD_SELECTOR)];

const RESOURCES_POLICY: &[Field] = &[
    required("targetContainersMode", "\"\""),
    omitempty("targetContainersNameRegex"),
    struct_value("resourcesExpr", RESOURCES_EXPR),
];

const RESOURCES_EXPR: &[Field] = &[
    struct_pointer("limits", RESOURCE_EXPR_PAIR),
    struct_pointer("requests", RESOURCE_EXPR_PAIR),
];

/// `ResourceExprLimits` and `ResourceExprRequests` (same shape).
const RESOURCE_EXPR_PAIR: &[Field] = &[omitempty("cpu"), omitempty("memory")];

// ---- k8s.io/api/core/v1 (v0.32) -------------------------------------------------------------

const CONTAINER: &[Field] = &[
    required("name", "\"\""),
    omitempty("image"),
    string_list("command"),
    string_list("args"),
    omitempty("workingDir"),
    struct_list("ports", CONTAINER_PORT),
    struct_list("envFrom", ENV_FROM_SOURCE),
    struct_list("env", ENV_VAR),
    struct_value("resources", RESOURCE_REQUIREMENTS),
    struct_list("resizePolicy", CONTAINER_RESIZE_POLICY),
    pointer("restartPolicy"),
    struct_list("volumeMounts", VOLUME_MOUNT),
    struct_list("volumeDevices", VOLUME_DEVICE),
    struct_pointer("livenessProbe", PROBE),
    struct_pointer("readinessProbe", PROBE),
    struct_pointer("startupProbe", PROBE),
    struct_pointer("lifecycle", LIFECYCLE),
    omitempty("terminationMessagePath"),
    omitempty("terminationMessagePolicy"),
    omitempty("imagePullPolicy"),
    struct_pointer("securityContext", SECURITY_CONTEXT),
    omitempty("stdin"),
    omitempty("stdinOnce"),
    omitempty("tty"),
];

const CONTAINER_PORT: &[Field] = &[
    omitempty("name"),
    omitempty("hostPort"),
    required("containerPort", "0"),
    omitempty("protocol"),
    omitempty("hostIP"),
];

const ENV_FROM_SOURCE: &[Field] = &[
    omitempty("prefix"),
    struct_pointer("configMapRef", CONFIG_MAP_ENV_SOURCE),
    struct_pointer("secretRef", SECRET_ENV_SOURCE),
];

const LOCAL_OBJECT_REFERENCE: &[Field] = &[omitempty("name")];

const CONFIG_MAP_ENV_SOURCE: &[Field] = &[inline(LOCAL_OBJECT_REFERENCE), pointer("optional")];

const SECRET_ENV_SOURCE: &[Field] = &[inline(LOCAL_OBJECT_REFERENCE), pointer("optional")];

const ENV_VAR: &[Field] = &[
    required("name", "\"\""),
    omitempty("value"),
    struct_pointer("valueFrom", ENV_VAR_SOURCE),
];

const ENV_VAR_SOURCE: &[Field] = &[
    struct_pointer("fieldRef", OBJECT_FIELD_SELECTOR),
    struct_pointer("resourceFieldRef", RESOURCE_FIELD_SELECTOR),
    struct_pointer("configMapKeyRef", CONFIG_MAP_KEY_SELECTOR),
    struct_pointer("secretKeyRef", SECRET_KEY_SELECTOR),
];

const OBJECT_FIELD_SELECTOR: &[Field] = &[omitempty("apiVersion"), required("fieldPath", "\"\"")];

const RESOURCE_FIELD_SELECTOR: &[Field] = &[
    omitempty("containerName"),
    required("resource", "\"\""),
    quantity_value("divisor"),
];

const CONFIG_MAP_KEY_SELECTOR: &[Field] = &[
    inline(LOCAL_OBJECT_REFERENCE),
    required("key", "\"\""),
    pointer("optional"),
];

const SECRET_KEY_SELECTOR: &[Field] = &[
    inline(LOCAL_OBJECT_REFERENCE),
    required("key", "\"\""),
    pointer("optional"),
];

const RESOURCE_REQUIREMENTS: &[Field] = &[
    resource_list("limits"),
    resource_list("requests"),
    struct_list("claims", RESOURCE_CLAIM),
];

const RESOURCE_CLAIM: &[Field] = &[required("name", "\"\""), omitempty("request")];

const CONTAINER_RESIZE_POLICY: &[Field] = &[
    required("resourceName", "\"\""),
    required("restartPolicy", "\"\""),
];

const VOLUME_MOUNT: &[Field] = &[
    required("name", "\"\""),
    omitempty("readOnly"),
    pointer("recursiveReadOnly"),
    required("mountPath", "\"\""),
    omitempty("subPath"),
    pointer("mountPropagation"),
    omitempty("subPathExpr"),
];

const VOLUME_DEVICE: &[Field] = &[required("name", "\"\""), required("devicePath", "\"\"")];

const PROBE: &[Field] = &[
    inline(PROBE_HANDLER),
    omitempty("initialDelaySeconds"),
    omitempty("timeoutSeconds"),
    omitempty("periodSeconds"),
    omitempty("successThreshold"),
    omitempty("failureThreshold"),
    pointer("terminationGracePeriodSeconds"),
];

const PROBE_HANDLER: &[Field] = &[
    struct_pointer("exec", EXEC_ACTION),
    struct_pointer("httpGet", HTTP_GET_ACTION),
    struct_pointer("tcpSocket", TCP_SOCKET_ACTION),
    struct_pointer("grpc", GRPC_ACTION),
];

const EXEC_ACTION: &[Field] = &[string_list("command")];

const HTTP_GET_ACTION: &[Field] = &[
    omitempty("path"),
    required("port", "0"),
    omitempty("host"),
    omitempty("scheme"),
    struct_list("httpHeaders", HTTP_HEADER),
];

const HTTP_HEADER: &[Field] = &[required("name", "\"\""), required("value", "\"\"")];

const TCP_SOCKET_ACTION: &[Field] = &[required("port", "0"), omitempty("host")];

/// `service` is a pointer without `omitempty`: Go writes `null` when it is unset.
const GRPC_ACTION: &[Field] = &[required("port", "0"), required("service", "null")];

const LIFECYCLE: &[Field] = &[
    struct_pointer("postStart", LIFECYCLE_HANDLER),
    struct_pointer("preStop", LIFECYCLE_HANDLER),
    // Added in k8s.io/api v0.33 (after the v0.32 OpenKruise vendors), declared last there too.
    pointer("stopSignal"),
];

const LIFECYCLE_HANDLER: &[Field] = &[
    struct_pointer("exec", EXEC_ACTION),
    struct_pointer("httpGet", HTTP_GET_ACTION),
    struct_pointer("tcpSocket", TCP_SOCKET_ACTION),
    struct_pointer("sleep", SLEEP_ACTION),
];

const SLEEP_ACTION: &[Field] = &[required("seconds", "0")];

const SECURITY_CONTEXT: &[Field] = &[
    struct_pointer("capabilities", CAPABILITIES),
    pointer("privileged"),
    struct_pointer("seLinuxOptions", SE_LINUX_OPTIONS),
    struct_pointer("windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    pointer("runAsUser"),
    pointer("runAsGroup"),
    pointer("runAsNonRoot"),
    pointer("readOnlyRootFilesystem"),
    pointer("allowPrivilegeEscalation"),
    pointer("procMount"),
    struct_pointer("seccompProfile", SECCOMP_PROFILE),
    struct_pointer("appArmorProfile", APP_ARMOR_PROFILE),
];

const CAPABILITIES: &[Field] = &[string_list("add"), string_list("drop")];

const SE_LINUX_OPTIONS: &[Field] = &[
    omitempty("user"),
    omitempty("role"),
    omitempty("type"),
    omitempty("level"),
];

const WINDOWS_SECURITY_CONTEXT_OPTIONS: &[Field] = &[
    pointer("gmsaCredentialSpecName"),
    pointer("gmsaCredentialSpec"),
    pointer("runAsUserName"),
    pointer("hostProcess"),
];

const SECCOMP_PROFILE: &[Field] = &[required("type", "\"\""), pointer("localhostProfile")];

const APP_ARMOR_PROFILE: &[Field] = &[required("type", "\"\""), pointer("localhostProfile")];

// ---- writer ---------------------------------------------------------------------------------

fn write_typed<T: serde::Serialize>(out: &mut String, typed: &T, fields: &'static [Field]) {
    // k8s-openapi and our API types only have string-keyed maps, so this cannot fail; `null`
    // would make a failure visible rather than produce a plausible but wrong encoding.
    match serde_json::to_value(typed) {
        Ok(Value::Object(map)) => write_struct(out, &map, fields),
        Ok(other) => write_plain(out, &other),
        Err(_) => out.push_str("null"),
    }
}

/// Writes a Go struct: known fields in table order, then unknown keys sorted.
fn write_struct(out: &mut String, object: &Map<String, Value>, fields: &'static [Field]) {
    out.push('{');
    let mut first = true;
    write_known_fields(out, object, fields, &mut first);
    let mut unknown: Vec<(&String, &Value)> = object
        .iter()
        .filter(|(key, _)| !declares(fields, key))
        .collect();
    unknown.sort_by(|a, b| a.0.cmp(b.0));
    for (key, value) in unknown {
        write_key(out, key, &mut first);
        write_plain(out, value);
    }
    out.push('}');
}

fn write_known_fields(
    out: &mut String,
    object: &Map<String, Value>,
    fields: &'static [Field],
    first: &mut bool,
) {
    for field in fields {
        let (name, presence, kind) = match field {
            Field::Inline(embedded) => {
                write_known_fields(out, object, embedded, first);
                continue;
            }
            Field::Named {
                name,
                presence,
                kind,
            } => (*name, *presence, *kind),
        };
        let value = object.get(name).filter(|v| !v.is_null());
        match (presence, value) {
            (Presence::OmitEmpty, Some(v)) if is_go_empty(v) => {}
            (_, Some(v)) => {
                write_key(out, name, first);
                write_field_value(out, v, kind);
            }
            (Presence::Always(zero), None) => {
                write_key(out, name, first);
                out.push_str(zero);
            }
            (_, None) => {}
        }
    }
}

/// Whether the table (including embedded structs) declares `key`.
fn declares(fields: &[Field], key: &str) -> bool {
    fields.iter().any(|field| match field {
        Field::Named { name, .. } => *name == key,
        Field::Inline(embedded) => declares(embedded, key),
    })
}

fn write_key(out: &mut String, key: &str, first: &mut bool) {
    if !*first {
        out.push(',');
    }
    *first = false;
    write_go_string(out, key);
    out.push(':');
}

/// Go's notion of an empty value for `omitempty`.
fn is_go_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    }
}

fn write_field_value(out: &mut String, value: &Value, kind: Kind) {
    match (kind, value) {
        (Kind::Struct(fields), Value::Object(map)) => write_struct(out, map, fields),
        (Kind::StructList(fields), Value::Array(items)) => {
            write_list(out, items, |out, item| match item {
                Value::Object(map) => write_struct(out, map, fields),
                other => write_plain(out, other),
            })
        }
        (Kind::ScalarList, Value::Array(items)) => write_list(out, items, write_plain),
        (Kind::QuantityMap, Value::Object(map)) => {
            out.push('{');
            let mut first = true;
            // serde_json's map may keep insertion order; Go sorts map keys bytewise.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (key, quantity) in entries {
                write_key(out, key, &mut first);
                write_quantity(out, quantity);
            }
            out.push('}');
        }
        (Kind::Quantity, quantity) => write_quantity(out, quantity),
        // Scalars, and values whose shape differs from what the table expects.
        (_, other) => write_plain(out, other),
    }
}

fn write_list(out: &mut String, items: &[Value], mut write_item: impl FnMut(&mut String, &Value)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_item(out, item);
    }
    out.push(']');
}

/// Canonical quantity string. A string Go could not have decoded (it would have rejected the
/// object) is written unchanged.
fn write_quantity(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => match quantity::canonicalize(s) {
            Ok(canonical) => write_go_string(out, &canonical),
            Err(_) => write_go_string(out, s),
        },
        other => write_plain(out, other),
    }
}

/// Plain JSON with Go's conventions: sorted object keys, Go string escaping, no whitespace.
fn write_plain(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_go_string(out, s),
        Value::Array(items) => write_list(out, items, write_plain),
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (key, item) in entries {
                write_key(out, key, &mut first);
                write_plain(out, item);
            }
            out.push('}');
        }
    }
}

/// Integers as integers. Kubernetes types carry no floats; one would be written in Rust's
/// shortest round-trip form, which matches Go's for ordinary magnitudes.
fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else if let Some(f) = n.as_f64() {
        out.push_str(&f.to_string());
    } else {
        out.push_str(&n.to_string());
    }
}

#[cfg(test)]
mod tests;
