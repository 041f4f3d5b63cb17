//! The `gpuex` binary: everything it does is the library's
//! [`gpuex::command_line`], so no code of the library is compiled again here.

fn main() -> anyhow::Result<std::process::ExitCode> {
    gpuex::command_line::main()
}
