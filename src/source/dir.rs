//! SidecarSets (and optionally Namespaces) read from a directory of YAML/JSON files: the
//! no-cluster mode.
//!
//! Each SidecarSet goes through exactly what the SidecarSet webhooks would do to it (defaults,
//! hash annotations, validation). A file or document that fails is reported by file name and
//! field and skipped; the others keep serving. The directory is polled and compared by content,
//! which also works for ConfigMap volumes (kubelet swaps a `..data` symlink, so per-file inotify
//! watches go stale).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::acceptance::accept_all;
use super::{Catalogue, SharedCatalogue};
use crate::api::SidecarSet;
use crate::convert::sidecarset;
use crate::defaults::sidecarset::default_and_hash;
use crate::k8s::selector::{Labels, namespace_labels};

/// The example SidecarSets compiled into the binary: what `serve` uses when it is given neither
/// a directory nor a cluster.
pub const EMBEDDED_EXAMPLES: &[(&str, &str)] = &[
    (
        "embedded:deploy/examples/log-agent.yaml",
        include_str!("../../deploy/examples/log-agent.yaml"),
    ),
    (
        "embedded:deploy/examples/proxy.yaml",
        include_str!("../../deploy/examples/proxy.yaml"),
    ),
];

/// [`EMBEDDED_EXAMPLES`] as `(name, content)` files for [`load`].
pub fn embedded_files() -> Vec<(String, String)> {
    EMBEDDED_EXAMPLES
        .iter()
        .map(|(name, content)| (name.to_string(), content.to_string()))
        .collect()
}

/// A document that could not be loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub file: String,
    /// 1-based position of the YAML document in the file.
    pub document: usize,
    /// The object, when the document got as far as its kind and name.
    pub object: Option<ObjectName>,
    pub message: String,
}

/// An object of a file by its kind and name: `SidecarSet "proxy"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectName {
    pub kind: String,
    pub name: String,
}

impl fmt::Display for ObjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.kind, self.name)
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: document {}", self.file, self.document)?;
        if let Some(object) = &self.object {
            write!(f, " ({object})")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Where a SidecarSet was read: a file and the document in it.
struct Origin {
    file: String,
    document: usize,
}

/// Duplicate names are reported against the file that defined the name first.
impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)
    }
}

/// The outcome of loading a set of files.
#[derive(Debug, Default)]
pub struct Loaded {
    pub sidecarsets: Vec<Arc<SidecarSet>>,
    pub namespaces: HashMap<String, Labels>,
    pub errors: Vec<LoadError>,
}

impl Loaded {
    pub fn into_catalogue(self) -> (Catalogue, Vec<LoadError>) {
        (
            Catalogue::new(self.sidecarsets, self.namespaces, true),
            self.errors,
        )
    }
}

/// Parses, defaults, hashes and validates the objects in `files` (`(name, content)` pairs).
/// Pure: the caller reads the files.
pub fn load(files: &[(String, String)]) -> Loaded {
    let mut loaded = Loaded::default();
    let mut candidates: Vec<(Arc<SidecarSet>, Origin)> = Vec::new();
    for (file, content) in files {
        for (index, document) in documents(file, content).into_iter().enumerate() {
            let document_number = index + 1;
            let error = |object: Option<ObjectName>, message: String| LoadError {
                file: file.clone(),
                document: document_number,
                object,
                message,
            };
            let value = match document {
                Ok(serde_json::Value::Null) => continue,
                Ok(value) => value,
                Err(message) => {
                    loaded.errors.push(error(None, message));
                    continue;
                }
            };
            for item in list_items(value) {
                match classify(item) {
                    Ok(Object::SidecarSet(mut set)) => {
                        default_and_hash(&mut set);
                        let origin = Origin {
                            file: file.clone(),
                            document: document_number,
                        };
                        candidates.push((Arc::new(*set), origin));
                    }
                    Ok(Object::Namespace(namespace)) => {
                        let name = namespace.metadata.name.clone().unwrap_or_default();
                        let labels = namespace_labels(name.clone(), namespace.metadata.labels);
                        loaded.namespaces.insert(name, labels);
                    }
                    Err((object, message)) => loaded.errors.push(error(object, message)),
                }
            }
        }
    }

    let (accepted, refused) = accept_all(candidates);
    loaded.sidecarsets = accepted;
    loaded
        .errors
        .extend(refused.into_iter().map(|refused| LoadError {
            document: refused.origin.document,
            file: refused.origin.file,
            object: Some(ObjectName {
                kind: "SidecarSet".into(),
                name: refused.name,
            }),
            message: refused.message,
        }));
    loaded
}

/// The documents of a file as JSON values: one for a `.json` file, one per `---` for YAML.
fn documents(file: &str, content: &str) -> Vec<Result<serde_json::Value, String>> {
    if file.ends_with(".json") {
        return vec![serde_json::from_str(content).map_err(|e| format!("invalid JSON: {e}"))];
    }
    // A syntax error anywhere refuses the whole file: the parser cannot tell where the next
    // document would start.
    match crate::yaml::from_multiple::<serde_json::Value>(content) {
        Ok(values) => values.into_iter().map(Ok).collect(),
        Err(e) => vec![Err(format!("invalid YAML: {e}"))],
    }
}

/// A `kind: List` document stands for its items.
fn list_items(value: serde_json::Value) -> Vec<serde_json::Value> {
    if value.get("kind").and_then(|k| k.as_str()) == Some("List")
        && let Some(serde_json::Value::Array(items)) = value.get("items")
    {
        return items.clone();
    }
    vec![value]
}

enum Object {
    SidecarSet(Box<SidecarSet>),
    Namespace(Box<Namespace>),
}

fn classify(value: serde_json::Value) -> Result<Object, (Option<ObjectName>, String)> {
    let text = |key: &str| {
        value
            .get(key)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let name = value
        .pointer("/metadata/name")
        .and_then(|v| v.as_str())
        .map(|name| ObjectName {
            kind: kind.clone(),
            name: name.to_string(),
        });
    match (api_version.as_str(), kind.as_str()) {
        ("apps.kruise.io/v1beta1", "SidecarSet") => decode(value)
            .map(|set| Object::SidecarSet(Box::new(set)))
            .map_err(|e| (name, e)),
        ("apps.kruise.io/v1alpha1", "SidecarSet") => decode(value)
            .map(|set| Object::SidecarSet(Box::new(sidecarset::to_v1beta1(set))))
            .map_err(|e| (name, e)),
        ("v1", "Namespace") => decode(value)
            .map(|namespace| Object::Namespace(Box::new(namespace)))
            .map_err(|e| (name, e)),
        _ => Err((
            name,
            format!(
                "unsupported object apiVersion {api_version:?} kind {kind:?}: expected a SidecarSet (apps.kruise.io/v1beta1 or v1alpha1) or a Namespace (v1)"
            ),
        )),
    }
}

/// Decodes with the path of the offending field in the message.
pub fn decode<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })
}

/// Reads every `.yaml`, `.yml` and `.json` file of `dir` (not recursing, skipping hidden names
/// such as ConfigMap volumes' `..data`), sorted by name.
pub fn read_directory(dir: &Path) -> std::io::Result<Vec<(String, String)>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            let hidden = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| n.starts_with('.'));
            let wanted = matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            );
            !hidden && wanted && path.is_file()
        })
        .collect();
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let display = path.display().to_string();
        match std::fs::read(&path) {
            // Invalid UTF-8 shows up as replacement characters, which then fail to parse or
            // validate and are reported against this file.
            Ok(bytes) => files.push((display, String::from_utf8_lossy(&bytes).into_owned())),
            // A file removed between listing and reading is simply gone.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(files)
}

/// A file served from its last good version because its current one failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleFile {
    pub file: String,
    /// Why the current version was not taken.
    pub reason: String,
}

impl fmt::Display for StaleFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.reason)
    }
}

/// One reload of the directory: the catalogue, what was skipped, and which files are served
/// from their last good version.
#[derive(Debug)]
pub struct Reload {
    pub catalogue: Catalogue,
    pub errors: Vec<LoadError>,
    pub stale: Vec<StaleFile>,
}

/// The directory as last read, and each file's last version that loaded cleanly.
///
/// A file rewritten in place can be read half-written: truncated to nothing, cut in the middle
/// of a document, or of a value. Such a version fails to parse, to decode or to validate, or
/// holds no object at all; the file's last good version then stays in service until a version
/// that loads cleanly replaces it. A file removed is gone (deleting the file is how its
/// SidecarSets are removed; emptying it is taken for a rewrite in progress).
#[derive(Debug, Default)]
pub struct DirectoryState {
    files: Vec<(String, String)>,
    good: HashMap<String, String>,
}

impl DirectoryState {
    /// The state after loading `files` for the first time (nothing to fall back on yet).
    pub fn first(files: Vec<(String, String)>, loaded: &Loaded) -> Self {
        let mut state = DirectoryState::default();
        state.remember(files, loaded, &[]);
        state
    }

    /// Loads `files` unless they are the ones last read. A file whose version fails while it
    /// has a good one is served from that. Pure: the caller reads the files.
    pub fn reload(&mut self, files: Vec<(String, String)>) -> Option<Reload> {
        if files == self.files {
            return None;
        }
        let mut loaded = load(&files);
        let failed = failed_files(&files, &loaded);
        let mut stale = Vec::new();
        let mut served = files.clone();
        for (file, content) in &mut served {
            let Some(reason) = failed.get(file.as_str()) else {
                continue;
            };
            if let Some(good) = self.good.get(file.as_str()).filter(|g| *g != content) {
                content.clone_from(good);
                stale.push(StaleFile {
                    file: file.clone(),
                    reason: reason.clone(),
                });
            }
        }
        if !stale.is_empty() {
            loaded = load(&served);
        }
        let stale_names: Vec<String> = stale.iter().map(|s| s.file.clone()).collect();
        self.remember(files, &loaded, &stale_names);
        let (catalogue, errors) = loaded.into_catalogue();
        Some(Reload {
            catalogue,
            errors,
            stale,
        })
    }

    /// Records `files` as read, and as good those that loaded cleanly (but the `stale` ones,
    /// whose good version stays).
    fn remember(&mut self, files: Vec<(String, String)>, loaded: &Loaded, stale: &[String]) {
        let failed = failed_files(&files, loaded);
        self.good
            .retain(|file, _| files.iter().any(|(f, _)| f == file));
        for (file, content) in &files {
            if !failed.contains_key(file.as_str()) && !stale.contains(file) {
                self.good.insert(file.clone(), content.clone());
            }
        }
        self.files = files;
    }
}

/// The files of `files` that did not load cleanly, with the first reason: an error against the
/// file, or no object in it at all.
fn failed_files<'f>(files: &'f [(String, String)], loaded: &Loaded) -> HashMap<&'f str, String> {
    let mut failed = HashMap::new();
    for (file, content) in files {
        if let Some(error) = loaded.errors.iter().find(|e| &e.file == file) {
            failed.insert(file.as_str(), error.to_string());
        } else if documents(file, content)
            .iter()
            .all(|d| matches!(d, Ok(serde_json::Value::Null)))
        {
            failed.insert(file.as_str(), format!("{file}: holds no object"));
        }
    }
    failed
}

/// Polls `dir` every `interval`, rebuilding and publishing the catalogue when any file's
/// content changed. Reading and loading run on the blocking pool, never on the async workers.
/// Each file served from its last good version is logged as a warning; `on_load` sees each
/// rebuild (for metrics).
pub fn spawn_watcher(
    dir: PathBuf,
    interval: Duration,
    state: DirectoryState,
    catalogue: SharedCatalogue,
    on_load: impl Fn(&Reload) + Send + 'static,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    spawn_watcher_reading(
        read_directory,
        dir,
        interval,
        state,
        catalogue,
        on_load,
        shutdown,
    )
}

/// [`spawn_watcher`] with the directory read by `read` (the tests hold a read in progress).
fn spawn_watcher_reading(
    read: impl Fn(&Path) -> std::io::Result<Vec<(String, String)>> + Send + Sync + 'static,
    dir: PathBuf,
    interval: Duration,
    state: DirectoryState,
    catalogue: SharedCatalogue,
    on_load: impl Fn(&Reload) + Send + 'static,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let read = Arc::new(read);
    tokio::spawn(async move {
        let mut state = Some(state);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(interval) => {}
            }
            let (path, mut taken, read) =
                (dir.clone(), state.take().unwrap_or_default(), read.clone());
            // Reading and loading a large directory takes seconds: on the blocking pool, so the
            // async workers go on serving admission, probes and the Lease meanwhile.
            let reloaded = tokio::task::spawn_blocking(move || {
                let reload = read(&path).map(|files| taken.reload(files));
                (taken, reload)
            })
            .await;
            let (returned, reload) = match reloaded {
                Ok(done) => done,
                // The loader panicked: start over from an empty state, keeping the catalogue.
                Err(_) => (DirectoryState::default(), Ok(None)),
            };
            state = Some(returned);
            match reload {
                Ok(Some(reload)) => {
                    for stale in &reload.stale {
                        tracing::warn!(file = %stale.file, reason = %stale.reason, "SidecarSet file failed to load; serving its last good version");
                    }
                    on_load(&reload);
                    catalogue.store(Arc::new(reload.catalogue));
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot read SidecarSet directory; keeping the last catalogue");
                }
            }
        }
    })
}

#[cfg(test)]
mod tests;
