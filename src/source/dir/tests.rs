use super::*;
use crate::api::{SidecarSetBuilder, keys};

fn file(name: &str, content: &str) -> (String, String) {
    (name.to_string(), content.to_string())
}

#[test]
fn embedded_examples_load_cleanly() {
    let files: Vec<_> = EMBEDDED_EXAMPLES.iter().map(|(n, c)| file(n, c)).collect();
    let loaded = load(&files);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let names: Vec<_> = loaded
        .sidecarsets
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    assert_eq!(names, vec!["log-agent", "proxy"]);
    for set in &loaded.sidecarsets {
        assert_eq!(
            set.annotation(keys::SIDECARSET_HASH).map(str::len),
            Some(64)
        );
        assert_eq!(
            set.annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE)
                .map(str::len),
            Some(64)
        );
        assert!(
            set.containers()[0]
                .share_volume_policy
                .as_ref()
                .unwrap()
                .type_
                .is_some()
        );
    }
}

#[test]
fn multi_document_and_bad_documents_are_reported_by_file_and_field() {
    let content = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: good}
spec:
  selector: {matchLabels: {app: a}}
  containers: [{name: s, image: busybox:1}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: bad-type}
spec:
  selector: {matchLabels: {app: b}}
  containers: [{name: s, image: busybox:1, ports: [{containerPort: "eighty"}]}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: no-selector}
spec:
  containers: [{name: t, image: busybox:1}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: stray}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {env: prod}}
"#;
    let loaded = load(&[file("sets.yaml", content)]);
    let names: Vec<_> = loaded.sidecarsets.iter().map(|s| s.name()).collect();
    assert_eq!(names, vec!["good"]);
    let messages: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    // The path stops at the container: its core fields are decoded through `serde(flatten)`,
    // which does not report deeper paths; the message still quotes the bad value.
    assert!(
        messages[0].starts_with(
            "sets.yaml: document 2 (SidecarSet \"bad-type\"): spec.containers[0]: invalid type: string \"eighty\", expected i32"
        ),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains("document 4 (ConfigMap \"stray\")"),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].contains("document 3 (SidecarSet \"no-selector\")")
            && messages[2].contains("spec.selector"),
        "{}",
        messages[2]
    );
    assert_eq!(loaded.namespaces["shop"]["env"], "prod");
    assert_eq!(
        loaded.namespaces["shop"][keys::NAMESPACE_NAME_LABEL],
        "shop"
    );
}

#[test]
fn conflicting_sidecarsets_keep_the_first_by_name() {
    let set = |name: &str| {
        let set = SidecarSetBuilder::new(name)
            .selector(&[("app", "x")])
            .container("same", "i")
            .build();
        serde_json::to_string(&set).unwrap()
    };
    let loaded = load(&[file("b.json", &set("zeta")), file("a.json", &set("alpha"))]);
    let names: Vec<_> = loaded.sidecarsets.iter().map(|s| s.name()).collect();
    assert_eq!(names, vec!["alpha"]);
    assert_eq!(loaded.errors.len(), 1);
    assert!(
        loaded.errors[0]
            .to_string()
            .contains("already exist in alpha"),
        "{}",
        loaded.errors[0]
    );
}

/// One YAML document (JSON is YAML): SidecarSet `name` with one container, selector `a=b`.
fn document(name: &str, container: &str) -> String {
    let set = SidecarSetBuilder::new(name)
        .selector(&[("a", "b")])
        .container(container, "i")
        .build();
    format!("{}\n", serde_json::to_string(&set).unwrap())
}

#[test]
fn duplicate_names_are_refused() {
    let doc = document("one", "c");
    let loaded = load(&[file("1.yaml", &doc), file("2.yaml", &doc)]);
    assert_eq!(loaded.sidecarsets.len(), 1);
    assert!(
        loaded.errors[0]
            .message
            .contains("Duplicate value: \"one\": already defined in 1.yaml"),
        "{:?}",
        loaded.errors
    );
}

/// A file that does not parse is refused whole, never half-applied: the documents before the
/// broken one are not served either.
#[test]
fn a_syntax_error_refuses_the_whole_file() {
    let doc = document("one", "c");
    let loaded = load(&[file("1.yaml", &format!("{doc}---\na: [unclosed\n"))]);
    assert!(loaded.sidecarsets.is_empty());
    assert_eq!(loaded.errors.len(), 1);
    assert!(loaded.errors[0].message.starts_with("invalid YAML"));
    let loaded = load(&[file(
        "1.yaml",
        &format!("{doc}---\n{}", document("two", "d")),
    )]);
    assert_eq!(loaded.sidecarsets.len(), 2, "{:?}", loaded.errors);
}

#[test]
fn invalid_yaml_and_json() {
    let loaded = load(&[file("x.yaml", "a: [unclosed"), file("y.json", "{nope")]);
    assert_eq!(loaded.errors.len(), 2);
    assert!(loaded.errors[0].message.starts_with("invalid YAML"));
    assert!(loaded.errors[1].message.starts_with("invalid JSON"));
}

#[test]
fn reads_directory_skipping_hidden_and_other_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.yaml"), "b").unwrap();
    std::fs::write(dir.path().join("a.json"), "a").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "n").unwrap();
    std::fs::write(dir.path().join(".hidden.yaml"), "h").unwrap();
    let files = read_directory(dir.path()).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|(n, _)| {
            Path::new(n)
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, vec!["a.json", "b.yaml"]);
}
