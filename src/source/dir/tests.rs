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

/// The SidecarSet names a reload serves.
fn served(reload: &Reload) -> Vec<&str> {
    reload
        .catalogue
        .sidecarsets()
        .iter()
        .map(|s| s.name())
        .collect()
}

/// A file read while being rewritten in place — emptied, cut in a document, cut in a value —
/// is served from its last good version until a good one replaces it; the other files go on.
#[test]
fn a_file_rewritten_in_place_keeps_its_last_good_version() {
    let good = format!("{}---\n{}", document("one", "c"), document("two", "d"));
    let other = file("other.yaml", &document("three", "e"));
    let files = vec![file("sets.yaml", &good), other.clone()];
    let mut state = DirectoryState::first(files.clone(), &load(&files));
    assert!(state.reload(files).is_none(), "unchanged");

    let cut_in_a_value = good.replace("\"image\":\"i\"", "\"image\":");
    for torn in [
        "",
        "\n",
        &good[..good.len() / 3],
        &good[..good.len() - 9],
        &cut_in_a_value,
    ] {
        let reload = state
            .reload(vec![file("sets.yaml", torn), other.clone()])
            .expect("changed");
        assert_eq!(served(&reload), vec!["one", "three", "two"], "{torn:?}");
        assert_eq!(reload.stale.len(), 1, "{torn:?}");
        assert_eq!(reload.stale[0].file, "sets.yaml");
        assert!(reload.errors.is_empty(), "{:?}", reload.errors);
    }

    // A good version replaces it, and becomes the one to fall back on.
    let next = document("one", "c2");
    let reload = state
        .reload(vec![file("sets.yaml", &next), other.clone()])
        .unwrap();
    assert_eq!(served(&reload), vec!["one", "three"]);
    assert!(reload.stale.is_empty());
    let reload = state
        .reload(vec![file("sets.yaml", ""), other.clone()])
        .unwrap();
    assert_eq!(served(&reload), vec!["one", "three"]);
    assert_eq!(
        reload.catalogue.get("one").unwrap().containers()[0].name(),
        "c2"
    );

    // Deleting the file removes its SidecarSets.
    let reload = state.reload(vec![other]).unwrap();
    assert_eq!(served(&reload), vec!["three"]);
    assert!(reload.stale.is_empty());
}

/// A file that never loaded cleanly has nothing to fall back on: it is reported, as before.
#[test]
fn a_file_bad_from_the_start_is_reported() {
    let files = vec![file("a.yaml", "a: [unclosed")];
    let mut state = DirectoryState::first(files.clone(), &load(&files));
    let reload = state.reload(vec![file("a.yaml", "b: [unclosed")]).unwrap();
    assert!(reload.stale.is_empty());
    assert_eq!(reload.errors.len(), 1);
}

/// Log lines written by the test's subscriber.
#[derive(Clone, Default)]
struct CapturedLogs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for CapturedLogs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for CapturedLogs {
    type Writer = CapturedLogs;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// The watcher reads a torn file while the single async worker stays free: the read is held
/// until a task on that worker releases it (a read on the worker would wait for itself, and
/// give up). The torn file's last good version stays served, with a warning naming the file.
#[test]
fn a_torn_file_is_reread_off_the_async_worker_and_warned_about() {
    let logs = CapturedLogs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let good = vec![file("sets.yaml", &document("one", "c"))];
    let state = DirectoryState::first(good.clone(), &load(&good));
    let catalogue = super::super::shared(load(&good).into_catalogue().0);

    let (reading_tx, mut reading) = tokio::sync::mpsc::unbounded_channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = std::sync::Mutex::new(released);
    let gave_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let read = {
        let gave_up = gave_up.clone();
        let first = std::sync::atomic::AtomicBool::new(true);
        move |_: &Path| {
            if !first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return Ok(vec![file("sets.yaml", "")]);
            }
            let _ = reading_tx.send(());
            let waited = released
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(5));
            if waited.is_err() {
                gave_up.store(true, std::sync::atomic::Ordering::SeqCst);
                return Err(std::io::Error::other("never released"));
            }
            Ok(vec![file("sets.yaml", "")])
        }
    };
    let (loaded_tx, mut loaded) = tokio::sync::mpsc::unbounded_channel();
    let on_load = move |reload: &Reload| {
        let _ = loaded_tx.send((served(reload).join(","), reload.stale.len()));
    };

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let shutdown = CancellationToken::new();
    let (served_after, stale) = runtime.block_on(async {
        spawn_watcher_reading(
            read,
            PathBuf::from("sets"),
            Duration::from_millis(1),
            state,
            catalogue.clone(),
            on_load,
            shutdown.clone(),
        );
        reading.recv().await.expect("the watcher reads");
        release.send(()).unwrap();
        let reload = loaded.recv().await.expect("a reload");
        shutdown.cancel();
        reload
    });
    runtime.shutdown_background();
    assert!(
        !gave_up.load(std::sync::atomic::Ordering::SeqCst),
        "the read blocked the async worker"
    );
    assert_eq!((served_after.as_str(), stale), ("one", 1));
    assert_eq!(catalogue.load().sidecarsets()[0].name(), "one");
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("WARN") && logs.contains("serving its last good version"),
        "{logs}"
    );
    assert!(logs.contains("sets.yaml"), "{logs}");
}

/// Both served versions load: a v1alpha1 `spec.namespace` pins the set to its namespace (as a
/// selector on the name label), a v1beta1 `spec.customVersion` is kept.
#[test]
fn both_versions_load_as_v1beta1() {
    let content = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: pinned, labels: {apps.kruise.io/sidecarset-custom-version: v1}}
spec:
  namespace: shop
  selector: {matchLabels: {app: a}}
  containers: [{name: s, image: busybox:1}]
---
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: versioned}
spec:
  customVersion: v2
  namespaceSelector: {matchLabels: {env: prod}}
  selector: {matchLabels: {app: b}}
  containers: [{name: t, image: busybox:1}]
"#;
    let loaded = load(&[file("sets.yaml", content)]);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let pinned = loaded.sidecarsets[0].clone();
    assert_eq!(pinned.name(), "pinned");
    assert_eq!(
        pinned.spec.namespace_selector,
        Some(crate::api::match_labels(&[(
            keys::NAMESPACE_NAME_LABEL,
            "shop"
        )]))
    );
    assert_eq!(pinned.spec.custom_version.as_deref(), Some("v1"));
    assert_eq!(pinned.metadata.labels, None);
    let versioned = &loaded.sidecarsets[1];
    assert_eq!(versioned.spec.custom_version.as_deref(), Some("v2"));
    // Namespaces nobody declared are assumed to carry their name label only.
    let (catalogue, _) = loaded.into_catalogue();
    let labels = catalogue.namespace_labels("shop").unwrap();
    let namespace_labels = Some(labels.as_ref());
    assert!(crate::inject::sidecar::namespace_matches(&pinned, namespace_labels).unwrap());
    let other = catalogue.namespace_labels("other").unwrap();
    assert!(!crate::inject::sidecar::namespace_matches(&pinned, Some(other.as_ref())).unwrap());
}
