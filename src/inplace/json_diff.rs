//! An RFC 6902 diff with the shape OpenKruise's in-place decision depends on: objects key by key,
//! arrays index by index (so changing one env value is a `replace` at `…/env/0/value` and adding a
//! container is an `add` at `…/containers/1`), anything else replaced whole.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Remove,
    Replace,
}

/// One operation: kind, JSON pointer, and the new value (`Null` for a removal).
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub op: Op,
    pub path: String,
    pub value: Value,
}

/// Every operation turning `old` into `new`.
pub fn diff(old: &Value, new: &Value) -> Vec<Operation> {
    let mut out = Vec::new();
    diff_into(old, new, &mut String::new(), &mut out);
    out
}

fn diff_into(old: &Value, new: &Value, path: &mut String, out: &mut Vec<Operation>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (key, new_value) in n {
                let len = path.len();
                push_token(path, key);
                match o.get(key) {
                    Some(old_value) => diff_into(old_value, new_value, path, out),
                    None => out.push(Operation {
                        op: Op::Add,
                        path: path.clone(),
                        value: new_value.clone(),
                    }),
                }
                path.truncate(len);
            }
            for key in o.keys().filter(|k| !n.contains_key(*k)) {
                let len = path.len();
                push_token(path, key);
                out.push(Operation {
                    op: Op::Remove,
                    path: path.clone(),
                    value: Value::Null,
                });
                path.truncate(len);
            }
        }
        (Value::Array(o), Value::Array(n)) => {
            let common = o.len().min(n.len());
            for (i, (old_item, new_item)) in o.iter().zip(n).enumerate() {
                let len = path.len();
                push_token(path, &i.to_string());
                diff_into(old_item, new_item, path, out);
                path.truncate(len);
            }
            // Removals from the end so that every index stays valid when applied in order.
            for i in (common..o.len()).rev() {
                out.push(Operation {
                    op: Op::Remove,
                    path: format!("{path}/{i}"),
                    value: Value::Null,
                });
            }
            for (i, item) in n.iter().enumerate().skip(common) {
                out.push(Operation {
                    op: Op::Add,
                    path: format!("{path}/{i}"),
                    value: item.clone(),
                });
            }
        }
        _ => out.push(Operation {
            op: Op::Replace,
            path: path.clone(),
            value: new.clone(),
        }),
    }
}

/// Appends `/token` with RFC 6901 escaping (`~` → `~0`, `/` → `~1`).
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    path.push_str(&token.replace('~', "~0").replace('/', "~1"));
}

/// Undoes [`push_token`]'s escaping on one token.
pub fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(old: Value, new: Value) -> Vec<(Op, String)> {
        diff(&old, &new)
            .into_iter()
            .map(|o| (o.op, o.path))
            .collect()
    }

    #[test]
    fn arrays_by_index() {
        assert_eq!(
            ops(
                json!({"c":[{"name":"a","env":[{"value":"1"}]}]}),
                json!({"c":[{"name":"a","env":[{"value":"2"}]},{"name":"b"}]})
            ),
            vec![
                (Op::Replace, "/c/0/env/0/value".to_string()),
                (Op::Add, "/c/1".to_string())
            ]
        );
        assert_eq!(
            ops(json!([1, 2, 3]), json!([1])),
            vec![(Op::Remove, "/2".into()), (Op::Remove, "/1".into())]
        );
    }

    #[test]
    fn keys_escaped_and_types_replaced() {
        assert_eq!(
            ops(json!({"a/b~c":1}), json!({"a/b~c":{"x":1}})),
            vec![(Op::Replace, "/a~1b~0c".to_string())]
        );
        assert_eq!(unescape_token("a~1b~0c"), "a/b~c");
        assert_eq!(
            ops(json!({"gone":1}), json!({})),
            vec![(Op::Remove, "/gone".to_string())]
        );
        assert!(ops(json!({"same":[1]}), json!({"same":[1]})).is_empty());
    }

    /// Applying the produced operations with an independent RFC 6902 implementation gives `new`.
    #[test]
    fn applies_back_to_new() {
        let old = json!({"a":[{"x":1},{"y":[1,2]}],"b":"s","c":{"d":null}});
        let new = json!({"a":[{"x":2,"z":true}],"b":{"k":"v"},"e":[]});
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(
            diff(&old, &new)
                .into_iter()
                .map(|o| match o.op {
                    Op::Add => json!({"op":"add","path":o.path,"value":o.value}),
                    Op::Remove => json!({"op":"remove","path":o.path}),
                    Op::Replace => json!({"op":"replace","path":o.path,"value":o.value}),
                })
                .collect(),
        ))
        .unwrap();
        let mut doc = old.clone();
        json_patch::patch(&mut doc, &patch).unwrap();
        assert_eq!(doc, new);
    }
}
