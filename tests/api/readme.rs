//! What the README and SIMULATE.md tell a new user to run works from a
//! fresh clone, today (issue 15, item 18).

use gpuex::simulate::Trace;
use std::path::Path;

fn doc(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).expect("doc")
}

#[test]
fn the_docs_point_only_at_files_in_the_repository() {
    for name in ["README.md", "SIMULATE.md"] {
        let text = doc(name);
        assert!(
            !text.contains("../shared/data"),
            "{name} points outside the repository"
        );
        for word in text.split(|c: char| c.is_whitespace() || "`()'\"".contains(c)) {
            if let Some(file) = word
                .strip_prefix("data/openb/")
                .filter(|f| f.ends_with(".csv"))
            {
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("data/openb")
                    .join(file);
                assert!(path.is_file(), "{name} names {word}, which is not shipped");
            }
        }
    }
}

#[test]
fn no_example_hard_codes_a_start_time_that_will_be_too_soon() {
    for line in doc("README.md")
        .lines()
        .filter(|l| l.contains("\"start_at\""))
    {
        assert!(
            !line.contains("\"start_at\":\"20"),
            "a literal start_at is in the past sooner or later: {line}"
        );
    }
}

#[test]
fn the_shipped_trace_is_the_whole_openb_trace() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/openb");
    let trace = Trace::load(
        &dir.join("openb_node_list_gpu_node.csv"),
        &dir.join("openb_pod_list_default.csv"),
    )
    .expect("the trace parses");
    assert_eq!(trace.nodes.len(), 1213);
    assert_eq!(trace.tasks.len(), 8152);
}
