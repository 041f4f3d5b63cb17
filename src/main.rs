//! The `gpuex` binary.

fn main() {
    eprintln!("gpuex: not built yet");
    std::process::exit(2);
}
