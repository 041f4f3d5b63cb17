//! `gpuex-agent`: the node agent (see DESIGN §7).

fn main() {
    eprintln!("gpuex-agent: not built yet");
    std::process::exit(2);
}
