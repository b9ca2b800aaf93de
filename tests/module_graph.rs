//! The shape of the house: which top-level module under `src/` imports which (`crate::x::…`), checked
//! against the floors below. A module may import only modules on a lower floor, so no import runs
//! upward, none runs sideways between rooms of one floor, and no circle can form. Inside every
//! module with a folder, its children (its rooms: `controller/expectations.rs`,
//! `controller/workload/`) import each other in no circle either, as its non-test code reads
//! (`crate::a::b::…` and `super::…` paths). Also: no file holds more than [`MAX_CODE_LINES`] lines
//! of non-test code.
//!
//! `cargo test --test module_graph -- --nocapture` prints the map it measured.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, lowest first. A new top-level module must be placed here.
const FLOORS: &[(&str, &[&str])] = &[
    ("wire types and keys", &["api"]),
    ("Kubernetes and Go compatibility", &["k8s", "yaml"]),
    ("what Kruise writes on a pod", &["podmarks"]),
    ("conversion between served versions", &["convert"]),
    (
        "pure cores and leaf plumbing",
        &[
            "inject",
            "updatesort",
            "validate",
            "metrics",
            "cli",
            "signal",
            "open_files",
            "priority",
        ],
    ),
    (
        "pure cores built on injection",
        &["rollout", "inplace", "barrier", "defaults", "crds", "tls"],
    ),
    ("workload core", &["workload"]),
    (
        "workload planners (each on the workload core alone), SidecarSet sources",
        &["cloneset", "statefulset", "daemonset", "source"],
    ),
    ("request and node handlers", &["admission", "nodeagent"]),
    (
        "shells",
        &[
            "controller",
            "server",
            "admin",
            "migrate",
            "explain",
            "plan",
        ],
    ),
    ("the process", &["app"]),
];

/// Lines of non-test code one file may hold.
const MAX_CODE_LINES: usize = 800;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// One source file: its top-level module, its code with comments and literals blanked, and the
/// byte ranges of that code that only tests compile.
struct Source {
    path: PathBuf,
    module: String,
    code: String,
    test_ranges: Vec<(usize, usize)>,
    is_test_file: bool,
}

impl Source {
    /// Its path below `src/`, as messages show it.
    fn shown(&self) -> String {
        self.path
            .strip_prefix(src_dir())
            .unwrap()
            .display()
            .to_string()
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to; `None` for the crate roots.
fn top_module(src: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(src).unwrap();
    let mut parts = relative.components();
    let first = parts.next()?.as_os_str().to_str().unwrap();
    if parts.next().is_some() {
        return Some(first.to_string());
    }
    let stem = first.strip_suffix(".rs").unwrap();
    (stem != "lib" && stem != "main").then(|| stem.to_string())
}

/// Rust code with comments removed and the insides of string and char literals blanked, newlines
/// kept, so byte offsets and line numbers stay those of the file.
fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // Keeps byte offsets equal: every blanked char becomes spaces of the same UTF-8 width.
    let push_blank = |out: &mut String, c: char| {
        if c == '\n' {
            out.push('\n');
        } else {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    };
    let mut i = 0;
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                push_blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    push_blank(&mut out, '/');
                    push_blank(&mut out, '*');
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    push_blank(&mut out, '*');
                    push_blank(&mut out, '/');
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (i == 0 || !ident_char(chars[i - 1]) || chars[i - 1] == 'b')
            && matches!(next, Some('"') | Some('#'))
            && {
                let mut j = i + 1;
                while chars.get(j) == Some(&'#') {
                    j += 1;
                }
                chars.get(j) == Some(&'"')
            }
        {
            // Raw string: r#"…"#.
            let mut hashes = 0;
            out.push('r');
            i += 1;
            while chars[i] == '#' {
                hashes += 1;
                out.push('#');
                i += 1;
            }
            out.push('"');
            i += 1;
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                push_blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    push_blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // Escaped char literal: '\n', '\'', '\u{..}'.
            out.push('\'');
            i += 1;
            push_blank(&mut out, chars[i]);
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                push_blank(&mut out, chars[i]);
                i += 1;
            }
            out.push('\'');
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push('\'');
            push_blank(&mut out, chars[i + 1]);
            out.push('\'');
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The byte offset just past the brace that closes the one opened at `open`.
fn matching_brace(code: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (offset, byte) in code.bytes().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return offset + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// A `#[cfg(test)] mod name` declaration found in blanked code.
struct TestModule {
    /// Where its `#[cfg(test)]` starts.
    start: usize,
    name: String,
    /// For an inline module, the offset of its `{`.
    open: Option<usize>,
    /// The byte range of its `#[path = "…"]` attribute, if any (the literal is blanked in the code,
    /// so it is read from the file).
    path_attr: Option<std::ops::Range<usize>>,
}

/// The test-only modules `code` declares (`#[cfg(test)]`, other attributes, a visibility, then
/// `mod name;` or `mod name { … }`).
fn test_module_declarations(code: &str) -> Vec<TestModule> {
    let mut found = Vec::new();
    for (start, _) in code.match_indices("#[cfg(test)]") {
        let mut rest = code[start + "#[cfg(test)]".len()..].trim_start();
        let mut path_attr = None;
        while rest.starts_with("#[") {
            let end = rest.find(']').unwrap();
            if rest.starts_with("#[path") {
                let at = code.len() - rest.len();
                path_attr = Some(at..at + end);
            }
            rest = rest[end + 1..].trim_start();
        }
        for visibility in ["pub(crate) ", "pub(super) ", "pub "] {
            rest = rest.strip_prefix(visibility).unwrap_or(rest);
        }
        let Some(after_mod) = rest.strip_prefix("mod ") else {
            continue;
        };
        let name: String = after_mod
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after_name = after_mod[name.len()..].trim_start();
        if !after_name.starts_with('{') && !after_name.starts_with(';') {
            continue;
        }
        let open = after_name
            .starts_with('{')
            .then(|| code.len() - after_name.len());
        found.push(TestModule {
            start,
            name,
            open,
            path_attr,
        });
    }
    found
}

/// Test-only modules declared in `code`: inline ones as byte ranges, out-of-line ones as files.
fn test_modules(path: &Path, code: &str) -> (Vec<(usize, usize)>, Vec<PathBuf>) {
    let mut ranges = Vec::new();
    let mut files = Vec::new();
    for module in test_module_declarations(code) {
        if let Some(open) = module.open {
            ranges.push((module.start, matching_brace(code, open)));
            continue;
        }
        let dir = if path
            .file_name()
            .is_some_and(|f| f == "mod.rs" || f == "lib.rs")
        {
            path.parent().unwrap().to_path_buf()
        } else {
            path.with_extension("")
        };
        if let Some(attr) = module.path_attr {
            let original = std::fs::read_to_string(path).unwrap();
            let literal = original[attr].split('"').nth(1).unwrap().to_string();
            files.push(path.parent().unwrap().join(literal));
        } else {
            files.push(dir.join(format!("{}.rs", module.name)));
            files.push(dir.join(&module.name).join("mod.rs"));
        }
    }
    (ranges, files)
}

fn sources() -> Vec<Source> {
    let src = src_dir();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths.sort();
    let mut test_files = BTreeSet::new();
    let mut sources = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let code = blank_comments_and_literals(&text);
        assert_eq!(
            code.len(),
            text.len(),
            "{}: blanking kept offsets",
            path.display()
        );
        let (test_ranges, files) = test_modules(&path, &code);
        test_files.extend(files);
        let Some(module) = top_module(&src, &path) else {
            continue;
        };
        sources.push(Source {
            path,
            module,
            code,
            test_ranges,
            is_test_file: false,
        });
    }
    // A file below a test-only file is test-only too.
    for source in &mut sources {
        source.is_test_file = test_files.iter().any(|t| {
            source.path == *t
                || t.with_extension("").is_dir() && source.path.starts_with(t.with_extension(""))
        });
    }
    sources
}

/// Every `crate::x` in `code` with its byte offset, `use crate::{x, y::…}` included.
fn crate_references(code: &str) -> Vec<(usize, String)> {
    prefixed_references(code, "crate::")
}

/// Every first segment after `prefix` (`crate::`, `crate::controller::`) in `code` with its byte
/// offset, groups included; `$crate::` and `some_crate::` are not `crate::`.
fn prefixed_references(code: &str, prefix: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (offset, _) in code.match_indices(prefix) {
        if offset > 0 {
            let before = code[..offset].chars().next_back().unwrap();
            if before.is_alphanumeric() || before == '_' || before == '$' {
                continue;
            }
        }
        for name in first_segments(&code[offset + prefix.len()..]) {
            found.push((offset, name));
        }
    }
    found
}

/// The first segment of the path at the start of `rest`: one name, or each name of a `{…}`
/// group.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let rest = rest.trim_start();
    let Some(group) = rest.strip_prefix('{') else {
        let name = ident(rest);
        return if name.is_empty() {
            Vec::new()
        } else {
            vec![name]
        };
    };
    let group = &group[..matching_brace(rest, 0) - 2];
    let mut names = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && (c.is_alphanumeric() || c == '_') => {
                names.push(ident(&group[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    names
}

/// Every path that follows `super::` (one or more) in `code`, with its byte offset and the
/// number of `super`s; a group gives one path per member (`super::x::{a, b::c}`: `x::a`,
/// `x::b::c`).
fn super_paths(code: &str) -> Vec<(usize, usize, Vec<String>)> {
    let mut found = Vec::new();
    for (offset, _) in code.match_indices("super::") {
        let before = code[..offset].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // inside a chain already counted, or `not_super::`
        }
        let mut ups = 0;
        let mut rest = &code[offset..];
        while let Some(after) = rest.strip_prefix("super::") {
            ups += 1;
            rest = after;
        }
        for path in paths_at(rest) {
            found.push((offset, ups, path));
        }
    }
    found
}

/// The paths at the start of `rest` (`a::b`, `a::{b, c::d}`), each as its segments.
fn paths_at(rest: &str) -> Vec<Vec<String>> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let group = &group[..matching_brace(rest, 0) - 2];
        let mut paths = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    paths.extend(paths_at(&group[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        paths.extend(paths_at(&group[start..]));
        return paths;
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return Vec::new();
    }
    match rest[name.len()..].trim_start().strip_prefix("::") {
        Some(tail) => {
            let tails = paths_at(tail);
            if tails.is_empty() {
                return vec![vec![name]];
            }
            tails
                .into_iter()
                .map(|mut path| {
                    path.insert(0, name.clone());
                    path
                })
                .collect()
        }
        None => vec![vec![name]],
    }
}

struct Graph {
    /// module → imported module → first file that imports it.
    code: BTreeMap<String, BTreeMap<String, String>>,
    /// Imports only test code makes, beyond those of `code`.
    tests: BTreeMap<String, BTreeMap<String, String>>,
}

fn graph(sources: &[Source]) -> Graph {
    let mut graph = Graph {
        code: BTreeMap::new(),
        tests: BTreeMap::new(),
    };
    for source in sources {
        graph.code.entry(source.module.clone()).or_default();
        for (offset, target) in crate_references(&source.code) {
            if target == source.module || target == "self" || target == "super" {
                continue;
            }
            let in_test = source.is_test_file
                || source
                    .test_ranges
                    .iter()
                    .any(|&(a, b)| (a..b).contains(&offset));
            let map = if in_test {
                &mut graph.tests
            } else {
                &mut graph.code
            };
            let shown = source.shown();
            map.entry(source.module.clone())
                .or_default()
                .entry(target)
                .or_insert(shown);
        }
    }
    for (module, imports) in &mut graph.tests {
        if let Some(code) = graph.code.get(module) {
            imports.retain(|target, _| !code.contains_key(target));
        }
    }
    graph.tests.retain(|_, imports| !imports.is_empty());
    graph
}

/// Every circle through the import edges, each once (as found from its smallest module).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn walk(
        edges: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        path: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        let here = path.last().unwrap().clone();
        for next in edges.get(&here).into_iter().flatten() {
            if next == start {
                out.push(path.clone());
            } else if next.as_str() > start && !path.contains(next) {
                path.push(next.clone());
                walk(edges, start, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for start in edges.keys() {
        walk(edges, start, &mut vec![start.clone()], &mut out);
    }
    out
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, rooms)| rooms.contains(&module))
}

fn print_map(graph: &Graph) {
    println!("top-level module → the modules it imports (test-only imports in brackets)");
    for (module, imports) in &graph.code {
        let code: Vec<&str> = imports.keys().map(String::as_str).collect();
        let tests: Vec<&str> = graph
            .tests
            .get(module)
            .map(|t| t.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let floor = floor_of(module).map_or("?".to_string(), |f| f.to_string());
        let tests = if tests.is_empty() {
            String::new()
        } else {
            format!(" [{}]", tests.join(", "))
        };
        println!("  {floor} {module:<10} → {}{tests}", code.join(", "));
    }
}

fn all_edges(graph: &Graph) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for map in [&graph.code, &graph.tests] {
        for (module, imports) in map {
            edges
                .entry(module.clone())
                .or_default()
                .extend(imports.keys().cloned());
        }
    }
    edges
}

/// The module path of a file below `src/`: `controller/workload/round.rs` → controller, workload,
/// round; a `mod.rs` is its folder's module.
fn module_path(src: &Path, path: &Path) -> Vec<String> {
    let relative = path.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// A module's rooms: its children, each a file `x.rs` or a folder `x/` below its folder.
fn rooms_of(src: &Path, module: &[String]) -> BTreeSet<String> {
    let folder = module.iter().fold(src.to_path_buf(), |p, m| p.join(m));
    let Ok(entries) = std::fs::read_dir(folder) else {
        return BTreeSet::new();
    };
    entries
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension().is_some_and(|e| e == "rs")).then_some(name)
        })
        .filter(|name| name != "mod")
        .collect()
}

/// For every module with a folder, the imports between its rooms that non-test code makes
/// (`crate::a::b::…`, `super::…`): module (`controller::workload`) → room → imported room → the
/// first file that imports it.
type RoomGraphs = BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>;

fn room_graphs(sources: &[Source]) -> RoomGraphs {
    let src = src_dir();
    let mut graphs = RoomGraphs::new();
    for source in sources.iter().filter(|s| !s.is_test_file) {
        let path = module_path(&src, &source.path);
        let in_code = |offset: usize| {
            !source
                .test_ranges
                .iter()
                .any(|&(a, b)| (a..b).contains(&offset))
        };
        let mut targets: Vec<Vec<String>> = Vec::new();
        for (offset, _) in source.code.match_indices("crate::") {
            let before = source.code[..offset].chars().next_back();
            if in_code(offset)
                && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                targets.extend(paths_at(&source.code[offset + "crate::".len()..]));
            }
        }
        for (offset, ups, tail) in super_paths(&source.code) {
            if in_code(offset) && ups < path.len() {
                let mut target = path[..path.len() - ups].to_vec();
                target.extend(tail);
                targets.push(target);
            }
        }
        let shown = source.shown();
        // Each enclosing module: the file's room in it, and the rooms the targets reach there.
        for depth in 1..path.len() {
            let (module, room) = (&path[..depth], &path[depth]);
            let rooms = rooms_of(&src, module);
            let imports = graphs
                .entry(module.join("::"))
                .or_default()
                .entry(room.clone())
                .or_default();
            for target in &targets {
                if target.len() > depth
                    && target[..depth] == *module
                    && target[depth] != *room
                    && rooms.contains(&target[depth])
                {
                    imports
                        .entry(target[depth].clone())
                        .or_insert_with(|| shown.clone());
                }
            }
        }
    }
    graphs
}

#[test]
fn no_import_circle_between_the_rooms_of_a_module() {
    let graphs = room_graphs(&sources());
    let mut found = Vec::new();
    for (module, rooms) in &graphs {
        let edges: BTreeMap<String, BTreeSet<String>> = rooms
            .iter()
            .map(|(room, imports)| (room.clone(), imports.keys().cloned().collect()))
            .collect();
        for circle in circles(&edges) {
            let files: Vec<&str> = circle
                .iter()
                .zip(circle.iter().cycle().skip(1))
                .map(|(from, to)| rooms[from][to].as_str())
                .collect();
            found.push(format!(
                "{module}: {} → {} (in {})",
                circle.join(" → "),
                circle[0],
                files.join(", ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "import circles between rooms:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_import_circle_and_none_upward() {
    let graph = graph(&sources());
    print_map(&graph);
    let edges = all_edges(&graph);
    let circles = circles(&edges);
    for circle in &circles {
        println!("circle: {} → {}", circle.join(" → "), circle[0]);
    }
    let mut problems = Vec::new();
    for module in edges.keys() {
        if floor_of(module).is_none() {
            problems.push(format!("{module}: not on any floor of FLOORS; place it"));
        }
    }
    for map in [&graph.code, &graph.tests] {
        for (module, imports) in map {
            let Some(floor) = floor_of(module) else {
                continue;
            };
            for (target, file) in imports {
                match floor_of(target) {
                    Some(target_floor) if target_floor < floor => {}
                    Some(target_floor) => problems.push(format!(
                        "{file}: {module} (floor {floor}, {}) imports {target} (floor {target_floor}, {})",
                        FLOORS[floor].0, FLOORS[target_floor].0
                    )),
                    None => problems.push(format!("{file}: imports {target}, on no floor")),
                }
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:?}");
    assert!(
        problems.is_empty(),
        "imports against the floors:\n{}",
        problems.join("\n")
    );
}

/// Files that still hold their tests another way, to move to `foo/tests.rs` when they are next
/// changed.
const OLD_TEST_LAYOUT: &[&str] = &[
    "admission/mod.rs",
    "admission/review.rs",
    "api/daemonset.rs",
    "api/mod.rs",
    "crds.rs",
];

/// One test layout for the crate: a module's tests are its child module `tests`, in its own file
/// `foo/tests.rs` (topics below it in `foo/tests/`), never inline and never placed by `#[path]`;
/// test-only support lives inside a `tests` module too (`controller::tests::fake_apiserver`).
#[test]
fn tests_live_in_a_tests_module_of_their_own() {
    let mut wrong = Vec::new();
    let mut still_old = BTreeSet::new();
    for source in sources().iter().filter(|s| !s.is_test_file) {
        let shown = source.shown();
        for module in test_module_declarations(&source.code) {
            let (name, inline, placed) = (
                module.name,
                module.open.is_some(),
                module.path_attr.is_some(),
            );
            if name == "tests" && !inline && !placed {
                continue;
            }
            if OLD_TEST_LAYOUT.contains(&shown.as_str()) {
                still_old.insert(shown.clone());
                continue;
            }
            wrong.push(format!(
                "{shown}: test module `{name}`{}{}",
                if inline { " inline" } else { "" },
                if placed { " placed by #[path]" } else { "" }
            ));
        }
    }
    for moved in OLD_TEST_LAYOUT.iter().filter(|f| !still_old.contains(**f)) {
        wrong.push(format!(
            "{moved}: moved to the one layout, take it off OLD_TEST_LAYOUT"
        ));
    }
    assert!(
        wrong.is_empty(),
        "tests belong in `foo/tests.rs` (declared `#[cfg(test)] mod tests;`):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_file_holds_more_than_max_code_lines() {
    let mut too_long = Vec::new();
    for source in sources() {
        if source.is_test_file {
            continue;
        }
        let test_lines: usize = source
            .test_ranges
            .iter()
            .map(|&(a, b)| source.code[a..b].lines().count())
            .sum();
        let lines = source.code.lines().count() - test_lines;
        if lines > MAX_CODE_LINES {
            too_long.push(format!(
                "{}: {lines} lines of non-test code",
                source.shown()
            ));
        }
    }
    assert!(
        too_long.is_empty(),
        "split by concern:\n{}",
        too_long.join("\n")
    );
}

#[test]
fn the_scanner_sees_through_comments_literals_and_groups() {
    let code = blank_comments_and_literals(
        "// crate::a::x\nuse crate::{b::y, c};\nlet s = \"crate::d\"; let r = r#\"crate::e\"#;\n\
         let ch = '{'; fn f<'a>() {} /* crate::f */ crate::g::h();",
    );
    let names: Vec<String> = crate_references(&code)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, ["b", "c", "g"]);
    let (ranges, _) = test_modules(
        Path::new("src/x.rs"),
        &blank_comments_and_literals(
            "fn a() {}\n#[cfg(test)]\nmod tests {\n fn b() { '}'; }\n}\nfn c() {}",
        ),
    );
    assert_eq!(ranges.len(), 1);
}

#[test]
fn paths_are_read_whole_through_groups_and_super_chains() {
    let code = blank_comments_and_literals(
        "use super::round::{Round, x::{y, z}};\nuse super::super::events as e;\nlet a = super::b::c();",
    );
    let paths: Vec<(usize, String)> = super_paths(&code)
        .into_iter()
        .map(|(_, ups, path)| (ups, path.join("::")))
        .collect();
    let expected = [
        (1, "round::Round"),
        (1, "round::x::y"),
        (1, "round::x::z"),
        (2, "events"),
        (1, "b::c"),
    ];
    assert_eq!(paths, expected.map(|(ups, path)| (ups, path.to_string())));
}

#[test]
fn a_circle_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
            .into_iter()
            .fold(BTreeMap::new(), |mut m, (a, b)| {
                m.entry(a.to_string()).or_default().insert(b.to_string());
                m
            });
    assert_eq!(circles(&edges), [["a", "b", "c"]]);
}
