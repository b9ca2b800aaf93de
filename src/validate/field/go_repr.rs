use super::*;
pub use crate::k8s::go_text::go_quote;

// ---------------------------------------------------------------------------------------------
// Go value rendering

/// A value rendered the way Kubernetes prints a rejected value (Go's `%q` for strings, `%v` for
/// numbers and booleans, `%#v` for structs).
pub trait GoValue {
    fn go_repr(&self) -> String;
}

/// A value already rendered in Go syntax (structs, maps, slices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoRepr(pub String);

impl GoValue for GoRepr {
    fn go_repr(&self) -> String {
        self.0.clone()
    }
}

impl GoValue for str {
    fn go_repr(&self) -> String {
        go_quote(self)
    }
}

impl GoValue for String {
    fn go_repr(&self) -> String {
        go_quote(self)
    }
}

impl<T: GoValue + ?Sized> GoValue for &T {
    fn go_repr(&self) -> String {
        (**self).go_repr()
    }
}

macro_rules! go_value_by_display {
    ($($t:ty),*) => {
        $(impl GoValue for $t {
            fn go_repr(&self) -> String {
                self.to_string()
            }
        })*
    };
}
go_value_by_display!(i32, i64, u16, u32, u64, usize, bool);

/// `%#v` of a `map[string]string` (keys sorted, as Go prints maps).
pub fn go_string_map(map: Option<&BTreeMap<String, String>>) -> String {
    match map {
        None => "map[string]string(nil)".to_string(),
        Some(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
                .collect();
            format!("map[string]string{{{}}}", entries.join(", "))
        }
    }
}

/// `%#v` of a `[]string`.
pub fn go_string_slice(values: Option<&[String]>) -> String {
    match values {
        None => "[]string(nil)".to_string(),
        Some(values) => {
            let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
            format!("[]string{{{}}}", quoted.join(", "))
        }
    }
}

/// `%#v` of a `metav1.LabelSelector`.
pub fn go_label_selector(selector: &LabelSelector) -> String {
    let expressions = match &selector.match_expressions {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(expressions) => {
            let items: Vec<String> = expressions
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(&e.key),
                        go_quote(&e.operator),
                        go_string_slice(e.values.as_deref())
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        go_string_map(selector.match_labels.as_ref()),
        expressions
    )
}

/// `%#v` of an `intstr.IntOrString`.
pub fn go_int_or_string(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}"),
        IntOrString::String(s) => {
            format!(
                "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
                go_quote(s)
            )
        }
    }
}
